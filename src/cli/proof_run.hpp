#pragma once
// What `stagehand prove` (proofs of .wtns files) and `stagehand bench prove` (proofs of a
// synthetic circuit made in memory) share: the options of the run, and the run itself, a
// Groth16Workload of the jobs through the coordinator with its progress lines and figures.

#include "groth16/prover.hpp"
#include "groth16/setup.hpp"
#include "groth16/zkey.hpp"
#include "runner/backend.hpp"
#include "runner/run_config.hpp"
#include "workloads/groth16/groth16_workload.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stagehand::cli {

struct ProofRunOptions {
  std::string config;
  std::string policy = "budgeted";
  std::string trace;
  bool no_verify = false;
  std::string abc = "auto";
  std::string key_sets = "auto";
  bool precompute_bases = false;
  double stream_buffer_mib = 1024;
  std::optional<std::uint64_t> seed;
  unsigned threads = 0;
  int workers = 0;  // 0: the configuration's
};
// Registers the shared options; with_policy false leaves --policy to the caller.
void add_proof_run_options(CLI::App* command, ProofRunOptions& options, bool with_policy = true);

RunConfig load_proof_run_config(const ProofRunOptions& options);
std::unique_ptr<Backend> open_proof_backend(const RunConfig& config, const ProofRunOptions& options);
// Proof `index`'s r and s: from --seed (tests), or the system's CSPRNG.
groth16::ProofRandomness proof_randomness(const ProofRunOptions& options, std::size_t index);
double seconds_since(std::chrono::steady_clock::time_point start);

// The TEST-ONLY setup's options with its point multiplications on the backend's first device
// (groth16/device_setup.hpp: the GPU's kernels, or the simulator's host functions).
groth16::SetupOptions device_setup_options(Backend& backend, unsigned threads);

struct ProofOutputs {
  std::filesystem::path proof;
  std::filesystem::path public_signals;
};

struct ProofRunInputs {
  std::filesystem::path key_path;  // the .zkey, or what names a key made in memory
  std::string key_name;            // for messages
  std::vector<groth16::ProofJob> jobs;
  std::vector<std::string> names;  // one per job, for the progress lines
  std::vector<ProofOutputs> outputs;
  groth16::ProofChecks checks;
  std::chrono::steady_clock::time_point start;  // of the whole command, for "in all"
};

// Proves the jobs; 0 when every proof was made (and checked, unless --no-verify), 1 otherwise.
int run_proofs(const ProofRunOptions& options, const RunConfig& config, Backend& backend, const groth16::ProvingKey& key,
               ProofRunInputs inputs);

}  // namespace stagehand::cli
