// G2 of BLS12-381: y^2 = x^3 + 4(1 + u) over Fq2 (the M-type sextic twist), the subgroup of
// order r.
#pragma once

#include "math/curve.hpp"
#include "math/fq2.hpp"
#include "math/fr.hpp"

namespace stagehand::math {

struct G2Curve {
  using BaseField = Fq2;
  using ScalarField = Fr;
  static constexpr bool cofactor_is_one = false;
  static constexpr Fq2 b() {
    constexpr Fq2 value{Fq::from_uint64(4), Fq::from_uint64(4)};
    return value;
  }
  // The standard generator; the tests check it against @noble/curves and the subgroup.
  static AffinePoint<G2Curve> generator();
};

using G2Affine = AffinePoint<G2Curve>;
using G2Projective = ProjectivePoint<G2Curve>;

}  // namespace stagehand::math
