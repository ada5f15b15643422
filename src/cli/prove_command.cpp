// stagehand prove: snarkjs .zkey and .wtns in, proof.json and public.json out.
//
// The proof runs as a program on the Device interface (src/groth16/device_prover.hpp): on a GPU
// through CudaDevice (backend = "cuda", or "auto" when built with CUDA and a GPU is present; the
// kernels are cuda/kernels/groth16_launchers.cu), otherwise on the simulator's functional mode,
// whose kernels run the CPU reference.

#include "cli/commands.hpp"

#include "groth16/device_prover.hpp"
#include "groth16/json.hpp"
#include "groth16/prover.hpp"
#include "groth16/witness.hpp"
#include "groth16/zkey.hpp"
#include "runner/run_config.hpp"
#include "sim/device_model.hpp"
#include "sim/run.hpp"
#include "sim/sim_device.hpp"
#include "sim/sim_system.hpp"

#if defined(STAGEHAND_HAVE_CUDA)
#include "cuda_device.hpp"
#endif

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>

namespace stagehand::cli {
namespace {

namespace fs = std::filesystem;

struct ProveOptions {
  std::string zkey;
  std::vector<std::string> wtns;
  std::string proof;
  std::string public_signals;
  std::string out_dir;
  std::string config;
  std::optional<std::uint64_t> seed;
  unsigned threads = 0;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

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

int prove(const ProveOptions& options) {
  RunConfig config;
  if (!options.config.empty()) config = load_run_config(options.config);
#if defined(STAGEHAND_HAVE_CUDA)
  const bool use_cuda = config.backend == Backend::cuda || (config.backend == Backend::automatic && cuda::device_count() > 0);
  if (config.backend == Backend::cuda && cuda::device_count() == 0) {
    throw std::runtime_error(fmt::format("{}: backend = \"cuda\" but no CUDA device is present", options.config));
  }
#else
  const bool use_cuda = false;
  if (config.backend == Backend::cuda) {
    throw std::runtime_error(fmt::format(
        "{}: backend = \"cuda\": this stagehand was built without CUDA; use \"sim\" or \"auto\" (the simulator's "
        "functional mode on the CPU reference)",
        options.config));
  }
#endif
  const auto files = witness_files(options.wtns);
  const bool many = files.size() > 1;
  if (many && (!options.proof.empty() || !options.public_signals.empty())) {
    throw std::runtime_error("--proof and --public name one output each; with several witnesses use --out-dir "
                             "(each witness W.wtns gives W.proof.json and W.public.json there)");
  }

  auto start = std::chrono::steady_clock::now();
  const auto key = groth16::read_zkey(options.zkey);
  fmt::print(stderr, "stagehand prove: {}: {} signals ({} public), domain 2^{}, read in {:.2f} s\n", options.zkey, key.n_vars,
             key.n_public, key.domain_log2, seconds_since(start));
  if (!options.seed) {
    // Nothing to warn about: the blinding comes from the system's CSPRNG.
  } else {
    fmt::print(stderr, "stagehand prove: --seed {}: r and s are derived from the seed (tests only: such proofs are not zero-knowledge)\n",
               *options.seed);
  }

  const fs::path out_dir = options.out_dir.empty() ? fs::path(".") : fs::path(options.out_dir);
  if (many) fs::create_directories(out_dir);
  std::size_t done = 0;
  double total_prove_seconds = 0;
  auto program = [&](Device& device) -> asio::awaitable<void> {
    groth16::DeviceProver prover(device, key, options.threads);
    co_await prover.upload_key();
    for (std::size_t index = 0; index < files.size(); ++index) {
      const auto& file = files[index];
      const auto witness = groth16::read_wtns(file);
      groth16::check_witness_matches(key, witness, options.zkey, file);
      const auto randomness = options.seed ? groth16::ProofRandomness::from_seed(*options.seed + index)
                                           : groth16::ProofRandomness::from_system();
      const auto proof_start = std::chrono::steady_clock::now();
      const auto proof = co_await prover.prove(witness, randomness);
      const double proof_seconds = seconds_since(proof_start);
      total_prove_seconds += proof_seconds;
      fs::path proof_file, public_file;
      if (many) {
        proof_file = out_dir / (file.stem().string() + ".proof.json");
        public_file = out_dir / (file.stem().string() + ".public.json");
      } else {
        proof_file = options.proof.empty() ? out_dir / "proof.json" : fs::path(options.proof);
        public_file = options.public_signals.empty() ? out_dir / "public.json" : fs::path(options.public_signals);
      }
      groth16::write_text_file(proof_file, groth16::proof_json(proof));
      groth16::write_text_file(public_file, groth16::public_json(groth16::public_signals(key, witness)));
      ++done;
      fmt::print(stderr, "  [{}/{}] {}: proved in {:.3f} s -> {}, {}\n", done, files.size(), file.string(), proof_seconds,
                 proof_file.string(), public_file.string());
    }
    co_await prover.release_key();
  };
  if (use_cuda) {
#if defined(STAGEHAND_HAVE_CUDA)
    asio::io_context io;
    cuda::CudaDevice device(0, io.get_executor());
    fmt::print(stderr, "stagehand prove: on CUDA device 0 ({}), kernels groth16_h and groth16_msm_g1 on the GPU\n",
               device.properties().name);
    std::exception_ptr failure;
    asio::co_spawn(io, program(device), [&](std::exception_ptr error) { failure = error; });
    io.run();
    if (failure) std::rethrow_exception(failure);
#endif
  } else {
    sim::SimOptions sim_options;
    sim_options.functional = true;
    sim_options.keep_trace_events = false;
    sim::SimSystem system(sim_options);
    auto& device = system.add_device(sim::load_device_model(sim::find_device_model(config.device_model)));
    groth16::register_sim_kernels(system);
    fmt::print(stderr, "stagehand prove: on the simulator's functional mode ({}), kernels on the CPU reference\n", config.device_model);
    sim::run_to_completion(system, program(device));
  }
  fmt::print(stderr, "stagehand prove: {} proof{} in {:.3f} s of proving ({:.2f} s in all)\n", done, done == 1 ? "" : "s",
             total_prove_seconds, seconds_since(start));
  return 0;
}

}  // namespace

void add_prove_command(CLI::App& app) {
  auto options = std::make_shared<ProveOptions>();
  auto* command = app.add_subcommand("prove", "Make Groth16 proofs from a snarkjs .zkey and .wtns files (snarkjs's proof.json, public.json)");
  command->add_option("--zkey", options->zkey, "snarkjs Groth16 proving key (BLS12-381)")->required();
  command->add_option("--wtns", options->wtns, "Witness file (snarkjs .wtns), or a directory of them; repeatable")->required();
  command->add_option("--proof", options->proof, "Where to write the proof (one witness; default ./proof.json)");
  command->add_option("--public", options->public_signals, "Where to write the public signals (one witness; default ./public.json)");
  command->add_option("--out-dir", options->out_dir, "Folder for W.proof.json and W.public.json of each witness W.wtns (several witnesses)");
  command->add_option("--config", options->config, "Deployment configuration (TOML): backend and device model");
  command->add_option("--seed", options->seed, "Derive r and s from this seed instead of the system's CSPRNG (tests only)");
  command->add_option("--threads", options->threads, "Host threads for the CPU math (0 = all)")->capture_default_str();
  on_selected(command, [options] { return prove(*options); });
}

}  // namespace stagehand::cli
