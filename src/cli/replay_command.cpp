// stagehand replay FIXTURE: runs one fixture, prints a timeline per worker and the expectation
// check, writes the trace, and exits non-zero when an expectation fails.

#include "cli/commands.hpp"

#include "device/format.hpp"
#include "runner/explore.hpp"
#include "runner/fixture.hpp"
#include "coordinator/run_report_format.hpp"
#include "trace/svg_timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>

namespace stagehand::cli {
namespace {

struct ReplayCommandOptions {
  std::string fixture;
  std::optional<std::uint64_t> seed;
  std::string trace;
  bool explore = false;
  std::string faults = "alloc,pin,kernel,lost,slow";
  double jitter = 0.05;
};

// Lock waits, uploads, kernels' host side, OOMs and fallbacks, per worker, in time order.
void print_timeline(const Trace& trace) {
  std::map<std::uint32_t, std::vector<const TraceEvent*>> rows;
  for (const auto& event : trace.events()) {
    if (trace.string(event.category) != "coordinator") continue;
    rows[event.track].push_back(&event);
  }
  for (auto& [track, events] : rows) {
    std::stable_sort(events.begin(), events.end(), [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
    fmt::print("{} / {}\n", trace.track_process(track), trace.track_thread(track));
    for (const auto* event : events) {
      auto start = static_cast<double>(event->start_ns) / 1e9;
      auto name = trace.string(event->name);
      if (event->phase == TracePhase::span) {
        fmt::print("  {:9.3f} s  {:>10}  {}{}\n", start, format_duration(event->end_ns - event->start_ns), name,
                   event->detail.empty() ? "" : "  (" + event->detail + ")");
      } else {
        bool alarm =
            name.find("out of memory") != std::string_view::npos || name.find("failed") != std::string_view::npos;
        fmt::print("  {:9.3f} s  {:>10}  {}{}: {}\n", start, "", alarm ? "!! " : "", name, event->detail);
      }
    }
  }
}

int replay(const ReplayCommandOptions& options) {
  auto fixture = load_fixture(options.fixture);
  fmt::print("fixture {}: {}\n", fixture.name, fixture.description);
  fmt::print("policy {}, device model {}, seed {}\n\n", to_string(fixture.policy), fixture.config.device_model,
             options.seed.value_or(fixture.config.coordinator.seed));
  std::vector<std::string> violations;
  FixtureOutcome outcome;
  if (options.explore) {
    // Exactly the run `stagehand explore` made for this seed, checked for its invariants.
    auto seed = options.seed.value_or(fixture.config.coordinator.seed);
    auto variant = exploration_variant(fixture, seed, parse_fault_kinds(options.faults), options.jitter);
    fmt::print("exploration run: jitter {}, faults: {}\n\n", variant.config.duration_jitter,
               variant.config.faults.any() ? describe_faults(variant.config.faults) : std::string("none"));
    outcome = replay_exploration(fixture, seed, parse_fault_kinds(options.faults), options.jitter, violations, true);
  } else {
    ReplayOptions replay_options;
    replay_options.seed = options.seed;
    outcome = replay_fixture(fixture, replay_options);
  }
  if (outcome.backend) print_timeline(outcome.backend->trace());
  fmt::print("\n");
  for (const auto& note : outcome.notes) fmt::print("measured: {}\n", note);
  if (outcome.backend) {
    std::filesystem::path trace_path =
        options.trace.empty() ? fmt::format("out/traces/{}.trace.json", fixture.name) : options.trace;
    outcome.backend->trace().write_chrome_json(trace_path);
    auto picture = std::filesystem::path(trace_path).replace_extension("").replace_extension(".svg");
    PictureOptions picture_options;
    picture_options.worker_rows = true;
    // Workload fixtures have figures; the freed-but-pending scenario has only its trace.
    auto figures = outcome.report.partitions > 0
                       ? fmt::format("{}: {}", outcome.report.policy, headline_figures(outcome.report))
                       : std::string();
    write_svg_picture({PictureLane{fixture.name, figures, &outcome.backend->trace()}}, picture, fixture.description,
                      picture_options);
    fmt::print("trace: {} (open in https://ui.perfetto.dev), picture: {}, hash {:016x}\n", trace_path.string(),
               picture.string(), outcome.trace_hash);
  }
  if (options.explore) {
    if (violations.empty()) {
      fmt::print("invariants: all hold\n");
      return 0;
    }
    for (const auto& violation : violations) fmt::print("  VIOLATED {}\n", violation);
    return fixture.policy == Policy::budgeted ? 1 : 0;
  }
  if (outcome.passed()) {
    fmt::print("expectations: all met\n");
    return 0;
  }
  fmt::print("expectations: {} not met\n", outcome.failures.size());
  for (const auto& failure : outcome.failures) fmt::print("  FAILED {}\n", failure);
  return 1;
}

}  // namespace

void add_replay_command(CLI::App& app) {
  auto options = std::make_shared<ReplayCommandOptions>();
  auto* command = app.add_subcommand("replay", "Replay one fixture: timeline, expectation check, trace");
  command->add_option("fixture", options->fixture, "Fixture file (fixtures/*.toml)")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--seed", options->seed, "Replace the fixture's seed");
  command->add_option("--trace", options->trace, "Trace file (default out/traces/<fixture>.trace.json)");
  command->add_flag("--explore", options->explore,
                    "Replay the run `stagehand explore` made for --seed (jitter, faults)");
  command->add_option("--faults", options->faults, "With --explore: the fault kinds exploration drew from")
      ->capture_default_str();
  command->add_option("--jitter", options->jitter, "With --explore: the exploration's duration jitter")
      ->capture_default_str();
  on_selected(command, [options] { return replay(*options); });
}

}  // namespace stagehand::cli
