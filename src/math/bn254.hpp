// BN254 (alt_bn128, circom's and Ethereum's "bn128"): its fields, tower, groups and description,
// in namespace stagehand::math::bn254 under the names BLS12-381's have in stagehand::math (Fq, Fr,
// Fq2, Fq6, Fq12, G1Curve, G1Affine, ...). The towers and the curve code are the same templates
// as BLS12-381's; only the parameters below differ.
//
//   q = 0x30644e72...d87cfd47 (254 bits, 4 limbs), r = 0x30644e72...f0000001 (254 bits, 4 limbs,
//   2-adicity 28, multiplicative generator 5), x = 4965661367192848881 (positive);
//   Fq2 = Fq[u]/(u² + 1), Fq6 = Fq2[v]/(v³ - (9 + u)), Fq12 = Fq6[w]/(w² - v);
//   G1: y² = x³ + 3 over Fq, cofactor 1; G2: y² = x³ + 3/(9 + u) over Fq2, the D-type twist.
#pragma once

#include <cstdint>

#include "math/curve.hpp"
#include "math/curve_description.hpp"
#include "math/fq12.hpp"
#include "math/montgomery_field.hpp"

namespace stagehand::math {
namespace bn254 {

struct FqParameters {
  static constexpr std::size_t limb_count = 4;
  static constexpr Limbs<4> modulus = {0x3c208c16d87cfd47ULL, 0x97816a916871ca8dULL, 0xb85045b68181585dULL,
                                       0x30644e72e131a029ULL};
};
// snarkjs stores bn128 coordinates in Montgomery form with R = 2^256, the same as this type.
using Fq = MontgomeryField<FqParameters>;

struct FrParameters {
  static constexpr std::size_t limb_count = 4;
  static constexpr Limbs<4> modulus = {0x43e1f593f0000001ULL, 0x2833e84879b97091ULL, 0xb85045b68181585dULL,
                                       0x30644e72e131a029ULL};
};
using Fr = MontgomeryField<FrParameters>;

using Fq2 = BasicFq2<Fq>;

struct G1Curve;
struct G2Curve;

}  // namespace bn254

struct Bn254 {
  using Fq = bn254::Fq;
  using Fr = bn254::Fr;
  using Fq2 = bn254::Fq2;
  using G1 = bn254::G1Curve;
  using G2 = bn254::G2Curve;

  // ξ = 9 + u: a·ξ = (9·a0 - a1) + (a0 + 9·a1)·u, the nines by three doublings and an addition.
  static constexpr Fq2 multiply_by_xi(const Fq2& a) {
    const Fq nine_c0 = a.c0.doubled().doubled().doubled() + a.c0;
    const Fq nine_c1 = a.c1.doubled().doubled().doubled() + a.c1;
    return {nine_c0 - a.c1, a.c0 + nine_c1};
  }

  static constexpr Twist twist = Twist::divisive;
  static constexpr std::uint64_t x = 4965661367192848881ULL;
  static constexpr bool x_negative = false;
  // The loop runs over the NAF digits of 6x + 2 (65 bits), then adds π(Q) and -π²(Q).
  static constexpr detail::Uint128 ate_loop_count = detail::Uint128{6} * x + 2;
  static constexpr bool ate_loop_naf = true;
};

namespace bn254 {

using Fq6 = BasicFq6<Bn254>;
using Fq12 = BasicFq12<Bn254>;

struct G1Curve {
  using BaseField = Fq;
  using ScalarField = Fr;
  static constexpr bool cofactor_is_one = true;
  static constexpr Fq b() {
    constexpr Fq value = Fq::from_uint64(3);
    return value;
  }
  // (1, 2), as in EIP-196 and snarkjs.
  static AffinePoint<G1Curve> generator();
};

struct G2Curve {
  using BaseField = Fq2;
  using ScalarField = Fr;
  static constexpr bool cofactor_is_one = false;
  // 3/(9 + u); the tests check it against @noble/curves and against 3 = b·(9 + u).
  static constexpr Fq2 b() {
    constexpr Fq2 value{*Fq::from_canonical_limbs(detail::limbs_from_hex<4>(
                            "2b149d40ceb8aaae81be18991be06ac3b5b4c5e559dbefa33267e6dc24a138e5")),
                        *Fq::from_canonical_limbs(detail::limbs_from_hex<4>(
                            "009713b03af0fed4cd2cafadeed8fdf4a74fa084e52d1852e4a2bd0685c315d2"))};
    return value;
  }
  // EIP-197's generator (also snarkjs's).
  static AffinePoint<G2Curve> generator();
};

using G1Affine = AffinePoint<G1Curve>;
using G1Projective = ProjectivePoint<G1Curve>;
using G2Affine = AffinePoint<G2Curve>;
using G2Projective = ProjectivePoint<G2Curve>;

}  // namespace bn254
}  // namespace stagehand::math
