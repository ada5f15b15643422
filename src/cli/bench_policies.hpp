#pragma once
// stagehand bench policies: the PoRep-shaped partition program with the real kernels on a GPU,
// each policy in turn, on synthetic data (see bench_policies.cpp).

#include <string>
#include <vector>

namespace stagehand::cli {

struct PolicyBenchOptions {
  std::string config = "config/default.toml";
  std::vector<std::string> policies;  // empty: the config's
  int proofs = 0;                     // 0: the config's
  int partitions = 0;                 // per proof; 0: the config's
  int domain_log2 = 0;                // 0: the config's
  std::string trace_dir = "out/traces/gpu";
  std::string json;
};

// Prints the same table as `stagehand run`; 1 when this build has no CUDA or no GPU is present.
int run_policy_bench(const PolicyBenchOptions& options);

}  // namespace stagehand::cli
