// G1 of BLS12-381: y^2 = x^3 + 4 over Fq, the subgroup of order r.
#pragma once

#include "math/curve.hpp"
#include "math/fq.hpp"
#include "math/fr.hpp"

namespace stagehand::math {

struct G1Curve {
  using BaseField = Fq;
  using ScalarField = Fr;
  static constexpr bool cofactor_is_one = false;
  static constexpr Fq b() {
    constexpr Fq value = Fq::from_uint64(4);
    return value;
  }
  // The standard generator (the zcash/IETF one, also snarkjs's); the tests check it against
  // @noble/curves and check that it lies on the curve and in the subgroup.
  static AffinePoint<G1Curve> generator();
};

using G1Affine = AffinePoint<G1Curve>;
using G1Projective = ProjectivePoint<G1Curve>;

}  // namespace stagehand::math
