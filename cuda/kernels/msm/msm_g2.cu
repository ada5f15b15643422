// Pippenger MSM over G2: msm_pipeline.cuh instantiated for G2Curve (see msm.hpp). Its own
// translation unit: the G2 kernels take the longest to compile, and G1 changes leave them alone.
#include <stdexcept>

#include <type_traits>

#include "ec/g2.cuh"
#include "msm/msm_pipeline.cuh"

namespace stagehand::cuda {
namespace {

// A G2 bucket is twice a G1 bucket (384 bytes, 96 registers) and its additions call the Fq2
// products (g2.cuh): two blocks of 128 per SM leave each thread the full 255 registers. Over
// Fq2Called (and Fq2F64Called) the Fq products are the calls and the Fq2 ones inline: three
// blocks.
struct G2Curve {
  using Affine = G2Affine;
  using Bucket = G2Xyzz;
  using Jacobian = JacobianPoint<Fq2>;
  using Field = Fq2;
  using F64Field = Fq2F64;
  using CalledField = Fq2Called;
  using CalledF64Field = Fq2F64Called;
  static constexpr bool kHasF64Field = true;
  static constexpr const char* kName = "G2";
  static constexpr unsigned kSplitBlocks = 2;
  template <bool Prefetch, class F>
  static constexpr unsigned item_sum_blocks() {
    return std::is_same_v<F, Fq2Called> || std::is_same_v<F, Fq2F64Called> ? 3 : 2;
  }
};
static_assert(sizeof(G2Curve::Jacobian) == kG2JacobianBytes);

}  // namespace

std::uint64_t msm_g2_scratch_bytes(const MsmPlan& plan) { return layout_for<G2Curve>(plan).total; }

void msm_g2_windows(const void* points, const void* scalars, bool scalars_montgomery, const MsmPlan& plan,
                    void* window_sums, void* scratch, cudaStream_t stream, MsmProfile* profile) {
  if (plan.group != MsmGroup::g2) throw std::invalid_argument("msm_g2_windows: a plan for G1");
  msm_windows<G2Curve>(points, scalars, scalars_montgomery, plan, window_sums, scratch, stream, profile);
}

void msm_g2_accumulate(const void* points, const void* scalars, bool scalars_montgomery, const MsmPlan& plan,
                       bool add_to_buckets, void* scratch, cudaStream_t stream, MsmProfile* profile) {
  if (plan.group != MsmGroup::g2) throw std::invalid_argument("msm_g2_accumulate: a plan for G1");
  accumulate_batch<G2Curve>("msm_g2_accumulate", points, scalars, scalars_montgomery, plan, add_to_buckets, scratch,
                            stream, profile);
}

void msm_g2_reduce(const MsmPlan& plan, void* window_sums, void* scratch, cudaStream_t stream, MsmProfile* profile) {
  if (plan.group != MsmGroup::g2) throw std::invalid_argument("msm_g2_reduce: a plan for G1");
  reduce_batches<G2Curve>("msm_g2_reduce", plan, window_sums, scratch, stream, profile);
}

void msm_g2_precompute_bases(const MsmPlan& plan, const void* points, void* copies, cudaStream_t stream) {
  if (plan.group != MsmGroup::g2) throw std::invalid_argument("msm_g2_precompute_bases: a plan for G1");
  precompute_bases<G2Curve>(plan, points, copies, stream);
}

std::uint64_t msm_g2_kernel_stack_bytes() { return pipeline_stack_bytes<G2Curve>(); }

void msm_g2_combine_windows_on_device(const void* window_sums, unsigned window_count, unsigned window_bits,
                                      void* result_jacobian, cudaStream_t stream) {
  combine_windows_kernel<G2Curve><<<1, 1, 0, stream>>>(static_cast<const G2Curve::Jacobian*>(window_sums), window_count,
                                                       window_bits, static_cast<G2Curve::Jacobian*>(result_jacobian),
                                                       nullptr, false);
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
}

}  // namespace stagehand::cuda
