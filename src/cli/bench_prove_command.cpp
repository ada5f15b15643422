// stagehand bench prove: proofs of a synthetic circuit made in memory, for sizes whose key is too
// large for a file round trip (a 2^26 key is about 36 GiB of points). The circuit and its
// witness (groth16/synthetic_circuit.hpp), the TEST-ONLY setup's key and the proofs never touch
// the disk except as what snarkjs needs to check them elsewhere:
//
//   DIR/vk.json                        the verification key
//   DIR/<i>.proof.json, <i>.public.json  proof i = 1..N
//
// The run is `stagehand prove`'s (cli/proof_run.hpp): an engine of its own for each policy, the
// same path, policies and figures. --curve bn254 makes the circuit over BN254's scalar field and
// its key by BN254's TEST-ONLY setup (its multiplications on the device, as BLS12-381's are);
// vk.json and the proofs then say "curve": "bn128", as snarkjs's do.

#include "cli/bench_prove_params.hpp"
#include "cli/commands.hpp"
#include "cli/proof_run.hpp"

#include "device/format.hpp"
#include "groth16/json.hpp"
#include "groth16/setup.hpp"
#include "groth16/synthetic_circuit.hpp"
#include "groth16/witness.hpp"
#include "math/bn254.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>

namespace stagehand::cli {
namespace {

namespace fs = std::filesystem;

struct BenchProveOptions {
  unsigned domain_log2 = 0;
  int proofs = 4;
  std::string out_dir;
  bool bits = false;
  std::uint64_t circuit_seed = 1;
  std::vector<std::string> policies{"budgeted"};
  ProofRunOptions run;
  std::string format = "zkey";
  double full_share = -1;
  std::string params_file;
  std::string curve = "bls12_381";
};

// --format params: the same options for the assignments' device path.
int bench_prove_params_from(const BenchProveOptions& options) {
  ParamsBenchOptions params;
  params.domain_log2 = options.domain_log2;
  params.proofs = options.proofs;
  params.out_dir = options.out_dir;
  params.policies = options.policies;
  params.full_share = options.full_share;
  params.seed = options.circuit_seed;
  params.params_file = options.params_file;
  params.run = options.run;
  return bench_prove_params(params);
}

// The synthetic circuit's key and witness over one curve, what the proofs of either need.
struct BenchKey {
  engine::AnyKeyPointer key;
  unsigned domain_log2 = 0;
  std::string vk_json;
  std::shared_ptr<const std::vector<std::uint8_t>> witness;  // one for every proof: r and s make them distinct
};

template <class Key>
std::uint64_t key_point_bytes(const Key& key) {
  return key.a.bytes().size() + key.b1.bytes().size() + key.b2.bytes().size() + key.c.bytes().size() +
         key.h.bytes().size();
}

// The circuit over Fr, checked, and its key by the TEST-ONLY setup, its multiplications on the
// proofs' device (or the simulator's host functions).
template <class Fr>
BenchKey make_bench_key(const BenchProveOptions& options, const RunConfig& config,
                        std::chrono::steady_clock::time_point start) {
  constexpr bool bn254 = std::is_same_v<Fr, math::bn254::Fr>;
  // The set-up's devices, given back before the proofs' engines open theirs.
  const std::unique_ptr<Backend> backend = open_proof_backend(config, options.run);
  auto circuit = groth16::make_synthetic_circuit<Fr>(groth16::synthetic_constraints_for_domain(options.domain_log2),
                                                     options.circuit_seed, options.bits);
  groth16::check_synthetic_witness(circuit);
  fmt::print(stderr,
             "stagehand bench prove: a synthetic circuit of {} constraints over {}, {} wires{}, its witness checked "
             "against every constraint, in {:.2f} s\n",
             circuit.r1cs.constraints.size(), options.curve, circuit.r1cs.n_wires, options.bits ? " (mostly bits)" : "",
             seconds_since(start));

  fmt::print(stderr, "{}", groth16::kTestOnlySetupWarning);
  const auto setup_start = std::chrono::steady_clock::now();
  BenchKey made;
  if constexpr (bn254) {
    const auto key = std::make_shared<const groth16::bn254::ProvingKey>(groth16::bn254::setup_from_r1cs(
        circuit.r1cs, device_setup_options<math::Bn254>(*backend, options.run.threads)));
    made = {key, key->domain_log2, groth16::bn254::verification_key_json(*key),
            std::make_shared<const std::vector<std::uint8_t>>(groth16::bn254::wtns_bytes(circuit.witness))};
  } else {
    const auto key = std::make_shared<const groth16::ProvingKey>(
        groth16::setup_from_r1cs(circuit.r1cs, device_setup_options<math::Bls12_381>(*backend, options.run.threads)));
    made = {key, key->domain_log2, groth16::verification_key_json(*key),
            std::make_shared<const std::vector<std::uint8_t>>(groth16::wtns_bytes(circuit.witness))};
  }
  const auto point_bytes = std::visit([](const auto& key) { return key_point_bytes(*key); }, made.key);
  fmt::print(stderr,
             "stagehand bench prove: the key (domain 2^{}, {} of points) by the TEST-ONLY setup in {:.2f} s, its "
             "multiplications on {}\n",
             made.domain_log2, format_bytes(point_bytes), seconds_since(setup_start), backend->describe());
  return made;
}

int bench_prove(const BenchProveOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const auto config = load_proof_run_config(options.run);
  const fs::path dir(options.out_dir);
  fs::create_directories(dir);
  const BenchKey made = options.curve == "bn254" ? make_bench_key<math::bn254::Fr>(options, config, start)
                                                 : make_bench_key<math::Fr>(options, config, start);
  STAGEHAND_ASSERT(made.witness && !made.witness->empty(), "bench prove: a key of 2^{} without its witness",
                   made.domain_log2);

  // Each policy in turn on the same key (its set-up is the slow part at 2^26); with more than one,
  // each writes into DIR/<policy>/.
  int status = 0;
  for (const auto& policy : options.policies) {
    const fs::path run_dir = options.policies.size() == 1 ? dir : dir / policy;
    fs::create_directories(run_dir);
    groth16::write_text_file(run_dir / "vk.json", made.vk_json);
    ProofRunInputs inputs;
    inputs.key.key = made.key;
    inputs.key.path = fmt::format("synthetic-{}-2^{}.zkey", options.curve, made.domain_log2);
    inputs.start = start;
    for (int i = 1; i <= options.proofs; ++i) {
      inputs.proofs.push_back(ProofInput{run_dir / fmt::format("{}.wtns", i), made.witness});
      inputs.names.push_back(fmt::format("proof {}", i));
      inputs.outputs.push_back({run_dir / fmt::format("{}.proof.json", i), run_dir / fmt::format("{}.public.json", i)});
    }
    fmt::print(
        stderr,
        "stagehand bench prove: {} proofs under {}, written to {} beside vk.json (check each with `snarkjs groth16 "
        "verify {}/vk.json {}/<i>.public.json {}/<i>.proof.json`)\n",
        options.proofs, policy, run_dir.string(), run_dir.string(), run_dir.string(), run_dir.string());
    auto run_options = options.run;
    run_options.policy = policy;
    // One trace per policy: <trace>.<policy>.json beside the one asked for.
    if (!options.run.trace.empty() && options.policies.size() > 1) {
      run_options.trace = fs::path(options.run.trace).replace_extension(fmt::format("{}.json", policy)).string();
    }
    status = std::max(status, run_proofs(run_options, config, std::move(inputs)));
  }
  return status;
}

}  // namespace

void add_bench_prove_command(CLI::App* bench) {
  auto options = std::make_shared<BenchProveOptions>();
  auto* command = bench->add_subcommand(
      "prove",
      "Proofs of a synthetic circuit made in memory with a TEST-ONLY key (sizes too large for key files); "
      "writes vk.json and each proof for snarkjs");
  command->add_option("--domain-log2", options->domain_log2, "The circuit's domain: 2^K - 5 constraints")
      ->required()
      ->check(CLI::Range(3u, static_cast<unsigned>(groth16::kMaxDomainLog2)));
  command->add_option("--proofs", options->proofs, "How many proofs")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  command->add_option("--out-dir", options->out_dir, "Folder for vk.json and <i>.proof.json, <i>.public.json")
      ->required();
  command->add_flag("--bits", options->bits, "A witness mostly of 0s and 1s, as real circuits' are");
  command->add_option("--circuit-seed", options->circuit_seed, "Seed of the circuit's constants and inputs")
      ->capture_default_str();
  command
      ->add_option("--policy", options->policies,
                   "Scheduling policy: serial, prestage, two-lock or budgeted (repeatable: each in "
                   "turn on the same key, into DIR/<policy>/)")
      ->capture_default_str()
      ->check(CLI::IsMember(policy_names()));
  command
      ->add_option(
          "--format", options->format,
          "zkey: a synthetic circuit's snarkjs key and witness; params: PoRep-shaped Filecoin parameters of random "
          "points and one assignment, proved through the device path of SupraSeal C2's ABI (not checked: a "
          "random key has no circuit)")
      ->capture_default_str()
      ->check(CLI::IsMember({"zkey", "params"}));
  command
      ->add_option("--full-share", options->full_share,
                   "--format params: the aux values' share of full scalars, the rest 0 or 1 (default: the PoRep "
                   "partition's tail over its G1 query points)")
      ->check(CLI::Range(0.0, 1.0));
  command->add_option("--params-file", options->params_file,
                      "--format params: the key as a .params file, made and written there when FILE does not exist, "
                      "then read back (timed: the file's load time, from the page cache when just written) and proved "
                      "from, the key made in memory given back first");
  command
      ->add_option("--curve", options->curve,
                   "--format zkey: the circuit's curve, BLS12-381's or BN254's (circom's default, bn128)")
      ->capture_default_str()
      ->check(CLI::IsMember({"bls12_381", "bn254"}));
  add_proof_run_options(command, options->run, false);
  on_selected(command, [options] {
    if (options->format == "params" && options->curve != "bls12_381") {
      throw std::invalid_argument(
          fmt::format("bench prove: --format params is Filecoin's BLS12-381 parameters, not "
                      "--curve {}: use --format zkey with --curve {}, or --curve bls12_381",
                      options->curve, options->curve));
    }
    return options->format == "params" ? bench_prove_params_from(*options) : bench_prove(*options);
  });
}

}  // namespace stagehand::cli
