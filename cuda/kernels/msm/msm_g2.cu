// Pippenger MSM over BLS12-381's G2: msm_pipeline.cuh instantiated for G2Curve (see msm.hpp). Its own
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
  using Scalar = Fr;
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

template <>
struct MsmGroupOf<kernel::Curve::bls12_381, MsmGroup::g2> {
  using type = G2Curve;
};
template struct MsmInstance<kernel::Curve::bls12_381, MsmGroup::g2>;

}  // namespace stagehand::cuda
