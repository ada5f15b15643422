#pragma once
// SimSystem: the virtual clock, the event queue and the Asio io_context that one simulated
// machine (one or more GPUs) runs on.
//
// One thread runs everything. `run()` polls the io_context until no handler is ready, then jumps
// the clock to the next simulated event and delivers it; coroutines written against the Device
// interface therefore run unchanged, and hours of GPU time pass in milliseconds. Ties are broken
// by insertion order, so a run is a pure function of its inputs and its seed.

#include "device/types.hpp"
#include "sim/device_model.hpp"
#include "device/fault_plan.hpp"
#include "sim/pinned_host_ranges.hpp"
#include "util/random.hpp"
#include "trace/trace.hpp"

#include "device/asio.hpp"

#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace stagehand::sim {

class SimDevice;

struct SimOptions {
  std::uint64_t seed = 1;
  // Kernel, copy and host-call durations are scaled by a factor in [1 - jitter, 1 + jitter].
  double duration_jitter = 0.0;
  // Functional mode: device memory is backed by host memory and kernels run the host function
  // registered under their name. Timing mode (false): no bytes behind pointers at all.
  bool functional = false;
  // Keep every trace event for export (false keeps only the hash and the count).
  bool keep_trace_events = true;
};

// What a kernel's host function sees in functional mode: its launch and its buffers as bytes.
class KernelContext {
 public:
  KernelContext(const KernelLaunch& launch, std::vector<std::span<std::byte>> reads,
                std::vector<std::span<std::byte>> writes)
      : launch_(launch), reads_(std::move(reads)), writes_(std::move(writes)) {}
  const KernelLaunch& launch() const { return launch_; }
  std::span<std::byte> read(std::size_t index) const { return reads_.at(index); }
  std::span<std::byte> write(std::size_t index) const { return writes_.at(index); }
  std::uint64_t argument(std::size_t index) const { return launch_.arguments.at(index); }
  // The bytes of the launch's buffer `use`, as a typed launch (device/groth16_launches.hpp) read it
  // from the launch: the first read, else the first write, with its address and size.
  std::span<std::byte> bytes(const BufferUse& use) const {
    for (std::size_t i = 0; i < launch_.reads.size(); ++i) {
      if (same(launch_.reads[i], use)) return reads_[i];
    }
    for (std::size_t i = 0; i < launch_.writes.size(); ++i) {
      if (same(launch_.writes[i], use)) return writes_[i];
    }
    throw std::invalid_argument("kernel " + launch_.name + ": a buffer that is not one of the launch's");
  }

 private:
  static bool same(const BufferUse& a, const BufferUse& b) {
    return a.pointer.address == b.pointer.address && a.bytes == b.bytes;
  }

  const KernelLaunch& launch_;
  std::vector<std::span<std::byte>> reads_;
  std::vector<std::span<std::byte>> writes_;
};

using KernelFunction = std::function<void(KernelContext&)>;

class SimSystem {
 public:
  explicit SimSystem(SimOptions options = {});
  ~SimSystem();
  SimSystem(const SimSystem&) = delete;
  SimSystem& operator=(const SimSystem&) = delete;

  SimDevice& add_device(DeviceModel model, FaultPlan faults = {});
  SimDevice& device(std::size_t index) { return *devices_.at(index); }
  std::size_t device_count() const { return devices_.size(); }

  boost::asio::io_context& io() { return io_; }
  Nanoseconds now() const { return now_; }
  Trace& trace() { return trace_; }
  Random& random() { return random_; }
  const SimOptions& options() const { return options_; }

  // Schedules `action` at device time `at` (not earlier than now).
  void schedule_at(Nanoseconds at, std::function<void()> action);
  void schedule_after(Nanoseconds delay, std::function<void()> action) { schedule_at(now_ + delay, std::move(action)); }
  // A modelled duration scaled by the seed's jitter (options().duration_jitter).
  Nanoseconds jittered(Nanoseconds duration);
  // Host work modelled as taking `duration`: it varies like every other modelled duration.
  boost::asio::awaitable<void> sleep_for(Nanoseconds duration);

  // Runs until nothing is ready and nothing is scheduled, or until the clock would pass
  // `time_limit_ns`. Returns false when it stopped at the limit (work was left).
  bool run(Nanoseconds time_limit_ns = std::numeric_limits<Nanoseconds>::max());
  std::uint64_t events_delivered() const { return events_delivered_; }
  // Calls from other threads (a long-lived engine's news for the program it runs here): each runs
  // on the simulation's thread at the instant it is taken, while run() runs. An idle run() does not
  // wait for them: everything a simulated program waits for is one of its own events (host work
  // runs inline), so a program with nothing scheduled is deadlocked, whatever may arrive later.
  void post_from_outside(std::function<void()> call);
  // Called whenever the system has settled at an instant (every ready handler has run), before
  // the clock moves on: checkers compare their state with the devices' here.
  void set_settled_observer(std::function<void()> observer) { settled_observer_ = std::move(observer); }

  // Functional mode: the host function that stands in for a kernel's instantiation over `curve`
  // (a launch runs the one of its KernelLaunch::curve), and the scratch it needs as its last write
  // buffer (a device asks for at least that much: Device::kernel_scratch_bytes, which knows no
  // curve, so the most of any curve's). Without a curve: BLS12-381's.
  void register_kernel(const std::string& name, kernel::Curve curve, KernelFunction function, Bytes scratch_bytes = 0);
  void register_kernel(const std::string& name, KernelFunction function, Bytes scratch_bytes = 0) {
    register_kernel(name, kernel::Curve::bls12_381, std::move(function), scratch_bytes);
  }
  // Null where the kernel has no host function over that curve.
  const KernelFunction* kernel_function(const std::string& name, kernel::Curve curve = kernel::Curve::bls12_381) const;
  // Whether the kernel has a host function over any curve.
  bool has_kernel_function(std::string_view name) const;
  Bytes kernel_function_scratch_bytes(std::string_view name) const;
  // The names with a host function over `curve`, sorted: for the test that holds them to kernel::kAll.
  std::vector<std::string> kernel_function_names(kernel::Curve curve = kernel::Curve::bls12_381) const;

  // Host memory for timing mode: a distinct, never-dereferenced address range of `bytes`.
  HostRange virtual_host_range(Bytes bytes);
  // The host memory pinned through any of the GPUs, for all of them.
  PinnedHostRanges& pinned_host() { return pinned_host_; }

 private:
  struct Scheduled {
    Nanoseconds time;
    std::uint64_t order;
    std::function<void()> action;
  };
  struct Later {
    bool operator()(const Scheduled& a, const Scheduled& b) const {
      return a.time != b.time ? a.time > b.time : a.order > b.order;
    }
  };

  SimOptions options_;
  boost::asio::io_context io_{1};
  Nanoseconds now_ = 0;
  std::uint64_t next_order_ = 0;
  std::uint64_t events_delivered_ = 0;
  std::vector<Scheduled> queue_;
  std::mutex outside_mutex_;
  std::vector<std::function<void()>> outside_calls_;
  // Posts the calls from outside to the io_context; false when there were none.
  bool take_outside_calls();
  std::function<void()> settled_observer_;
  Trace trace_;
  Random random_;
  PinnedHostRanges pinned_host_;  // before the devices, which use it to the end
  std::vector<std::unique_ptr<SimDevice>> devices_;
  std::map<std::pair<std::string, kernel::Curve>, KernelFunction, std::less<>> kernel_functions_;
  std::map<std::string, Bytes, std::less<>> kernel_function_scratch_;  // by name, the most of any curve's
  std::uintptr_t next_virtual_host_address_ = std::uintptr_t{1} << 44;
};

}  // namespace stagehand::sim
