#pragma once
// FaultyDevice: a Device that forwards every call to another Device and injects failures on the
// way, so that the failure paths the simulator's FaultPlan (sim/fault_plan.hpp) exercises can
// run on any backend, CudaDevice included (BackendOptions::device_faults wraps each device the
// backend opens).
//
// What it injects, and how that differs from the simulator's own fault points:
//   - the Nth device allocation (allocate and allocate_async counted together, from 1), or each
//     allocation with a probability drawn from a seed, fails with out-of-memory; nothing is
//     allocated on the device behind;
//   - the Nth host pinning (register_host or allocate_pinned_host, from 1) fails;
//   - the Nth launch of a named kernel fails: the launch is forwarded (the work is done) and every
//     wait on its stream's work reports kernel_failed until the stream is synchronised. No GPU
//     fails so: a kernel that faults loses the CUDA context (device_lost for every later call, as
//     the simulator's FaultPlan has it). This one is a failure of one job on a device that goes
//     on, for the paths that must handle that;
//   - copies issued from a device time on are delayed on the host before they are issued (a slow
//     link as the host sees it; the device behind copies at its own rate);
//   - the device is lost at a device time, or at its Nth kernel launch (a point in the work that
//     does not move with how long set-up took): from then on every call that does work fails with
//     device_lost. Calls that only give something back (frees, destroys, unregisters) still
//     reach the device behind, so that a lost device leaves nothing allocated there.
// Every injected error says "[injected fault]" in its message.

#include "device/device.hpp"
#include "util/random.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace stagehand {

struct DeviceFaults {
  int device = -1;  // the GPU (its index in the run, from 0) wrapped; -1: every GPU
  std::uint64_t fail_allocation_number = 0;     // 0: never
  double allocation_failure_probability = 0.0;  // each stream-ordered allocation, drawn from `seed`
  double kernel_failure_probability = 0.0;      // each launch, drawn from `seed`
  std::uint64_t seed = 0;
  std::uint64_t fail_host_pin_number = 0;  // 0: never
  std::string fail_kernel_name;            // empty: never
  std::uint64_t fail_kernel_occurrence = 1;
  Nanoseconds lose_device_at_ns = -1;  // <0: never
  std::uint64_t lose_device_at_launch = 0;  // lost at its Nth kernel launch (from 1), which fails; 0: never
  Nanoseconds copy_delay_ns = 0;       // added before each copy issued at or after copy_delay_from_ns
  Nanoseconds copy_delay_from_ns = 0;

  bool applies_to(int index) const { return device < 0 || device == index; }
  bool any() const {
    return fail_allocation_number != 0 || allocation_failure_probability > 0 || kernel_failure_probability > 0 ||
           fail_host_pin_number != 0 ||
           !fail_kernel_name.empty() || lose_device_at_ns >= 0 || lose_device_at_launch != 0 || copy_delay_ns > 0;
  }
};

class FaultyDevice final : public Device {
 public:
  // `inner` must outlive this adaptor.
  FaultyDevice(Device& inner, DeviceFaults faults);

  Device& inner() { return inner_; }
  const DeviceFaults& faults() const { return faults_; }
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
  DeviceFaults faults_;
  Random random_;
  std::uint64_t allocations_ = 0;
  std::uint64_t pins_ = 0;
  std::uint64_t kernel_launches_ = 0;  // of the named kernel
  std::uint64_t all_launches_ = 0;
  bool lost_at_launch_ = false;
  std::uint64_t injected_ = 0;
  // Streams with a failed kernel not yet reported, and the stream each event was last recorded on.
  std::set<std::uint32_t> failed_streams_;
  std::map<std::uint32_t, std::uint32_t> recorded_on_;
  std::string failed_kernel_;
};

}  // namespace stagehand
