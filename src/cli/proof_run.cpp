#include "cli/proof_run.hpp"

#include "cli/proof_figures.hpp"
#include "device/format.hpp"
#include "groth16/device_setup.hpp"
#include "groth16/json.hpp"
#include "proving/batch_trace.hpp"
#include "trace/trace.hpp"
#include "util/assert.hpp"
#include "util/input_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

namespace stagehand::cli {
namespace {

namespace fs = std::filesystem;

// The command's one key, by the engine's name for it.
constexpr const char* kKey = "key";

// A day: the command's run stays open for its next witness however long reading it takes; the
// command shuts its engine down once its proofs have ended, which ends the run at once.
constexpr double kLingerUntilShutdownMs = 24.0 * 3600 * 1000;

// Each proof's line as it ends, and the counts behind the figures: on the engine's dispatcher
// thread for the proofs that ran, on the command's for those refused before.
class ProofLines {
 public:
  ProofLines(const ProofRunInputs& inputs, bool verify) : inputs_(inputs), verify_(verify) {
    so_far_.proofs = inputs.names.size();
    so_far_.start = inputs.start;
  }
  // The proofs start now, on a GPU or not.
  void begin(bool on_gpu) {
    std::lock_guard lock(mutex_);
    so_far_.on_gpu = on_gpu;
    proving_start_ = std::chrono::steady_clock::now();
  }
  void refused(std::size_t index, const std::string& error) {
    std::lock_guard lock(mutex_);
    failed(index, error);
  }
  void ended(std::size_t index, const engine::ProofResult& result);
  ProvedSoFar so_far() const {
    std::lock_guard lock(mutex_);
    auto so_far = so_far_;
    so_far.proving_seconds = seconds_since(proving_start_);
    return so_far;
  }

 private:
  void failed(std::size_t index, const std::string& error) {
    ++so_far_.failed;
    fmt::print(stderr, "  [{}/{}] {}: FAILED: {}\n", ++ended_, inputs_.names.size(), inputs_.names[index], error);
  }

  mutable std::mutex mutex_;
  const ProofRunInputs& inputs_;
  const bool verify_;
  std::size_t ended_ = 0;
  ProvedSoFar so_far_;
  std::chrono::steady_clock::time_point proving_start_ = std::chrono::steady_clock::now();
};

void ProofLines::ended(std::size_t index, const engine::ProofResult& result) {
  std::lock_guard lock(mutex_);
  if (result.state != engine::ProofState::done) return failed(index, result.error);
  const auto& output = inputs_.outputs[index];
  try {
    groth16::write_text_file(output.proof, result.proof_json);
    groth16::write_text_file(output.public_signals, result.public_json);
  } catch (const std::exception& error) {
    return failed(index, error.what());
  }
  // On the simulator the device's clock is virtual: only the wall clock means anything there.
  const auto held =
      so_far_.on_gpu ? fmt::format(", GPU {} held {:.3f} s", result.gpu, result.timings.gpu_s) : std::string();
  std::string verified;
  if (verify_) {
    so_far_.check_seconds += result.timings.check_s;
    ++so_far_.checked;
    verified = fmt::format(", verified ({:.1f} ms)", 1e3 * result.timings.check_s);
  }
  fmt::print(stderr, "  [{}/{}] {}: proof done at {:.3f} s{}{} -> {}, {}\n", ++ended_, inputs_.names.size(),
             inputs_.names[index], seconds_since(proving_start_), held, verified, output.proof.string(),
             output.public_signals.string());
}

// The figures of each run the engine reports (one for a command's proofs), and its trace and
// picture where --trace asks, written while the engine still holds the trace.
class RunsSeen {
 public:
  explicit RunsSeen(const ProofRunOptions& options) : options_(options) {}
  void add(const engine::RunSummary& summary, std::size_t proofs);
  // Throws what writing a trace threw (the engine's callback could not).
  void check_traces() const {
    if (!trace_error_.empty()) throw std::runtime_error(trace_error_);
  }
  const std::vector<proving::BatchFigures>& figures() const { return figures_; }

 private:
  const ProofRunOptions& options_;
  std::vector<proving::BatchFigures> figures_;
  std::string trace_error_;
};

void RunsSeen::add(const engine::RunSummary& summary, std::size_t proofs) {
  STAGEHAND_ASSERT(summary.figures != nullptr, "the engine reported run {} of key {} without its figures",
                   summary.batch, summary.key);
  figures_.push_back(*summary.figures);
  if (options_.trace.empty() || summary.trace == nullptr) return;
  try {
    auto picture = fs::path(options_.trace).replace_extension(".svg");
    proving::write_batch_trace(*summary.trace, summary.figures->report, {options_.trace, picture},
                               fmt::format("stagehand prove: {} proof{}, {}", proofs, proofs == 1 ? "" : "s",
                                           summary.on_gpu ? "CUDA" : "functional simulator"));
    fmt::print(stderr, "stagehand prove: trace: {} (open in https://ui.perfetto.dev), picture: {}\n", options_.trace,
               picture.string());
  } catch (const std::exception& error) {
    trace_error_ = error.what();
  }
}

// Reads each witness file (or takes its bytes) and submits it, waiting for room in the queue; a
// witness that cannot be read or that the engine refuses fails alone, saying why.
std::vector<engine::ProofHandle> submit_all(engine::Engine& engine, const ProofRunInputs& inputs, ProofLines& lines) {
  std::vector<engine::ProofHandle> handles;
  for (std::size_t i = 0; i < inputs.proofs.size(); ++i) {
    const auto& input = inputs.proofs[i];
    auto bytes = input.bytes;
    if (!bytes) {
      auto read = read_input_bytes(input.wtns, physical_memory_bytes(), "snarkjs witness (.wtns) file");
      if (!read.problem.empty()) {
        lines.refused(i, fmt::format("{}: {}", input.wtns.string(), read.problem));
        continue;
      }
      bytes = std::make_shared<const std::vector<std::uint8_t>>(std::move(read.bytes));
    }
    engine::SubmitOptions submit;
    submit.when_full = engine::WhenFull::wait;
    submit.witness_name = input.wtns.string();
    submit.seed_index = i;  // --seed's r and s by the witness's place, also after one that could not be read
    submit.on_done = [&lines, i](const engine::ProofHandle& handle) { lines.ended(i, handle.result()); };
    try {
      handles.push_back(engine.submit(kKey, std::move(bytes), std::move(submit)));
    } catch (const engine::EngineError& error) {
      lines.refused(i, error.what());
    }
  }
  return handles;
}

// The plan the engine made for the key, and what runs the proofs.
void print_plan(const engine::EngineStatus& status, const engine::EngineConfig& config, std::size_t proofs) {
  STAGEHAND_ASSERT(status.keys.size() == 1, "a command's engine holds {} keys", status.keys.size());
  const auto& layout = status.keys.front().planned_layout;
  fmt::print(stderr, "stagehand prove: the a/b/c step {} ({}); the key's sets: {}\n",
             groth16::describe(layout.abc_step), layout.reason, layout.placement.describe());
  const auto settings = settings_for(config.run, config.engine.policy);
  fmt::print(stderr, "stagehand prove: {} proof{} on {}{}, policy {}, {} workers per GPU, a/b/c {}\n", proofs,
             proofs == 1 ? "" : "s", status.backend, status.on_gpu ? "" : ", kernels on the CPU reference",
             to_string(settings.policy), settings.workers_per_device, groth16::describe(layout.abc_step));
}

}  // namespace

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void add_proof_run_options(CLI::App* command, ProofRunOptions& options, bool with_policy) {
  command->add_option("--config", options.config, "Deployment configuration (TOML): backend and device model");
  if (with_policy) {
    command->add_option("--policy", options.policy, "Scheduling policy: serial, prestage, two-lock or budgeted")
        ->capture_default_str()
        ->check(CLI::IsMember(policy_names()));
  }
  command->add_option("--trace", options.trace,
                      "Write a Chrome/Perfetto trace of the run to this file (and a picture of it beside, .svg)");
  command->add_flag(
      "--no-verify", options.no_verify,
      "Skip the check of each proof against the key's verification key (on by default: a proof that does not "
      "verify fails its witness and is not written)");
  command
      ->add_option("--abc", options.abc,
                   "Where the a/b/c step runs: device (the key's constraint matrix resident), streamed (on the device, "
                   "the matrix uploaded in chunks for each proof through its stream buffers), host, or auto (device "
                   "where the matrix fits, else streamed where a proof fits with its buffers, else host)")
      ->capture_default_str()
      ->check(CLI::IsMember(groth16::abc_step_choices(/*with_auto=*/true)));
  command
      ->add_option(
          "--key-sets", options.key_sets,
          "Where the key's point sets are during the proofs: resident (uploaded once), fetched-ahead (uploaded "
          "whole per proof while a/b/c compute), streamed (uploaded per proof in batches), precomputed (resident "
          "with the multiples of its points that its MSM's windows need, computed on the device once), or auto "
          "(resident what fits beside the proofs in flight, the rest streamed)")
      ->capture_default_str()
      ->check(CLI::IsMember(groth16::set_placement_choices()));
  command->add_flag(
      "--precompute-bases", options.precompute_bases,
      "With --key-sets auto, also precompute the resident sets of 2^20 points or more whose multiples fit "
      "(12 to 16 times their memory and seconds of set-up, for MSMs 0.6-0.9x as long: for long runs)");
  command
      ->add_option("--stream-buffer-mib", options.stream_buffer_mib,
                   "Each of the two buffers a proof streams its key sets through, in MiB")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 65536.0));
  command->add_option("--seed", options.seed,
                      "Derive r and s from this seed instead of the system's CSPRNG (tests only)");
  command
      ->add_option("--workers", options.workers,
                   "Workers per GPU (each holds one proof's inputs; 0 = the configuration's, 2 by default): more hide "
                   "longer host steps behind the GPU")
      ->check(CLI::Range(0, 64));
  command->add_option("--threads", options.threads, "Host threads for the CPU math (0 = all)")->capture_default_str();
}

RunConfig load_proof_run_config(const ProofRunOptions& options) {
  RunConfig config;
  if (!options.config.empty()) config = load_run_config(options.config);
  return config;
}

BackendOptions proof_backend_options(const ProofRunOptions& options) {
  BackendOptions backend_options;
  backend_options.functional = true;
  backend_options.keep_trace_events = !options.trace.empty();
  return backend_options;
}

std::unique_ptr<Backend> open_proof_backend(const RunConfig& config, const ProofRunOptions& options) {
  return Backend::open(config, proof_backend_options(options));
}

namespace {

// scalars[i]·G for the generator of `group`, on `device` through the backend's run loop.
template <class Set, class Fr>
Set multiplied_on_device(Backend& backend, Device& device, groth16::SetupGroup group, std::span<const Fr> scalars,
                         groth16::DeviceSetupOptions options) {
  Set points(scalars.size());
  backend.run(groth16::multiply_generator_on_device(device, group, scalars, points.mutable_bytes(), options));
  return points;
}

}  // namespace

template <class Description>
groth16::BasicSetupOptions<Description> device_setup_options(Backend& backend, unsigned threads) {
  using Options = groth16::BasicSetupOptions<Description>;
  using Fr = typename Options::Fr;
  Options options;
  options.thread_count = threads;
  Device& device = *backend.devices().at(0);
  groth16::DeviceSetupOptions device_options;
  device_options.host_threads = threads;
  options.multiply_g1 = [&backend, &device, device_options](std::span<const Fr> scalars) {
    return multiplied_on_device<typename Options::G1Set>(backend, device, groth16::SetupGroup::g1, scalars,
                                                         device_options);
  };
  options.multiply_g2 = [&backend, &device, device_options](std::span<const Fr> scalars) {
    return multiplied_on_device<typename Options::G2Set>(backend, device, groth16::SetupGroup::g2, scalars,
                                                         device_options);
  };
  return options;
}

template groth16::SetupOptions device_setup_options<math::Bls12_381>(Backend& backend, unsigned threads);
template groth16::bn254::SetupOptions device_setup_options<math::Bn254>(Backend& backend, unsigned threads);

engine::EngineConfig proof_engine_config(const ProofRunOptions& options, const RunConfig& config, std::size_t proofs) {
  engine::EngineConfig engine_config;
  engine_config.run = config;
  if (options.workers > 0) {
    // --workers is the run's, whichever policy (two-lock has its own count in the configuration).
    engine_config.run.coordinator.workers_per_device = options.workers;
    engine_config.run.two_lock_workers_per_device = options.workers;
  }
  auto& settings = engine_config.engine;
  settings.policy = policy_from_string(options.policy);
  settings.verify = !options.no_verify;
  settings.threads = options.threads;
  settings.seed = options.seed;
  settings.abc_step = groth16::parse_abc_step(options.abc);            // nothing for "auto": planned
  settings.key_sets = groth16::parse_set_placement(options.key_sets);  // likewise
  settings.stream_buffer_bytes = static_cast<Bytes>(options.stream_buffer_mib * static_cast<double>(kMiB));
  settings.precompute_bases = options.precompute_bases;
  // One run for the command's proofs, which frees the devices at its end as a command leaves them.
  settings.keep_key_on_device = false;
  settings.max_batch = std::max<std::size_t>(1, proofs);
  settings.linger_ms = kLingerUntilShutdownMs;
  // The witnesses held at once: what the run takes at once (two a worker) and as many queued.
  const int workers = settings_for(engine_config.run, settings.policy).workers_per_device;
  settings.queue_capacity = 2 * static_cast<std::size_t>(std::max(1, workers));
  return engine_config;
}

int run_proofs(const ProofRunOptions& options, const RunConfig& config, ProofRunInputs inputs) {
  if (options.seed) {
    fmt::print(stderr,
               "stagehand prove: --seed {}: r and s are derived from the seed (tests only: such proofs are not "
               "zero-knowledge)\n",
               *options.seed);
  }
  if (options.no_verify)
    fmt::print(stderr, "stagehand prove: --no-verify: the proofs are written without the pairing check\n");
  std::string r1cs_note;
  if (!inputs.key.r1cs_path.empty()) {
    r1cs_note = fmt::format(", witnesses checked against the {} constraints of {}",
                            engine::constraint_count(inputs.key.r1cs), inputs.key.r1cs_path.string());
  }
  RunsSeen runs(options);
  ProofLines lines(inputs, !options.no_verify);
  engine::EngineHooks hooks;
  hooks.trace_runs = !options.trace.empty();
  hooks.on_run = [&runs, &inputs](const engine::RunSummary& summary) { runs.add(summary, inputs.names.size()); };
  const auto engine_config = proof_engine_config(options, config, inputs.proofs.size());
  engine::Engine engine(engine_config, proof_backend_options(options), hooks);
  engine.load_key(kKey, inputs.key);
  const auto status = engine.status();
  print_plan(status, engine_config, inputs.names.size());
  lines.begin(status.on_gpu);
  for (const auto& handle : submit_all(engine, inputs, lines)) handle.wait();
  engine.shutdown();
  runs.check_traces();
  auto so_far = lines.so_far();
  so_far.abc_on_host = status.keys.front().planned_layout.abc_step == groth16::AbcStep::host;
  so_far.r1cs_note = r1cs_note;
  print_proof_count(so_far, runs.figures().empty() ? nullptr : &runs.figures().back());
  std::uint64_t oom = 0;
  for (const auto& figures : runs.figures()) {
    print_run_figures(figures, so_far);
    oom += figures.report.oom_count;
  }
  if (oom > 0 || so_far.failed > 0) {
    fmt::print(stderr, "stagehand prove: {} failed, {} out-of-memory error{} on the devices\n", so_far.failed, oom,
               oom == 1 ? "" : "s");
  }
  return so_far.failed == 0 ? 0 : 1;
}

}  // namespace stagehand::cli
