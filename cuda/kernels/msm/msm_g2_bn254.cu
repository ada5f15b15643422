// Pippenger MSM over BN254's G2: msm_pipeline.cuh instantiated for Bn254G2 (see msm.hpp), in its own
// translation unit as each (curve, group) is: the G2 kernels take the longest to compile.
#include <type_traits>

#include "ec/curves.cuh"
#include "msm/msm_pipeline.cuh"

namespace stagehand::cuda {
namespace {

// BLS12-381's G2 (msm_g2.cu) over BN254's Fq2: 128-byte points, 256-byte buckets, the same
// occupancies (not tuned apart for BN254).
struct Bn254G2 {
  using Scalar = Bn254Curve::Fr;
  using Affine = Bn254Curve::G2Affine;
  using Bucket = Bn254Curve::G2Xyzz;
  using Jacobian = JacobianPoint<Bn254Curve::Fq2>;
  using Field = Bn254Curve::Fq2;
  using F64Field = Bn254Curve::Fq2F64;
  using CalledField = Bn254Curve::Fq2Called;
  using CalledF64Field = Bn254Curve::Fq2F64Called;
  static constexpr bool kHasF64Field = true;
  static constexpr const char* kName = "BN254 G2";
  static constexpr unsigned kSplitBlocks = 2;
  template <bool Prefetch, class F>
  static constexpr unsigned item_sum_blocks() {
    return std::is_same_v<F, CalledField> || std::is_same_v<F, CalledF64Field> ? 3 : 2;
  }
};
static_assert(sizeof(Bn254G2::Jacobian) == kernel::curve_sizes(kernel::Curve::bn254).g2_jacobian &&
              sizeof(Bn254G2::Affine) == kernel::curve_sizes(kernel::Curve::bn254).g2_affine);

}  // namespace

template <>
struct MsmGroupOf<kernel::Curve::bn254, MsmGroup::g2> {
  using type = Bn254G2;
};
template struct MsmInstance<kernel::Curve::bn254, MsmGroup::g2>;

}  // namespace stagehand::cuda
