#pragma once
// Fixtures: the OOM incidents and their fixes as scenario files (fixtures/*.toml), each with the
// outcome it must show in an [expect] table. A fixture names a device model, a workload,
// workers, a policy with its switches, a seed and fault points, in the keys of a run
// configuration (its faults too: [faults], config/faults_table.hpp), plus:
//
//   [fixture]  description, policy, and kind: "workload" (the coordinator runs the partitions)
//              or "freed-but-pending" (a scripted device scenario)
//   [expect]   see Expectations below

#include "config/run_config.hpp"
#include "runner/sim_runner.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace stagehand {

struct Expectations {
  std::optional<bool> out_of_memory;          // any OOM error at all
  std::optional<int> first_failed_partition;  // the lowest partition index that failed
  std::optional<int> partitions_failed;       // exactly this many
  std::optional<int> partitions_moved_min;    // at least this many moved to another GPU when theirs was lost
  std::optional<int> gpus_failed;             // exactly this many GPUs lost or not set up
  std::optional<bool> every_fallback_failed;  // each partition that fell back failed
  std::optional<bool> overtaken;              // a partition that had not pre-staged got the lock first and failed
  std::optional<std::uint64_t> fallbacks_min, fallbacks_max;
  std::optional<double> compute_busy_min, compute_busy_max;
  std::optional<double> seconds_per_proof_max;
  std::optional<double> gpu_seconds_per_partition_min, gpu_seconds_per_partition_max;
  std::optional<double> compute_idle_ms_per_partition_min, compute_idle_ms_per_partition_max;
  std::optional<double> vram_peak_gib_max;
  // Another fixture (a path relative to this one) whose seconds per proof this run must not
  // exceed by more than 1%. A reference with failed partitions has no finished proofs to beat.
  std::optional<std::string> seconds_per_proof_no_worse_than;
  // freed-but-pending scenario
  std::optional<bool> malloc_fails_while_free_pending;
  std::optional<bool> malloc_succeeds_after_free_completes;
};

// The scripted scenario of docs/device-facts.md: a stream-ordered free pending behind a kernel, and
// a plain allocation meanwhile.
struct FreedButPendingScenario {
  double card_gib = 16;
  double freed_gib = 12;
  double kernel_ms = 500;
  double malloc_gib = 8;
};

struct Fixture {
  std::filesystem::path path;
  std::string name;  // the file name without .toml
  std::string description;
  std::string kind = "workload";
  Policy policy = Policy::budgeted;
  RunConfig config;
  FreedButPendingScenario scenario;
  Expectations expect;
};

// What one replay found.
struct FixtureOutcome {
  RunReport report;  // workload fixtures
  std::uint64_t trace_hash = 0;
  std::vector<std::string> checker_findings;
  std::vector<std::string> failures;  // each broken expectation, in words
  std::vector<std::string> notes;     // what was measured, for the reader
  // The simulated machine, kept for its trace and counters (`system` is the backend's).
  std::unique_ptr<Backend> backend;
  sim::SimSystem* system = nullptr;
  bool passed() const { return failures.empty(); }
};

// Throws ConfigError naming the file, line and key.
Fixture load_fixture(const std::filesystem::path& path);
std::vector<std::filesystem::path> fixture_files(const std::filesystem::path& folder = "fixtures");

struct ReplayOptions {
  std::optional<std::uint64_t> seed;  // replaces the fixture's
  bool keep_trace_events = true;
  bool check_expectations = true;  // false: run only (exploration checks invariants instead)
  std::function<void(int device, const VramBudget&, const sim::SimDevice&)> on_budget;
  std::function<void(int device, const VramBudget&)> on_budget_gone;
  std::function<void()> on_settled;
  Nanoseconds time_limit_ns = 3600 * kSecond;
};

// Runs the fixture and checks its expectations. A deadlock or an exception becomes a failure.
FixtureOutcome replay_fixture(const Fixture& fixture, const ReplayOptions& options = {});

}  // namespace stagehand
