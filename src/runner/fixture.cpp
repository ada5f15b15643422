#include "runner/fixture.hpp"

#include "config/config_table.hpp"
#include "device/busy_wait.hpp"
#include "device/format.hpp"
#include "sim/device_model.hpp"
#include "sim/run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace stagehand {
namespace {

template <class T>
void read_optional(std::optional<T>& into, std::optional<T> value) {
  if (value) into = value;
}

// Every [expect] value range-checked: an integer that does not fit (2^40 + 1 truncated to 1), a
// negative count (shown as 18446744073709551615) or a NaN would make an expectation that
// silently means something else, or nothing.
std::optional<std::int64_t> optional_integer_in(const ConfigTable& table, std::string_view key, std::int64_t minimum,
                                                std::int64_t maximum) {
  if (!table.contains(key)) {
    table.accept(key);
    return std::nullopt;
  }
  return table.integer_in(key, 0, minimum, maximum);
}
std::optional<double> optional_number_in(const ConfigTable& table, std::string_view key, double minimum,
                                         double maximum) {
  if (!table.contains(key)) {
    table.accept(key);
    return std::nullopt;
  }
  return table.number_in(key, 0, minimum, maximum);
}

Expectations read_expectations(const ConfigTable& table) {
  constexpr std::int64_t kMaxCount = std::numeric_limits<int>::max();
  constexpr double kMaxSeconds = 1e9;
  Expectations expect;
  expect.out_of_memory = table.boolean("out_of_memory");
  if (auto value = optional_integer_in(table, "first_failed_partition", 0, kMaxCount))
    expect.first_failed_partition = static_cast<int>(*value);
  if (auto value = optional_integer_in(table, "partitions_failed", 0, kMaxCount))
    expect.partitions_failed = static_cast<int>(*value);
  if (auto value = optional_integer_in(table, "partitions_moved_min", 0, kMaxCount))
    expect.partitions_moved_min = static_cast<int>(*value);
  if (auto value = optional_integer_in(table, "gpus_failed", 0, 64)) expect.gpus_failed = static_cast<int>(*value);
  expect.every_fallback_failed = table.boolean("every_fallback_failed");
  expect.overtaken = table.boolean("overtaken");
  if (auto value = optional_integer_in(table, "fallbacks_min", 0, kMaxCount))
    expect.fallbacks_min = static_cast<std::uint64_t>(*value);
  if (auto value = optional_integer_in(table, "fallbacks_max", 0, kMaxCount))
    expect.fallbacks_max = static_cast<std::uint64_t>(*value);
  expect.compute_busy_min = optional_number_in(table, "compute_busy_min", 0, 1);
  expect.compute_busy_max = optional_number_in(table, "compute_busy_max", 0, 1);
  expect.seconds_per_proof_max = optional_number_in(table, "seconds_per_proof_max", 0, kMaxSeconds);
  expect.gpu_seconds_per_partition_min = optional_number_in(table, "gpu_seconds_per_partition_min", 0, kMaxSeconds);
  expect.gpu_seconds_per_partition_max = optional_number_in(table, "gpu_seconds_per_partition_max", 0, kMaxSeconds);
  expect.compute_idle_ms_per_partition_min =
      optional_number_in(table, "compute_idle_ms_per_partition_min", 0, 1e3 * kMaxSeconds);
  expect.compute_idle_ms_per_partition_max =
      optional_number_in(table, "compute_idle_ms_per_partition_max", 0, 1e3 * kMaxSeconds);
  expect.vram_peak_gib_max = optional_number_in(table, "vram_peak_gib_max", 0, 1 << 20);
  expect.seconds_per_proof_no_worse_than = table.string("seconds_per_proof_no_worse_than");
  expect.malloc_fails_while_free_pending = table.boolean("malloc_fails_while_free_pending");
  expect.malloc_succeeds_after_free_completes = table.boolean("malloc_succeeds_after_free_completes");
  table.reject_unknown_keys();
  return expect;
}

void check(std::vector<std::string>& failures, bool holds, std::string what) {
  if (!holds) failures.push_back(std::move(what));
}

// The scripted scenario of docs/device-facts.md on the fixture's device model.
void replay_freed_but_pending(const Fixture& fixture, FixtureOutcome& outcome, const ReplayOptions& options) {
  // One device of the fixture's model, whole (the scenario holds the rest of the card itself),
  // without jitter: the measurement it replays was a single reading.
  auto config = fixture.config;
  config.coordinator.seed = options.seed.value_or(fixture.config.coordinator.seed);
  config.gpus = 1;
  config.vram_cap_bytes = 0;
  config.duration_jitter = 0;
  config.functional = false;
  BackendOptions simulator;
  simulator.keep_trace_events = options.keep_trace_events;
  outcome.backend = Backend::open_simulator(config, simulator);
  outcome.system = outcome.backend->simulator();
  auto& device = outcome.system->device(0);
  const auto& scenario = fixture.scenario;
  auto gib = [](double value) { return static_cast<Bytes>(value * static_cast<double>(kGiB)); };
  bool failed_while_pending = false;
  bool succeeded_after = false;
  outcome.backend->run(
      [&]() -> asio::awaitable<void> {
        // Hold the rest of the card, as the measurement did, so that it looks like `card_gib`.
        DevicePointer ballast;
        auto free = device.memory_info().free_bytes;
        if (free > gib(scenario.card_gib)) ballast = co_await device.allocate(free - gib(scenario.card_gib));
        auto stream = device.create_stream();
        auto block = co_await device.allocate_async(gib(scenario.freed_gib), stream);
        device.launch(busy_wait(static_cast<Nanoseconds>(scenario.kernel_ms * 1e6)), stream);
        device.free_async(block, stream);
        try {
          auto pointer = co_await device.allocate(gib(scenario.malloc_gib));
          co_await device.free(pointer);
        } catch (const DeviceError& error) {
          failed_while_pending = error.errc() == DeviceErrc::out_of_memory;
          outcome.notes.push_back(fmt::format("while the free was pending: {}", error.what()));
        }
        co_await device.synchronize_stream(stream);
        try {
          auto pointer = co_await device.allocate(gib(scenario.malloc_gib));
          succeeded_after = true;
          outcome.notes.push_back(fmt::format("after the stream synchronised (at {}): cudaMalloc of {} succeeded",
                                              format_duration(device.now()), format_bytes(gib(scenario.malloc_gib))));
          co_await device.free(pointer);
        } catch (const DeviceError& error) {
          outcome.notes.push_back(fmt::format("after the stream synchronised: {}", error.what()));
        }
        device.destroy_stream(stream);
        if (ballast) co_await device.free(ballast);
      }(),
      options.time_limit_ns);
  const auto& expect = fixture.expect;
  if (!options.check_expectations) return;
  if (expect.malloc_fails_while_free_pending) {
    check(outcome.failures, failed_while_pending == *expect.malloc_fails_while_free_pending,
          fmt::format("expected malloc_fails_while_free_pending = {}, got {}", *expect.malloc_fails_while_free_pending,
                      failed_while_pending));
  }
  if (expect.malloc_succeeds_after_free_completes) {
    check(outcome.failures, succeeded_after == *expect.malloc_succeeds_after_free_completes,
          fmt::format("expected malloc_succeeds_after_free_completes = {}, got {}",
                      *expect.malloc_succeeds_after_free_completes, succeeded_after));
  }
  auto report = device.check();
  outcome.checker_findings = report.leaks;
  outcome.checker_findings.insert(outcome.checker_findings.end(), report.unsynchronized_reads.begin(),
                                  report.unsynchronized_reads.end());
  outcome.trace_hash = outcome.system->trace().hash();
}

// The run's figures, as the fixture's notes give them.
std::string describe_run(const RunReport& r) {
  return fmt::format(
      "{} of {} partitions completed{}; OOM errors {}; fallbacks {}; {:.3f} s/proof; {:.3f} GPU s/partition; compute "
      "busy "
      "{:.1f}%, idle {:.1f} ms/partition; VRAM peak {}",
      r.partitions_completed, r.partitions,
      r.jobs_retried > 0 ? fmt::format(" ({} moved to another GPU)", r.jobs_retried) : "", r.oom_count,
      r.fallback_count, r.seconds_per_proof, r.gpu_seconds_per_partition, 100 * r.compute_busy_fraction,
      1e3 * r.compute_idle_seconds_per_partition, format_bytes(r.vram_peak_bytes));
}

// A partition that had not pre-staged took the compute lock and ran out of memory in it, while
// another that had already started pre-staging (its inputs taking memory) reached the lock only
// after it: grant order was not the order in which memory was taken.
bool was_overtaken(const RunReport& r) {
  bool overtaken = false;
  for (const auto& late : r.jobs) {
    if (late.completed() || !late.fell_back || late.lock_acquired_ns < 0 || late.out_of_memory_errors == 0) continue;
    for (const auto& early : r.jobs) {
      if (&early != &late && early.prestage_started_ns >= 0 && early.prestage_started_ns <= late.lock_acquired_ns &&
          (early.lock_acquired_ns > late.lock_acquired_ns)) {
        overtaken = true;
      }
    }
  }
  return overtaken;
}

// The expectations on what failed, fell back or moved.
void check_failures(const Expectations& e, const RunReport& r, std::vector<std::string>& failures) {
  int failed = r.partitions - r.partitions_completed;
  int first_failed = -1;
  for (const auto& job : r.jobs) {
    if (!job.completed()) {
      first_failed = job.index;
      break;
    }
  }
  if (e.out_of_memory) {
    check(failures, (r.oom_count > 0) == *e.out_of_memory,
          fmt::format("expected out_of_memory = {}, got {} OOM errors", *e.out_of_memory, r.oom_count));
  }
  if (e.first_failed_partition) {
    check(failures, first_failed == *e.first_failed_partition,
          fmt::format("expected first_failed_partition = {}, got {}", *e.first_failed_partition,
                      first_failed < 0 ? std::string("none") : std::to_string(first_failed)));
  }
  if (e.partitions_failed) {
    check(failures, failed == *e.partitions_failed,
          fmt::format("expected partitions_failed = {}, got {}", *e.partitions_failed, failed));
  }
  if (e.partitions_moved_min) {
    check(failures, r.jobs_retried >= *e.partitions_moved_min,
          fmt::format("expected partitions_moved_min = {}, got {}", *e.partitions_moved_min, r.jobs_retried));
  }
  if (e.gpus_failed) {
    const auto gpus_failed = std::count_if(r.per_device.begin(), r.per_device.end(),
                                           [](const DeviceReport& d) { return !d.failure.empty(); });
    check(failures, gpus_failed == *e.gpus_failed,
          fmt::format("expected gpus_failed = {}, got {}", *e.gpus_failed, gpus_failed));
  }
  if (e.every_fallback_failed) {
    bool all = true;
    for (const auto& job : r.jobs) all = all && (!job.fell_back || !job.completed());
    check(failures, all == *e.every_fallback_failed,
          fmt::format("expected every_fallback_failed = {}, got {}", *e.every_fallback_failed, all));
  }
  if (e.overtaken) {
    const bool overtaken = was_overtaken(r);
    check(failures, overtaken == *e.overtaken, fmt::format("expected overtaken = {}, got {}", *e.overtaken, overtaken));
  }
  if (e.fallbacks_min)
    check(failures, r.fallback_count >= *e.fallbacks_min,
          fmt::format("expected fallbacks_min = {}, got {}", *e.fallbacks_min, r.fallback_count));
  if (e.fallbacks_max)
    check(failures, r.fallback_count <= *e.fallbacks_max,
          fmt::format("expected fallbacks_max = {}, got {}", *e.fallbacks_max, r.fallback_count));
}

// The expectations that bound a figure from below or above.
void check_bounds(const Expectations& e, const RunReport& r, std::vector<std::string>& failures) {
  auto bound = [&](const std::optional<double>& limit, double value, bool is_min, const char* key) {
    if (!limit) return;
    bool holds = is_min ? value >= *limit : value <= *limit;
    check(failures, holds, fmt::format("expected {} = {}, got {:.4f}", key, *limit, value));
  };
  bound(e.compute_busy_min, r.compute_busy_fraction, true, "compute_busy_min");
  bound(e.compute_busy_max, r.compute_busy_fraction, false, "compute_busy_max");
  bound(e.seconds_per_proof_max, r.seconds_per_proof, false, "seconds_per_proof_max");
  bound(e.gpu_seconds_per_partition_min, r.gpu_seconds_per_partition, true, "gpu_seconds_per_partition_min");
  bound(e.gpu_seconds_per_partition_max, r.gpu_seconds_per_partition, false, "gpu_seconds_per_partition_max");
  bound(e.compute_idle_ms_per_partition_min, 1e3 * r.compute_idle_seconds_per_partition, true,
        "compute_idle_ms_per_partition_min");
  bound(e.compute_idle_ms_per_partition_max, 1e3 * r.compute_idle_seconds_per_partition, false,
        "compute_idle_ms_per_partition_max");
  bound(e.vram_peak_gib_max, static_cast<double>(r.vram_peak_bytes) / static_cast<double>(kGiB), false,
        "vram_peak_gib_max");
}

// seconds_per_proof_no_worse_than: the fixture it names, replayed with the same seed.
void check_no_worse_than(const Fixture& fixture, FixtureOutcome& outcome, const ReplayOptions& options) {
  const auto& r = outcome.report;
  const auto& e = fixture.expect;
  auto& failures = outcome.failures;
  auto reference_path = fixture.path.parent_path() / *e.seconds_per_proof_no_worse_than;
  auto reference = load_fixture(reference_path);
  ReplayOptions reference_options;
  reference_options.seed = options.seed;
  reference_options.keep_trace_events = false;
  auto baseline = replay_fixture(reference, reference_options);
  bool complete = baseline.report.partitions_completed == baseline.report.partitions;
  double reference_seconds = complete ? baseline.report.seconds_per_proof : std::numeric_limits<double>::infinity();
  outcome.notes.push_back(complete ? fmt::format("{}: {:.3f} s/proof", reference.name, reference_seconds)
                                   : fmt::format("{}: {} of {} partitions failed, no proof finished", reference.name,
                                                 baseline.report.partitions - baseline.report.partitions_completed,
                                                 baseline.report.partitions));
  check(failures, r.seconds_per_proof <= reference_seconds * 1.01,
        fmt::format("expected seconds per proof no worse than {} ({:.3f} s), got {:.3f} s", reference.name,
                    reference_seconds, r.seconds_per_proof));
}

void check_workload(const Fixture& fixture, FixtureOutcome& outcome, const ReplayOptions& options) {
  outcome.notes.push_back(describe_run(outcome.report));
  check_failures(fixture.expect, outcome.report, outcome.failures);
  check_bounds(fixture.expect, outcome.report, outcome.failures);
  if (fixture.expect.seconds_per_proof_no_worse_than) check_no_worse_than(fixture, outcome, options);
}

}  // namespace

namespace {

// The fixture's own keys; its reference is not followed.
Fixture load_fixture_file(const std::filesystem::path& path, std::optional<ConfigDocument>& document_out) {
  document_out = ConfigDocument::load(path);
  auto root = document_out->root();
  Fixture fixture;
  fixture.path = path;
  fixture.name = path.stem().string();
  fixture.config.source = path;
  auto header = root.required_table("fixture");
  fixture.description = header.required_string("description");
  fixture.kind = header.choice("kind", "workload", {"workload", "freed-but-pending"});
  try {
    fixture.policy = policy_from_string(header.string("policy").value_or("budgeted"));
  } catch (const std::invalid_argument& error) {
    header.fail("policy", error.what());
  }
  header.reject_unknown_keys();
  fixture.config.policies = {fixture.policy};
  read_run_config(root, fixture.config);
  if (auto scenario = root.table("scenario")) {
    fixture.scenario.card_gib = scenario->number_in("card_gib", fixture.scenario.card_gib, 0.001, 1 << 20);
    fixture.scenario.freed_gib = scenario->number_in("freed_gib", fixture.scenario.freed_gib, 0.001, 1 << 20);
    fixture.scenario.kernel_ms = scenario->number_in("kernel_ms", fixture.scenario.kernel_ms, 0, 1e9);
    fixture.scenario.malloc_gib = scenario->number_in("malloc_gib", fixture.scenario.malloc_gib, 0.001, 1 << 20);
    scenario->reject_unknown_keys();
  }
  fixture.expect = read_expectations(root.required_table("expect"));
  root.reject_unknown_keys();
  return fixture;
}

std::string canonical_name(const std::filesystem::path& path) {
  std::error_code error;
  auto canonical = std::filesystem::weakly_canonical(path, error);
  return (error ? path : canonical).string();
}

}  // namespace

Fixture load_fixture(const std::filesystem::path& path) {
  std::optional<ConfigDocument> document;
  auto fixture = load_fixture_file(path, document);
  // Follow expect.seconds_per_proof_no_worse_than to its end now, so that a reference to the
  // fixture itself, or two that name each other, is an error naming the key, not a replay that
  // recurses until the stack overflows; and a missing reference is found before any replay.
  constexpr std::size_t kMaxChain = 16;
  std::vector<std::string> chain{canonical_name(path)};
  std::vector<std::string> shown{path.string()};
  auto fail = [&](const std::string& problem) -> void {
    auto expect = document->root().required_table("expect");
    expect.fail("seconds_per_proof_no_worse_than", problem);
  };
  Fixture current = fixture;
  while (current.expect.seconds_per_proof_no_worse_than) {
    const auto next = current.path.parent_path() / *current.expect.seconds_per_proof_no_worse_than;
    const auto name = canonical_name(next);
    shown.push_back(next.string());
    if (std::find(chain.begin(), chain.end(), name) != chain.end()) {
      fail(fmt::format("the references go round in a cycle: {}", fmt::join(shown, " -> ")));
    }
    if (chain.size() >= kMaxChain)
      fail(fmt::format("more than {} fixtures in a chain of references: {}", kMaxChain, fmt::join(shown, " -> ")));
    chain.push_back(name);
    std::optional<ConfigDocument> next_document;
    try {
      current = load_fixture_file(next, next_document);
    } catch (const ConfigError& error) {
      fail(fmt::format("the reference {} does not load: {}", next.string(), error.what()));
    }
  }
  return fixture;
}

std::vector<std::filesystem::path> fixture_files(const std::filesystem::path& folder) {
  if (!std::filesystem::is_directory(folder)) {
    throw std::runtime_error(
        fmt::format("{}: no fixtures folder here (run from the repository root, or name fixtures "
                    "with --fixture)",
                    folder.string()));
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() == ".toml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

FixtureOutcome replay_fixture(const Fixture& fixture, const ReplayOptions& options) {
  FixtureOutcome outcome;
  try {
    if (fixture.kind == "freed-but-pending") {
      replay_freed_but_pending(fixture, outcome, options);
      return outcome;
    }
    auto config = fixture.config;
    if (options.seed) config.coordinator.seed = *options.seed;
    SimulatedRunOptions run_options;
    run_options.keep_trace_events = options.keep_trace_events;
    run_options.time_limit_ns = options.time_limit_ns;
    run_options.on_budget = options.on_budget;
    run_options.on_budget_gone = options.on_budget_gone;
    run_options.on_settled = options.on_settled;
    auto run = run_on_simulator(config, fixture.policy, std::move(run_options));
    if (!run.error.empty()) {
      outcome.backend = std::move(run.backend);
      outcome.system = run.system;
      throw std::runtime_error(run.error);
    }
    outcome.report = std::move(run.report);
    outcome.trace_hash = run.trace_hash;
    outcome.backend = std::move(run.backend);
    outcome.system = run.system;
    outcome.checker_findings = run.checker.leaks;
    outcome.checker_findings.insert(outcome.checker_findings.end(), run.checker.unsynchronized_reads.begin(),
                                    run.checker.unsynchronized_reads.end());
    if (options.check_expectations) check_workload(fixture, outcome, options);
  } catch (const std::exception& error) {
    outcome.failures.push_back(fmt::format("the run did not finish: {}", error.what()));
  }
  for (const auto& finding : outcome.checker_findings) outcome.failures.push_back("checker: " + finding);
  return outcome;
}

}  // namespace stagehand
