// stagehand run: runs the configured workload under each policy and prints one table: on the
// simulator, or on the GPU where the configuration's backend finds one.

#include "cli/commands.hpp"

#include "device/format.hpp"
#include "backend/backend.hpp"
#include "runner/benchmarks.hpp"
#include "coordinator/run_report_format.hpp"
#include "config/run_config.hpp"
#include "runner/sim_runner.hpp"
#include "trace/svg_timeline.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <stdexcept>

namespace stagehand::cli {
namespace {

struct RunOptions {
  std::string config = "config/default.toml";
  std::vector<std::string> policies;
  std::string trace_dir;
  std::string json;
  bool kernels = false;
};

// On a GPU (backend "cuda", or "auto" where one is present) the configured workload runs on the
// GPU, synthetic data through the real kernels, and prints the same table.
int run_on_gpu(const RunOptions& options, const RunConfig& config) {
  fmt::print(stderr, "stagehand run: {}: backend \"{}\": on the GPU\n", config.source.string(),
             config.backend == BackendKind::cuda ? "cuda" : "auto");
  PolicyBenchOptions gpu;
  gpu.config = options.config;
  gpu.policies = options.policies;
  if (!options.trace_dir.empty()) gpu.trace_dir = options.trace_dir;
  gpu.json = options.json;
  return run_policy_bench(gpu);
}

// What the run makes, in words.
std::string describe_workload(const RunConfig& config) {
  const bool groth16 = config.workload_kind == WorkloadKind::groth16;
  const auto& shape = config.workload.shape;
  const bool porep_key = groth16 && config.groth16.key == Groth16KeyShape::porep_partition;
  return !groth16 ? fmt::format("{} proofs x {} partitions at domain 2^{} ({} uploaded per partition)",
                                config.workload.proofs, config.workload.partitions_per_proof, shape.domain_log2,
                                format_bytes(shape.upload_bytes()))
         : porep_key
             ? fmt::format("{} proofs x {} PoRep partitions at domain 2^{} on the Groth16 program (timing jobs)",
                           config.workload.proofs, config.workload.partitions_per_proof, shape.domain_log2)
             : fmt::format("{} Groth16 proofs of {} synthetic circuit at domain 2^{} (timing jobs)",
                           config.workload.proofs, config.groth16.curve == kernel::Curve::bn254 ? "BN254's" : "the",
                           shape.domain_log2);
}

// One policy on the simulator, its progress, trace and picture told on stderr.
SimulatedRun run_policy(const RunConfig& config, Policy policy, const std::string& title) {
  const bool groth16 = config.workload_kind == WorkloadKind::groth16;
  const bool porep_key = groth16 && config.groth16.key == Groth16KeyShape::porep_partition;
  auto name = to_string(policy);
  int done = 0;
  int total = config.jobs();
  SimulatedRunOptions run_options;
  run_options.on_job_done = [&](const JobRecord& job) {
    ++done;
    if (done == total || done % std::max(1, total / 4) == 0) {
      fmt::print(stderr, "  {:<9} {:>4}/{} {}  ({:.2f} s simulated)\n", name, done, total,
                 groth16 && !porep_key ? "proofs" : "partitions", static_cast<double>(job.finished_ns) / 1e9);
    }
  };
  auto result = run_on_simulator(config, policy, run_options);
  if (!result.error.empty())
    throw std::runtime_error(fmt::format("{}: the run did not finish: {}", name, result.error));
  auto trace_file = config.trace_dir / fmt::format("{}.trace.json", name);
  result.backend->trace().write_chrome_json(trace_file);
  auto picture = config.trace_dir / fmt::format("{}.svg", name);
  PictureOptions picture_options;
  picture_options.worker_rows = true;
  write_svg_picture({PictureLane{name, headline_figures(result.report), &result.backend->trace()}}, picture, title,
                    picture_options);
  fmt::print(stderr, "  {:<9} trace: {} (open in https://ui.perfetto.dev), picture: {}\n", name, trace_file.string(),
             picture.string());
  for (const auto& line : result.report.log) fmt::print(stderr, "  {:<9} {}\n", name, line);
  if (!result.checker.clean()) fmt::print(stderr, "  {:<9} checker: {}", name, result.checker.describe());
  return result;
}

// Every policy on one time axis, beside the traces' folder.
void write_all_policies_picture(const RunConfig& config, const std::vector<SimulatedRun>& runs,
                                const std::string& title) {
  std::vector<PictureLane> lanes;
  for (const auto& result : runs)
    lanes.push_back(PictureLane{result.report.policy, headline_figures(result.report), &result.backend->trace()});
  auto folder = config.trace_dir.has_filename() ? config.trace_dir : config.trace_dir.parent_path();
  auto all = folder.parent_path() / "run.svg";
  write_svg_picture(lanes, all, title);
  fmt::print(stderr, "picture of every policy on one axis: {}\n", all.string());
}

void print_reports(const RunOptions& options, const std::vector<RunReport>& reports) {
  fmt::print("\n");
  print_report_table(std::cout, reports);
  if (options.kernels) {
    for (const auto& report : reports) {
      fmt::print("\n");
      print_kernel_table(std::cout, report);
    }
  }
  if (!options.json.empty()) {
    write_report_json(options.json, reports);
    fmt::print(stderr, "figures written to {}\n", options.json);
  }
}

int run(const RunOptions& options) {
  auto config = load_run_config(options.config);
  if (!options.policies.empty()) {
    config.policies.clear();
    for (const auto& name : options.policies) config.policies.push_back(policy_from_string(name));
  }
  if (!options.trace_dir.empty()) config.trace_dir = options.trace_dir;
  if (config.backend == BackendKind::cuda ||
      (config.backend == BackendKind::automatic && Backend::cuda_device_count() > 0)) {
    return run_on_gpu(options, config);
  }
  // Otherwise the simulator.
  const auto what = describe_workload(config);
  fmt::print(stderr, "stagehand run: {} on {} x simulated {}{}, {}\n", config.source.string(), config.gpus,
             config.device_model,
             config.vram_cap_bytes ? fmt::format(" capped at {}", format_bytes(config.vram_cap_bytes)) : "", what);
  std::vector<RunReport> reports;
  // Kept to the end for the picture of all policies on one axis.
  std::vector<SimulatedRun> runs;
  const auto title =
      fmt::format("stagehand run {}: {} x simulated {}{}, {}", config.source.string(), config.gpus, config.device_model,
                  config.vram_cap_bytes ? fmt::format(" capped at {}", format_bytes(config.vram_cap_bytes)) : "", what);
  for (auto policy : config.policies) {
    auto result = run_policy(config, policy, title);
    reports.push_back(result.report);
    runs.push_back(std::move(result));
  }
  write_all_policies_picture(config, runs, title);
  print_reports(options, reports);
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  auto* command = app.add_subcommand("run", "Run the configured workload under each policy and print the figures");
  command->add_option("--config", options->config, "Deployment configuration (TOML)")
      ->capture_default_str()
      ->check(CLI::ExistingFile);
  command->add_option("--policy", options->policies,
                      "Run only this policy (repeatable): serial, prestage, two-lock, budgeted");
  command->add_option("--trace", options->trace_dir, "Folder for the Perfetto traces (one per policy)");
  command->add_option("--json", options->json, "Also write the figures as JSON to this file");
  command->add_flag("--kernels", options->kernels,
                    "Also print each policy's kernel time by kernel (to compare with bench policies)");
  on_selected(command, [options] { return run(*options); });
}

}  // namespace stagehand::cli
