#pragma once
// Runs a workload through the coordinator on one device of a functional SimSystem, to its end:
// a, b and c from ordinary memory where the policy asks for it, no trace kept.

#include "coordinator/coordinator.hpp"
#include "coordinator/pageable_arena.hpp"
#include "sim/run.hpp"
#include "sim/sim_system.hpp"

namespace stagehand::testing {

inline RunReport run_functional(sim::SimSystem& system, Device& device, const CoordinatorSettings& settings,
                                Workload& workload) {
  PageableArena pageable;
  CoordinatorHooks hooks;
  hooks.pageable_memory = [&pageable](Bytes bytes) { return pageable.take(bytes); };
  Trace trace(false);
  RunReport report;
  sim::run_to_completion(system, [&]() -> asio::awaitable<void> {
    std::vector<Device*> devices{&device};
    report = co_await run_coordinator(devices, settings, workload, trace, hooks);
  }());
  return report;
}

}  // namespace stagehand::testing
