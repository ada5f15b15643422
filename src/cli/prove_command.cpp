// stagehand prove: snarkjs .zkey and .wtns in, proof.json and public.json out.
//
// The command is a client of the engine (engine/engine.hpp), as `stagehand serve` is: the key
// loaded once, every witness submitted as a proof, and all of them one coordinator run of a
// proving::ProofBatch (src/proving/): the policy's locks, the VRAM budget, a/b/c staged in pinned
// memory and pre-staged while another proof holds the GPU, two workers per GPU. The devices come
// from backend/backend.hpp: a GPU (backend = "cuda", or "auto" where one is present), otherwise
// the simulator's functional mode.

#include "cli/commands.hpp"

#include "cli/proof_run.hpp"
#include "config/run_config.hpp"
#include "coordinator/policy/policy.hpp"
#include "groth16/assignment_prover.hpp"
#include "groth16/circuit_assignment.hpp"
#include "groth16/json.hpp"
#include "groth16/params.hpp"
#include "groth16/prover.hpp"
#include "groth16/verify.hpp"
#include "groth16/witness.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/zkey.hpp"
#include "proving/assignment_batch.hpp"
#include "workloads/assignment/assignment_workload.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <variant>

namespace stagehand::cli {
namespace {

namespace fs = std::filesystem;

struct ProveOptions {
  std::string zkey;
  std::string params;
  std::string filecoin_proof;
  std::vector<std::string> wtns;
  std::string proof;
  std::string public_signals;
  std::string out_dir;
  std::string r1cs;
  ProofRunOptions run;
};

// Every --wtns, with directories expanded to their *.wtns files in name order.
std::vector<fs::path> witness_files(const std::vector<std::string>& arguments) {
  std::vector<fs::path> files;
  for (const auto& argument : arguments) {
    fs::path path(argument);
    if (fs::is_directory(path)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::directory_iterator(path)) {
        if (entry.is_regular_file() && entry.path().extension() == ".wtns") found.push_back(entry.path());
      }
      if (found.empty()) throw std::runtime_error(fmt::format("{}: no .wtns files in the directory", path.string()));
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(path);
    }
  }
  return files;
}

// Where each witness's proof goes: beside its name in --out-dir for several, --proof and --public for one.
std::vector<ProofOutputs> proof_outputs(const ProveOptions& options, const std::vector<fs::path>& files) {
  const bool many = files.size() > 1;
  if (many && (!options.proof.empty() || !options.public_signals.empty())) {
    throw std::runtime_error(
        "--proof and --public name one output each; with several witnesses use --out-dir "
        "(each witness W.wtns gives W.proof.json and W.public.json there)");
  }
  const fs::path out_dir = options.out_dir.empty() ? fs::path(".") : fs::path(options.out_dir);
  if (!options.out_dir.empty()) fs::create_directories(out_dir);
  std::vector<ProofOutputs> outputs;
  for (const auto& file : files) {
    if (many) {
      outputs.push_back(
          {out_dir / (file.stem().string() + ".proof.json"), out_dir / (file.stem().string() + ".public.json")});
    } else {
      outputs.push_back({options.proof.empty() ? out_dir / "proof.json" : fs::path(options.proof),
                         options.public_signals.empty() ? out_dir / "public.json" : fs::path(options.public_signals)});
    }
  }
  // Two witnesses with one name (from two folders) would overwrite each other's proof.
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (outputs[i].proof == outputs[j].proof) {
        throw std::runtime_error(fmt::format("{} and {} would both write {}: give the witnesses distinct names",
                                             files[j].string(), files[i].string(), outputs[i].proof.string()));
      }
    }
  }
  return outputs;
}

// One witness's assignment as bellperson synthesises it, checked against the constraint system
// and the key before any proof is made; the errors name the files.
groth16::CircuitAssignment params_assignment(const ProveOptions& options, const groth16::R1cs& r1cs,
                                             const groth16::ParamsKey& key, const fs::path& file, std::size_t index) {
  const auto witness = groth16::read_wtns(file, options.run.threads);
  auto named = [&](const std::exception& error) {
    return std::runtime_error(
        fmt::format("{} with {} against {}: {}", file.string(), options.r1cs, options.params, error.what()));
  };
  try {
    auto assignment = groth16::circuit_assignment(r1cs, witness);
    if (const auto row = groth16::first_unsatisfied_constraint(r1cs, witness)) {
      throw std::invalid_argument(fmt::format("the witness does not satisfy constraint {}", *row));
    }
    groth16::check_assignment(key, assignment.view(), index);
    return assignment;
  } catch (const std::invalid_argument& error) {
    throw named(error);
  } catch (const groth16::InputError& error) {
    throw named(error);
  }
}

// The proofs of `views` where --params proves them: with --config on the devices of that
// deployment (CUDA or the functional simulator, as its [run] table says), one coordinator run of
// the assignments' workload as the C ABI's device path makes it (proving/assignment_batch.hpp,
// its key sets placed by the budget); without it on the CPU reference of SupraSeal C2's prover
// (groth16::AssignmentProver). Both pairing-check every proof and give the same bytes for the
// same r and s.
std::vector<groth16::Proof> prove_params_assignments(const ProveOptions& options, const groth16::ParamsKey& key,
                                                     const std::vector<groth16::AssignmentView>& views,
                                                     const std::vector<groth16::ProofRandomness>& randomness) {
  if (options.run.config.empty()) {
    fmt::print(stderr, "stagehand prove: proving on the CPU reference of SupraSeal C2's prover (the C ABI's)\n");
    return groth16::AssignmentProver(key, options.run.threads).prove_checked(views, randomness);
  }
  const auto config = load_proof_run_config(options.run);
  auto backend = open_proof_backend(config, options.run);
  proving::AssignmentBatchSettings settings;
  settings.coordinator = settings_for(config, policy_from_string(options.run.policy));
  if (options.run.workers > 0) settings.coordinator.workers_per_device = options.run.workers;
  settings.verify = true;
  settings.threads = options.run.threads;
  settings.stream_buffer_bytes = static_cast<Bytes>(options.run.stream_buffer_mib * static_cast<double>(kMiB));
  settings.host_steps_off_thread = backend->on_gpu();
  fmt::print(stderr, "stagehand prove: proving on {} ({}), as the C ABI's device path does\n", backend->describe(),
             options.run.config);
  proving::AssignmentBatchResult result;
  backend->run([&]() -> asio::awaitable<void> {
    result = co_await proving::run_assignment_batch(backend->devices(), key, views, randomness, settings);
  }());
  fmt::print(stderr, "stagehand prove: the key's sets: {}\n", groth16::describe_assignment_layout(result.layout));
  return std::move(result.proofs);
}

// Proofs from a Filecoin .params key: each witness's assignment from --r1cs, r and s of proof i
// from --seed + i, every proof pairing-checked; snarkjs's JSON, and with --filecoin-proof the 192
// bytes filecoin-proofs stores.
int prove_from_params(const ProveOptions& options, const std::vector<fs::path>& files,
                      const std::vector<ProofOutputs>& outputs) {
  const auto start = std::chrono::steady_clock::now();
  const auto key = groth16::read_params(options.params);
  const auto r1cs = groth16::read_r1cs(options.r1cs);
  fmt::print(stderr, "stagehand prove: {}: {} inputs, {} aux, domain {}, read in {:.2f} s\n", options.params,
             key.input_count(), key.aux_count(), key.domain_size(), seconds_since(start));
  std::vector<groth16::CircuitAssignment> assignments;
  std::vector<groth16::AssignmentView> views;
  std::vector<groth16::ProofRandomness> randomness;
  assignments.reserve(files.size());  // the views point into them
  for (std::size_t i = 0; i < files.size(); ++i) {
    assignments.push_back(params_assignment(options, r1cs, key, files[i], i));
    views.push_back(assignments.back().view());
    randomness.push_back(options.run.seed ? groth16::ProofRandomness::from_seed(*options.run.seed + i)
                                          : groth16::ProofRandomness::from_system());
  }
  const auto proofs = prove_params_assignments(options, key, views, randomness);
  STAGEHAND_ASSERT(proofs.size() == files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    groth16::write_text_file(outputs[i].proof, groth16::proof_json(proofs[i]));
    groth16::write_text_file(outputs[i].public_signals, groth16::public_json(std::span(views[i].inputs).subspan(1)));
    if (!options.filecoin_proof.empty()) {
      const auto bytes = groth16::encode_filecoin_proof(proofs[i]);
      groth16::write_text_file(options.filecoin_proof, std::string(bytes.begin(), bytes.end()));
    }
    fmt::print(stderr, "stagehand prove: {}: {}{} verified, {:.2f} s in all\n", files[i].string(),
               outputs[i].proof.string(), options.filecoin_proof.empty() ? "" : " and " + options.filecoin_proof,
               seconds_since(start));
  }
  return 0;
}

// The options that go with --params and those that do not.
void check_params_options(const ProveOptions& options, std::size_t witnesses) {
  if (options.params.empty() == options.zkey.empty()) {
    throw CLI::ValidationError("--zkey", "give one key: --zkey (snarkjs) or --params (Filecoin)");
  }
  if (options.params.empty()) {
    if (!options.filecoin_proof.empty()) throw CLI::ValidationError("--filecoin-proof", "goes with --params");
    return;
  }
  if (options.r1cs.empty()) {
    throw CLI::ValidationError("--params", "needs --r1cs: the assignment is synthesised from the constraint system");
  }
  if (!options.filecoin_proof.empty() && witnesses != 1) {
    throw CLI::ValidationError("--filecoin-proof", "names one file: give one witness");
  }
  if (options.run.no_verify || !options.run.trace.empty()) {
    throw CLI::ValidationError("--params",
                               "every proof is checked and no trace is written: --no-verify and --trace "
                               "do not apply");
  }
}

int prove(const ProveOptions& options) {
  const auto files = witness_files(options.wtns);
  check_params_options(options, files.size());
  if (!options.params.empty()) return prove_from_params(options, files, proof_outputs(options, files));
  const auto config = load_proof_run_config(options.run);
  ProofRunInputs inputs;
  inputs.outputs = proof_outputs(options, files);
  for (const auto& file : files) {
    inputs.proofs.push_back(ProofInput{file, nullptr});
    inputs.names.push_back(file.string());
  }

  inputs.start = std::chrono::steady_clock::now();
  auto& key = inputs.key;
  // Opened and read once, by the reader of the curve its header names (a FIFO's bytes cannot be
  // read twice).
  auto any_key = groth16::read_any_zkey(options.zkey);
  key.path = options.zkey;
  key.read_seconds = seconds_since(inputs.start);
  // A key of either curve goes through the engine; its witnesses and --r1cs must be of its curve.
  std::visit(
      [&](auto&& read) {
        using Key = std::remove_cvref_t<decltype(read)>;
        fmt::print(stderr, "stagehand prove: {}: a {} key, {} signals ({} public), domain 2^{}, read in {:.2f} s\n",
                   options.zkey, groth16::curve_name(Key::curve), read.n_vars, read.n_public, read.domain_log2,
                   key.read_seconds);
        key.key = std::make_shared<const Key>(std::move(read));
        // The checks: every proof against the key's verification key (the pairing equation) unless
        // --no-verify; with --r1cs every witness against every constraint as well.
        if (options.r1cs.empty()) return;
        const auto hint = fmt::format("the key {} is {}'s", options.zkey, groth16::curve_name(Key::curve));
        if constexpr (Key::curve == groth16::Curve::bn254) {
          key.r1cs = std::make_shared<const groth16::bn254::R1cs>(groth16::bn254::read_r1cs(options.r1cs, hint));
        } else {
          key.r1cs = std::make_shared<const groth16::R1cs>(groth16::read_r1cs(options.r1cs, hint));
        }
        key.r1cs_path = options.r1cs;
      },
      std::move(any_key));
  return run_proofs(options.run, config, std::move(inputs));
}

}  // namespace

void add_prove_command(CLI::App& app) {
  auto options = std::make_shared<ProveOptions>();
  auto* command = app.add_subcommand(
      "prove", "Make Groth16 proofs from a snarkjs .zkey and .wtns files (snarkjs's proof.json, public.json)");
  command->add_option("--zkey", options->zkey,
                      "snarkjs Groth16 proving key (BLS12-381 or BN254: its header's primes choose)");
  command->add_option("--params", options->params,
                      "Filecoin Groth16 parameters (bellperson's .params) instead of --zkey: proves the assignment "
                      "synthesised from --r1cs and each witness, as the SupraSeal C2 ABI does: on the devices of "
                      "--config's deployment where given, else on the CPU reference (the same bytes)");
  command->add_option(
      "--filecoin-proof", options->filecoin_proof,
      "With --params: also write the proof as filecoin-proofs stores it (192 bytes, zcash's compressed A, B, C)");
  command->add_option("--wtns", options->wtns, "Witness file (snarkjs .wtns), or a directory of them; repeatable")
      ->required();
  command->add_option("--proof", options->proof, "Where to write the proof (one witness; default ./proof.json)");
  command->add_option("--public", options->public_signals,
                      "Where to write the public signals (one witness; default ./public.json)");
  command->add_option("--out-dir", options->out_dir,
                      "Folder for W.proof.json and W.public.json of each witness W.wtns (several witnesses)");
  command->add_option(
      "--r1cs", options->r1cs,
      "The circuit's constraint system (.r1cs): check each witness against every constraint and name the "
      "first one it does not satisfy");
  add_proof_run_options(command, options->run);
  on_selected(command, [options] { return prove(*options); });
}

}  // namespace stagehand::cli
