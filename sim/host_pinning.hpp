#pragma once
// HostPinning: the host side of one simulated GPU: its host-blocking calls and the host memory
// pinned for it.
//
// Host-blocking calls (cudaMalloc, cudaHostRegister, ...) take their modelled time on the calling
// host thread; where the model says so (host_calls_queue) they run one after the other on the
// GPU's host worker, as CudaDevice runs them. Where the model says pinning_holds_calls, a
// cudaHostRegister, cudaHostUnregister, cudaHostAlloc or cudaFreeHost in progress holds the GPU's
// other calls that issue work (all four measured so on the H200 machine, bench/pinning_stalls.cu):
// calls_held_until tells those calls when they get through. Pinned ranges (registered in place or
// allocated pinned) make copies from them run at the pinned rate instead of the pageable one;
// they are the machine's (SimSystem::pinned_host), pinned for every GPU as CudaDevice pins them.

#include "device/device.hpp"
#include "sim/device_model.hpp"
#include "device/fault_plan.hpp"
#include "sim/sim_system.hpp"
#include "trace/trace.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace stagehand::sim {

class HostPinning {
 public:
  HostPinning(SimSystem& system, const DeviceModel& model, const FaultPlan& faults, int ordinal, TraceTrack host_track);

  // A host-blocking call of `duration` on the GPU's host worker; `pinning`: cudaHostRegister or
  // cudaHostUnregister, which hold the GPU's other calls where the model says so.
  asio::awaitable<void> host_call(const char* call, Nanoseconds duration, std::string detail = {},
                                  bool pinning = false);
  // When a call that issues work, made now, gets through: after the pinning calls it waits for.
  Nanoseconds calls_held_until();

  asio::awaitable<void> register_host(HostRange range);
  asio::awaitable<void> unregister_host(HostRange range);
  asio::awaitable<HostRange> allocate_pinned_host(Bytes bytes);
  asio::awaitable<void> free_pinned_host(HostRange range);

  // The whole range lies in one pinned range.
  bool pinned(HostRange range) const;
  void report_leaks(std::vector<std::string>& leaks) const;

 private:
  // Counts a pinning; true when the fault plan makes this one fail.
  bool take_pin_fault() { return ++host_pin_count_ == faults_.fail_host_pin_number; }

  SimSystem& system_;
  const DeviceModel& model_;
  const FaultPlan& faults_;
  int ordinal_;
  Trace& trace_;
  TraceTrack host_track_;
  std::uint64_t host_pin_count_ = 0;
  Nanoseconds host_worker_free_ns_ = 0;  // model.host_calls_queue: when the host worker is next free
  std::vector<std::pair<Nanoseconds, Nanoseconds>> pinning_calls_;  // [begins, ends) of pinning calls, not yet over
};

}  // namespace stagehand::sim
