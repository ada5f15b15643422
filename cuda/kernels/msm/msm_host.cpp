// Host side of the MSM: its results as the CPU reference's points, combining window sums (with
// the CPU reference's G1 arithmetic) and the streamed variant's batching.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "math/g1.hpp"
#include "msm/msm.hpp"
#include "msm/msm_results_host.hpp"
#include "util/common_host.hpp"

namespace stagehand::cuda {
namespace {

std::optional<math::Fq> fq_from_bytes(const std::uint8_t* bytes) {
  math::Limbs<6> limbs{};
  std::memcpy(limbs.data(), bytes, 48);
  return math::Fq::from_montgomery_limbs(limbs);
}

}  // namespace

std::optional<math::G1Projective> g1_from_jacobian_bytes(const void* data) {
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  const auto x = fq_from_bytes(bytes), y = fq_from_bytes(bytes + 48), z = fq_from_bytes(bytes + 96);
  if (!x || !y || !z) return std::nullopt;
  return math::G1Projective{*x, *y, *z};
}

namespace {

// X‖Y‖Z of any group of either curve: each coordinate's Montgomery words (an Fq2's c0 then c1).
template <class F>
std::optional<F> coordinate_from_bytes(const std::uint8_t* bytes) {
  if constexpr (requires { F{}.c0; }) {
    using Base = decltype(F{}.c0);
    const auto c0 = coordinate_from_bytes<Base>(bytes), c1 = coordinate_from_bytes<Base>(bytes + sizeof(Base));
    if (!c0 || !c1) return std::nullopt;
    return F{*c0, *c1};
  } else {
    typename F::LimbArray limbs{};
    std::memcpy(limbs.data(), bytes, sizeof(limbs));
    return F::from_montgomery_limbs(limbs);
  }
}

template <class Projective>
std::optional<Projective> projective_from_bytes(const std::uint8_t* bytes) {
  using F = typename Projective::Field;
  const auto x = coordinate_from_bytes<F>(bytes), y = coordinate_from_bytes<F>(bytes + sizeof(F)),
             z = coordinate_from_bytes<F>(bytes + 2 * sizeof(F));
  if (!x || !y || !z) return std::nullopt;
  return Projective{*x, *y, *z};
}

}  // namespace

std::optional<math::bn254::G1Projective> bn254_g1_from_jacobian_bytes(const void* data) {
  return projective_from_bytes<math::bn254::G1Projective>(static_cast<const std::uint8_t*>(data));
}

std::optional<math::bn254::G2Projective> bn254_g2_from_jacobian_bytes(const void* data) {
  return projective_from_bytes<math::bn254::G2Projective>(static_cast<const std::uint8_t*>(data));
}

std::optional<math::G2Projective> g2_from_jacobian_bytes(const void* data) {
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  std::optional<math::Fq> c[6];
  for (int i = 0; i < 6; ++i) {
    c[i] = fq_from_bytes(bytes + 48 * i);
    if (!c[i]) return std::nullopt;
  }
  return math::G2Projective{math::Fq2{*c[0], *c[1]}, math::Fq2{*c[2], *c[3]}, math::Fq2{*c[4], *c[5]}};
}

namespace {

math::G1Projective point_from_bytes(const std::uint8_t* bytes) {
  const auto point = g1_from_jacobian_bytes(bytes);
  if (!point) throw std::runtime_error("msm: the device returned an unreduced coordinate");
  return *point;
}

G1JacobianBytes bytes_from_point(const math::G1Projective& point) {
  G1JacobianBytes out{};
  std::memcpy(out.bytes, point.x.montgomery_limbs().data(), 48);
  std::memcpy(out.bytes + 48, point.y.montgomery_limbs().data(), 48);
  std::memcpy(out.bytes + 96, point.z.montgomery_limbs().data(), 48);
  return out;
}

void accumulate_windows(std::vector<math::G1Projective>& running, const void* window_sums) {
  const auto* bytes = static_cast<const std::uint8_t*>(window_sums);
  for (std::size_t w = 0; w < running.size(); ++w) running[w] += point_from_bytes(bytes + w * kG1JacobianBytes);
}

G1JacobianBytes horner(const std::vector<math::G1Projective>& windows, unsigned window_bits) {
  math::G1Projective result = math::G1Projective::identity();
  for (std::size_t w = windows.size(); w-- > 0;) {
    for (unsigned bit = 0; bit < window_bits; ++bit) result = result.doubled();
    result += windows[w];
  }
  return bytes_from_point(result);
}

}  // namespace

G1JacobianBytes msm_combine_windows(const std::vector<const void*>& batch_window_sums, unsigned window_count,
                                    unsigned window_bits) {
  std::vector<math::G1Projective> running(window_count, math::G1Projective::identity());
  for (const void* sums : batch_window_sums) accumulate_windows(running, sums);
  return horner(running, window_bits);
}

std::vector<MsmBatch> streamed_batches(std::uint64_t point_count, std::uint64_t batch_points) {
  if (batch_points == 0) throw std::invalid_argument("streamed_batches: batch_points must be positive");
  std::vector<MsmBatch> batches;
  std::uint64_t first = 0;
  if (point_count > batch_points) {
    const std::uint64_t lead = std::max<std::uint64_t>(1, batch_points / 4);
    batches.push_back({0, lead});
    first = lead;
  }
  for (; first < point_count; first += batch_points) {
    batches.push_back({first, std::min(batch_points, point_count - first)});
  }
  return batches;
}

StreamedMsm::StreamedMsm(std::uint64_t batch_points, unsigned window_bits, MsmTuning tuning)
    : batch_points_(batch_points), plan_(msm_batch_plan(batch_points, window_bits)) {
  plan_.tuning = tuning;
  const std::uint64_t scratch_bytes = msm_scratch_bytes(plan_);
  for (int slot = 0; slot < 2; ++slot) {
    STAGEHAND_CUDA_CHECK(cudaMalloc(&device_points_[slot], batch_points * kG1AffineBytes));
    STAGEHAND_CUDA_CHECK(cudaEventCreateWithFlags(&copied_[slot], cudaEventDisableTiming));
    STAGEHAND_CUDA_CHECK(cudaEventCreateWithFlags(&consumed_[slot], cudaEventDisableTiming));
  }
  STAGEHAND_CUDA_CHECK(cudaMalloc(&device_sums_, msm_result_bytes(plan_)));
  STAGEHAND_CUDA_CHECK(cudaHostAlloc(&host_sums_, msm_result_bytes(plan_), cudaHostAllocDefault));
  STAGEHAND_CUDA_CHECK(cudaEventCreateWithFlags(&sums_ready_, cudaEventDisableTiming));
  STAGEHAND_CUDA_CHECK(cudaMalloc(&scratch_, scratch_bytes));
  device_bytes_ = 2 * batch_points * kG1AffineBytes + msm_result_bytes(plan_) + scratch_bytes;
}

StreamedMsm::~StreamedMsm() {
  for (int slot = 0; slot < 2; ++slot) {
    cudaFree(device_points_[slot]);
    cudaEventDestroy(copied_[slot]);
    cudaEventDestroy(consumed_[slot]);
  }
  cudaFree(device_sums_);
  cudaFreeHost(host_sums_);
  cudaEventDestroy(sums_ready_);
  cudaFree(scratch_);
}

G1JacobianBytes StreamedMsm::run(const void* host_points, const void* device_scalars, std::uint64_t point_count,
                                 bool scalars_montgomery, cudaStream_t compute, cudaStream_t copy,
                                 MsmProfile* profile) {
  if (point_count == 0) return horner(std::vector<math::G1Projective>(), plan_.window_bits);
  const auto* points = static_cast<const std::uint8_t*>(host_points);
  const auto* scalars = static_cast<const std::uint8_t*>(device_scalars);
  // Earlier work on `compute` (a previous run) may still read the point buffers.
  STAGEHAND_CUDA_CHECK(cudaEventRecord(consumed_[0], compute));
  STAGEHAND_CUDA_CHECK(cudaEventRecord(consumed_[1], compute));
  const std::vector<MsmBatch> batches = streamed_batches(point_count, batch_points_);
  for (std::size_t batch = 0; batch < batches.size(); ++batch) {
    const int slot = static_cast<int>(batch % 2);
    const auto [first, count] = batches[batch];
    // The copy may overwrite this slot's points only once batch - 2 has finished reading them.
    STAGEHAND_CUDA_CHECK(cudaStreamWaitEvent(copy, consumed_[slot], 0));
    STAGEHAND_CUDA_CHECK(cudaMemcpyAsync(device_points_[slot], points + first * kG1AffineBytes, count * kG1AffineBytes,
                                         cudaMemcpyHostToDevice, copy));
    STAGEHAND_CUDA_CHECK(cudaEventRecord(copied_[slot], copy));
    STAGEHAND_CUDA_CHECK(cudaStreamWaitEvent(compute, copied_[slot], 0));
    if (profile != nullptr) profile->mark("wait_copy", compute);
    MsmPlan plan = plan_;  // same width and grouping as the scratch was sized for
    plan.point_count = count;
    msm_g1_accumulate(device_points_[slot], scalars + first * kFrBytes, scalars_montgomery, plan,
                      /*add_to_buckets=*/batch != 0, scratch_, compute, profile);
    STAGEHAND_CUDA_CHECK(cudaEventRecord(consumed_[slot], compute));
  }
  // One reduction of the buckets of all batches, one copy back, one wait.
  msm_g1_reduce(plan_, device_sums_, scratch_, compute, profile);
  STAGEHAND_CUDA_CHECK(
      cudaMemcpyAsync(host_sums_, device_sums_, msm_result_bytes(plan_), cudaMemcpyDeviceToHost, compute));
  STAGEHAND_CUDA_CHECK(cudaEventRecord(sums_ready_, compute));
  STAGEHAND_CUDA_CHECK(cudaEventSynchronize(sums_ready_));
  std::vector<math::G1Projective> running(plan_.window_count, math::G1Projective::identity());
  accumulate_windows(running, host_sums_);
  return horner(running, plan_.window_bits);
}

}  // namespace stagehand::cuda
