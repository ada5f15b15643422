#pragma once
// What `stagehand prove` (proofs of .wtns files) and `stagehand bench prove` (proofs of a
// synthetic circuit made in memory) share: the options of the run, and the run itself. Both are
// clients of the engine (engine/engine.hpp), as `stagehand serve` is: the command opens one for
// its proofs, loads its key, submits each witness, prints each proof's line as it ends and the
// run's figures from the engine's report of it (EngineHooks::on_run), so that the commands and
// the service prove by one path and report one set of figures.

#include "engine/engine.hpp"
#include "groth16/setup.hpp"
#include "backend/backend.hpp"
#include "config/run_config.hpp"

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
// A GPU where there is one (or as the configuration says); otherwise the simulator's functional
// mode, whose kernels run the CPU reference: the same code path either way. Trace events are kept
// where --trace asks for them.
BackendOptions proof_backend_options(const ProofRunOptions& options);
std::unique_ptr<Backend> open_proof_backend(const RunConfig& config, const ProofRunOptions& options);
double seconds_since(std::chrono::steady_clock::time_point start);

// The TEST-ONLY setup's options for a key of Description's curve (math::Bls12_381, math::Bn254)
// with its point multiplications on the backend's first device (groth16/device_setup.hpp: the
// GPU's kernels, or the simulator's host functions).
template <class Description>
groth16::BasicSetupOptions<Description> device_setup_options(Backend& backend, unsigned threads);
extern template groth16::SetupOptions device_setup_options<math::Bls12_381>(Backend& backend, unsigned threads);
extern template groth16::bn254::SetupOptions device_setup_options<math::Bn254>(Backend& backend, unsigned threads);

// The engine a command's proofs run on: its options over the configuration's tables, r and s from
// --seed (proof i of the command, from 0, gets seed + i), and one run for all `proofs` that leaves
// the devices as it found them.
engine::EngineConfig proof_engine_config(const ProofRunOptions& options, const RunConfig& config, std::size_t proofs);

struct ProofOutputs {
  std::filesystem::path proof;
  std::filesystem::path public_signals;
};

// One proof to make: a witness file, or the bytes of one in memory (then `wtns` names them).
struct ProofInput {
  std::filesystem::path wtns;
  std::shared_ptr<const std::vector<std::uint8_t>> bytes;
};

struct ProofRunInputs {
  engine::KeyInMemory key;  // its path names it in messages; with a constraint system where --r1cs gave one
  std::vector<ProofInput> proofs;
  std::vector<std::string> names;  // one per proof, for the progress lines
  std::vector<ProofOutputs> outputs;
  std::chrono::steady_clock::time_point start;  // of the whole command, for "in all"
};

// Proves the inputs on an engine of their own; 0 when every proof was made (and checked, unless
// --no-verify), 1 otherwise. Throws where the key cannot be loaded (engine::EngineError bad_key).
int run_proofs(const ProofRunOptions& options, const RunConfig& config, ProofRunInputs inputs);

}  // namespace stagehand::cli
