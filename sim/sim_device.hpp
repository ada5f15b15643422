#pragma once
// SimDevice: one simulated GPU implementing the Device interface in virtual time.
//
// It is made of the parts it owns and delegates to: StreamEngines (streams, events, and the
// compute and copy engines that run their operations in order), MemoryPool (synchronous
// allocations and the stream-ordered pool, as measured in docs/device-facts.md), HostPinning (the
// host-blocking calls and pinned host memory), the PCIe link, and RaceChecker (unsynchronised
// reads and leaks). SimDevice itself checks the calls, runs the engine operations (their
// durations, their bytes in functional mode, their trace spans) and injects the faults of its
// FaultPlan's simulated_part (device/fault_plan.hpp): a failed allocation or pinning, a failed
// kernel, a lost device, a slower link. A failed kernel loses the device, as a kernel that faults
// loses a CUDA context: from then on every wait, whenever it began, and every call fails with
// device_lost, on every stream, for good (docs/device-facts.md).

#include "device/device.hpp"
#include "sim/device_model.hpp"
#include "device/fault_plan.hpp"
#include "sim/host_pinning.hpp"
#include "sim/memory_pool.hpp"
#include "sim/pcie_link.hpp"
#include "sim/race_checker.hpp"
#include "sim/stream_engines.hpp"
#include "trace/trace.hpp"

#include <string>

namespace stagehand::sim {

class SimSystem;

class SimDevice final : public Device, private OpRunner {
 public:
  SimDevice(SimSystem& system, DeviceModel model, int ordinal, FaultPlan faults);
  ~SimDevice() override;

  const DeviceProperties& properties() const override { return properties_; }
  asio::any_io_executor executor() override;
  Nanoseconds now() const override;
  asio::awaitable<void> sleep_for(Nanoseconds duration) override;

  StreamHandle create_stream() override;
  void destroy_stream(StreamHandle stream) override;
  EventHandle create_event() override;
  void destroy_event(EventHandle event) override;
  void record_event(EventHandle event, StreamHandle stream) override;
  void stream_wait_event(StreamHandle stream, EventHandle event) override;
  bool event_complete(EventHandle event) override;
  asio::awaitable<void> wait_event(EventHandle event) override;
  asio::awaitable<void> synchronize_stream(StreamHandle stream) override;
  asio::awaitable<void> synchronize_device() override;

  asio::awaitable<void> copy_to_device(DevicePointer destination, HostRange source, StreamHandle stream) override;
  asio::awaitable<void> copy_to_host(HostRange destination, DevicePointer source, StreamHandle stream) override;
  void memset_async(DevicePointer destination, std::uint8_t value, Bytes bytes, StreamHandle stream) override;

  asio::awaitable<DevicePointer> allocate(Bytes bytes) override;
  asio::awaitable<void> free(DevicePointer pointer) override;
  asio::awaitable<DevicePointer> allocate_async(Bytes bytes, StreamHandle stream) override;
  void free_async(DevicePointer pointer, StreamHandle stream) override;
  void set_pool_release_threshold(Bytes bytes) override;
  void trim_pool(Bytes keep_bytes) override;
  PoolStats pool_stats() const override;
  MemoryInfo memory_info() const override;

  asio::awaitable<void> register_host(HostRange range) override;
  asio::awaitable<void> unregister_host(HostRange range) override;
  asio::awaitable<HostRange> allocate_pinned_host(Bytes bytes) override;
  asio::awaitable<void> free_pinned_host(HostRange range) override;

  void launch(const KernelLaunch& kernel, StreamHandle stream) override;
  Bytes kernel_scratch_bytes(const std::string& kernel, std::uint64_t work_units) const override;
  void host_callback(StreamHandle stream, std::function<void()> callback) override;
  void set_pool_cross_stream_reuse(bool allowed) override { pool_.set_cross_stream_reuse(allowed); }
  const DeviceCounters& counters() const override { return stats_; }

  // ---- Simulator only ----
  const DeviceModel& model() const { return model_; }
  const DeviceCounters& stats() const { return stats_; }
  // Device memory as the model has it; the configured cap of a run may lower it.
  void set_memory_bytes(Bytes bytes) {
    model_.memory_bytes = properties_.total_memory_bytes = bytes;
    pool_.record_memory();
  }
  // Memory held by another process on the same GPU: it shrinks what this process can get.
  void set_external_memory(Bytes bytes) { pool_.set_external(bytes); }
  // Ground truth: bytes of device memory held by this process (sync allocations + pool reserved).
  Bytes memory_held_bytes() const { return pool_.held_bytes(); }
  Bytes synchronous_allocated_bytes() const { return pool_.synchronous_bytes(); }
  // Freed in stream order, the stream not there yet.
  Bytes pool_pending_bytes() const { return pool_.pending_bytes(); }
  bool lost() const override { return lost_; }
  std::size_t most_operations_queued() const { return engines_.most_operations_queued(); }
  // Leaks and unsynchronised reads found so far.
  CheckerReport check() const;

 private:
  // OpRunner (with lost() above): what the engines' operations do.
  void start(Stream& stream, Op& op, std::function<void()> done) override;
  void finish(Stream& stream, Op& op) override;
  void free_reached(const Stream& stream, const Op& op) override;

  Stream& stream_at(StreamHandle handle, const char* call);
  Event& event_at(EventHandle handle, const char* call);
  void ensure_alive(const char* call) const;
  asio::awaitable<void> copy(OpKind kind, DevicePointer device_side, HostRange host_side, StreamHandle stream);
  void finish_kernel(Stream& stream, Op& op);
  void run_kernel_function(const Op& op);
  void finish_memset(Stream& stream, Op& op);
  void finish_copy(Stream& stream, Op& op);
  void enqueue_pool_dependencies(Stream& stream, const PoolDependencies& dependencies);
  // Every call from now on, and every wait in flight, fails with device_lost saying `cause`.
  void lose_device(std::string cause);
  void schedule_faults();

  SimSystem& system_;
  DeviceModel model_;
  DeviceProperties properties_;
  FaultPlan faults_;
  PcieLink link_;
  Trace& trace_;
  std::string process_name_;
  TraceTrack host_track_;
  DeviceCounters stats_;
  StreamEngines engines_;
  MemoryPool pool_;
  HostPinning pinning_;
  RaceChecker checker_;

  std::uint64_t faulted_kernel_launches_ = 0;
  int kernels_running_ = 0;
  Nanoseconds compute_busy_since_ns_ = 0;
  bool lost_ = false;
  std::string lost_cause_;  // what lost it: the plan's loss or a kernel that faulted
};

}  // namespace stagehand::sim
