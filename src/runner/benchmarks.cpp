// The benchmarks of `stagehand bench`. bench policies: a `stagehand run` configuration's workload
// with the real kernels on CudaDevice, one policy after the other, on synthetic data made on the
// device (cuda/kernels/synthetic/synthetic_host.hpp), a, b and c copied by each job's host step
// from one polynomial of random scalars. kind = "porep": the partition program
// (cuda/kernels/launch/partition_launchers.hpp, ec/batch_addition.hpp), its key's sets distinct
// valid points pinned once per run. kind = "groth16": Stagehand's Groth16 program on timing jobs
// of the configured key shape (a PoRep partition's, or the synthetic circuit's) with synthetic
// bytes: every set's points, and a witness whose scalars are a given share uniform and the rest 0
// or 1. The card is held to the config's vram_cap_gib by a ballast allocation (CudaDevice's memory
// cap), so that a 16 GiB card is emulated on a larger one.

#include "runner/benchmarks.hpp"

#include "backend/backend.hpp"
#include "config/run_config.hpp"
#include "coordinator/coordinator.hpp"
#include "coordinator/pageable_arena.hpp"
#include "coordinator/run_report_format.hpp"
#include "device/format.hpp"
#include "runner/sim_runner.hpp"  // groth16_timing_jobs
#include "sim/benchmark.hpp"
#include "trace/svg_timeline.hpp"
#include "trace/trace.hpp"
#include "workloads/porep/porep_workload.hpp"
#include "util/pinnable_allocator.hpp"
#include "math/fr.hpp"

#if defined(STAGEHAND_HAVE_CUDA)
#include "bench/benchmark.hpp"
#include "synthetic/synthetic_host.hpp"
#endif

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>

namespace stagehand {

#if defined(STAGEHAND_HAVE_CUDA)
namespace {

// The key's sets: distinct points across all sets (each set starts its indices where the last
// ended), tail items with random scalars.
asio::awaitable<void> fill_synthetic_key(const PartitionShape& shape, const ProvingKeyHost& key) {
  std::uint64_t next_index = 0;
  auto g1 = [&](HostRange target, std::uint64_t count) {
    cuda::fill_g1_points(target, count, next_index);
    next_index += count;
  };
  g1(key.h, shape.h_points());
  g1(key.l, shape.l_points());
  g1(key.a, shape.a_points());
  g1(key.b_g1, shape.b_g1_points());
  cuda::fill_g2_points(key.b_g2, shape.b_g2_points(), 0);
  cuda::fill_tail_items(key.tail, shape.tail_points(), next_index, 77);
  co_return;
}

using PinnableBytes = std::vector<std::byte, PinnableAllocator<std::byte>>;

HostRange range_of(PinnableBytes& bytes) {
  return HostRange{reinterpret_cast<std::uintptr_t>(bytes.data()), bytes.size()};
}

// One polynomial of random Montgomery scalars, made on the device.
std::vector<std::byte> random_polynomial(const PartitionShape& shape) {
  std::vector<std::byte> values(shape.polynomial_bytes());
  cuda::fill_scalars(HostRange{reinterpret_cast<std::uintptr_t>(values.data()), values.size()}, shape.domain(), 1,
                     true);
  return values;
}

// The Groth16 program's synthetic bytes (Groth16TimingJobs::SyntheticData): each key set's points,
// distinct across the G1 sets; a witness of n_vars Montgomery scalars of the jobs' kinds: from
// bits_below on, uniform where a hash of the index falls below full_scalar_share, otherwise (and
// below it) 0 or 1 by another bit of the hash.
struct Groth16SyntheticBytes {
  std::array<PinnableBytes, groth16::kKeySetCount> sets;
  PinnableBytes witness;

  explicit Groth16SyntheticBytes(const groth16::Groth16TimingJobs& jobs) {
    const auto& sizes = jobs.sizes;
    std::uint64_t next_index = 0;
    for (std::size_t set = 0; set < groth16::kKeySetCount; ++set) {
      const auto points = sizes.set_points[set];
      sets[set].resize(points * groth16::set_point_bytes(set));
      if (points == 0) continue;
      if (set == groth16::kSetB2) {
        cuda::fill_g2_points(range_of(sets[set]), points, 0);
      } else {
        cuda::fill_g1_points(range_of(sets[set]), points, next_index);
        next_index += points;
      }
    }
    constexpr std::size_t kScalar = sizeof(math::Fr);
    witness.resize(sizes.n_vars * kScalar);
    cuda::fill_scalars(range_of(witness), sizes.n_vars, 2, true);
    const math::Fr one = math::Fr::one();
    const auto threshold = static_cast<std::uint64_t>(std::clamp(jobs.full_scalar_share, 0.0, 1.0) * 1048576.0);
    for (std::uint64_t i = 0; i < sizes.n_vars; ++i) {
      std::uint64_t hash = (i + 1) * 0x9e3779b97f4a7c15ull;
      hash ^= hash >> 29;
      if (i >= jobs.bits_below && (hash & 0xfffff) < threshold) continue;
      std::byte* scalar = witness.data() + i * kScalar;
      if ((hash >> 40) & 1) {
        std::memcpy(scalar, &one, kScalar);
      } else {
        std::memset(scalar, 0, kScalar);
      }
    }
  }

  groth16::Groth16TimingJobs::SyntheticData data(std::span<const std::byte> polynomial, HostWork& host_work) {
    groth16::Groth16TimingJobs::SyntheticData data;
    for (std::size_t set = 0; set < groth16::kKeySetCount; ++set) data.sets[set] = range_of(sets[set]);
    data.polynomial = polynomial;
    data.witness = std::span<const std::byte>(witness.data(), witness.size());
    data.host_work = &host_work;
    return data;
  }
};

// What every policy's run shares, made once: the configuration with the command line's
// overrides, the polynomial the host steps copy a, b and c from, and for kind = "groth16" the
// timing jobs and their synthetic bytes.
struct PolicyBenchData {
  RunConfig config;
  std::vector<std::byte> polynomial;
  std::optional<groth16::Groth16TimingJobs> groth16_jobs;  // every policy's, before its synthetic data
  std::optional<Groth16SyntheticBytes> groth16_bytes;
};

void apply_bench_options(const PolicyBenchOptions& options, RunConfig& config) {
  if (!options.policies.empty()) {
    config.policies.clear();
    for (const auto& name : options.policies) config.policies.push_back(policy_from_string(name));
  }
  auto& porep = config.workload;
  if (options.proofs > 0) porep.proofs = options.proofs;
  if (options.partitions > 0) porep.partitions_per_proof = options.partitions;
  if (options.domain_log2 > 0) porep.shape.domain_log2 = options.domain_log2;
  if (options.gpus > 0) config.gpus = options.gpus;
}

// kind = "groth16": the Groth16 program on synthetic bytes, made once for every policy.
void make_groth16_bench_data(PolicyBenchData& data, const PolicyBenchOptions& options,
                             std::chrono::steady_clock::time_point start) {
  auto& config = data.config;
  if (config.groth16.abc_step != groth16::AbcStep::host) {
    throw std::runtime_error(
        fmt::format("{}: bench policies runs the Groth16 program on synthetic bytes, which have no constraint "
                    "matrix: set [workload] abc = \"host\"",
                    config.source.string()));
  }
  if (options.full_scalar_share >= 0) config.groth16.full_scalar_share = options.full_scalar_share;
  const auto& jobs = data.groth16_jobs.emplace(groth16_timing_jobs(config));
  const auto& sizes = jobs.sizes;
  data.groth16_bytes.emplace(jobs);
  fmt::print(
      stderr,
      "stagehand bench policies: the Groth16 program, key {} (sets H {}, A {}, B1 {}, B2 {}, C {} points), a witness "
      "of {} scalars, from {} on {:.1f}% uniform, the rest 0 or 1 ({} full), made in {:.1f} s\n",
      to_string(config.groth16.key), sizes.set_points[groth16::kSetH], sizes.set_points[groth16::kSetA],
      sizes.set_points[groth16::kSetB1], sizes.set_points[groth16::kSetB2], sizes.set_points[groth16::kSetC],
      sizes.n_vars, jobs.bits_below, 100.0 * jobs.full_scalar_share, jobs.full_scalars(0, sizes.n_vars),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

// The workload of one policy's run on `backend`: the Groth16 program's timing jobs, or the PoRep
// partitions.
std::unique_ptr<Workload> make_bench_workload(PolicyBenchData& data, const CoordinatorSettings& settings,
                                              Backend& backend, HostWork& host_work, const std::string& name) {
  const auto& config = data.config;
  const auto& shape = config.workload.shape;
  if (config.workload_kind == WorkloadKind::groth16) {
    auto jobs = *data.groth16_jobs;
    jobs.data = data.groth16_bytes->data(std::span<const std::byte>(data.polynomial), host_work);
    const auto layout = groth16::plan_proof_layout(
        jobs.sizes, backend.devices(), settings.safety_margin_bytes + settings.resident_bytes,
        settings.workers_per_device, config.groth16.abc_step, config.groth16.key_sets,
        config.groth16.stream_buffer_bytes, config.groth16.precompute_bases);
    fmt::print(stderr, "  {:<9} key sets: {}\n", name, layout.placement.describe());
    return std::make_unique<groth16::Groth16TimingWorkload>(std::move(jobs), layout.abc_step, layout.placement);
  }
  // What the simulator's measured model must match (config/devices/h200-measured.toml).
  fmt::print(stderr, "  {:<9} the MSM launchers' scratch per program: {}\n", name,
             format_bytes(PartitionProgram::scratch_bytes(*backend.devices().front(), shape)));
  PoRepData porep_data;
  // Filled once, on the GPU that pins the key (the current one while it is set up).
  porep_data.fill_key = [&shape](Device&, const ProvingKeyHost& key) { return fill_synthetic_key(shape, key); };
  porep_data.input_template = std::span<const std::byte>(data.polynomial);
  porep_data.host_work = &host_work;
  return std::make_unique<PoRepWorkload>(config.workload, porep_data);
}

// The run's trace as Chrome JSON and as a picture, in the options' trace directory.
void write_bench_trace(Trace& trace, const PolicyBenchOptions& options, const std::string& name, Device& device) {
  const auto trace_file = std::filesystem::path(options.trace_dir) / fmt::format("{}.trace.json", name);
  trace.write_chrome_json(trace_file);
  const auto picture = std::filesystem::path(options.trace_dir) / fmt::format("{}.svg", name);
  write_svg_timeline(trace, picture, fmt::format("{} on {} (bench policies)", name, device.properties().name));
  fmt::print(stderr, "  {:<9} trace: {}, picture: {}\n", name, trace_file.string(), picture.string());
}

RunReport run_bench_policy(PolicyBenchData& data, Policy policy, const PolicyBenchOptions& options,
                           HostWork& host_work) {
  const auto& config = data.config;
  const auto& porep = config.workload;
  const auto name = to_string(policy);
  auto settings = settings_for(config, policy);
  settings.prewarm_pinned_pool = true;  // the steady state: the pool's growth is a start-up cost
                                        // (config/h200-measured.toml does the same on the simulator)
  // A fresh device for each policy, held to the cap by a ballast allocation.
  auto backend = Backend::open_cuda(config);
  auto& device = *backend->devices().front();
  fmt::print(stderr,
             "stagehand bench policies: {} on {} x {} ({} of {}), {} proofs x {} partitions at domain 2^{}, {} workers "
             "per GPU\n",
             name, backend->devices().size(), device.properties().name,
             format_bytes(device.properties().total_memory_bytes), config.vram_cap_bytes ? "a capped card" : "the card",
             porep.proofs, porep.partitions_per_proof, porep.shape.domain_log2, settings.workers_per_device);
  auto workload_holder = make_bench_workload(data, settings, *backend, host_work, name);
  auto& workload = *workload_holder;
  // Only the policies that pin in place or upload from pageable memory take from it.
  const bool pageable = policy != Policy::budgeted || settings.host_staging == HostStagingMode::register_in_place;
  auto ring = PageableArena::ring(
      pageable ? static_cast<std::size_t>(3 * (settings.workers_per_device + settings.prestage_depth + 1)) : 0,
      porep.shape.polynomial_bytes());
  CoordinatorHooks hooks;
  hooks.pageable_memory = [&ring](Bytes bytes) { return ring.take(bytes); };
  const int total = config.jobs();
  int done = 0;
  hooks.on_job_done = [&](const JobRecord& job) {
    ++done;
    fmt::print(stderr, "  {:<9} {:>3}/{} partition {} {} at {:.2f} s (lock held {:.3f} s){}\n", name, done, total,
               job.index, job.completed() ? "done" : "FAILED", static_cast<double>(job.finished_ns) / 1e9,
               job.lock_released_ns >= 0 ? static_cast<double>(job.lock_released_ns - job.lock_acquired_ns) / 1e9 : 0.0,
               job.completed() ? "" : ": " + job.error);
  };
  auto& trace = backend->trace();
  RunReport report;
  {
    const KernelTraceScope kernels_traced(*backend, &trace);
    backend->run([&]() -> asio::awaitable<void> {
      report = co_await run_coordinator(backend->devices(), settings, workload, trace, hooks);
    }());
  }
  write_bench_trace(trace, options, name, device);
  for (const auto& line : report.log) fmt::print(stderr, "  {:<9} {}\n", name, line);
  return report;
}

}  // namespace

int run_policy_bench(const PolicyBenchOptions& options) {
  PolicyBenchData data{load_run_config(options.config), {}, {}, {}};
  apply_bench_options(options, data.config);
  if (Backend::cuda_device_count() == 0) {
    std::cerr << "stagehand bench policies: no CUDA device is present\n";
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  data.polynomial = random_polynomial(data.config.workload.shape);
  if (data.config.workload_kind == WorkloadKind::groth16) make_groth16_bench_data(data, options, start);
  std::filesystem::create_directories(options.trace_dir);
  HostWork host_work(4);
  std::vector<RunReport> reports;
  for (auto policy : data.config.policies) reports.push_back(run_bench_policy(data, policy, options, host_work));
  fmt::print("\n");
  print_report_table(std::cout, reports);
  for (const auto& report : reports) {
    fmt::print("\n");
    print_kernel_table(std::cout, report);
  }
  if (!options.json.empty()) write_report_json(options.json, reports);
  fmt::print(stderr, "stagehand bench policies: {:.1f} s in all\n",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

int run_kernel_bench(std::ostream& out) { return cuda::run_kernel_benchmark(out, cuda::KernelBenchmarkOptions{}); }

#else

int run_policy_bench(const PolicyBenchOptions&) {
  std::cerr << "stagehand bench policies: this build has no CUDA backend (nvcc was not found)\n";
  return 1;
}

int run_kernel_bench(std::ostream&) {
  std::cerr << "stagehand bench kernels: this build has no CUDA backend (nvcc was not found)\n";
  return 1;
}

#endif

int run_simulator_bench(std::ostream& out, const SimulatorBenchOptions& options) {
  sim::SimulatorBenchmarkOptions simulator;
  simulator.operations = options.operations;
  simulator.workers = options.workers;
  return sim::run_simulator_benchmark(out, simulator);
}

}  // namespace stagehand
