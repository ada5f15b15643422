#pragma once
// The run's figures from its job records and its devices' counters (RunReport, coordinator.hpp).

#include "coordinator/coordinator.hpp"

#include <string>
#include <vector>

namespace stagehand {

struct RunTotals {
  std::string policy;
  int proofs = 0;
  Nanoseconds makespan_ns = 0;
  std::uint64_t fallbacks = 0;
  // Per GPU, in the devices' order: empty for one that worked to the end, else what happened
  // ("lost: ...", "could not be set up: ...").
  std::vector<std::string> device_failures;
};

RunReport summarise_run(RunTotals totals, const std::vector<Device*>& devices, std::vector<JobRecord> jobs,
                        std::vector<std::string> log);

}  // namespace stagehand
