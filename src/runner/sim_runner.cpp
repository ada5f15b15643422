#include "runner/sim_runner.hpp"

#include "sim/device_model.hpp"
#include "sim/run.hpp"

#include <stdexcept>

namespace stagehand {

SimulatedRun run_on_simulator(const RunConfig& config, Policy policy, SimulatedRunOptions options) {
  sim::SimOptions sim_options;
  sim_options.seed = config.coordinator.seed;
  sim_options.duration_jitter = config.duration_jitter;
  sim_options.functional = config.functional;
  sim_options.keep_trace_events = options.keep_trace_events;
  SimulatedRun result;
  result.system = std::make_unique<sim::SimSystem>(sim_options);
  auto& system = *result.system;
  auto model = sim::load_device_model(sim::find_device_model(config.device_model));
  std::vector<Device*> devices;
  for (int i = 0; i < config.gpus; ++i) {
    auto& device = system.add_device(model, options.faults);
    if (config.vram_cap_bytes > 0 && config.vram_cap_bytes < model.memory_bytes) device.set_memory_bytes(config.vram_cap_bytes);
    devices.push_back(&device);
  }
  CoordinatorHooks hooks;
  hooks.on_job_done = options.on_job_done;
  hooks.pageable_memory = [&system](Bytes bytes) { return system.virtual_host_range(bytes); };
  if (options.on_budget) {
    hooks.on_budget = [&](int device, const VramBudget& budget) { options.on_budget(device, budget, system.device(static_cast<std::size_t>(device))); };
  }
  if (options.on_settled) system.set_settled_observer(options.on_settled);
  try {
    sim::run_to_completion(
        system,
        [&]() -> asio::awaitable<void> {
          result.report = co_await run_coordinator(devices, settings_for(config, policy), system.trace(), hooks);
        }(),
        options.time_limit_ns);
  } catch (const std::exception& error) {
    result.error = error.what();
  }
  for (std::size_t i = 0; i < system.device_count(); ++i) {
    auto report = system.device(i).check();
    result.checker.leaks.insert(result.checker.leaks.end(), report.leaks.begin(), report.leaks.end());
    result.checker.unsynchronized_reads.insert(result.checker.unsynchronized_reads.end(), report.unsynchronized_reads.begin(),
                                               report.unsynchronized_reads.end());
  }
  result.trace_hash = system.trace().hash();
  return result;
}

}  // namespace stagehand
