#pragma once
// FaultyDevice: a Device that forwards every call to another Device and injects the faults of a
// FaultPlan (device/fault_plan.hpp) on the way, so that failure paths run on any backend,
// CudaDevice included (Backend wraps the devices it opens; on the simulator it gives FaultyDevice
// only the plan's adaptor_part, SimDevice injecting the rest itself).
//
// How it injects each fault:
//   - a failed allocation or pinning throws before the call reaches the device behind, so that
//     nothing is allocated or pinned for it;
//   - a kernel that faults (fail_kernel_name) is forwarded (the work is done) and the device is
//     lost with that launch, as a faulting kernel loses a CUDA context;
//   - a kernel error (kernel_error_*) is forwarded too, and every wait on its stream's work reports
//     kernel_failed until the stream is synchronised: one job's failure on a device that goes on;
//   - copy delays wait on the host before the copy is issued; the device behind copies at its
//     own rate;
//   - once the device is lost (at a device time, at its Nth launch, or with a faulting kernel)
//     every call that does work fails with device_lost. Calls that only give something back
//     (frees, destroys, unregisters) still reach the device behind, so that a lost device leaves
//     nothing allocated there.
// Every injected error says "[injected fault]" in its message.

#include "device/device.hpp"
#include "device/fault_plan.hpp"
#include "util/random.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace stagehand {

class FaultyDevice final : public Device {
 public:
  // `inner` must outlive this adaptor. `faults` must hold nothing simulator_only().
  FaultyDevice(Device& inner, FaultPlan faults);

  Device& inner() { return inner_; }
  const FaultPlan& faults() const { return faults_; }
  // Whether the injected loss has happened (as of now()).
  bool lost() const;
  std::uint64_t injected_count() const { return injected_; }

  const DeviceProperties& properties() const override { return inner_.properties(); }
  asio::any_io_executor executor() override { return inner_.executor(); }
  Nanoseconds now() const override { return inner_.now(); }
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
  PoolStats pool_stats() const override { return inner_.pool_stats(); }
  MemoryInfo memory_info() const override;

  asio::awaitable<void> register_host(HostRange range) override;
  asio::awaitable<void> unregister_host(HostRange range) override;
  asio::awaitable<HostRange> allocate_pinned_host(Bytes bytes) override;
  asio::awaitable<void> free_pinned_host(HostRange range) override;
  void set_pool_cross_stream_reuse(bool allowed) override { inner_.set_pool_cross_stream_reuse(allowed); }

  void launch(const KernelLaunch& kernel, StreamHandle stream) override;
  Bytes kernel_scratch_bytes(const std::string& kernel, std::uint64_t work_units) const override {
    return inner_.kernel_scratch_bytes(kernel, work_units);
  }
  void host_callback(StreamHandle stream, std::function<void()> callback) override;
  void host_callback_reached(StreamHandle stream, std::function<void(Nanoseconds reached)> callback) override;

  const DeviceCounters& counters() const override { return inner_.counters(); }

 private:
  // Throws device_lost once the loss has happened.
  void check_lost(const char* call) const;
  [[noreturn]] void fail(DeviceErrc code, const std::string& what);
  bool allocation_fails(bool stream_ordered);
  void pin_check(const char* call, Bytes bytes);
  // The kernel error pending on `stream`, if any, thrown (and cleared) here.
  void report_kernel_error(std::uint32_t stream, const char* call, bool clear);
  asio::awaitable<void> copy_delay();

  Device& inner_;
  FaultPlan faults_;
  Random random_;
  std::uint64_t allocations_ = 0;
  std::uint64_t pins_ = 0;
  std::uint64_t faulting_kernel_launches_ = 0;  // of fail_kernel_name
  std::uint64_t error_kernel_launches_ = 0;     // of kernel_error_name
  std::uint64_t all_launches_ = 0;
  // Why the device was lost at a launch ("its kernel launch 3"); empty while it was not.
  std::string lost_at_launch_;
  std::uint64_t injected_ = 0;
  // Streams with a failed kernel not yet reported, and the stream each event was last recorded on.
  std::set<std::uint32_t> failed_streams_;
  std::map<std::uint32_t, std::uint32_t> recorded_on_;
  std::string failed_kernel_;
};

}  // namespace stagehand
