#include "cli/proof_run.hpp"

#include "coordinator/pageable_arena.hpp"
#include "device/format.hpp"
#include "groth16/device_setup.hpp"
#include "groth16/json.hpp"
#include "runner/report.hpp"
#include "trace/svg_timeline.hpp"
#include "trace/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

namespace stagehand::cli {
namespace {

namespace fs = std::filesystem;

// Where the proofs' time went, summed over the completed proofs and shown per proof: the host's
// steps from the coordinator's records, the kernels from the devices' counters.
// The kernels' totals of the given devices' counters, summed by kernel name; busy_ns the compute
// engine's busy time.
struct KernelFigures {
  std::map<std::string, KernelTotals> kernels;
  Nanoseconds busy_ns = 0;
};
KernelFigures kernel_figures(const std::vector<DeviceCounters>& counters) {
  KernelFigures figures;
  for (const auto& device : counters) {
    figures.busy_ns += device.compute_busy_ns;
    for (const auto& [name, totals] : device.kernel_totals) {
      auto& sum = figures.kernels[name];
      sum.launches += totals.launches;
      sum.busy_ns += totals.busy_ns;
    }
  }
  return figures;
}
std::vector<DeviceCounters> counters_of(Backend& backend) {
  std::vector<DeviceCounters> counters;
  for (auto* device : backend.devices()) counters.push_back(device->counters());
  return counters;
}
// `now` less `before`, kernel by kernel (those that did not run since left out).
std::string kernels_since(const KernelFigures& now, const KernelFigures& before, double per) {
  std::string line;
  for (const auto& [name, totals] : now.kernels) {
    const auto earlier = before.kernels.find(name);
    const auto launches = totals.launches - (earlier == before.kernels.end() ? 0 : earlier->second.launches);
    const auto busy = totals.busy_ns - (earlier == before.kernels.end() ? 0 : earlier->second.busy_ns);
    if (launches == 0) continue;
    line += fmt::format("{}{} {:.2f} ms ({} launches)", line.empty() ? "" : ", ", name, static_cast<double>(busy) / per, launches);
  }
  return line;
}

// `before`: the totals once the key was set up (the devices' counters also hold the key's set-up
// and earlier runs of the same process).
void print_time_breakdown(const RunReport& report, Backend& backend, bool on_gpu, bool abc_on_host,
                          const KernelFigures& before) {
  std::size_t proofs = 0;
  double prepare = 0, wait_lock = 0, held = 0, wait_inputs = 0, finish = 0;
  for (const auto& job : report.jobs) {
    if (!job.completed() || job.lock_acquired_ns < 0 || job.lock_released_ns < 0) continue;
    ++proofs;
    prepare += static_cast<double>(job.prepare_ns);
    wait_lock += static_cast<double>(job.lock_acquired_ns - job.lock_requested_ns);
    held += static_cast<double>(job.lock_released_ns - job.lock_acquired_ns);
    wait_inputs += static_cast<double>(job.waited_for_inputs_ns);
    finish += static_cast<double>(job.finish_ns);
  }
  if (proofs == 0) return;
  const double per = 1e6 * static_cast<double>(proofs);  // ns summed -> ms per proof
  fmt::print(stderr, "stagehand prove: per proof, mean of {}{}: host before the GPU (witness read, checks{}) {:.1f} ms; "
                     "waiting for the GPU {:.1f} ms; GPU held {:.1f} ms (of which inputs still uploading {:.1f} ms); host after "
                     "the GPU (assembly, check) {:.1f} ms\n",
             proofs, on_gpu ? "" : " (simulated clock)", abc_on_host ? ", a/b/c" : "", prepare / per,
             wait_lock / per, held / per, wait_inputs / per, finish / per);
  const std::string line = kernels_since(kernel_figures(counters_of(backend)), before, per);
  if (!line.empty()) fmt::print(stderr, "stagehand prove: kernels per proof{}: {}\n", on_gpu ? "" : " (simulated clock)", line);
}

// The GPUs' time with proofs: from the first proof taking its GPU to the last giving it back, the
// proofs that held one, and the compute engine's busy share of that time; `busy_before`, the
// devices' busy time once the key was set up on them (their counters also hold the set-up's
// kernels, the precomputed bases', and earlier runs').
struct ProvingSpan {
  double seconds = 0;
  double seconds_per_proof = 0;  // proof to proof on a GPU, where the GPUs are the longer side
  double busy = 0;
};
ProvingSpan proving_span(const RunReport& report, Backend& backend, Nanoseconds busy_before) {
  ProvingSpan span;
  Nanoseconds first = -1, last = -1;
  std::size_t proofs = 0;
  for (const auto& job : report.jobs) {
    if (job.lock_acquired_ns < 0 || job.lock_released_ns < 0) continue;
    ++proofs;
    first = first < 0 ? job.lock_acquired_ns : std::min(first, job.lock_acquired_ns);
    last = std::max(last, job.lock_released_ns);
  }
  if (first < 0 || last <= first) return span;
  const auto devices = static_cast<double>(std::max<std::size_t>(1, backend.devices().size()));
  span.seconds = static_cast<double>(last - first) / 1e9;
  span.seconds_per_proof = span.seconds * devices / static_cast<double>(proofs);
  Nanoseconds busy = -busy_before;
  for (auto* device : backend.devices()) busy += device->counters().compute_busy_ns;
  span.busy = static_cast<double>(busy) / 1e9 / (span.seconds * devices);
  return span;
}

std::string describe_span(const ProvingSpan& span, bool several_gpus) {
  return fmt::format(", compute engine busy {:.1f}% from the first proof's GPU start to the last's end ({:.3f} s: {:.3f} s a proof{})",
                     100 * span.busy, span.seconds, span.seconds_per_proof, several_gpus ? " a GPU" : "");
}

// What the engine holds on `device`: its synchronous allocations and what its pool reserved.
Bytes engine_held_bytes(Device& device) { return device.counters().allocated_bytes + device.pool_stats().reserved_bytes; }

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
  command->add_flag("--no-verify", options.no_verify,
                    "Skip the check of each proof against the key's verification key (on by default: a proof that does not "
                    "verify fails its witness and is not written)");
  command->add_option("--abc", options.abc,
                      "Where the a/b/c step runs: device (the key's constraint matrix resident), streamed (on the device, "
                      "the matrix uploaded in chunks for each proof through its stream buffers), host, or auto (device "
                      "where the matrix fits, else streamed where a proof fits with its buffers, else host)")
      ->capture_default_str()
      ->check(CLI::IsMember(groth16::abc_step_choices(/*with_auto=*/true)));
  command->add_option("--key-sets", options.key_sets,
                      "Where the key's point sets are during the proofs: resident (uploaded once), fetched-ahead (uploaded "
                      "whole per proof while a/b/c compute), streamed (uploaded per proof in batches), precomputed (resident "
                      "with the multiples of its points that its MSM's windows need, computed on the device once), or auto "
                      "(resident what fits beside the proofs in flight, the rest streamed)")
      ->capture_default_str()
      ->check(CLI::IsMember(groth16::set_placement_choices()));
  command->add_flag("--precompute-bases", options.precompute_bases,
                    "With --key-sets auto, also precompute the resident sets of 2^20 points or more whose multiples fit "
                    "(12 to 16 times their memory and seconds of set-up, for MSMs 0.6-0.9x as long: for long runs)");
  command->add_option("--stream-buffer-mib", options.stream_buffer_mib,
                      "Each of the two buffers a proof streams its key sets through, in MiB")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 65536.0));
  command->add_option("--seed", options.seed, "Derive r and s from this seed instead of the system's CSPRNG (tests only)");
  command->add_option("--workers", options.workers,
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

std::unique_ptr<Backend> open_proof_backend(const RunConfig& config, const ProofRunOptions& options) {
  // A GPU where there is one (or as the configuration says); otherwise the simulator's
  // functional mode, whose kernels run the CPU reference: the same code path either way.
  BackendOptions backend_options;
  backend_options.functional = true;
  backend_options.keep_trace_events = !options.trace.empty();
  return Backend::open(config, backend_options);
}

groth16::SetupOptions device_setup_options(Backend& backend, unsigned threads) {
  groth16::SetupOptions options;
  options.thread_count = threads;
  Device& device = *backend.devices().at(0);
  groth16::DeviceSetupOptions device_options;
  device_options.host_threads = threads;
  options.multiply_g1 = [&backend, &device, device_options](std::span<const math::Fr> scalars) {
    groth16::G1Points points(scalars.size());
    backend.run(groth16::multiply_generator_on_device(device, groth16::SetupGroup::g1, scalars, points.mutable_bytes(), device_options));
    return points;
  };
  options.multiply_g2 = [&backend, &device, device_options](std::span<const math::Fr> scalars) {
    groth16::G2Points points(scalars.size());
    backend.run(groth16::multiply_generator_on_device(device, groth16::SetupGroup::g2, scalars, points.mutable_bytes(), device_options));
    return points;
  };
  return options;
}

groth16::ProofRandomness proof_randomness(const ProofRunOptions& options, std::size_t index) {
  return options.seed ? groth16::ProofRandomness::from_seed(*options.seed + index) : groth16::ProofRandomness::from_system();
}

int run_proofs(const ProofRunOptions& options, const RunConfig& config, Backend& backend, const groth16::ProvingKey& key,
               ProofRunInputs inputs) {
  const bool use_cuda = backend.on_gpu();
  // What the engine held on each device before the run: after it, no more. (Free memory is
  // printed too, but the CUDA runtime keeps some MiB of its own after the first launches.)
  std::vector<Bytes> free_before;
  std::vector<Bytes> held_before;
  for (auto* device : backend.devices()) {
    free_before.push_back(device->memory_info().free_bytes);
    held_before.push_back(engine_held_bytes(*device));
  }
  auto settings = settings_for(config, policy_from_string(options.policy));
  if (options.workers > 0) settings.workers_per_device = options.workers;
  if (options.seed) {
    fmt::print(stderr, "stagehand prove: --seed {}: r and s are derived from the seed (tests only: such proofs are not zero-knowledge)\n",
               *options.seed);
  }
  if (options.no_verify) fmt::print(stderr, "stagehand prove: --no-verify: the proofs are written without the pairing check\n");
  std::size_t done = 0;
  std::size_t failed = 0;
  double check_seconds = 0;
  std::size_t checked = 0;
  const groth16::Groth16Workload* workload_pointer = nullptr;
  auto proving_start = std::chrono::steady_clock::now();
  auto on_proof = [&](int job, const groth16::Proof& proof, const std::vector<math::Fr>& public_signals) {
    const auto& output = inputs.outputs[static_cast<std::size_t>(job)];
    groth16::write_text_file(output.proof, groth16::proof_json(proof));
    groth16::write_text_file(output.public_signals, groth16::public_json(public_signals));
  };
  CoordinatorHooks hooks;
  PageableArena pageable;  // serial uploads a, b, c from it; prestage and two-lock pin it in place
  hooks.pageable_memory = [&pageable](Bytes bytes) { return pageable.take(bytes); };
  hooks.on_job_done = [&](const JobRecord& record) {
    const auto index = static_cast<std::size_t>(record.index);
    ++done;
    if (record.completed()) {
      // On the simulator the device's clock is virtual: only the wall clock means anything there.
      const auto held = use_cuda ? fmt::format(", GPU {} held {:.3f} s", record.device,
                                               static_cast<double>(record.lock_released_ns - record.lock_acquired_ns) / 1e9)
                                 : std::string();
      std::string verified;
      if (inputs.checks.verify && workload_pointer != nullptr) {
        const double seconds = workload_pointer->check_seconds(record.index);
        check_seconds += seconds;
        ++checked;
        verified = fmt::format(", verified ({:.1f} ms)", 1e3 * seconds);
      }
      fmt::print(stderr, "  [{}/{}] {}: proof done at {:.3f} s{}{} -> {}, {}\n", done, inputs.names.size(), inputs.names[index],
                 seconds_since(proving_start), held, verified, inputs.outputs[index].proof.string(), inputs.outputs[index].public_signals.string());
    } else {
      ++failed;
      fmt::print(stderr, "  [{}/{}] {}: FAILED: {}\n", done, inputs.names.size(), inputs.names[index], record.error);
    }
  };

  // Threads for the host steps of the jobs (a/b/c, G2 MSM): inline on the simulator.
  HostWork host_work(use_cuda ? host_work_threads(settings.workers_per_device, backend.devices().size()) : 0);
  const auto layout = groth16::plan_proof_layout(groth16::KeySizes::of(key), backend.devices(), settings.safety_margin_bytes + settings.resident_bytes,
                                                 settings.workers_per_device, groth16::parse_abc_step(options.abc),
                                                 groth16::parse_set_placement(options.key_sets),
                                                 static_cast<Bytes>(options.stream_buffer_mib * static_cast<double>(kMiB)),
                                                 options.precompute_bases);
  const auto abc_step = layout.abc_step;
  fmt::print(stderr, "stagehand prove: the a/b/c step {} ({}); the key's sets: {}\n", groth16::describe(abc_step), layout.reason,
             layout.placement.describe());
  groth16::Groth16Workload workload(key, inputs.key_path, std::move(inputs.jobs), host_work, options.threads, on_proof, inputs.checks, abc_step,
                                    layout.placement);
  workload_pointer = &workload;
  // A cap too small for one proof is the configuration's mistake: say so, naming the key, before
  // any device work (the kernels' scratch, known once the devices are set up, comes on top).
  {
    const Bytes proof_bytes = groth16::proof_device_bytes(groth16::KeySizes::of(key), layout);
    const Bytes margins = settings.safety_margin_bytes + settings.resident_bytes;
    check_vram_cap_fits(config, proof_bytes + margins,
                        fmt::format("a proof of {} (domain 2^{}) ({} with the key's resident sets and matrix, {} safety margin and "
                                    "residents; key sets streamed keep less on the device)",
                                    inputs.key_name, key.domain_log2, format_bytes(proof_bytes), format_bytes(margins)));
  }
  // The simulator records its devices' work in its own trace; on a GPU the coordinator's rows.
  Trace& trace = backend.trace();
  fmt::print(stderr, "stagehand prove: {} proof{} on {}{}, policy {}, {} workers per GPU, a/b/c {}\n", inputs.names.size(),
             inputs.names.size() == 1 ? "" : "s", backend.describe(), use_cuda ? "" : ", kernels on the CPU reference",
             to_string(settings.policy), settings.workers_per_device, groth16::describe(abc_step));
  RunReport report;
  const auto counters_before = counters_of(backend);
  proving_start = std::chrono::steady_clock::now();
  {
    // On a GPU the kernels and the blocking host calls get rows of their own in the trace.
    const KernelTraceScope kernels_traced(backend, options.trace.empty() ? nullptr : &trace);
    backend.run([&]() -> asio::awaitable<void> {
      report = co_await run_coordinator(backend.devices(), settings, workload, trace, hooks);
    }());
  }
  if (!options.trace.empty()) {
    trace.write_chrome_json(options.trace);
    auto picture = fs::path(options.trace).replace_extension(".svg");
    // One row per proof with its phases, so that the phase that bounds a proof shows.
    PictureOptions picture_options;
    picture_options.worker_rows = true;
    picture_options.job_rows = true;
    picture_options.job_word = "proof";
    write_svg_picture({PictureLane{to_string(settings.policy), headline_figures(report), &trace}}, picture,
                      fmt::format("stagehand prove: {} proof{}, {}", inputs.names.size(), inputs.names.size() == 1 ? "" : "s",
                                  use_cuda ? "CUDA" : "functional simulator"),
                      picture_options);
    fmt::print(stderr, "stagehand prove: trace: {} (open in https://ui.perfetto.dev), picture: {}\n", options.trace,
               picture.string());
  }
  const double proving_seconds = seconds_since(proving_start);
  // The proofs' figures count from each device's counters once the key was set up on it (a device
  // never set up: from the run's start), so that the set-up's kernels stay out of them.
  auto counters_set_up = counters_before;
  for (const auto& [device, counters] : workload.counters_after_set_up()) {
    if (device >= 0 && static_cast<std::size_t>(device) < counters_set_up.size()) counters_set_up[static_cast<std::size_t>(device)] = counters;
  }
  const auto set_up_figures = kernel_figures(counters_set_up);
  const Nanoseconds busy_before = set_up_figures.busy_ns;
  fmt::print(stderr, "stagehand prove: {} of {} proof{} in {:.3f} s ({:.3f} s per proof; {:.2f} s in all){}\n",
             inputs.names.size() - failed, inputs.names.size(), inputs.names.size() == 1 ? "" : "s", proving_seconds,
             proving_seconds / static_cast<double>(std::max<std::size_t>(inputs.names.size(), 1)), seconds_since(inputs.start),
             use_cuda ? describe_span(proving_span(report, backend, busy_before), backend.devices().size() > 1) : std::string());
  for (const auto& [device, seconds] : workload.set_up_seconds()) {
    fmt::print(stderr, "stagehand prove: GPU {}: the key ({} resident) on the device in {:.3f} s, before the first proof; scratch per "
                       "proof: MSM {}, H {}\n",
               device, format_bytes(workload.resident_bytes()), seconds, format_bytes(workload.msm_scratch_bytes()),
               format_bytes(workload.h_scratch_bytes()));
  }
  const std::string set_up_kernels = kernels_since(set_up_figures, kernel_figures(counters_before), 1e6);
  if (!set_up_kernels.empty()) {
    fmt::print(stderr, "stagehand prove: the key's set-up kernels{}, in all: {}\n", use_cuda ? "" : " (simulated clock)", set_up_kernels);
  }
  print_time_breakdown(report, backend, use_cuda, abc_step == groth16::AbcStep::host, set_up_figures);
  if (checked > 0) {
    fmt::print(stderr, "stagehand prove: pairing check {:.1f} ms per proof ({} checked{})\n", 1e3 * check_seconds / static_cast<double>(checked),
               checked, inputs.checks.r1cs != nullptr
                             ? fmt::format(", witnesses checked against the {} constraints of {}", inputs.checks.r1cs->constraints.size(),
                                           inputs.checks.r1cs_path.string())
                             : std::string());
  }
  for (std::size_t i = 0; i < backend.devices().size(); ++i) {
    if (i < report.per_device.size() && !report.per_device[i].failure.empty()) continue;  // a lost GPU answers nothing
    const Bytes free_after = backend.devices()[i]->memory_info().free_bytes;
    const Bytes held_after = engine_held_bytes(*backend.devices()[i]);
    fmt::print(stderr, "stagehand prove: GPU {}: the engine holds {} of device memory after the run, {} before{}; free {} before, {} after\n", i,
               format_bytes(held_after), format_bytes(held_before[i]),
               held_after > held_before[i] ? fmt::format(" ({} not given back)", format_bytes(held_after - held_before[i]))
                                           : std::string(", nothing left behind"),
               format_bytes(free_before[i]), format_bytes(free_after));
  }
  if (report.jobs_retried > 0) {
    fmt::print(stderr, "stagehand prove: {} proof{} moved to another GPU when theirs was lost\n", report.jobs_retried,
               report.jobs_retried == 1 ? "" : "s");
  }
  std::ostringstream per_gpu;
  print_device_table(per_gpu, {report});
  if (!per_gpu.str().empty()) fmt::print(stderr, "{}", per_gpu.str());
  if (report.oom_count > 0 || failed > 0) {
    fmt::print(stderr, "stagehand prove: {} failed, {} out-of-memory error{} on the devices\n", failed, report.oom_count,
               report.oom_count == 1 ? "" : "s");
  }
  return failed == 0 ? 0 : 1;
}


}  // namespace stagehand::cli
