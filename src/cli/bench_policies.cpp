// stagehand bench policies: the partition program of `stagehand run` with the real kernels
// (cuda/kernels/launch/partition_launchers.hpp, ec/batch_addition.hpp) on CudaDevice, one policy
// after the other, on synthetic data made on the device (cuda/kernels/synthetic/synthetic_host.hpp):
// the proving key's sets are distinct valid points (pinned once per run), a, b and c are copied by
// each job's host step from one polynomial of random scalars. The card is held to the config's
// vram_cap_gib by a ballast allocation (CudaDevice's memory cap), so that a 16 GiB card is emulated
// on a larger one.

#include "cli/bench_policies.hpp"

#include "coordinator/coordinator.hpp"
#include "workloads/porep/porep_workload.hpp"
#include "device/format.hpp"
#include "runner/report.hpp"
#include "runner/run_config.hpp"
#include "trace/svg_timeline.hpp"
#include "trace/trace.hpp"

#if defined(STAGEHAND_HAVE_CUDA)
#include "cuda_device.hpp"
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

namespace stagehand::cli {

#if defined(STAGEHAND_HAVE_CUDA)
namespace {

// Ordinary host memory for the policies that pin a, b and c in place or upload them from
// pageable memory: a ring of buffers, reused once every job that could hold one has finished.
// Allocated and touched before the run, so that no job pays first-touch page faults that a
// long-running prover would not.
class PageableRing {
 public:
  PageableRing(std::size_t slots, Bytes bytes) : bytes_(bytes) {
    for (std::size_t i = 0; i < slots; ++i) {
      buffers_.push_back(Buffer{std::unique_ptr<std::byte[]>(new std::byte[bytes]), bytes});
      std::memset(buffers_.back().memory.get(), 0, bytes);
    }
  }
  HostRange take(Bytes bytes) {
    if (bytes != bytes_) throw std::logic_error("PageableRing: one size of buffer per run");
    return range(buffers_[next_++ % buffers_.size()]);
  }

 private:
  struct Buffer {
    std::unique_ptr<std::byte[]> memory;
    Bytes bytes;
  };
  static HostRange range(const Buffer& buffer) {
    return HostRange{reinterpret_cast<std::uintptr_t>(buffer.memory.get()), buffer.bytes};
  }
  Bytes bytes_;
  std::size_t next_ = 0;
  std::vector<Buffer> buffers_;
};

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
  auto& coordinator = config.coordinator;
  if (options.proofs > 0) coordinator.proofs = options.proofs;
  if (options.partitions > 0) coordinator.partitions_per_proof = options.partitions;
  if (options.domain_log2 > 0) coordinator.shape.domain_log2 = options.domain_log2;
  if (cuda::device_count() == 0) {
    std::cerr << "stagehand bench policies: no CUDA device is present\n";
    return 1;
  }
  const auto& shape = coordinator.shape;
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
    asio::io_context io;
    cuda::CudaDevice device(0, io.get_executor(), config.vram_cap_bytes);
    fmt::print(stderr, "stagehand bench policies: {} on {} ({} of {}), {} proofs x {} partitions at domain 2^{}, {} workers\n", name,
               device.properties().name, format_bytes(device.properties().total_memory_bytes),
               config.vram_cap_bytes ? "a capped card" : "the card", settings.proofs, settings.partitions_per_proof, shape.domain_log2,
               settings.workers_per_device);
    // What the simulator's measured model must match (config/devices/h200-measured.toml).
    fmt::print(stderr, "  {:<9} the MSM launchers' scratch per program: {}\n", name,
               format_bytes(PartitionProgram::scratch_bytes(device, shape)));
    PoRepData data;
    data.fill_key = [&shape](Device&, const ProvingKeyHost& key) { return fill_synthetic_key(shape, key); };
    data.input_template = std::span<const std::byte>(polynomial);
    data.host_work = &host_work;
    PoRepWorkload workload(shape, settings.program, settings.proofs, settings.partitions_per_proof, data);
    // Only the policies that pin in place or upload from pageable memory take from it.
    const bool pageable = policy != Policy::budgeted || settings.host_staging == HostStagingMode::register_in_place;
    PageableRing ring(pageable ? static_cast<std::size_t>(3 * (settings.workers_per_device + settings.prestage_depth + 1)) : 0,
                      shape.polynomial_bytes());
    CoordinatorHooks hooks;
    hooks.pageable_memory = [&ring](Bytes bytes) { return ring.take(bytes); };
    const int total = settings.proofs * settings.partitions_per_proof;
    int done = 0;
    hooks.on_job_done = [&](const JobRecord& job) {
      ++done;
      fmt::print(stderr, "  {:<9} {:>3}/{} partition {} {} at {:.2f} s (lock held {:.3f} s){}\n", name, done, total, job.index,
                 job.completed() ? "done" : "FAILED", static_cast<double>(job.finished_ns) / 1e9,
                 job.lock_released_ns >= 0 ? static_cast<double>(job.lock_released_ns - job.lock_acquired_ns) / 1e9 : 0.0,
                 job.completed() ? "" : ": " + job.error);
    };
    Trace trace(true);
    device.trace_kernels(&trace);
    RunReport report;
    std::exception_ptr failure;
    std::vector<Device*> devices{&device};
    asio::co_spawn(io, run_coordinator(devices, settings, workload, trace, hooks),
                   [&](std::exception_ptr error, RunReport result) {
                     failure = error;
                     report = std::move(result);
                   });
    io.run();
    device.trace_kernels(nullptr);
    if (failure) std::rethrow_exception(failure);
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

#else

int run_policy_bench(const PolicyBenchOptions&) {
  std::cerr << "stagehand bench policies: this build has no CUDA backend (nvcc was not found)\n";
  return 1;
}

#endif

}  // namespace stagehand::cli
