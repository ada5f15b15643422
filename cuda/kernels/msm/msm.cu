// Pippenger MSM over BLS12-381's G1 (see msm.hpp; the pipeline itself is msm_pipeline.cuh), the
// planners and the profile. msm_dispatch.cpp picks a plan's instance.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "device/kernel_abi.hpp"
#include "msm/msm_pipeline.cuh"

namespace stagehand::cuda {
namespace {

struct G1Curve {
  using Scalar = Fr;
  using Affine = G1Affine;
  using Bucket = G1Xyzz;
  using Jacobian = G1Jacobian;
  using Field = Fq;
  using F64Field = FqF64;
  using CalledField = FqCalled;
  using CalledF64Field = FqF64Called;
  static constexpr bool kHasF64Field = true;
  static constexpr const char* kName = "G1";
  // Blocks of 128 per SM: the split reduction's kernels at 168 registers; the item sums as
  // item_sum_kernel says, and with the products as calls 4.
  static constexpr unsigned kSplitBlocks = 3;
  template <bool Prefetch, class F>
  static constexpr unsigned item_sum_blocks() {
    if constexpr (F::Params::called_products) return 4;
    return Prefetch || F::Params::f64_products ? 3 : 4;
  }
};
static_assert(sizeof(G1Curve::Jacobian) == kG1JacobianBytes);

}  // namespace

template <>
struct MsmGroupOf<kernel::Curve::bls12_381, MsmGroup::g1> {
  using type = G1Curve;
};
template struct MsmInstance<kernel::Curve::bls12_381, MsmGroup::g1>;

MsmProfile::~MsmProfile() {
  for (auto& entry : marks_) cudaEventDestroy(entry.second);
}

void MsmProfile::mark(const char* phase, cudaStream_t stream) {
  cudaEvent_t event;
  STAGEHAND_CUDA_CHECK(cudaEventCreate(&event));
  STAGEHAND_CUDA_CHECK(cudaEventRecord(event, stream));
  marks_.emplace_back(phase, event);
}

// Each mark's time since the one before it on the same stream goes to the mark's phase ("start"
// marks only begin a run).
std::vector<std::pair<std::string, double>> MsmProfile::collect() {
  std::vector<std::pair<std::string, double>> totals;
  if (!marks_.empty()) STAGEHAND_CUDA_CHECK(cudaEventSynchronize(marks_.back().second));
  STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
  for (std::size_t i = 1; i < marks_.size(); ++i) {
    if (marks_[i].first == "start") continue;
    float ms = 0;
    STAGEHAND_CUDA_CHECK(cudaEventElapsedTime(&ms, marks_[i - 1].second, marks_[i].second));
    auto found = std::find_if(totals.begin(), totals.end(), [&](const auto& t) { return t.first == marks_[i].first; });
    if (found == totals.end()) {
      totals.emplace_back(marks_[i].first, ms);
    } else {
      found->second += ms;
    }
  }
  for (auto& entry : marks_) cudaEventDestroy(entry.second);
  marks_.clear();
  return totals;
}

MsmPlan msm_plan(std::uint64_t point_count, unsigned window_bits, MsmGroup group, kernel::Curve curve) {
  if (point_count == 0 || point_count >= (std::uint64_t{1} << 31)) {
    throw std::invalid_argument("msm_plan: point count must be in 1..2^31-1");
  }
  MsmPlan plan;
  plan.curve = curve;
  plan.point_count = point_count;
  plan.group = group;
  // G2: the integer products as calls, faster on the H200 than the inlined products with prefetch
  // at every size measured (bench/journal/2026-12-01.md).
  if (group == MsmGroup::g2) plan.tuning.item_sum = ItemSum::integer_called;
  if (window_bits == 0) {
    // The fewest windows (each adds every point once) whose buckets still get about ten points
    // each (n / 2^(c-1) >= 10): below that the per-bucket costs (the reduction's two additions
    // per bucket, the work items' sort) outweigh the additions a wider window saves, and the
    // buckets' chains no longer fill the GPU. Measured on the H200 (bench/RESULTS.md, G1 and G2 at
    // 2^12..2^18 with each width; 2^20..2^26 with 16 and 20): this picks the fastest width at
    // every size measured, 8 bits at 2^12, 11 at 2^14, 13 at 2^16 and 2^18 (G2 clearly faster than
    // with 16 there), 16 to about 5.2M points, then 20. An earlier cost model in multiplications
    // took 8 bits up to 2^16, several times slower there in both groups (bench/journal/2026-12-02.md,
    // "The MSM's window width below 2^20"). Candidates are the widths measured
    // (11's top window keeps 3 bits: few, heavy buckets, which the heavy-bucket pass takes); 8
    // when even its buckets get fewer points.
    window_bits = 8;
    for (unsigned bits : {11u, 13u, 16u, 20u}) {
      if (static_cast<double>(point_count) >= 10.0 * std::ldexp(1.0, bits - 1)) window_bits = bits;
    }
  }
  if (window_bits < 2 || window_bits > 22) throw std::invalid_argument("msm_plan: window_bits outside 2..22");
  plan.window_bits = window_bits;
  plan.window_count = digit_window_count(window_bits);
  // Enough buckets in flight to fill the GPU (2^18 threads), and at most 2^28 sort pairs.
  const std::uint64_t buckets_per_window = std::uint64_t{1} << (window_bits - 1);
  std::uint64_t windows = std::max<std::uint64_t>(1, (std::uint64_t{1} << 18) / buckets_per_window);
  windows = std::min<std::uint64_t>(windows, std::max<std::uint64_t>(1, (std::uint64_t{1} << 28) / point_count));
  windows = std::min<std::uint64_t>(windows, plan.window_count);
  plan.windows_per_group = static_cast<unsigned>(windows);
  return plan;
}

MsmPlan msm_batch_plan(std::uint64_t batch_points, unsigned window_bits, MsmGroup group, kernel::Curve curve) {
  MsmPlan plan = msm_plan(batch_points, window_bits, group, curve);
  // At most 2^21 buckets per group as well: the work-item arrays grow with the group's buckets
  // (about 330 bytes per bucket), whatever the batch. Neither bound goes below msm_plan's own
  // grouping.
  const std::uint64_t bucket_cap = std::max<std::uint64_t>(1, (std::uint64_t{1} << 21) >> (plan.window_bits - 1));
  const std::uint64_t wanted =
      std::min(bucket_cap, std::max<std::uint64_t>(1, (std::uint64_t{1} << 24) / plan.point_count));
  plan.windows_per_group =
      static_cast<unsigned>(std::clamp<std::uint64_t>(wanted, plan.windows_per_group, plan.window_count));
  return plan;
}

// The copies the Groth16 program allocates for a width (device/kernel_abi.hpp) are the pipeline's
// windows at that width, at every width a precomputed plan takes.
constexpr bool copies_are_windows() {
  for (unsigned bits = 2; bits <= 24; ++bits) {
    if (kernel::precomputed_copies(bits) != digit_window_count(bits)) return false;
  }
  return true;
}
static_assert(copies_are_windows());

MsmPlan msm_precomputed_plan(std::uint64_t point_count, unsigned window_bits, MsmGroup group, kernel::Curve curve) {
  if (point_count == 0 || point_count >= (std::uint64_t{1} << 30)) {
    throw std::invalid_argument("msm_precomputed_plan: point count must be in 1..2^30-1");
  }
  // The width the H200 ran fastest (device/kernel_abi.hpp, which the Groth16 program shares).
  if (window_bits == 0) window_bits = kernel::precomputed_window_bits(point_count, group);
  if (window_bits < 2 || window_bits > 24)
    throw std::invalid_argument("msm_precomputed_plan: window_bits outside 2..24");
  MsmPlan plan;
  plan.curve = curve;
  plan.point_count = point_count;
  plan.group = group;
  plan.precomputed = true;
  if (group == MsmGroup::g2) plan.tuning.item_sum = ItemSum::integer_called;
  plan.window_bits = window_bits;
  plan.window_count = digit_window_count(window_bits);
  if (std::uint64_t{plan.window_count} * point_count >= (std::uint64_t{1} << 30)) {
    throw std::invalid_argument("msm_precomputed_plan: " + std::to_string(plan.window_count) + " copies of " +
                                std::to_string(point_count) + " points reach 2^30");
  }
  // The windows share their buckets, so grouping them adds no parallelism: as many per group
  // as keep a group's sort at 2^28 pairs.
  plan.windows_per_group =
      static_cast<unsigned>(std::clamp<std::uint64_t>((std::uint64_t{1} << 28) / point_count, 1, plan.window_count));
  return plan;
}

std::uint64_t msm_precomputed_bytes(const MsmPlan& plan) {
  const kernel::CurveSizes sizes = kernel::curve_sizes(plan.curve);
  return std::uint64_t{plan.window_count} * plan.point_count *
         (plan.group == MsmGroup::g1 ? sizes.g1_affine : sizes.g2_affine);
}

}  // namespace stagehand::cuda
