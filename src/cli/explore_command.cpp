// stagehand explore: many seeds with jitter and random faults over the fixtures; non-zero exit
// when an invariant breaks under budgeted.

#include "cli/commands.hpp"

#include "runner/explore.hpp"

#include <fmt/format.h>

#include <memory>

namespace stagehand::cli {
namespace {

struct ExploreCommandOptions {
  std::vector<std::string> fixtures;
  std::uint64_t seeds = 100;
  std::string faults = "alloc,pin,kernel,lost,slow";
  unsigned jobs = 0;
  double jitter = 0.05;
};

int explore_command(const ExploreCommandOptions& command) {
  ExploreOptions options;
  for (const auto& path : command.fixtures) options.fixtures.emplace_back(path);
  options.seeds = command.seeds;
  options.faults = parse_fault_kinds(command.faults);
  options.jobs = command.jobs;
  options.jitter = command.jitter;
  options.on_progress = [](std::uint64_t done, std::uint64_t total, std::uint64_t failures) {
    fmt::print(stderr, "\rexplore: {}/{} runs ({:.0f}%), {} failing under budgeted", done, total, 100.0 * done / total,
               failures);
    if (done == total) fmt::print(stderr, "\n");
  };
  auto summary = explore(options);
  fmt::print("explored {} runs in {:.1f} s ({:.0f} runs/s)\n\n", summary.runs, summary.wall_seconds,
             summary.runs / std::max(summary.wall_seconds, 1e-9));
  fmt::print("{:<34} {:>7}  {}\n", "fixture", "runs", "findings (runs)");
  for (const auto& [fixture, counts] : summary.counts) {
    std::string findings;
    for (const auto& [kind, count] : counts) {
      if (kind != "runs") findings += fmt::format("{}{}: {}", findings.empty() ? "" : "; ", kind, count);
    }
    fmt::print("{:<34} {:>7}  {}\n", fixture, counts.at("runs"), findings.empty() ? "none" : findings);
  }
  int shown = 0;
  for (const auto& finding : summary.findings) {
    if (!finding.failure) continue;
    if (shown++ == 0) fmt::print("\nFAILURES under budgeted:\n");
    if (shown > 20) break;
    fmt::print("  {} seed {}: {}\n    replay: {}\n", finding.fixture, finding.seed, finding.what,
               finding.replay_command);
  }
  int expected = 0;
  for (const auto& finding : summary.findings) {
    if (finding.failure) continue;
    if (expected++ == 0) fmt::print("\nexpected findings under the seed's policies (the incidents; a sample):\n");
    if (expected > 8) break;
    fmt::print("  {} seed {}: {}\n    replay: {}\n", finding.fixture, finding.seed, finding.what,
               finding.replay_command);
  }
  fmt::print("\n{} failures under budgeted, {} expected findings under the seed's policies\n", summary.failures,
             summary.expected_findings);
  return summary.failures == 0 ? 0 : 1;
}

}  // namespace

void add_explore_command(CLI::App& app) {
  auto options = std::make_shared<ExploreCommandOptions>();
  auto* command =
      app.add_subcommand("explore", "Run many seeds with jitter and faults over the fixtures and check invariants");
  command->add_option("--fixture", options->fixtures, "A fixture (repeatable; default: all of fixtures/)")
      ->check(CLI::ExistingFile);
  command->add_option("--seeds", options->seeds, "Seeds per fixture")->capture_default_str();
  command->add_option("--faults", options->faults, "Fault kinds to draw from: alloc,pin,kernel,lost,slow or none")
      ->capture_default_str();
  command->add_option("--jobs", options->jobs, "Threads (default: every core)");
  command->add_option("--jitter", options->jitter, "Duration jitter of every run (at least)")->capture_default_str();
  on_selected(command, [options] { return explore_command(*options); });
}

}  // namespace stagehand::cli
