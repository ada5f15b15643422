// stagehand setup: a TEST-ONLY Groth16 trusted setup (src/groth16/setup.hpp) that writes a .zkey
// and a verification key snarkjs accepts, or (--format params) a Filecoin .params file. The toxic
// waste is random and unprotected: never use these keys for anything real.

#include "cli/commands.hpp"
#include "cli/proof_run.hpp"

#include "groth16/json.hpp"
#include "groth16/params.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "groth16/zkey.hpp"

#include <fmt/format.h>

#include <bit>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <variant>

namespace stagehand::cli {
namespace {

struct SetupOptions {
  std::string format = "zkey";
  std::string r1cs;
  std::string zkey;
  std::string params;
  std::string vk;
  std::optional<std::uint64_t> seed;
  unsigned threads = 0;
  std::string config;
};

// The output options the format needs, and none of the other's.
void check_outputs(const SetupOptions& options) {
  const bool params = options.format == "params";
  if (params && options.params.empty())
    throw CLI::ValidationError("--params", "--format params writes to --params FILE: give it");
  if (params && !options.zkey.empty())
    throw CLI::ValidationError("--zkey", "--format params writes no .zkey (--params FILE)");
  if (!params && (options.zkey.empty() || options.vk.empty())) {
    throw CLI::ValidationError("--zkey", "--format zkey writes --zkey FILE and --vk FILE: give both");
  }
  if (!params && !options.params.empty()) throw CLI::ValidationError("--params", "--params goes with --format params");
}

// A BN254 circuit's key, its multiplications on the backend's device as BLS12-381's are.
int setup_bn254(const SetupOptions& options, const groth16::bn254::R1cs& r1cs, Backend& backend,
                std::chrono::steady_clock::time_point start) {
  auto setup_options = device_setup_options<math::Bn254>(backend, options.threads);
  setup_options.seed = options.seed;
  const auto key = groth16::bn254::setup_from_r1cs(r1cs, setup_options);
  fmt::print(stderr, "stagehand setup: BN254 (bn128), domain 2^{}, key computed at {:.2f} s (multiplications on {})\n",
             key.domain_log2, seconds_since(start), backend.describe());
  groth16::bn254::write_zkey(options.zkey, key);
  groth16::write_text_file(options.vk, groth16::bn254::verification_key_json(key));
  fmt::print(stderr, "stagehand setup: wrote {} and {} in {:.2f} s (TEST-ONLY keys: unsafe for real use)\n",
             options.zkey, options.vk, seconds_since(start));
  return 0;
}

int setup(const SetupOptions& options) {
  check_outputs(options);
  fmt::print(stderr, "{}", groth16::kTestOnlySetupWarning);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return seconds_since(start); };
  // The header's prime picks the curve; the file is read once.
  const auto circuit = groth16::read_any_r1cs(options.r1cs);
  std::visit(
      [&](const auto& r1cs) {
        fmt::print(stderr, "stagehand setup: {}: {} constraints, {} wires, {} public signals (read in {:.2f} s)\n",
                   options.r1cs, r1cs.constraints.size(), r1cs.n_wires, r1cs.n_public(), elapsed());
      },
      circuit);
  const auto* bn = std::get_if<groth16::bn254::R1cs>(&circuit);
  if (bn != nullptr && options.format == "params") {
    throw std::runtime_error(
        fmt::format("{} is a BN254 circuit, and a .params key (bellperson's) is BLS12-381's: use --format zkey, "
                    "or compile the circuit with circom --prime bls12381",
                    options.r1cs));
  }
  // The point multiplications on the device: a GPU where there is one (or as the configuration
  // says), otherwise the simulator's host functions, the CPU path.
  ProofRunOptions run;
  run.config = options.config;
  const auto config = load_proof_run_config(run);
  auto backend = open_proof_backend(config, run);
  if (bn != nullptr) return setup_bn254(options, *bn, *backend, start);
  const auto& r1cs = std::get<groth16::R1cs>(circuit);
  auto setup_options = device_setup_options<math::Bls12_381>(*backend, options.threads);
  setup_options.seed = options.seed;
  if (options.format == "params") {
    const auto key = groth16::setup_params_from_r1cs(r1cs, setup_options);
    fmt::print(stderr, "stagehand setup: bellperson's domain 2^{}, key computed at {:.2f} s (multiplications on {})\n",
               std::countr_zero(key.domain_size()), elapsed(), backend->describe());
    groth16::write_params(options.params, key);
    if (!options.vk.empty()) groth16::write_text_file(options.vk, groth16::verification_key_json(key.vk));
    fmt::print(stderr, "stagehand setup: wrote {}{} in {:.2f} s (a TEST-ONLY key: unsafe for real use)\n",
               options.params, options.vk.empty() ? "" : " and " + options.vk, elapsed());
    return 0;
  }
  const auto key = groth16::setup_from_r1cs(r1cs, setup_options);
  fmt::print(stderr, "stagehand setup: domain 2^{}, key computed at {:.2f} s (multiplications on {})\n",
             key.domain_log2, elapsed(), backend->describe());
  groth16::write_zkey(options.zkey, key);
  groth16::write_text_file(options.vk, groth16::verification_key_json(key));
  fmt::print(stderr, "stagehand setup: wrote {} and {} in {:.2f} s (TEST-ONLY keys: unsafe for real use)\n",
             options.zkey, options.vk, elapsed());
  return 0;
}

int export_vk(const std::string& params, const std::string& out) {
  const auto key = groth16::read_params(params);
  const auto json = groth16::verification_key_json(key.vk);
  if (out.empty()) {
    fmt::print("{}", json);
  } else {
    groth16::write_text_file(out, json);
    fmt::print(stderr, "stagehand export-vk: wrote {} ({} public inputs)\n", out, key.input_count() - 1);
  }
  return 0;
}

}  // namespace

void add_setup_command(CLI::App& app) {
  auto options = std::make_shared<SetupOptions>();
  auto* command = app.add_subcommand("setup",
                                     "TEST-ONLY Groth16 setup from random toxic waste (unsafe for real use): .r1cs in, "
                                     ".zkey and vk.json (or a Filecoin .params file) out");
  command
      ->add_option("--format", options->format, "zkey (snarkjs's .zkey and vk.json) or params (bellperson's .params)")
      ->check(CLI::IsMember({"zkey", "params"}))
      ->capture_default_str();
  command
      ->add_option("--r1cs", options->r1cs,
                   "circom constraint system (compiled with --prime bls12381, or --prime bn128: a BN254 key)")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--zkey", options->zkey, "Where to write the proving key (--format zkey)");
  command->add_option("--params", options->params, "Where to write the .params file (--format params)");
  command->add_option("--vk", options->vk,
                      "Where to write the verification key (snarkjs vk.json; optional with --format params)");
  command->add_option("--seed", options->seed, "Derive the toxic waste from this seed (reproducible tests)");
  command->add_option("--threads", options->threads, "Host threads (0 = all)")->capture_default_str();
  command->add_option("--config", options->config,
                      "Deployment configuration (TOML): the backend whose device multiplies the points");
  on_selected(command, [options] { return setup(*options); });
}

void add_export_vk_command(CLI::App& app) {
  auto params = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto* command =
      app.add_subcommand("export-vk", "The verification key of a Filecoin .params file as snarkjs's vk.json");
  command->add_option("--params", *params, "Filecoin Groth16 parameter file (bellperson's .params)")->required();
  command->add_option("--out", *out, "Where to write vk.json (default: standard output)");
  on_selected(command, [params, out] { return export_vk(*params, *out); });
}

}  // namespace stagehand::cli
