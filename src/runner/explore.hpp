#pragma once
// Seeded exploration (after TigerBeetle's VOPR and FoundationDB's simulation): many seeds of
// every fixture, with duration jitter and random fault points, checking invariants after every
// run and the budget's accounting at every step. A failure prints the command that replays it.

#include "runner/fixture.hpp"

#include <filesystem>
#include <map>
#include <functional>
#include <string>
#include <vector>

namespace stagehand {

enum class FaultKind { allocation, pinning, kernel, device_lost, slow_link };
const std::vector<std::string>& fault_kind_names();
std::vector<FaultKind> parse_fault_kinds(const std::string& list);  // "alloc,pin,kernel,lost,slow" or "none"

struct ExploreOptions {
  std::vector<std::filesystem::path> fixtures;  // all of fixtures/ when empty
  std::uint64_t seeds = 100;                    // per fixture
  std::uint64_t first_seed = 1;
  std::vector<FaultKind> faults{FaultKind::allocation, FaultKind::pinning, FaultKind::kernel, FaultKind::device_lost,
                                FaultKind::slow_link};
  double jitter = 0.05;  // at least this much duration jitter in every run
  unsigned jobs = 0;     // threads; 0: every core
  std::function<void(std::uint64_t done, std::uint64_t total, std::uint64_t failures)> on_progress;
};

// The variant of `fixture` that exploration runs for `seed`: jitter and, where the seed draws
// one, a fault. A pure function of its arguments, so `replay --explore` gets the same run.
Fixture exploration_variant(const Fixture& fixture, std::uint64_t seed, const std::vector<FaultKind>& faults,
                            double jitter);

struct ExploreFinding {
  std::string fixture;
  std::uint64_t seed = 0;
  bool failure = false;  // under budgeted: a defect; under the seed's policies: an expected finding
  std::string what;
  std::string replay_command;
};

struct ExploreSummary {
  std::uint64_t runs = 0;
  std::uint64_t failures = 0;
  std::uint64_t expected_findings = 0;
  std::vector<ExploreFinding> findings;  // failures first, then a sample of expected findings
  std::map<std::string, std::map<std::string, std::uint64_t>> counts;  // fixture -> kind -> runs
  double wall_seconds = 0;
};

// The invariants of one run; empty when all hold.
std::vector<std::string> check_invariants(const Fixture& variant, const FixtureOutcome& outcome,
                                          const std::vector<std::string>& accounting_errors);

ExploreSummary explore(const ExploreOptions& options);

// "fail allocation 12", "lose the device at 3.2 s", ...
std::string describe_faults(const FaultPlan& faults);

// Replays one exploration run (the command a finding prints).
FixtureOutcome replay_exploration(const Fixture& fixture, std::uint64_t seed, const std::vector<FaultKind>& faults,
                                  double jitter, std::vector<std::string>& violations, bool keep_trace_events = false);

}  // namespace stagehand
