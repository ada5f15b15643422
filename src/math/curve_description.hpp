// What the extension towers, the pairing and the curve code need to know about a pairing-friendly
// curve, and BLS12-381's description (BN254's is in bn254.hpp).
//
// A description provides:
//   Fq, Fr, Fq2           the base field, the scalar field and Fq2 = Fq[u]/(u² + 1);
//   multiply_by_xi(a)     a·ξ for the non-residue ξ of Fq6 = Fq2[v]/(v³ - ξ) (also w⁶ = ξ in Fq12);
//   G1, G2                the groups' descriptions (curve.hpp: BaseField, ScalarField, b(), generator());
//   twist                 how G2's twist maps into E(Fq12), which decides the shape of the lines;
//   x, x_negative         the curve's parameter |x| and its sign (the final exponentiation's chain);
//   ate_loop_count, ate_loop_naf   the Miller loop's count and whether it runs over its NAF digits.
// The parts that are not formulas in these (the end of the Miller loop, the hard part of the final
// exponentiation) are specialisations in pairing.cpp.
#pragma once

#include <cstdint>

#include "math/fq2.hpp"
#include "math/fr.hpp"

namespace stagehand::math {

enum class Twist {
  multiplicative,  // M-type: y² = x³ + b·ξ, untwisted by (x, y) ↦ (x/w², y/w³); lines are 0-1-4 sparse
  divisive,        // D-type: y² = x³ + b/ξ, untwisted by (x, y) ↦ (x·w², y·w³); lines are 0-3-4 sparse
};

struct G1Curve;
struct G2Curve;

struct Bls12_381 {
  using Fq = math::Fq;
  using Fr = math::Fr;
  using Fq2 = math::Fq2;
  using G1 = G1Curve;
  using G2 = G2Curve;

  // ξ = 1 + u: a·ξ = (a0 - a1) + (a0 + a1)·u.
  static constexpr Fq2 multiply_by_xi(const Fq2& a) { return {a.c0 - a.c1, a.c0 + a.c1}; }

  static constexpr Twist twist = Twist::multiplicative;
  static constexpr std::uint64_t x = 0xd201000000010000ULL;
  static constexpr bool x_negative = true;
  // The loop runs over the plain bits of |x| and is conjugated at the end (x < 0).
  static constexpr detail::Uint128 ate_loop_count = x;
  static constexpr bool ate_loop_naf = false;
};

}  // namespace stagehand::math
