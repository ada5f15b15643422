#include "bench/benchmark.hpp"
#include "bench/benchmark_support.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iomanip>
#include <memory>
#include <ostream>
#include <string>

#include "device/kernel_abi.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"
#include "math/ntt.hpp"
#include "msm/msm.hpp"
#include "msm/msm_results_host.hpp"
#include "ntt/ntt.hpp"
#include "synthetic/sample_data.hpp"
#include "util/common_host.hpp"
#include "util/device_buffer.hpp"

namespace stagehand::cuda {
namespace {

struct PinnedBuffer {
  void* pointer = nullptr;
  explicit PinnedBuffer(std::uint64_t bytes) {
    STAGEHAND_CUDA_CHECK(cudaHostAlloc(&pointer, bytes, cudaHostAllocDefault));
  }
  ~PinnedBuffer() { cudaFreeHost(pointer); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  std::uint8_t* bytes() const { return static_cast<std::uint8_t*>(pointer); }
};

// The MSM's sample scalars (canonical, 32 bytes each) in the options' distribution: the uniform
// ones, with every one (bits) or nine in ten (mostly-bits) replaced by 0 or 1, chosen by a hash of
// the index so that the set is the same in every run.
std::vector<std::uint8_t> msm_sample_scalars(std::uint64_t n, std::uint64_t seed,
                                             const KernelBenchmarkOptions& options) {
  std::vector<std::uint8_t> scalars(n * kFrBytes);
  fill_sample_scalars(scalars, n, seed, false);
  using Scalars = KernelBenchmarkOptions::Scalars;
  if (options.scalars == Scalars::full) return scalars;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t hash = (i + seed) * 0x9e3779b97f4a7c15ull;
    hash ^= hash >> 29;
    if (options.scalars == Scalars::mostly_bits && hash % 10 == 9) continue;
    std::uint8_t* scalar = scalars.data() + i * kFrBytes;
    std::memset(scalar, 0, kFrBytes);
    scalar[0] = static_cast<std::uint8_t>((hash >> 40) & 1);
  }
  return scalars;
}

const char* scalars_name(const KernelBenchmarkOptions& options) {
  switch (options.scalars) {
    case KernelBenchmarkOptions::Scalars::full: return "";
    case KernelBenchmarkOptions::Scalars::bits: return " scalars=bits";
    case KernelBenchmarkOptions::Scalars::mostly_bits: return " scalars=mostly-bits";
  }
  return "";
}

void words_of(FrWords& words, const math::Fr& value) {
  const auto& limbs = value.montgomery_limbs();
  for (int i = 0; i < 4; ++i) words[i] = limbs[i];
}

void bench_ntt(std::ostream& out, unsigned log_size, const KernelBenchmarkOptions& options, cudaStream_t stream) {
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const std::uint64_t bytes = n * kFrBytes;
  // Rotate over enough buffers that repeated runs do not find their data in the 60 MB L2.
  const unsigned buffer_count =
      static_cast<unsigned>(std::clamp<std::uint64_t>((std::uint64_t{256} << 20) / bytes, 1, 8));
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  std::vector<std::uint8_t> host(bytes);
  fill_sample_scalars(host, n, options.seed + log_size, true);
  for (unsigned b = 0; b < buffer_count; ++b) {
    buffers.push_back(std::make_unique<DeviceBuffer>(bytes));
    STAGEHAND_CUDA_CHECK(cudaMemcpy(buffers.back()->pointer, host.data(), bytes, cudaMemcpyHostToDevice));
  }
  const math::Domain domain = math::Domain::snarkjs(log_size, 1);
  FrWords root, coset;
  words_of(root, domain.root());
  words_of(coset, domain.coset_generator());
  DeviceBuffer table(ntt_domain_bytes(log_size));
  ntt_domain_init(table.pointer, log_size, root, coset, stream);
  const std::pair<const char*, NttKind> kinds[] = {{kernel::ntt_forward, NttKind::forward},
                                                   {kernel::ntt_inverse, NttKind::inverse},
                                                   {kernel::coset_ntt, NttKind::coset_forward},
                                                   {kernel::coset_intt, NttKind::coset_inverse}};
  for (const auto& [name, kind] : kinds) {
    const Stats stats = time_events(options.ntt_repetitions, stream, [&](unsigned r) {
      ntt(buffers[r % buffer_count]->pointer, table.pointer, log_size, kind, stream);
    });
    row(out, name, log_size, stats, options.ntt_repetitions);
  }
  // With ntt_variants, the forward transform with each form of the twiddle multiplication, twice
  // over in alternation, so that a drift of the clock shows as a difference between the rounds.
  for (int round = 0; options.ntt_variants && round < 2; ++round) {
    for (const NttVariant variant : kNttVariants) {
      const Stats stats = time_events(options.ntt_repetitions, stream, [&](unsigned r) {
        ntt(buffers[r % buffer_count]->pointer, table.pointer, log_size, NttKind::forward, stream, variant);
      });
      row(out, std::string("ntt_forward ") + ntt_variant_name(variant), log_size, stats, options.ntt_repetitions);
    }
  }
  for (const auto& [name, form] : {std::pair{kernel::h_polynomial_snarkjs, HForm::snarkjs},
                                   std::pair{kernel::h_polynomial_classic, HForm::classic}}) {
    if (buffer_count < 3 && log_size > 24) continue;  // 3 x 2 GiB more at 2^26 buys nothing new
    std::vector<std::unique_ptr<DeviceBuffer>> abc;
    for (int i = 0; i < 3; ++i) {
      abc.push_back(std::make_unique<DeviceBuffer>(bytes));
      STAGEHAND_CUDA_CHECK(cudaMemcpy(abc.back()->pointer, host.data(), bytes, cudaMemcpyHostToDevice));
    }
    const Stats stats = time_events(options.ntt_repetitions, stream, [&](unsigned) {
      h_polynomial(abc[0]->pointer, abc[1]->pointer, abc[2]->pointer, table.pointer, log_size, form, stream);
    });
    row(out, name, log_size, stats, options.ntt_repetitions);
  }
  STAGEHAND_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// An MSM over precomputed bases at each width asked for: the copies computed once from the points
// already on the device (timed, by CUDA events), then the MSM timed like the others and each
// result checked by `verdict`. `msm` runs one MSM of the plan into `sums` and combines them into
// the group's one result on the device or the host; it returns nothing, `verdict` reads the result.
template <class RunMsm, class Verdict>
void bench_precomputed(std::ostream& out, const char* name, unsigned log_size, MsmGroup group,
                       const void* device_points, const KernelBenchmarkOptions& options, cudaStream_t stream,
                       RunMsm msm, Verdict verdict) {
  const std::uint64_t n = std::uint64_t{1} << log_size;
  for (const unsigned width : options.precomputed_window_bits) {
    const MsmPlan plan = msm_precomputed_plan(n, width, group);
    const std::string note = "c=" + std::to_string(plan.window_bits) + " copies=" + std::to_string(plan.window_count) +
                             " group=" + std::to_string(plan.windows_per_group);
    std::size_t free_bytes = 0, total_bytes = 0;
    STAGEHAND_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::uint64_t needed = msm_precomputed_bytes(plan) + msm_scratch_bytes(plan) + msm_result_bytes(plan);
    if (needed + (std::uint64_t{1} << 30) > free_bytes) {
      out << std::left << std::setw(24) << name << std::right << std::setw(4) << log_size << "  " << note
          << ": does not fit (" << (needed >> 30) << " GiB of bases and scratch, " << (free_bytes >> 30) << " GiB free)"
          << std::endl;
      continue;
    }
    DeviceBuffer copies(msm_precomputed_bytes(plan)), scratch(msm_scratch_bytes(plan)), sums(msm_result_bytes(plan));
    STAGEHAND_CUDA_CHECK(cudaMemset(copies.pointer, 0xff, msm_precomputed_bytes(plan)));  // poison
    // Once, not warmed up: at 2^26 it takes seconds.
    const auto begin = std::chrono::steady_clock::now();
    msm_precompute_bases(plan, device_points, copies.pointer, stream);
    STAGEHAND_CUDA_CHECK(cudaStreamSynchronize(stream));
    const double setup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
    const Stats stats = time_events(options.msm_repetitions, stream,
                                    [&](unsigned) { msm(plan, copies.pointer, scratch.pointer, sums.pointer); });
    row(out, name, log_size, stats, options.msm_repetitions,
        note + " bases=" + std::to_string(msm_precomputed_bytes(plan) >> 20) + "MiB (computed in " +
            std::to_string(setup_ms).substr(0, std::to_string(setup_ms).find('.') + 2) +
            " ms) scratch=" + std::to_string(msm_scratch_bytes(plan) >> 20) + "MiB, " + verdict(plan, sums.pointer));
  }
}

void bench_msm(std::ostream& out, unsigned log_size, const KernelBenchmarkOptions& options, cudaStream_t stream,
               cudaStream_t copy_stream) {
  const std::uint64_t n = std::uint64_t{1} << log_size;
  PinnedBuffer points(n * kG1AffineBytes);
  const PointWalk walk = fill_sample_points({points.bytes(), n * kG1AffineBytes}, n, options.seed + 100 + log_size);
  const std::vector<std::uint8_t> scalars = msm_sample_scalars(n, options.seed + 200 + log_size, options);
  DeviceBuffer device_scalars(n * kFrBytes);
  STAGEHAND_CUDA_CHECK(cudaMemcpy(device_scalars.pointer, scalars.data(), n * kFrBytes, cudaMemcpyHostToDevice));

  // Every timed result is also checked, through the sample points' discrete logarithms.
  const math::G1Projective expected = expected_walk_msm(scalars, n, walk);
  auto verdict = [&](const G1JacobianBytes& got) {
    const auto point = g1_from_jacobian_bytes(got.bytes);
    return point && *point == expected ? std::string("verified") : std::string("WRONG RESULT");
  };
  const MsmPlan plan = msm_plan(n, options.msm_window_bits);
  const std::string note = "c=" + std::to_string(plan.window_bits) + " windows=" + std::to_string(plan.window_count) +
                           " group=" + std::to_string(plan.windows_per_group) + scalars_name(options);
  auto phases_text = [](const std::vector<std::pair<std::string, double>>& phases) {
    std::string text;
    double total = 0;
    for (const auto& [name, ms] : phases) {
      text += " " + name + "=" + std::to_string(ms).substr(0, std::to_string(ms).find('.') + 2);
      total += ms;
    }
    return "phases (ms):" + text + " sum=" + std::to_string(total).substr(0, std::to_string(total).find('.') + 2);
  };
  DeviceBuffer device_points(n * kG1AffineBytes);
  STAGEHAND_CUDA_CHECK(cudaMemcpy(device_points.pointer, points.pointer, n * kG1AffineBytes, cudaMemcpyHostToDevice));
  // The default tuning first; with msm_variants, the baseline kernel ("before": one thread per
  // bucket, each group reduced at once) and each switch on its own, in the same run.
  std::vector<std::pair<std::string, MsmTuning>> variants = {{"msm_g1 (device)", MsmTuning{}}};
  if (options.msm_variants) {
    variants.push_back({"msm_g1 before", MsmTuning{false, false, ItemSum::integer, false}});
    variants.push_back({"msm_g1 +balanced only", MsmTuning{true, false, ItemSum::integer, false}});
    variants.push_back({"msm_g1 one segment kern", MsmTuning{true, true, ItemSum::f64, false}});
    variants.push_back({"msm_g1 f64, no prefetch", MsmTuning{true, true, ItemSum::f64, true}});
    variants.push_back({"msm_g1 int, prefetch", MsmTuning{true, true, ItemSum::integer_prefetch, true}});
    variants.push_back({"msm_g1 int", MsmTuning{true, true, ItemSum::integer, true}});
    variants.push_back({"msm_g1 int, called", MsmTuning{true, true, ItemSum::integer_called, true}});
    variants.push_back({"msm_g1 f64, prefetch", MsmTuning{true, true, ItemSum::f64_prefetch, true}});
  }
  for (const auto& [name, tuning] : variants) {
    MsmPlan variant_plan = plan;
    variant_plan.tuning = tuning;
    DeviceBuffer scratch(msm_scratch_bytes(variant_plan));
    DeviceBuffer sums(msm_result_bytes(variant_plan));
    PinnedBuffer host_sums(msm_result_bytes(variant_plan));
    STAGEHAND_CUDA_CHECK(cudaMemset(sums.pointer, 0xff, msm_result_bytes(variant_plan)));  // poison
    const Stats stats = time_events(options.msm_repetitions, stream, [&](unsigned) {
      msm_g1_windows(device_points.pointer, device_scalars.pointer, false, variant_plan, sums.pointer, scratch.pointer,
                     stream);
      STAGEHAND_CUDA_CHECK(cudaMemcpyAsync(host_sums.pointer, sums.pointer, msm_result_bytes(variant_plan),
                                           cudaMemcpyDeviceToHost, stream));
    });
    // The host's share: combining the window sums (after the timed device work).
    const auto begin = std::chrono::steady_clock::now();
    const G1JacobianBytes result = msm_combine_windows({host_sums.pointer}, msm_sum_count(plan), plan.window_bits);
    const double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
    row(out, name, log_size, stats, options.msm_repetitions,
        note + " scratch=" + std::to_string(msm_scratch_bytes(variant_plan) >> 20) + "MiB +host combine " +
            std::to_string(host_ms).substr(0, 5) + " ms, " + verdict(result));
    if (options.msm_profile) {
      MsmProfile profile;
      msm_g1_windows(device_points.pointer, device_scalars.pointer, false, variant_plan, sums.pointer, scratch.pointer,
                     stream, &profile);
      out << "    " << name << " " << log_size << ": " << phases_text(profile.collect()) << std::endl;
    }
  }
  {
    PinnedBuffer host_sums(kG1JacobianBytes);
    bench_precomputed(
        out, "msm_g1 (precomputed)", log_size, MsmGroup::g1, device_points.pointer, options, stream,
        [&](const MsmPlan& precomputed, void* copies, void* scratch, void* sums) {
          msm_g1_windows(copies, device_scalars.pointer, false, precomputed, sums, scratch, stream);
          STAGEHAND_CUDA_CHECK(
              cudaMemcpyAsync(host_sums.pointer, sums, kG1JacobianBytes, cudaMemcpyDeviceToHost, stream));
        },
        [&](const MsmPlan& precomputed, void*) {
          return verdict(msm_combine_windows({host_sums.pointer}, msm_sum_count(precomputed), precomputed.window_bits));
        });
  }
  if (options.msm_streamed) {
    // Batches of a quarter of the points by default, led by one of a sixteenth (streamed_batches:
    // its copy is the only one not hidden behind compute); the batches use the whole size's window
    // width and add into the same buckets.
    const std::uint64_t default_batch = options.streamed_batch_log != 0
                                            ? (std::uint64_t{1} << options.streamed_batch_log)
                                            : std::max<std::uint64_t>(std::uint64_t{1} << 18, n / 4);
    struct StreamedRun {
      std::uint64_t batch;
      MsmTuning tuning;
      std::string label;
    };
    std::vector<StreamedRun> streamed_runs = {{default_batch, MsmTuning{}, ""}};
    if (options.msm_variants) {
      if (options.streamed_batch_log == 0 && n / 8 >= (std::uint64_t{1} << 18)) {
        streamed_runs.push_back({n / 8, MsmTuning{}, ""});
      }
      streamed_runs.push_back({default_batch, MsmTuning{true, true, ItemSum::f64, true}, " f64, no prefetch"});
      streamed_runs.push_back(
          {default_batch, MsmTuning{true, true, ItemSum::integer_prefetch, true}, " int, prefetch"});
      streamed_runs.push_back({default_batch, MsmTuning{true, true, ItemSum::f64_prefetch, true}, " f64, prefetch"});
    }
    for (const auto& [batch, tuning, label] : streamed_runs) {
      StreamedMsm streamed(std::min(batch, n), plan.window_bits, tuning);
      std::vector<double> times;
      G1JacobianBytes result{};
      for (unsigned r = 0; r <= options.msm_repetitions; ++r) {
        STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
        const auto begin = std::chrono::steady_clock::now();
        result = streamed.run(points.pointer, device_scalars.pointer, n, false, stream, copy_stream);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
        if (r > 0) times.push_back(ms);  // the first run warms up
        if (verdict(result) != "verified") break;
      }
      const std::string batch_note = "batch=2^" + std::to_string(63 - __builtin_clzll(std::min(batch, n)));
      row(out, "msm_g1 (streamed)" + label, log_size, summarise(times.empty() ? std::vector<double>{0.0} : times),
          options.msm_repetitions,
          batch_note + " c=" + std::to_string(plan.window_bits) + " group=" +
              std::to_string(streamed.plan().windows_per_group) + " wall clock incl. host combine, " + verdict(result));
      if (options.msm_profile) {
        MsmProfile profile;
        STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
        streamed.run(points.pointer, device_scalars.pointer, n, false, stream, copy_stream, &profile);
        out << "    msm_g1 (streamed)" << label << " " << log_size << " " << batch_note << ": "
            << phases_text(profile.collect()) << std::endl;
      }
    }
  }
}

// The G2 MSM with its points on the device (as the Groth16 program's resident B2 set), at the
// plan's window width or each asked for, and with each item sum when asked; every result
// combined on the device and checked through the sample points' discrete logarithms.
void bench_msm_g2(std::ostream& out, unsigned log_size, const KernelBenchmarkOptions& options, cudaStream_t stream) {
  const std::uint64_t n = std::uint64_t{1} << log_size;
  std::vector<std::uint8_t> points(n * kG2AffineBytes);
  const PointWalk walk = fill_sample_g2_points(points, n, options.seed + 300 + log_size);
  const std::vector<std::uint8_t> scalars = msm_sample_scalars(n, options.seed + 400 + log_size, options);
  const math::G2Projective expected = expected_walk_g2_msm(scalars, n, walk);
  DeviceBuffer device_points(n * kG2AffineBytes), device_scalars(n * kFrBytes), result(kG2JacobianBytes);
  STAGEHAND_CUDA_CHECK(cudaMemcpy(device_points.pointer, points.data(), n * kG2AffineBytes, cudaMemcpyHostToDevice));
  STAGEHAND_CUDA_CHECK(cudaMemcpy(device_scalars.pointer, scalars.data(), n * kFrBytes, cudaMemcpyHostToDevice));
  points = {};
  auto verdict = [&] {
    std::uint8_t bytes[kG2JacobianBytes];
    STAGEHAND_CUDA_CHECK(cudaMemcpy(bytes, result.pointer, kG2JacobianBytes, cudaMemcpyDeviceToHost));
    const auto point = g2_from_jacobian_bytes(bytes);
    return point && *point == expected ? std::string("verified") : std::string("WRONG RESULT");
  };
  std::vector<unsigned> widths = options.g2_window_bits;
  if (widths.empty()) widths.push_back(0);
  std::vector<std::pair<std::string, ItemSum>> item_sums = {{"", msm_plan(n, 0, MsmGroup::g2).tuning.item_sum}};
  if (options.g2_variants) {
    item_sums = {{" int, prefetch", ItemSum::integer_prefetch}, {" int", ItemSum::integer},
                 {" int, called", ItemSum::integer_called},     {" f64, called", ItemSum::f64_called},
                 {" f64, prefetch", ItemSum::f64_prefetch},     {" f64", ItemSum::f64}};
  }
  for (const unsigned width : widths) {
    for (const auto& [label, item_sum] : item_sums) {
      MsmPlan plan = msm_plan(n, width, MsmGroup::g2);
      plan.tuning.item_sum = item_sum;
      DeviceBuffer scratch(msm_scratch_bytes(plan)), sums(msm_result_bytes(plan));
      STAGEHAND_CUDA_CHECK(cudaMemset(result.pointer, 0xff, kG2JacobianBytes));  // poison
      const Stats stats = time_events(options.msm_repetitions, stream, [&](unsigned) {
        msm_g2_windows(device_points.pointer, device_scalars.pointer, false, plan, sums.pointer, scratch.pointer,
                       stream);
        msm_g2_combine_windows_on_device(sums.pointer, msm_sum_count(plan), plan.window_bits, result.pointer, stream);
      });
      row(out, "msm_g2 (device)" + label, log_size, stats, options.msm_repetitions,
          "c=" + std::to_string(plan.window_bits) + " windows=" + std::to_string(plan.window_count) +
              " group=" + std::to_string(plan.windows_per_group) + scalars_name(options) + " scratch=" +
              std::to_string(msm_scratch_bytes(plan) >> 20) + "MiB, combined on the device, " + verdict());
    }
  }
  bench_precomputed(
      out, "msm_g2 (precomputed)", log_size, MsmGroup::g2, device_points.pointer, options, stream,
      [&](const MsmPlan& plan, void* copies, void* scratch, void* sums) {
        msm_g2_windows(copies, device_scalars.pointer, false, plan, sums, scratch, stream);
        msm_g2_combine_windows_on_device(sums, msm_sum_count(plan), plan.window_bits, result.pointer, stream);
      },
      [&](const MsmPlan&, void*) { return verdict(); });
}

// BLS12-381's NTTs and MSMs (BN254's: benchmark_bn254.cpp).
void run_bls12_381(std::ostream& out, const KernelBenchmarkOptions& options, cudaStream_t stream,
                   cudaStream_t copy_stream) {
  if (options.ntt) {
    for (unsigned log_size : options.log_sizes) bench_ntt(out, log_size, options, stream);
  }
  if (options.msm) {
    for (unsigned log_size : options.log_sizes) bench_msm(out, log_size, options, stream, copy_stream);
  }
  if (options.msm_g2) {
    for (unsigned log_size : options.log_sizes) bench_msm_g2(out, log_size, options, stream);
  }
}

}  // namespace

int run_kernel_benchmark(std::ostream& out, const KernelBenchmarkOptions& options) {
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    out << "bench kernels: no CUDA device" << std::endl;
    return 1;
  }
  STAGEHAND_CUDA_CHECK(cudaSetDevice(options.device));
  cudaDeviceProp properties{};
  STAGEHAND_CUDA_CHECK(cudaGetDeviceProperties(&properties, options.device));
  int sm_clock_khz = 0, memory_clock_khz = 0;
  cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, options.device);
  cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, options.device);
  out << "device: " << properties.name << ", " << properties.multiProcessorCount << " SMs, "
      << (properties.totalGlobalMem >> 20) << " MiB, sm_" << properties.major << properties.minor << std::endl;
  out << std::left << std::setw(24) << "kernel" << std::right << std::setw(4) << "log" << std::setw(12) << "median_ms"
      << std::setw(12) << "min_ms" << std::setw(12) << "max_ms" << std::setw(6) << "reps" << std::endl;
  cudaStream_t stream, copy_stream;
  STAGEHAND_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  STAGEHAND_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking));
  if (options.curve == kernel::Curve::bn254) {
    for (unsigned log_size : options.log_sizes) bench_bn254(out, log_size, options, stream);
  } else {
    run_bls12_381(out, options, stream, copy_stream);
  }
  cudaStreamDestroy(stream);
  cudaStreamDestroy(copy_stream);
  return 0;
}

}  // namespace stagehand::cuda
