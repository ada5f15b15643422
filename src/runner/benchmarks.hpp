#pragma once
// The benchmarks that `stagehand bench` runs and prints: the simulator's speed, the CUDA kernels,
// and a `stagehand run` workload (the PoRep partition program, or the Groth16 program's jobs) with
// the real kernels on a GPU, each policy in turn, on synthetic data (benchmarks.cpp).

#include <cstdint>
#include <iosfwd>

#include <string>
#include <vector>

namespace stagehand {

struct PolicyBenchOptions {
  std::string config = "config/default.toml";
  std::vector<std::string> policies;  // empty: the config's
  int proofs = 0;                     // 0: the config's
  int partitions = 0;                 // per proof; 0: the config's
  int domain_log2 = 0;                // 0: the config's
  int gpus = 0;                       // 0: the config's [gpus] count
  // kind = "groth16": the witness's share of uniform scalars, the rest 0 or 1 (negative: the
  // config's full_scalar_share, or its key shape's).
  double full_scalar_share = -1;
  std::string trace_dir = "out/traces/gpu";
  std::string json;
};

// Prints the same table as `stagehand run`; 1 when this build has no CUDA or no GPU is present.
int run_policy_bench(const PolicyBenchOptions& options);

struct SimulatorBenchOptions {
  std::uint64_t operations = 2'000'000;  // device operations to simulate per configuration
  int workers = 4;                       // coroutines, each with its own stream
};
// Simulated device operations per wall second (timing mode); returns 0.
int run_simulator_bench(std::ostream& out, const SimulatorBenchOptions& options);

// The CUDA kernels (NTT, MSM) on the GPU, timed with CUDA events; 1 in a build without CUDA.
int run_kernel_bench(std::ostream& out);

}  // namespace stagehand
