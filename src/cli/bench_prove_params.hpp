#pragma once
// `stagehand bench prove --format params` (bench_prove_params.cpp): PoRep-shaped parameters and
// assignments made in memory, proved through the device path of SupraSeal C2's ABI.

#include "cli/proof_run.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace stagehand::cli {

struct ParamsBenchOptions {
  unsigned domain_log2 = 0;
  int proofs = 10;  // the circuits of one call (a PoRep commit's ten partitions)
  std::string out_dir;
  std::vector<std::string> policies{"budgeted"};
  double full_share = -1;   // the aux values' share of full scalars; below 0: the PoRep partition's tail share
  std::uint64_t seed = 1;   // of the key's points, the assignment and r and s
  std::string params_file;  // where not empty: the key written there when missing, then read from it
  ProofRunOptions run;
};

// Each policy in turn on the same key; the figures on stdout, DIR/proofs.bin (DIR/<policy>/ with
// more than one policy). 0 when every proof was made; throws where the run fails.
int bench_prove_params(const ParamsBenchOptions& options);

}  // namespace stagehand::cli
