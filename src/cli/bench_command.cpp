// stagehand bench sim|math|kernels|policies|prove: benchmarks that print their figures (never timed unit tests).

#include "cli/commands.hpp"

#include "math/benchmark.hpp"
#include "runner/benchmarks.hpp"

#include <iostream>
#include <memory>

namespace stagehand::cli {

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Run a benchmark and print its figures");
  bench->require_subcommand(1);

  auto* simulator = bench->add_subcommand("sim", "Simulated device operations per wall second (timing mode)");
  auto sim_options = std::make_shared<SimulatorBenchOptions>();
  simulator->add_option("--operations", sim_options->operations, "Device operations per configuration")
      ->capture_default_str();
  simulator->add_option("--workers", sim_options->workers, "Concurrent workers, one stream each")
      ->capture_default_str();
  on_selected(simulator, [sim_options] { return run_simulator_bench(std::cout, *sim_options); });

  auto* math = bench->add_subcommand("math", "The CPU reference: field multiplications, NTT and G1 MSM per second");
  auto math_options = std::make_shared<math::BenchmarkOptions>();
  math->add_option("--threads", math_options->threads, "Threads for the MSM (0: every core)")->capture_default_str();
  math->add_flag("--quick", math_options->quick, "Small sizes (2^12, 2^14), for a smoke test");
  on_selected(math, [math_options] { return math::run_benchmark(std::cout, *math_options); });

  auto* policies =
      bench->add_subcommand("policies",
                            "The configured workload (the partition program, or the Groth16 program's jobs) with the "
                            "real kernels on the GPU, each policy in turn (synthetic data, VRAM capped)");
  auto policy_options = std::make_shared<PolicyBenchOptions>();
  policies
      ->add_option("--config", policy_options->config,
                   "Deployment configuration (TOML): workload, workers, vram_cap_gib")
      ->capture_default_str()
      ->check(CLI::ExistingFile);
  policies->add_option("--policy", policy_options->policies, "Run only this policy (repeatable)");
  policies->add_option("--proofs", policy_options->proofs, "Proofs (0: the config's)");
  policies->add_option("--partitions", policy_options->partitions, "Partitions per proof (0: the config's)");
  policies->add_option("--domain-log2", policy_options->domain_log2, "Domain size (0: the config's)");
  policies->add_option("--gpus", policy_options->gpus, "GPUs to run on (0: the config's [gpus] count)");
  policies
      ->add_option(
          "--full-scalars", policy_options->full_scalar_share,
          "kind = \"groth16\": the witness's share of uniform scalars, the rest 0 or 1 (default: the config's "
          "full_scalar_share, or a PoRep witness's for key = \"porep-partition\" and 1 for the synthetic circuit)")
      ->check(CLI::Range(0.0, 1.0));
  policies->add_option("--trace", policy_options->trace_dir, "Folder for the traces and pictures")
      ->capture_default_str();
  policies->add_option("--json", policy_options->json, "Also write the figures as JSON to this file");
  on_selected(policies, [policy_options] { return run_policy_bench(*policy_options); });

  add_bench_prove_command(bench);

  auto* kernels =
      bench->add_subcommand("kernels", "The CUDA kernels on the GPU: NTT, G1 and G2 MSM at 2^20..2^26 (CUDA events)");
  on_selected(kernels, [] { return run_kernel_bench(std::cout); });
}

}  // namespace stagehand::cli
