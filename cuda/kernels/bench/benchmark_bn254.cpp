// BN254's kernels in the benchmark (`stagehand_kernel_bench --curve bn254`): the NTT's four kinds
// and the snarkjs H form on snarkjs's domain, the G1 and G2 MSMs with their points on the device
// and their window sums combined on the device, each MSM result checked.
#include <algorithm>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "bench/benchmark_support.hpp"
#include "device/kernel_abi.hpp"
#include "msm/msm.hpp"
#include "msm/msm_results_host.hpp"
#include "ntt/ntt.hpp"
#include "synthetic/sample_data.hpp"
#include "util/device_buffer.hpp"

namespace stagehand::cuda {
namespace {

constexpr kernel::Curve kBn254 = kernel::Curve::bn254;
constexpr kernel::CurveSizes kSizes = kernel::curve_sizes(kBn254);

void bench_ntt(std::ostream& out, unsigned log_size, const KernelBenchmarkOptions& options, cudaStream_t stream) {
  const std::uint64_t n = std::uint64_t{1} << log_size, bytes = n * kSizes.fr;
  // Rotate over enough buffers that repeated runs do not find their data in the L2 (as BLS12-381's).
  const auto buffer_count = static_cast<unsigned>(std::clamp<std::uint64_t>((std::uint64_t{256} << 20) / bytes, 1, 8));
  std::vector<std::uint8_t> host(bytes);
  fill_bn254_sample_scalars(host, n, options.seed + log_size, true);
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  for (unsigned b = 0; b < (log_size > 24 ? 3u : std::max(3u, buffer_count)); ++b) {
    buffers.push_back(std::make_unique<DeviceBuffer>(bytes));
    STAGEHAND_CUDA_CHECK(cudaMemcpy(buffers.back()->pointer, host.data(), bytes, cudaMemcpyHostToDevice));
  }
  FrWords root, coset;
  snarkjs_domain_roots<Bn254Curve>(log_size, root, coset);
  DeviceBuffer table(ntt_domain_bytes(log_size));
  ntt_domain_init<Bn254Curve>(table.pointer, log_size, root, coset, stream);
  const std::pair<const char*, NttKind> kinds[] = {{"bn254 ntt_forward", NttKind::forward},
                                                   {"bn254 ntt_inverse", NttKind::inverse},
                                                   {"bn254 coset_ntt", NttKind::coset_forward},
                                                   {"bn254 coset_intt", NttKind::coset_inverse}};
  for (const auto& [name, kind] : kinds) {
    const Stats stats = time_events(options.ntt_repetitions, stream, [&](unsigned r) {
      ntt<Bn254Curve>(buffers[r % buffers.size()]->pointer, table.pointer, log_size, kind, stream);
    });
    row(out, name, log_size, stats, options.ntt_repetitions);
  }
  for (int round = 0; options.ntt_variants && round < 2; ++round) {
    for (const NttVariant variant : kNttVariants) {
      const Stats stats = time_events(options.ntt_repetitions, stream, [&](unsigned r) {
        ntt<Bn254Curve>(buffers[r % buffers.size()]->pointer, table.pointer, log_size, NttKind::forward, stream,
                        variant);
      });
      row(out, std::string("bn254 ntt_forward ") + ntt_variant_name(variant), log_size, stats, options.ntt_repetitions);
    }
  }
  const Stats h = time_events(options.ntt_repetitions, stream, [&](unsigned) {
    h_polynomial<Bn254Curve>(buffers[0]->pointer, buffers[1]->pointer, buffers[2]->pointer, table.pointer, log_size,
                             HForm::snarkjs, stream);
  });
  row(out, "bn254 h_polynomial_snarkjs", log_size, h, options.ntt_repetitions);
  STAGEHAND_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// One group's MSM: the sample walk's points and the options' scalars on the device, the MSM and
// the combination of its window sums timed together, the result checked against the walk's.
template <MsmGroup Group>
void bench_msm(std::ostream& out, unsigned log_size, const KernelBenchmarkOptions& options, cudaStream_t stream) {
  constexpr bool g1 = Group == MsmGroup::g1;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const std::uint64_t point_bytes = g1 ? kSizes.g1_affine : kSizes.g2_affine;
  const std::uint64_t result_bytes = g1 ? kSizes.g1_jacobian : kSizes.g2_jacobian;
  std::vector<std::uint8_t> points(n * point_bytes), scalars(n * kSizes.fr);
  const auto walk = g1 ? fill_bn254_sample_points(points, n, options.seed + 100 + log_size)
                       : fill_bn254_sample_g2_points(points, n, options.seed + 300 + log_size);
  fill_bn254_sample_scalars(scalars, n, options.seed + 200 + log_size, false);
  DeviceBuffer device_points(n * point_bytes), device_scalars(n * kSizes.fr), result(result_bytes);
  STAGEHAND_CUDA_CHECK(cudaMemcpy(device_points.pointer, points.data(), points.size(), cudaMemcpyHostToDevice));
  STAGEHAND_CUDA_CHECK(cudaMemcpy(device_scalars.pointer, scalars.data(), scalars.size(), cudaMemcpyHostToDevice));
  points = {};
  const MsmPlan plan = msm_plan(n, g1 ? options.msm_window_bits : 0, Group, kBn254);
  DeviceBuffer scratch(msm_scratch_bytes(plan)), sums(msm_result_bytes(plan));
  const Stats stats = time_events(options.msm_repetitions, stream, [&](unsigned) {
    if constexpr (g1) {
      msm_g1_windows(device_points.pointer, device_scalars.pointer, false, plan, sums.pointer, scratch.pointer, stream);
      msm_combine_windows_on_device(sums.pointer, msm_sum_count(plan), plan.window_bits, result.pointer, stream,
                                    kBn254);
    } else {
      msm_g2_windows(device_points.pointer, device_scalars.pointer, false, plan, sums.pointer, scratch.pointer, stream);
      msm_g2_combine_windows_on_device(sums.pointer, msm_sum_count(plan), plan.window_bits, result.pointer, stream,
                                       kBn254);
    }
  });
  std::vector<std::uint8_t> got(result_bytes);
  STAGEHAND_CUDA_CHECK(cudaMemcpy(got.data(), result.pointer, result_bytes, cudaMemcpyDeviceToHost));
  bool verified = false;
  if constexpr (g1) {
    const auto point = bn254_g1_from_jacobian_bytes(got.data());
    verified = point && *point == expected_bn254_walk_msm(scalars, n, walk);
  } else {
    const auto point = bn254_g2_from_jacobian_bytes(got.data());
    verified = point && *point == expected_bn254_walk_g2_msm(scalars, n, walk);
  }
  row(out, g1 ? "bn254 msm_g1 (device)" : "bn254 msm_g2 (device)", log_size, stats, options.msm_repetitions,
      "c=" + std::to_string(plan.window_bits) + " windows=" + std::to_string(plan.window_count) + " group=" +
          std::to_string(plan.windows_per_group) + " scratch=" + std::to_string(msm_scratch_bytes(plan) >> 20) +
          "MiB, combined on the device, " + (verified ? "verified" : "WRONG RESULT"));
}

}  // namespace

void bench_bn254(std::ostream& out, unsigned log_size, const KernelBenchmarkOptions& options, cudaStream_t stream) {
  if (options.ntt) bench_ntt(out, log_size, options, stream);
  if (options.msm) bench_msm<MsmGroup::g1>(out, log_size, options, stream);
  if (options.msm_g2) bench_msm<MsmGroup::g2>(out, log_size, options, stream);
}

}  // namespace stagehand::cuda
