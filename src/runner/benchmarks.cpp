// The benchmarks of `stagehand bench`. bench policies: the partition program of `stagehand run`
// with the real kernels (cuda/kernels/launch/partition_launchers.hpp, ec/batch_addition.hpp) on
// CudaDevice, one policy after the other, on synthetic data made on the device (cuda/kernels/synthetic/synthetic_host.hpp):
// the proving key's sets are distinct valid points (pinned once per run), a, b and c are copied by
// each job's host step from one polynomial of random scalars. The card is held to the config's
// vram_cap_gib by a ballast allocation (CudaDevice's memory cap), so that a 16 GiB card is emulated
// on a larger one.

#include "runner/benchmarks.hpp"

#include "coordinator/coordinator.hpp"
#include "coordinator/pageable_arena.hpp"
#include "device/format.hpp"
#include "runner/backend.hpp"
#include "runner/report.hpp"
#include "runner/run_config.hpp"
#include "sim/benchmark.hpp"
#include "trace/svg_timeline.hpp"
#include "trace/trace.hpp"
#include "workloads/porep/porep_workload.hpp"

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

// One polynomial of random Montgomery scalars, made on the device.
std::vector<std::byte> random_polynomial(const PartitionShape& shape) {
  std::vector<std::byte> values(shape.polynomial_bytes());
  cuda::fill_scalars(HostRange{reinterpret_cast<std::uintptr_t>(values.data()), values.size()}, shape.domain(), 1, true);
  return values;
}

}  // namespace

int run_policy_bench(const PolicyBenchOptions& options) {
  auto config = load_run_config(options.config);
  if (!options.policies.empty()) {
    config.policies.clear();
    for (const auto& name : options.policies) config.policies.push_back(policy_from_string(name));
  }
  auto& porep = config.workload;
  if (options.proofs > 0) porep.proofs = options.proofs;
  if (options.partitions > 0) porep.partitions_per_proof = options.partitions;
  if (options.domain_log2 > 0) porep.shape.domain_log2 = options.domain_log2;
  if (Backend::cuda_device_count() == 0) {
    std::cerr << "stagehand bench policies: no CUDA device is present\n";
    return 1;
  }
  if (options.gpus > 0) config.gpus = options.gpus;
  const auto& shape = porep.shape;
  const auto start = std::chrono::steady_clock::now();
  const auto polynomial = random_polynomial(shape);
  std::filesystem::create_directories(options.trace_dir);
  HostWork host_work(4);
  std::vector<RunReport> reports;
  for (auto policy : config.policies) {
    const auto name = to_string(policy);
    auto settings = settings_for(config, policy);
    settings.prewarm_pinned_pool = true;  // the steady state: the pool's growth is a start-up cost
                                          // (config/h200-measured.toml does the same on the simulator)
    // A fresh device for each policy, held to the cap by a ballast allocation.
    auto backend = Backend::open_cuda(config);
    auto& device = *backend->devices().front();
    fmt::print(stderr, "stagehand bench policies: {} on {} x {} ({} of {}), {} proofs x {} partitions at domain 2^{}, {} workers per GPU\n",
               name, backend->devices().size(), device.properties().name, format_bytes(device.properties().total_memory_bytes),
               config.vram_cap_bytes ? "a capped card" : "the card", porep.proofs, porep.partitions_per_proof, shape.domain_log2,
               settings.workers_per_device);
    // What the simulator's measured model must match (config/devices/h200-measured.toml).
    fmt::print(stderr, "  {:<9} the MSM launchers' scratch per program: {}\n", name,
               format_bytes(PartitionProgram::scratch_bytes(device, shape)));
    PoRepData data;
    // Filled once, on the GPU that pins the key (the current one while it is set up).
    data.fill_key = [&shape](Device&, const ProvingKeyHost& key) { return fill_synthetic_key(shape, key); };
    data.input_template = std::span<const std::byte>(polynomial);
    data.host_work = &host_work;
    PoRepWorkload workload(porep, data);
    // Only the policies that pin in place or upload from pageable memory take from it.
    const bool pageable = policy != Policy::budgeted || settings.host_staging == HostStagingMode::register_in_place;
    auto ring = PageableArena::ring(
        pageable ? static_cast<std::size_t>(3 * (settings.workers_per_device + settings.prestage_depth + 1)) : 0,
        shape.polynomial_bytes());
    CoordinatorHooks hooks;
    hooks.pageable_memory = [&ring](Bytes bytes) { return ring.take(bytes); };
    const int total = porep.partitions();
    int done = 0;
    hooks.on_job_done = [&](const JobRecord& job) {
      ++done;
      fmt::print(stderr, "  {:<9} {:>3}/{} partition {} {} at {:.2f} s (lock held {:.3f} s){}\n", name, done, total, job.index,
                 job.completed() ? "done" : "FAILED", static_cast<double>(job.finished_ns) / 1e9,
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
    const auto trace_file = std::filesystem::path(options.trace_dir) / fmt::format("{}.trace.json", name);
    trace.write_chrome_json(trace_file);
    const auto picture = std::filesystem::path(options.trace_dir) / fmt::format("{}.svg", name);
    write_svg_timeline(trace, picture, fmt::format("{} on {} (bench policies)", name, device.properties().name));
    fmt::print(stderr, "  {:<9} trace: {}, picture: {}\n", name, trace_file.string(), picture.string());
    for (const auto& line : report.log) fmt::print(stderr, "  {:<9} {}\n", name, line);
    reports.push_back(std::move(report));
  }
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
