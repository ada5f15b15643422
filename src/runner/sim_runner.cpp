#include "runner/sim_runner.hpp"

#include <stdexcept>

namespace stagehand {

SimulatedRun run_on_simulator(const RunConfig& config, Policy policy, SimulatedRunOptions options) {
  SimulatedRun result;
  BackendOptions simulator;
  simulator.keep_trace_events = options.keep_trace_events;
  simulator.faults = options.faults;
  simulator.device_faults = options.device_faults;
  result.backend = Backend::open_simulator(config, simulator);
  result.system = result.backend->simulator();
  auto& system = *result.system;
  CoordinatorHooks hooks;
  hooks.on_job_done = options.on_job_done;
  hooks.pageable_memory = [&system](Bytes bytes) { return system.virtual_host_range(bytes); };
  if (options.on_budget) {
    hooks.on_budget = [&](int device, const VramBudget& budget) { options.on_budget(device, budget, system.device(static_cast<std::size_t>(device))); };
  }
  hooks.on_budget_gone = options.on_budget_gone;
  if (options.on_settled) system.set_settled_observer(options.on_settled);
  try {
    result.backend->run(
        [&]() -> asio::awaitable<void> {
          PoRepWorkload workload(config.workload);
          result.report = co_await run_coordinator(result.backend->devices(), settings_for(config, policy), workload,
                                                   system.trace(), hooks);
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
