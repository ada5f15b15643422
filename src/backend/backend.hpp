#pragma once
// The one place that opens devices: from the configuration, CUDA devices (CudaDevice, where this
// build has CUDA and the machine a GPU) or simulated ones (a SimSystem of the configured device
// model). Commands and tests take the devices from here and run the coordinator on the
// backend's executor; nothing else names a backend.

#include "device/device.hpp"
#include "device/faulty_device.hpp"
#include "config/run_config.hpp"
#include "device/fault_plan.hpp"
#include "trace/trace.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace stagehand {

namespace sim {
class SimSystem;
}

struct BackendOptions {
  // The simulator: device memory backed by host memory, kernels on the CPU reference.
  bool functional = false;
  // Every trace event kept (a picture, a Perfetto file), or only the trace's hash and count.
  bool keep_trace_events = true;
  // The faults to inject (device/fault_plan.hpp); none set: the configuration's [faults]. On the
  // simulator SimDevice injects the plan's simulated_part and a FaultyDevice around each device
  // the rest; on a GPU a FaultyDevice injects it all, and a simulator_only() plan is refused.
  FaultPlan faults;
  // On the simulator, the whole plan through FaultyDevice as on a GPU: for tests of the adaptor.
  bool faults_by_adaptor = false;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // As `config.backend` says: "cuda" (an error naming the configuration where there is no GPU or
  // no CUDA in this build), "sim", or "auto" (CUDA where both are present). On a functional
  // simulator the Groth16 and setup kernels' host functions are registered.
  static std::unique_ptr<Backend> open(const RunConfig& config, BackendOptions options);
  static std::unique_ptr<Backend> open_simulator(const RunConfig& config, BackendOptions options);
  // Throws std::runtime_error where this build has no CUDA or the machine no GPU.
  static std::unique_ptr<Backend> open_cuda(const RunConfig& config, BackendOptions options = {});
  // CUDA devices present (0 in a build without CUDA).
  static int cuda_device_count();

  virtual bool on_gpu() const = 0;
  const std::vector<Device*>& devices() const { return devices_; }
  // "2 x CUDA NVIDIA H200" or "1 x simulated h200 (functional)", for progress lines.
  virtual std::string describe() const = 0;
  // Where the run's spans go: the simulator's own trace (device work included), or one of the
  // backend's for a GPU (recording when `trace_enabled`).
  virtual Trace& trace() = 0;
  // Runs `program` to completion on the devices' executor; rethrows what it threw. On the
  // simulator, `time_limit_ns` of virtual time ends a run that does not finish.
  virtual void run(asio::awaitable<void> program, Nanoseconds time_limit_ns) = 0;
  void run(asio::awaitable<void> program);
  // For a program that takes news from other threads while run() runs it (the engine's runs that
  // proofs join): runs `call` on the devices' executor, from any thread. run() does not wait for
  // such calls once the program has nothing in flight: it returns (on the simulator: calls the
  // program deadlocked), so a program must only wait for news while its own work goes on.
  virtual void post_from_outside(std::function<void()> call) = 0;
  // The simulator behind the devices, or null on a GPU.
  virtual sim::SimSystem* simulator() { return nullptr; }
  // On a GPU, each kernel's span as its CUDA events timed it into `trace` (null: stop).
  virtual void trace_kernels(Trace* trace) {}

 protected:
  // Replaces each device by a FaultyDevice over it, where `faults` has any.
  void wrap_devices(const FaultPlan& faults);
  std::vector<Device*> devices_;
  std::vector<std::unique_ptr<FaultyDevice>> faulty_devices_;
};

// Traces `backend`'s kernels (and, on a GPU, its blocking host calls) into `trace` for the scope's
// life, where `trace` is not null; stops on every way out.
class KernelTraceScope {
 public:
  KernelTraceScope(Backend& backend, Trace* trace) : backend_(backend), traced_(trace != nullptr) {
    if (traced_) backend_.trace_kernels(trace);
  }
  ~KernelTraceScope() {
    if (traced_) backend_.trace_kernels(nullptr);
  }
  KernelTraceScope(const KernelTraceScope&) = delete;
  KernelTraceScope& operator=(const KernelTraceScope&) = delete;

 private:
  Backend& backend_;
  bool traced_;
};

}  // namespace stagehand
