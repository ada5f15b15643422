#include "runner/explore.hpp"
#include "device/kernel_abi.hpp"

#include "device/format.hpp"
#include "util/random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace stagehand {

const std::vector<std::string>& fault_kind_names() {
  static const std::vector<std::string> names{"alloc", "pin", "kernel", "lost", "slow"};
  return names;
}

std::vector<FaultKind> parse_fault_kinds(const std::string& list) {
  std::vector<FaultKind> kinds;
  if (list == "none" || list.empty()) return kinds;
  std::size_t start = 0;
  while (start <= list.size()) {
    auto end = list.find(',', start);
    auto name = list.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const auto& names = fault_kind_names();
    auto found = std::find(names.begin(), names.end(), name);
    if (found == names.end()) {
      throw std::invalid_argument(
          fmt::format("unknown fault '{}' (one of: {}, or none)", name, fmt::join(names, ", ")));
    }
    kinds.push_back(static_cast<FaultKind>(found - names.begin()));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return kinds;
}

Fixture exploration_variant(const Fixture& fixture, std::uint64_t seed, const std::vector<FaultKind>& faults,
                            double jitter) {
  auto variant = fixture;
  variant.config.coordinator.seed = seed;
  if (fixture.kind != "workload") return variant;  // scripted device facts: no jitter, no faults
  variant.config.duration_jitter = std::max(variant.config.duration_jitter, jitter);
  Random random(seed * 0x9e3779b97f4a7c15ull + 17);
  // Half of the runs get one fault, drawn from the allowed kinds.
  if (!faults.empty() && random.below(2) == 0) {
    auto& plan = variant.config.faults;
    auto partitions =
        static_cast<std::uint64_t>(fixture.config.workload.proofs * fixture.config.workload.partitions_per_proof);
    switch (faults[random.below(faults.size())]) {
      case FaultKind::allocation: plan.fail_allocation_number = 1 + random.below(12 * partitions); break;
      case FaultKind::pinning: plan.fail_host_pin_number = 1 + random.below(4 + 3 * partitions); break;
      case FaultKind::kernel:
        plan.fail_kernel_name = random.below(2) == 0 ? kernel::ntt : kernel::msm_batch;
        plan.fail_kernel_occurrence = 1 + random.below(7 * partitions);
        break;
      case FaultKind::device_lost:
        plan.lose_device_at_ns =
            static_cast<Nanoseconds>(random.below(static_cast<std::uint64_t>(partitions) * 2 * kSecond));
        break;
      case FaultKind::slow_link:
        plan.pcie_slowdown_factor = 1.5 + 3 * random.uniform();
        plan.pcie_slowdown_from_ns =
            static_cast<Nanoseconds>(random.below(static_cast<std::uint64_t>(partitions) * kSecond));
        break;
    }
    // With several GPUs the fault strikes one of them, as it does in a farm.
    if (fixture.config.gpus > 1)
      plan.device = static_cast<int>(random.below(static_cast<std::uint64_t>(fixture.config.gpus)));
  }
  return variant;
}

std::string describe_faults(const FaultPlan& faults) {
  std::vector<std::string> parts;
  if (faults.fail_allocation_number) parts.push_back(fmt::format("fail allocation {}", faults.fail_allocation_number));
  if (faults.fail_host_pin_number) parts.push_back(fmt::format("fail host pinning {}", faults.fail_host_pin_number));
  if (!faults.fail_kernel_name.empty()) {
    parts.push_back(
        fmt::format("fail launch {} of kernel '{}'", faults.fail_kernel_occurrence, faults.fail_kernel_name));
  }
  if (faults.lose_device_at_ns >= 0)
    parts.push_back(fmt::format("lose the device at {}", format_duration(faults.lose_device_at_ns)));
  if (faults.pcie_slowdown_factor != 1.0) {
    parts.push_back(fmt::format("PCIe {:.1f}x slower from {}", faults.pcie_slowdown_factor,
                                format_duration(faults.pcie_slowdown_from_ns)));
  }
  // A fixture's own faults may name what only FaultyDevice injects; exploration draws none of these.
  if (faults.lose_device_at_launch)
    parts.push_back(fmt::format("lose the device at launch {}", faults.lose_device_at_launch));
  if (faults.allocation_failure_probability > 0) {
    parts.push_back(fmt::format("fail allocations with probability {}", faults.allocation_failure_probability));
  }
  if (!faults.kernel_error_name.empty()) {
    parts.push_back(
        fmt::format("kernel error at launch {} of '{}'", faults.kernel_error_occurrence, faults.kernel_error_name));
  }
  if (faults.kernel_error_probability > 0)
    parts.push_back(fmt::format("kernel errors with probability {}", faults.kernel_error_probability));
  if (faults.copy_delay_ns > 0) {
    parts.push_back(fmt::format("copies {} late from {}", format_duration(faults.copy_delay_ns),
                                format_duration(faults.copy_delay_from_ns)));
  }
  if (faults.device >= 0 && !parts.empty()) return fmt::format("on GPU {}: {}", faults.device, fmt::join(parts, ", "));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// What a job's out-of-memory errors came to. A job that ran out of memory and then recovered
// (it fell back to uploading inside the lock, and completed) has no error of its own: say what
// happened instead of printing an empty message.
std::string describe_out_of_memory(const JobRecord& job) {
  const auto count =
      fmt::format("{} out-of-memory error{}", job.out_of_memory_errors, job.out_of_memory_errors == 1 ? "" : "s");
  if (!job.error.empty()) return fmt::format("{} ({})", job.error, count);
  return fmt::format("{}, recovered: the partition {}completed", count,
                     job.fell_back ? "fell back to uploading inside the lock and " : "");
}

std::vector<std::string> check_invariants(const Fixture& variant, const FixtureOutcome& outcome,
                                          const std::vector<std::string>& accounting_errors) {
  std::vector<std::string> violations;
  for (const auto& failure : outcome.failures) {
    if (failure.rfind("the run did not finish", 0) == 0 || failure.rfind("checker: ", 0) == 0)
      violations.push_back(failure);
  }
  if (variant.kind != "workload" || !outcome.system) return violations;
  const auto& report = outcome.report;
  if (static_cast<int>(report.jobs.size()) != report.partitions) {
    violations.push_back(
        fmt::format("job lost: {} of {} partitions accounted for", report.jobs.size(), report.partitions));
  }
  for (const auto& job : report.jobs) {
    if (job.finished_ns < 0) violations.push_back(fmt::format("job lost: partition {} never finished", job.index));
  }
  if (variant.policy == Policy::budgeted) {
    for (const auto& job : report.jobs) {
      if (job.out_of_memory_errors > 0 && job.error.find("[injected fault]") == std::string::npos) {
        violations.push_back(
            fmt::format("out of memory under budgeted: partition {}: {}", job.index, describe_out_of_memory(job)));
        break;
      }
    }
    for (const auto& error : accounting_errors) violations.push_back(error);
  } else {
    for (const auto& job : report.jobs) {
      if (job.out_of_memory_errors > 0 && job.error.find("[injected fault]") == std::string::npos) {
        violations.push_back(fmt::format("out of memory under {}: partition {}: {}", to_string(variant.policy),
                                         job.index, describe_out_of_memory(job)));
        break;
      }
    }
  }
  return violations;
}

FixtureOutcome replay_exploration(const Fixture& fixture, std::uint64_t seed, const std::vector<FaultKind>& faults,
                                  double jitter, std::vector<std::string>& violations, bool keep_trace_events) {
  auto variant = exploration_variant(fixture, seed, faults, jitter);
  std::vector<std::string> accounting_errors;
  // The budgets alive now, beside their devices: a budget leaves when its run lets go of it
  // (on_budget_gone, the run over or its frames destroyed after a deadlock), and what it held
  // then is kept for the check at the end. Reading it later read freed memory (issue 22, 8).
  struct Watched {
    const VramBudget* budget;
    const sim::SimDevice* device;
  };
  std::vector<Watched> budgets;
  std::vector<std::pair<const sim::SimDevice*, Bytes>> held_at_end;
  ReplayOptions options;
  options.keep_trace_events = keep_trace_events;
  options.check_expectations = false;
  options.time_limit_ns = 3600 * kSecond;
  options.on_budget = [&](int, const VramBudget& budget, const sim::SimDevice& device) {
    budgets.push_back({&budget, &device});
  };
  options.on_budget_gone = [&](int, const VramBudget& budget) {
    auto found = std::find_if(budgets.begin(), budgets.end(), [&](const Watched& w) { return w.budget == &budget; });
    if (found == budgets.end()) return;
    held_at_end.emplace_back(found->device, budget.held_bytes());
    budgets.erase(found);
  };
  options.on_settled = [&] {
    if (!accounting_errors.empty()) return;
    for (auto [budget, device] : budgets) {
      if (device->lost()) continue;
      // Ground truth: what the device holds for jobs (cudaMalloc'd, in use from the pool, and
      // freed in stream order but not yet reached). The budget leads it by design: it reserves
      // before a job allocates (the call takes host time, and may fail) and learns that a free
      // was reached one callback later. So at every step it may count more, never less, and
      // the device never holds more than the budget's capacity; when the run is over both are 0.
      Bytes truth =
          device->synchronous_allocated_bytes() + device->pool_stats().used_bytes + device->pool_pending_bytes();
      Bytes held = budget->held_bytes();
      if (held < truth || truth > budget->capacity_bytes()) {
        accounting_errors.push_back(
            fmt::format("budget accounting: GPU {} at {}: the budget holds {} of {}, the device {}",
                        device->properties().ordinal, format_duration(device->now()), format_bytes(held),
                        format_bytes(budget->capacity_bytes()), format_bytes(truth)));
      }
    }
  };
  auto outcome = replay_fixture(variant, options);
  // A budget still watched here was never let go of: its run's frames are leaked. Say so rather
  // than read it.
  for (const auto& watched : budgets) {
    accounting_errors.push_back(fmt::format("budget accounting: GPU {}: the run never let go of its budget",
                                            watched.device->properties().ordinal));
  }
  for (auto [device, held] : held_at_end) {
    if (outcome.system && !device->lost() && (held != 0 || device->pool_stats().used_bytes != 0)) {
      accounting_errors.push_back(fmt::format("budget accounting: at the end the budget holds {}, the device {}",
                                              format_bytes(held), format_bytes(device->pool_stats().used_bytes)));
    }
  }
  violations = check_invariants(variant, outcome, accounting_errors);
  return outcome;
}

ExploreSummary explore(const ExploreOptions& options) {
  auto paths = options.fixtures.empty() ? fixture_files() : options.fixtures;
  std::vector<Fixture> fixtures;
  for (const auto& path : paths) fixtures.push_back(load_fixture(path));
  ExploreSummary summary;
  const std::uint64_t total = fixtures.size() * options.seeds;
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::uint64_t> done{0};
  std::atomic<std::uint64_t> failures{0};
  std::mutex mutex;
  auto fault_list = [&] {
    std::vector<std::string> names;
    for (auto kind : options.faults) names.push_back(fault_kind_names()[static_cast<std::size_t>(kind)]);
    return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ","));
  }();
  auto worker = [&] {
    for (;;) {
      auto index = next++;
      if (index >= total) return;
      const auto& fixture = fixtures[index % fixtures.size()];
      auto seed = options.first_seed + index / fixtures.size();
      std::vector<std::string> violations;
      replay_exploration(fixture, seed, options.faults, options.jitter, violations);
      bool budgeted = fixture.policy == Policy::budgeted;
      {
        std::lock_guard lock(mutex);
        auto& counts = summary.counts[fixture.name];
        ++counts["runs"];
        for (const auto& violation : violations) {
          auto kind = violation.substr(0, violation.find(':'));
          ++counts[kind];
          ExploreFinding finding{fixture.name, seed, budgeted, violation,
                                 fmt::format("stagehand replay {} --seed {} --explore --faults {} --jitter {}",
                                             fixture.path.string(), seed, fault_list, options.jitter)};
          if (budgeted) {
            ++summary.failures;
            if (summary.findings.size() < 200) summary.findings.insert(summary.findings.begin(), finding);
          } else {
            ++summary.expected_findings;
            if (summary.findings.size() < 200) summary.findings.push_back(finding);
          }
        }
        if (budgeted && !violations.empty()) ++failures;
      }
      auto finished = ++done;
      if (options.on_progress && (finished % 200 == 0 || finished == total))
        options.on_progress(finished, total, failures);
    }
  };
  auto start = std::chrono::steady_clock::now();
  unsigned threads = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < threads; ++i) pool.emplace_back(worker);
  for (auto& thread : pool) thread.join();
  summary.runs = total;
  summary.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace stagehand
