// Pippenger MSM over BN254's G1: msm_pipeline.cuh instantiated for Bn254G1 (see msm.hpp), in its own
// translation unit as each (curve, group) is.
#include "ec/curves.cuh"
#include "msm/msm_pipeline.cuh"

namespace stagehand::cuda {
namespace {

// BLS12-381's G1 (msm.cu) over BN254's fields: 64-byte points, 128-byte buckets. The occupancies
// are BLS12-381's G1's, which hold for the smaller points too (BN254's have not been tuned apart).
struct Bn254G1 {
  using Scalar = Bn254Curve::Fr;
  using Affine = Bn254Curve::G1Affine;
  using Bucket = Bn254Curve::G1Xyzz;
  using Jacobian = JacobianPoint<Bn254Curve::Fq>;
  using Field = Bn254Curve::Fq;
  using F64Field = Bn254Curve::FqF64;
  using CalledField = Bn254Curve::FqCalled;
  using CalledF64Field = Bn254Curve::FqF64Called;
  static constexpr bool kHasF64Field = true;
  static constexpr const char* kName = "BN254 G1";
  static constexpr unsigned kSplitBlocks = 3;
  template <bool Prefetch, class F>
  static constexpr unsigned item_sum_blocks() {
    if constexpr (F::Params::called_products) return 4;
    return Prefetch || F::Params::f64_products ? 3 : 4;
  }
};
static_assert(sizeof(Bn254G1::Jacobian) == kernel::curve_sizes(kernel::Curve::bn254).g1_jacobian &&
              sizeof(Bn254G1::Affine) == kernel::curve_sizes(kernel::Curve::bn254).g1_affine);

}  // namespace

template <>
struct MsmGroupOf<kernel::Curve::bn254, MsmGroup::g1> {
  using type = Bn254G1;
};
template struct MsmInstance<kernel::Curve::bn254, MsmGroup::g1>;

}  // namespace stagehand::cuda
