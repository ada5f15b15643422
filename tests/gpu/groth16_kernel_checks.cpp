// The Groth16 program's own kernels on the GPU: the G2 MSM (msm_g2_windows through the
// groth16_msm_g2 launcher) and the a/b/c step (groth16_abc), each against an independent CPU
// computation.
#include "kernel_checks.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <ostream>
#include <random>
#include <vector>

#include "device/kernel_abi.hpp"
#include "kernel_check_helpers.hpp"
#include "launch/groth16_launchers.hpp"
#include "math/g2.hpp"
#include "math/h_polynomial.hpp"
#include "math/msm.hpp"
#include "msm/msm.hpp"
#include "msm/msm_results_host.hpp"
#include "synthetic/sample_data.hpp"

namespace stagehand::cuda::checks {
namespace {

const KernelLauncher& launcher(const char* name) {
  const KernelLauncher* found = find_launcher(name);
  if (found == nullptr) throw std::logic_error(std::string(name) + " is not registered");
  return *found;
}

// The 288-byte Jacobian G2 result; a poisoned coordinate gives a point off the curve.
math::G2Projective g2_from(const std::vector<std::uint8_t>& bytes) {
  return g2_from_jacobian_bytes(bytes.data())
      .value_or(math::G2Projective{math::Fq2::zero(), math::Fq2::zero(), math::Fq2::one()});
}

std::vector<math::G2Affine> g2_points_from(const std::vector<std::uint8_t>& bytes, std::uint64_t count) {
  std::vector<math::G2Affine> points(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint8_t* data = bytes.data() + 192 * i;
    if (std::all_of(data, data + 192, [](std::uint8_t byte) { return byte == 0; })) {
      points[i] = math::G2Affine::identity();  // the encoding of infinity
      continue;
    }
    math::Limbs<6> limbs[4];
    for (int k = 0; k < 4; ++k) std::memcpy(limbs[k].data(), data + 48 * k, 48);
    points[i] = math::G2Affine::from_coordinates(
        math::Fq2{*math::Fq::from_montgomery_limbs(limbs[0]), *math::Fq::from_montgomery_limbs(limbs[1])},
        math::Fq2{*math::Fq::from_montgomery_limbs(limbs[2]), *math::Fq::from_montgomery_limbs(limbs[3])});
  }
  return points;
}

// groth16_msm_g2 through the launcher, as the Groth16 program launches it (Montgomery scalars).
math::G2Projective device_g2_msm(const std::vector<std::uint8_t>& points, const std::vector<std::uint8_t>& scalars,
                                 std::uint64_t n) {
  DeviceBuffer device_points(std::max<std::uint64_t>(n * kG2AffineBytes, 16)),
      device_scalars(std::max<std::uint64_t>(n * kFrBytes, 16)), result(kG2JacobianBytes),
      scratch(std::max<std::uint64_t>(groth16_kernel_scratch_bytes(kernel::groth16_msm_g2, n), 16));
  if (n > 0) {
    STAGEHAND_CUDA_CHECK(cudaMemcpy(device_points.pointer, points.data(), n * kG2AffineBytes, cudaMemcpyHostToDevice));
    STAGEHAND_CUDA_CHECK(cudaMemcpy(device_scalars.pointer, scalars.data(), n * kFrBytes, cudaMemcpyHostToDevice));
  }
  KernelLaunch launch{kernel::groth16_msm_g2,
                      n,
                      {0},
                      {device_points.use(0, n * kG2AffineBytes), device_scalars.use(0, n * kFrBytes)},
                      {result.use(0, kG2JacobianBytes), scratch.use(0, scratch.bytes)}};
  launcher(kernel::groth16_msm_g2)(launch, nullptr);
  STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
  return g2_from(result.download<std::uint8_t>(kG2JacobianBytes));
}

// A streamed set's MSM as the Groth16 program launches it: batches of at most `capacity` points
// through groth16_msm_g*_batch (the first afresh), then groth16_msm_g*_reduce; the result bytes.
std::vector<std::uint8_t> device_streamed_msm(MsmGroup group, const std::vector<std::uint8_t>& points,
                                              const std::vector<std::uint8_t>& scalars, std::uint64_t n,
                                              std::uint64_t capacity, DeviceBuffer& scratch) {
  const bool g1 = group == MsmGroup::g1;
  const std::uint64_t point_bytes = g1 ? kG1AffineBytes : kG2AffineBytes,
                      result_bytes = g1 ? kG1JacobianBytes : kG2JacobianBytes;
  const char* batch_kernel = g1 ? kernel::groth16_msm_g1_batch : kernel::groth16_msm_g2_batch;
  const char* reduce_kernel = g1 ? kernel::groth16_msm_g1_reduce : kernel::groth16_msm_g2_reduce;
  DeviceBuffer device_points(n * point_bytes), device_scalars(n * kFrBytes), result(result_bytes);
  STAGEHAND_CUDA_CHECK(cudaMemcpy(device_points.pointer, points.data(), n * point_bytes, cudaMemcpyHostToDevice));
  STAGEHAND_CUDA_CHECK(cudaMemcpy(device_scalars.pointer, scalars.data(), n * kFrBytes, cudaMemcpyHostToDevice));
  for (std::uint64_t first = 0; first < n; first += capacity) {
    const std::uint64_t count = std::min(capacity, n - first);
    KernelLaunch launch{batch_kernel,
                        count,
                        {0, capacity, first == 0 ? 0u : 1u},
                        {device_points.use(first * point_bytes, count * point_bytes),
                         device_scalars.use(first * kFrBytes, count * kFrBytes)},
                        {scratch.use(0, scratch.bytes)}};
    launcher(batch_kernel)(launch, nullptr);
  }
  KernelLaunch reduce{reduce_kernel, 1, {capacity}, {}, {result.use(0, result_bytes), scratch.use(0, scratch.bytes)}};
  launcher(reduce_kernel)(reduce, nullptr);
  STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
  return result.download<std::uint8_t>(result_bytes);
}

}  // namespace

namespace {

// Whether a device MSM's Jacobian result bytes are the sample walk's expected sum (and on the curve).
bool equals_walk_msm(MsmGroup group, const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& canonical,
                     std::uint64_t n, const PointWalk& walk) {
  if (group == MsmGroup::g1) {
    const auto point = g1_from_jacobian_bytes(got.data());
    return point && *point == expected_walk_msm(canonical, n, walk) && point->is_on_curve();
  }
  const auto point = g2_from(got);
  return point == expected_walk_g2_msm(canonical, n, walk) && point.is_on_curve();
}

}  // namespace

Result check_precomputed_groth16_msms(std::ostream& out, std::uint64_t seed) {
  Result result;
  // As the Groth16 program runs a precomputed set: the points uploaded into copy 0 of the copies'
  // buffer, groth16_precompute_g* in place, then groth16_msm_g*_precomputed with the scratch its
  // name asks for, at the width the program passes (kernel::precomputed_window_bits); Montgomery
  // scalars as the program's; the empty set too, and in G2 a set of 2^20 points, the smallest
  // whose program width (20) differs from G1's (16).
  for (const MsmGroup group : {MsmGroup::g1, MsmGroup::g2}) {
    const bool g1 = group == MsmGroup::g1;
    const std::uint64_t point_bytes = g1 ? kG1AffineBytes : kG2AffineBytes,
                        result_bytes = g1 ? kG1JacobianBytes : kG2JacobianBytes;
    const char* precompute = g1 ? kernel::groth16_precompute_g1 : kernel::groth16_precompute_g2;
    const char* msm = g1 ? kernel::groth16_msm_g1_precomputed : kernel::groth16_msm_g2_precomputed;
    std::vector<std::uint64_t> sizes{0, 1, 1500};
    if (!g1) sizes.push_back(std::uint64_t{1} << 20);
    for (const std::uint64_t n : sizes) {
      const unsigned bits = kernel::precomputed_window_bits(n, group);
      const std::uint64_t copies_bytes =
          std::max<std::uint64_t>(kernel::precomputed_copies(bits) * n * point_bytes, 16);
      std::vector<std::uint8_t> points(n * point_bytes), montgomery(n * kFrBytes), canonical(n * kFrBytes);
      const PointWalk walk = g1 ? fill_sample_points(points, n, seed + n) : fill_sample_g2_points(points, n, seed + n);
      fill_sample_scalars(montgomery, n, seed * 5 + n, true);
      const auto scalars = scalars_from_bytes(montgomery.data(), n, true);
      for (std::uint64_t i = 0; i < n; ++i)
        std::memcpy(canonical.data() + 32 * i, scalars[i].to_canonical_limbs().data(), 32);
      DeviceBuffer copies(copies_bytes), device_scalars(std::max<std::uint64_t>(n * kFrBytes, 16)), sum(result_bytes),
          scratch(std::max<std::uint64_t>(groth16_kernel_scratch_bytes(msm, n), 16));
      STAGEHAND_CUDA_CHECK(cudaMemset(copies.pointer, 0xff, copies_bytes));
      STAGEHAND_CUDA_CHECK(cudaMemset(sum.pointer, 0xff, result_bytes));
      if (n > 0) {
        STAGEHAND_CUDA_CHECK(cudaMemcpy(copies.pointer, points.data(), n * point_bytes, cudaMemcpyHostToDevice));
        STAGEHAND_CUDA_CHECK(
            cudaMemcpy(device_scalars.pointer, montgomery.data(), n * kFrBytes, cudaMemcpyHostToDevice));
      }
      KernelLaunch fill{precompute,
                        n,
                        {bits},
                        {copies.use(0, std::max<std::uint64_t>(n * point_bytes, 16))},
                        {copies.use(0, copies_bytes)}};
      launcher(precompute)(fill, nullptr);
      KernelLaunch launch{msm,
                          n,
                          {0, bits},
                          {copies.use(0, copies_bytes), device_scalars.use(0, device_scalars.bytes)},
                          {sum.use(0, result_bytes), scratch.use(0, scratch.bytes)}};
      launcher(msm)(launch, nullptr);
      STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
      const bool ok = equals_walk_msm(group, sum.download<std::uint8_t>(result_bytes), canonical, n, walk);
      result.add(report(out, ok, std::string(msm) + " " + std::to_string(n) + " points",
                        "c=" + std::to_string(bits) + " in place, vs discrete logs"));
    }
  }
  return result;
}

Result check_streamed_groth16_msms(std::ostream& out, std::uint64_t seed) {
  Result result;
  // (points, capacity): a last batch smaller than the rest, one batch, and the planner's 16-bit
  // windows over many batches. Each case reuses the scratch of the one before (the first batch
  // must start the buckets afresh).
  const std::pair<std::uint64_t, std::uint64_t> cases[] = {{1000, 300}, {777, 1000}, {(1u << 17) + 5, 1u << 15}};
  for (const MsmGroup group : {MsmGroup::g1, MsmGroup::g2}) {
    const bool g1 = group == MsmGroup::g1;
    const char* batch_kernel = g1 ? kernel::groth16_msm_g1_batch : kernel::groth16_msm_g2_batch;
    std::uint64_t scratch_bytes = 0;
    for (const auto& [n, capacity] : cases)
      scratch_bytes = std::max(scratch_bytes, groth16_kernel_scratch_bytes(batch_kernel, capacity));
    DeviceBuffer scratch(scratch_bytes);
    for (const auto& [n, capacity] : cases) {
      std::vector<std::uint8_t> points(n * (g1 ? kG1AffineBytes : kG2AffineBytes)), montgomery(n * kFrBytes),
          canonical(n * kFrBytes);
      const PointWalk walk = g1 ? fill_sample_points(points, n, seed + n) : fill_sample_g2_points(points, n, seed + n);
      fill_sample_scalars(montgomery, n, seed * 7 + n, true);
      const auto scalars = scalars_from_bytes(montgomery.data(), n, true);
      for (std::uint64_t i = 0; i < n; ++i)
        std::memcpy(canonical.data() + 32 * i, scalars[i].to_canonical_limbs().data(), 32);
      const bool ok = equals_walk_msm(group, device_streamed_msm(group, points, montgomery, n, capacity, scratch),
                                      canonical, n, walk);
      result.add(report(
          out, ok,
          std::string(batch_kernel) + " " + std::to_string(n) + " points in batches of " + std::to_string(capacity),
          "c=" + std::to_string(msm_batch_plan(capacity, 0, group).window_bits) + " vs discrete logs"));
    }
  }
  return result;
}

Result check_msm_g2(std::ostream& out, unsigned max_log, unsigned reference_max_log, std::uint64_t seed) {
  Result result;
  const std::uint64_t largest = std::uint64_t{1} << max_log;
  std::vector<std::uint8_t> points(largest * kG2AffineBytes);
  const auto begin = Clock::now();
  const PointWalk walk = fill_sample_g2_points(points, largest, seed);
  out << "  (G2 walk of 2^" << max_log << " points in " << seconds_since(begin) << " s)" << std::endl;
  for (unsigned log = 1; log <= max_log; ++log) {
    const std::uint64_t n = std::uint64_t{1} << log;
    std::vector<std::uint8_t> montgomery(n * kFrBytes), canonical(n * kFrBytes);
    fill_sample_scalars(montgomery, n, seed * 31 + log, true);
    const auto scalars = scalars_from_bytes(montgomery.data(), n, true);
    for (std::uint64_t i = 0; i < n; ++i)
      std::memcpy(canonical.data() + 32 * i, scalars[i].to_canonical_limbs().data(), 32);
    const bool against_math = log <= reference_max_log;
    const auto started = Clock::now();
    const math::G2Projective expected =
        against_math ? math::msm(g2_points_from(points, n), scalars) : expected_walk_g2_msm(canonical, n, walk);
    const double cpu = seconds_since(started);
    const auto got = device_g2_msm(points, montgomery, n);
    result.add(report(out, got == expected && got.is_on_curve(), "msm_g2 2^" + std::to_string(log),
                      "c=" + std::to_string(msm_plan(n, 0, MsmGroup::g2).window_bits) +
                          (against_math ? " vs math::msm" : " vs discrete logs") + " (cpu " +
                          std::to_string(cpu).substr(0, 5) + " s)"));
  }
  // The empty sum, zero scalars and points at infinity among the points.
  result.add(report(out, device_g2_msm(points, {}, 0).is_identity(), "msm_g2 of no points is infinity"));
  {
    const std::uint64_t n = 1000;
    std::vector<std::uint8_t> some = std::vector<std::uint8_t>(points.begin(), points.begin() + n * kG2AffineBytes);
    std::vector<std::uint8_t> scalars(n * kFrBytes);
    fill_sample_scalars(scalars, n, seed + 5, true);
    for (std::uint64_t i = 0; i < n; i += 7)
      std::memset(some.data() + i * kG2AffineBytes, 0, kG2AffineBytes);                                 // infinity
    for (std::uint64_t i = 3; i < n; i += 11) std::memset(scalars.data() + i * kFrBytes, 0, kFrBytes);  // zero
    const auto expected = math::msm(g2_points_from(some, n), scalars_from_bytes(scalars.data(), n, true));
    result.add(
        report(out, device_g2_msm(some, scalars, n) == expected, "msm_g2 with points at infinity and zero scalars"));
  }
  return result;
}

Result check_abc(std::ostream& out, std::uint64_t rows, std::uint64_t seed) {
  // A random matrix in the layout of device/kernel_abi.hpp: 0..5 entries per row (empty rows
  // too), signals anywhere in the witness, and the rows computed on the CPU straight from it.
  std::mt19937_64 engine(seed);
  const std::uint64_t signals = rows / 2 + 3;
  const auto witness = random_fr(signals, seed + 1);
  std::vector<std::uint64_t> offsets[2];
  std::vector<std::uint32_t> signal_of[2];
  std::vector<math::Fr> value_of[2];
  std::vector<math::Fr> expected[3] = {std::vector<math::Fr>(rows), std::vector<math::Fr>(rows),
                                       std::vector<math::Fr>(rows)};
  for (int m = 0; m < 2; ++m) {
    offsets[m].push_back(0);
    for (std::uint64_t row = 0; row < rows; ++row) {
      const unsigned length = static_cast<unsigned>(engine() % 6);
      math::Fr sum = math::Fr::zero();
      for (unsigned k = 0; k < length; ++k) {
        const auto signal = static_cast<std::uint32_t>(engine() % signals);
        const math::Fr value = random_fr(1, engine())[0];
        signal_of[m].push_back(signal);
        value_of[m].push_back(value);
        sum += value * witness[signal];
      }
      expected[m][row] = sum;
      offsets[m].push_back(signal_of[m].size());
    }
  }
  for (std::uint64_t row = 0; row < rows; ++row) expected[2][row] = expected[0][row] * expected[1][row];
  const kernel::ConstraintMatrixLayout layout{rows, signal_of[0].size(), signal_of[1].size()};
  std::vector<std::uint8_t> matrix(layout.total_bytes());
  auto put = [&](std::uint64_t offset, const void* data, std::uint64_t bytes) {
    if (bytes != 0) std::memcpy(matrix.data() + offset, data, bytes);
  };
  put(layout.offsets_a(), offsets[0].data(), 8 * offsets[0].size());
  put(layout.offsets_b(), offsets[1].data(), 8 * offsets[1].size());
  put(layout.signals_a(), signal_of[0].data(), 4 * signal_of[0].size());
  put(layout.signals_b(), signal_of[1].data(), 4 * signal_of[1].size());
  put(layout.values_a(), limbs_of(value_of[0]).data(), 32 * value_of[0].size());
  put(layout.values_b(), limbs_of(value_of[1]).data(), 32 * value_of[1].size());
  DeviceBuffer device_matrix(layout.total_bytes()), device_witness(signals * kFrBytes);
  DeviceBuffer outputs[3] = {DeviceBuffer((rows + kGuard) * 32), DeviceBuffer((rows + kGuard) * 32),
                             DeviceBuffer((rows + kGuard) * 32)};
  device_matrix.upload(matrix);
  device_witness.upload(limbs_of(witness));
  KernelLaunch launch{kernel::groth16_abc,
                      rows,
                      {layout.entries_a, layout.entries_b, 0},
                      {device_witness.use(0, signals * kFrBytes), device_matrix.use(0, layout.total_bytes())},
                      {outputs[0].use(0, rows * 32), outputs[1].use(0, rows * 32), outputs[2].use(0, rows * 32)}};
  launcher(kernel::groth16_abc)(launch, nullptr);
  STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
  Result result;
  const char* names[3] = {"a", "b", "c"};
  for (int k = 0; k < 3; ++k) {
    const long long bad = first_mismatch(outputs[k].download<FrLimbs>(rows), expected[k]);
    result.add(report(out, bad < 0 && guard_intact(outputs[k], rows),
                      std::string("groth16_abc ") + names[k] + " over " + std::to_string(rows) + " rows, " +
                          std::to_string(layout.entries_a + layout.entries_b) + " entries",
                      bad >= 0 ? "first mismatch at " + std::to_string(bad) : ""));
  }
  return result;
}

Result check_groth16_h(std::ostream& out, unsigned log_size, std::uint64_t seed) {
  const std::uint64_t n = std::uint64_t{1} << log_size;
  std::vector<math::Fr> values[3] = {random_fr(n, seed), random_fr(n, seed + 1), random_fr(n, seed + 2)};
  DeviceBuffer buffers[3] = {DeviceBuffer((n + kGuard) * 32), DeviceBuffer((n + kGuard) * 32),
                             DeviceBuffer((n + kGuard) * 32)};
  for (int k = 0; k < 3; ++k) buffers[k].upload(limbs_of(values[k]));
  const std::uint64_t scratch_bytes = groth16_kernel_scratch_bytes(kernel::groth16_h_evaluate, n);
  DeviceBuffer scratch(std::max<std::uint64_t>(scratch_bytes, 16));
  for (auto& buffer : buffers) {
    KernelLaunch launch{
        kernel::groth16_h_evaluate, n, {log_size, 0}, {}, {buffer.use(0, n * 32), scratch.use(0, scratch_bytes)}};
    launcher(kernel::groth16_h_evaluate)(launch, nullptr);
  }
  KernelLaunch combine{kernel::groth16_h_combine,
                       n,
                       {log_size, 0},
                       {buffers[1].use(0, n * 32), buffers[2].use(0, n * 32)},
                       {buffers[0].use(0, n * 32)}};
  launcher(kernel::groth16_h_combine)(combine, nullptr);
  STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
  math::h_evaluations_snarkjs(values[0], values[1], values[2], math::Domain::snarkjs(log_size));
  Result result;
  const long long bad = first_mismatch(buffers[0].download<FrLimbs>(n), values[0]);
  result.add(report(out, bad < 0 && guard_intact(buffers[0], n),
                    "groth16_h_evaluate x3 + groth16_h_combine 2^" + std::to_string(log_size),
                    bad >= 0 ? "first mismatch at " + std::to_string(bad) : ""));
  return result;
}

}  // namespace stagehand::cuda::checks
