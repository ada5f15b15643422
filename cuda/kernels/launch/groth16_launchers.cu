// groth16_h_evaluate/_combine, groth16_msm_g1/_g2 (plain, in batches, over precomputed bases) and groth16_abc on the device: the NTT-based H step, the
// Pippenger MSMs of msm.cu/msm_g2.cu with their window sums folded into one point on the device,
// and the a/b/c step of constraints/abc.cu.
#include <stdexcept>
#include <string>
#include <utility>

#include "device/groth16_launches.hpp"
#include "device/kernel_abi.hpp"
#include "constraints/abc.hpp"
#include "ec/curve.cuh"
#include "ec/curves.cuh"
#include "launch/groth16_launchers.hpp"
#include "launch/launch_args.hpp"
#include "msm/msm.hpp"
#include "ntt/ntt.hpp"
#include "util/common.cuh"

namespace stagehand::cuda {
namespace {

unsigned h_step_log_size(const KernelLaunch& launch, std::uint64_t log_size) {
  if (log_size < kNttMinLogSize || log_size > kNttMaxLogSize) reject(launch, "log_size outside 1..27");
  return static_cast<unsigned>(log_size);
}

// Each launcher below is one source instantiated for each curve (Curve, a description of
// ec/curves.cuh; K, its kernel::Curve): the byte sizes it checks are K's (kernel::curve_sizes).

// One of a, b, c to the snarkjs coset (h_polynomial's first part, HForm::snarkjs). The domain is
// built in the scratch at every launch (a few small kernels beside two NTTs over the domain).
template <class Curve, kernel::Curve K>
void launch_groth16_h_evaluate(const KernelLaunch& launch, cudaStream_t stream) {
  need_curve(launch, K);
  const auto typed = kernel::HEvaluateLaunch::from_launch(launch);
  const unsigned log = h_step_log_size(launch, typed.log_size);
  if (!typed.scratch) reject(launch, "writes [values, scratch]");
  void* values = address(launch, typed.values, kernel::curve_sizes(K).fr << log);
  void* domain = address(launch, *typed.scratch, ntt_domain_bytes(log));
  FrWords root, coset;
  snarkjs_domain_roots<Curve>(log, root, coset);
  ntt_domain_init<Curve>(domain, log, root, coset, stream);
  ntt<Curve>(values, domain, log, NttKind::inverse, stream);
  ntt<Curve>(values, domain, log, NttKind::coset_forward, stream);
}

// a = a·b − c, pointwise (h_polynomial's last part, HForm::snarkjs).
template <class Curve, kernel::Curve K>
void launch_groth16_h_combine(const KernelLaunch& launch, cudaStream_t stream) {
  need_curve(launch, K);
  const auto typed = kernel::HCombineLaunch::from_launch(launch);
  const unsigned log = h_step_log_size(launch, typed.log_size);
  const std::uint64_t bytes = kernel::curve_sizes(K).fr << log;
  h_pointwise<Curve>(address(launch, typed.a, bytes), address(launch, typed.b, bytes), address(launch, typed.c, bytes),
                     std::uint64_t{1} << log, nullptr, stream);
}

// ---- the MSM -----------------------------------------------------------------------------------

// The window sums' share of the MSM's memory, rounded so that the sort buffers after it stay aligned.
std::uint64_t msm_sums_bytes(const MsmPlan& plan) { return (msm_result_bytes(plan) + 255) / 256 * 256; }

// The byte sizes and the device functions of one group of the curve K.
template <kernel::Curve K, MsmGroup Group>
struct MsmGroupCalls {
  static constexpr bool g1 = Group == MsmGroup::g1;
  static constexpr std::uint64_t point_bytes = g1 ? kernel::curve_sizes(K).g1_affine : kernel::curve_sizes(K).g2_affine;
  static constexpr std::uint64_t result_bytes =
      g1 ? kernel::curve_sizes(K).g1_jacobian : kernel::curve_sizes(K).g2_jacobian;
  static constexpr std::uint64_t scalar_bytes = kernel::curve_sizes(K).fr;
  static void combine(const void* sums, unsigned count, unsigned bits, void* result, cudaStream_t stream) {
    if constexpr (g1) {
      msm_combine_windows_on_device(sums, count, bits, result, stream, K);
    } else {
      msm_g2_combine_windows_on_device(sums, count, bits, result, stream, K);
    }
  }
  static constexpr auto windows = g1 ? &msm_g1_windows : &msm_g2_windows;
  static constexpr auto accumulate = g1 ? &msm_g1_accumulate : &msm_g2_accumulate;
  static constexpr auto reduce = g1 ? &msm_g1_reduce : &msm_g2_reduce;
};

// One MSM of either group: window sums and sort buffers in the scratch, the sums folded into
// one Jacobian point on the device.
template <kernel::Curve K, MsmGroup Group>
void launch_groth16_msm(const KernelLaunch& launch, cudaStream_t stream) {
  need_curve(launch, K);
  using Calls = MsmGroupCalls<K, Group>;
  const auto typed = kernel::MsmLaunch::from_launch(launch);
  if (!typed.scratch) reject(launch, "reads [points, scalars] and writes [result, scratch]");
  const std::uint64_t n = typed.points;
  void* result = address(launch, typed.result, Calls::result_bytes);
  if (n == 0) {  // the empty sum: infinity
    Calls::combine(nullptr, 0, 0, result, stream);
    return;
  }
  const void* points = address(launch, typed.bases, n * Calls::point_bytes);
  const void* scalars = address(launch, typed.scalars, n * Calls::scalar_bytes);
  const MsmPlan plan = msm_plan(n, 0, Group, K);
  const std::uint64_t sums_bytes = msm_sums_bytes(plan);
  auto* memory = static_cast<std::uint8_t*>(address(launch, *typed.scratch, sums_bytes + msm_scratch_bytes(plan)));
  Calls::windows(points, scalars, /*scalars_montgomery=*/true, plan, memory, memory + sums_bytes, stream, nullptr);
  Calls::combine(memory, plan.window_count, plan.window_bits, result, stream);
}

// A streamed set's MSM, one launch per batch and one reduction: every batch plans with the window
// width and grouping of the largest batch (`capacity`), so that one scratch (window sums, then
// the buckets that every batch adds into) serves all of them.
MsmPlan streamed_plan(const KernelLaunch& launch, MsmGroup group, kernel::Curve curve, std::uint64_t capacity,
                      std::uint64_t count) {
  if (capacity == 0 || count > capacity) reject(launch, "point count above the planned capacity");
  MsmPlan plan = msm_batch_plan(capacity, 0, group, curve);
  plan.point_count = count;
  return plan;
}

template <kernel::Curve K, MsmGroup Group>
void launch_groth16_msm_batch(const KernelLaunch& launch, cudaStream_t stream) {
  need_curve(launch, K);
  using Calls = MsmGroupCalls<K, Group>;
  const auto typed = kernel::MsmBatchLaunch::from_launch(launch);
  if (!typed.scratch) reject(launch, "writes [scratch]");
  const std::uint64_t n = typed.points;
  if (n == 0) reject(launch, "a batch of no points");
  const MsmPlan plan = streamed_plan(launch, Group, K, typed.capacity, n);
  const std::uint64_t sums_bytes = msm_sums_bytes(plan);
  auto* memory = static_cast<std::uint8_t*>(address(launch, *typed.scratch, sums_bytes + msm_scratch_bytes(plan)));
  Calls::accumulate(
      address(launch, typed.bases, n * Calls::point_bytes), address(launch, typed.scalars, n * Calls::scalar_bytes),
      /*scalars_montgomery=*/true, plan, /*add_to_buckets=*/typed.add, memory + sums_bytes, stream, nullptr);
}

template <kernel::Curve K, MsmGroup Group>
void launch_groth16_msm_reduce(const KernelLaunch& launch, cudaStream_t stream) {
  need_curve(launch, K);
  using Calls = MsmGroupCalls<K, Group>;
  const auto typed = kernel::MsmReduceLaunch::from_launch(launch);
  if (!typed.scratch) reject(launch, "writes [result, scratch]");
  const MsmPlan plan = streamed_plan(launch, Group, K, typed.capacity, typed.capacity);
  const std::uint64_t sums_bytes = msm_sums_bytes(plan);
  auto* memory = static_cast<std::uint8_t*>(address(launch, *typed.scratch, sums_bytes + msm_scratch_bytes(plan)));
  Calls::reduce(plan, memory, memory + sums_bytes, stream, nullptr);
  Calls::combine(memory, plan.window_count, plan.window_bits, address(launch, typed.result, Calls::result_bytes),
                 stream);
}

template <kernel::Curve K, MsmGroup Group>
void launch_groth16_precompute(const KernelLaunch& launch, cudaStream_t stream) {
  need_curve(launch, K);
  const auto typed = kernel::PrecomputeLaunch::from_launch(launch);
  const std::uint64_t n = typed.points;
  if (n == 0) return;
  const MsmPlan plan = msm_precomputed_plan(n, static_cast<unsigned>(typed.window_bits), Group, K);
  msm_precompute_bases(plan, address(launch, typed.bases, n * MsmGroupCalls<K, Group>::point_bytes),
                       address(launch, typed.copies, msm_precomputed_bytes(plan)), stream);
}

template <kernel::Curve K, MsmGroup Group>
void launch_groth16_msm_precomputed(const KernelLaunch& launch, cudaStream_t stream) {
  need_curve(launch, K);
  using Calls = MsmGroupCalls<K, Group>;
  const auto typed = kernel::MsmLaunch::from_launch(launch);
  if (!typed.window_bits || !typed.scratch) {
    reject(launch, "expects [threads, window_bits], [copies, scalars], [result, scratch]");
  }
  const std::uint64_t n = typed.points;
  void* result = address(launch, typed.result, Calls::result_bytes);
  if (n == 0) {
    Calls::combine(nullptr, 0, 0, result, stream);
    return;
  }
  const MsmPlan plan = msm_precomputed_plan(n, static_cast<unsigned>(*typed.window_bits), Group, K);
  const std::uint64_t sums_bytes = msm_sums_bytes(plan);
  auto* memory = static_cast<std::uint8_t*>(address(launch, *typed.scratch, sums_bytes + msm_scratch_bytes(plan)));
  Calls::windows(address(launch, typed.bases, msm_precomputed_bytes(plan)),
                 address(launch, typed.scalars, n * Calls::scalar_bytes),
                 /*scalars_montgomery=*/true, plan, memory, memory + sums_bytes, stream, nullptr);
  Calls::combine(memory, msm_sum_count(plan), plan.window_bits, result, stream);
}

template <class Curve, kernel::Curve K>
void launch_groth16_abc(const KernelLaunch& launch, cudaStream_t stream) {
  need_curve(launch, K);
  const auto typed = kernel::AbcLaunch::from_launch(launch);
  const kernel::ConstraintMatrixLayout layout{typed.rows, typed.entries_a, typed.entries_b};
  static_assert(kernel::curve_sizes(K).fr == kFrBytes, "the matrix layout's values are 32-byte Fr");
  const std::uint64_t bytes = kFrBytes * layout.rows;
  const void* witness = address(launch, typed.witness, kFrBytes);
  const void* matrix = address(launch, typed.matrix, layout.total_bytes());
  const auto chunk = typed.chunk.value_or(kernel::AbcLaunch::ChunkStart{});
  evaluate_constraints_on_device<Curve>(layout, matrix, witness, address(launch, typed.a, bytes),
                                        address(launch, typed.b, bytes), address(launch, typed.c, bytes), stream,
                                        chunk.first_a, chunk.first_b);
}

// A curve's entries.
template <class Curve, kernel::Curve K>
constexpr std::array<LauncherEntry, 13> curve_launchers() {
  return {{{kernel::groth16_h_evaluate, &launch_groth16_h_evaluate<Curve, K>, K},
           {kernel::groth16_h_combine, &launch_groth16_h_combine<Curve, K>, K},
           {kernel::groth16_msm_g1, &launch_groth16_msm<K, MsmGroup::g1>, K},
           {kernel::groth16_msm_g2, &launch_groth16_msm<K, MsmGroup::g2>, K},
           {kernel::groth16_msm_g1_batch, &launch_groth16_msm_batch<K, MsmGroup::g1>, K},
           {kernel::groth16_msm_g2_batch, &launch_groth16_msm_batch<K, MsmGroup::g2>, K},
           {kernel::groth16_msm_g1_reduce, &launch_groth16_msm_reduce<K, MsmGroup::g1>, K},
           {kernel::groth16_msm_g2_reduce, &launch_groth16_msm_reduce<K, MsmGroup::g2>, K},
           {kernel::groth16_precompute_g1, &launch_groth16_precompute<K, MsmGroup::g1>, K},
           {kernel::groth16_precompute_g2, &launch_groth16_precompute<K, MsmGroup::g2>, K},
           {kernel::groth16_msm_g1_precomputed, &launch_groth16_msm_precomputed<K, MsmGroup::g1>, K},
           {kernel::groth16_msm_g2_precomputed, &launch_groth16_msm_precomputed<K, MsmGroup::g2>, K},
           {kernel::groth16_abc, &launch_groth16_abc<Curve, K>, K}}};
}

constexpr auto kGroth16Launchers = joined(curve_launchers<Bls12_381Curve, kernel::Curve::bls12_381>(),
                                          curve_launchers<Bn254Curve, kernel::Curve::bn254>());

}  // namespace

// BLS12-381's plans: a BN254 launch of the same kernel and size needs no more (its points, buckets and
// sums are smaller, its sort buffers the same), so the one figure serves both curves.
std::uint64_t groth16_kernel_scratch_bytes(std::string_view name, std::uint64_t work_units) {
  if (name == kernel::groth16_h_evaluate) {
    unsigned log = 0;
    while ((std::uint64_t{1} << log) < work_units) ++log;
    return log >= kNttMinLogSize && log <= kNttMaxLogSize ? ntt_domain_bytes(log) : 0;
  }
  if (work_units == 0) return 0;
  if (name == kernel::groth16_msm_g1 || name == kernel::groth16_msm_g2) {
    const MsmPlan plan = msm_plan(work_units, 0, name == kernel::groth16_msm_g1 ? MsmGroup::g1 : MsmGroup::g2);
    return msm_sums_bytes(plan) + msm_scratch_bytes(plan);
  }
  if (name == kernel::groth16_msm_g1_precomputed || name == kernel::groth16_msm_g2_precomputed) {
    const MsmPlan plan =
        msm_precomputed_plan(work_units, 0, name == kernel::groth16_msm_g1_precomputed ? MsmGroup::g1 : MsmGroup::g2);
    return msm_sums_bytes(plan) + msm_scratch_bytes(plan);
  }
  const bool streamed_g1 = name == kernel::groth16_msm_g1_batch || name == kernel::groth16_msm_g1_reduce;
  if (streamed_g1 || name == kernel::groth16_msm_g2_batch || name == kernel::groth16_msm_g2_reduce) {
    const MsmPlan plan = msm_batch_plan(work_units, 0, streamed_g1 ? MsmGroup::g1 : MsmGroup::g2);
    return msm_sums_bytes(plan) + msm_scratch_bytes(plan);
  }
  return 0;
}

std::span<const LauncherEntry> groth16_launchers() { return kGroth16Launchers; }

}  // namespace stagehand::cuda
