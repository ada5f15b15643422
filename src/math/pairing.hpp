// The optimal ate pairing e: G1 × G2 -> GT ⊂ Fq12 of BLS12-381 and of BN254, with the same values
// as @noble/curves' `bls12_381.pairing` and `bn254.pairing` (tests/math/pairing_test.cpp checks
// them). One template, Pairing<Curve>, over a curve description (curve_description.hpp); the
// BLS12-381 functions below keep their names in stagehand::math, BN254's have the same names in
// stagehand::math::bn254.
//
//   Miller loop   over the curve's ate loop count: |x| = 0xd201000000010000 bit by bit for
//                 BLS12-381 (x < 0, so the result is conjugated at the end), the NAF digits of
//                 6x + 2 for BN254, whose loop ends with the lines through π(Q) and -π²(Q)
//                 (π the Frobenius endomorphism of the twist). The line coefficients of a G2
//                 point depend on it alone: prepare_g2 computes them once (T in homogeneous
//                 projective coordinates, no inversion), and a fixed point (a key's β2, γ2, δ2)
//                 is prepared once for every proof. The line through T with slope λ, scaled into
//                 Fq2 coefficients, is sparse in Fq12: at w^0, w^2 and w^3 on BLS12-381's M-type
//                 twist (Fq12::multiply_by_014), at w^0, w^1 and w^3 on BN254's D-type twist
//                 (multiply_by_034); the projective form scales it by a factor in Fq2, which the
//                 final exponentiation removes.
//   final exponentiation  the easy part f^((q^6 - 1)(q^2 + 1)), then the curve's hard part as
//                 @noble/curves chains it: for BLS12-381 Hayashida-Hayasaka-Teruya's chain in x,
//                 which raises to 3·(q^4 - q^2 + 1)/r (3 is prime to r: the cube of the textbook
//                 pairing, as bilinear and non-degenerate); for BN254 the chain of Fuentes-Castañeda,
//                 Knapp and Rodríguez-Henríquez, which raises to 2x(6x² + 3x + 1)·(q^12 - 1)/r,
//                 again a power prime to r of the textbook pairing.
//
// A product of pairings shares the loop's squarings and one final exponentiation
// (multi_pairing), which is how the Groth16 check runs. Nothing here is constant-time.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "math/bn254.hpp"
#include "math/fq12.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"

namespace stagehand::math {

// The Miller loop's line coefficients of one G2 point: for each doubling and each addition in
// loop order, the line at P = (x_P, y_P) has the coefficients c0, c1·x_P and c2·y_P.
template <class Curve>
struct BasicG2Prepared {
  struct Line {
    typename Curve::Fq2 c0, c1, c2;
  };
  bool infinity = true;
  std::vector<Line> lines;
};

template <class Curve>
struct Pairing {
  using Fq12 = BasicFq12<Curve>;
  using G1Affine = AffinePoint<typename Curve::G1>;
  using G2Affine = AffinePoint<typename Curve::G2>;
  using Prepared = BasicG2Prepared<Curve>;
  using Pair = std::pair<G1Affine, const Prepared*>;

  // For a point of G2 (check is_in_subgroup first: outside it the values mean nothing).
  static Prepared prepare_g2(const G2Affine& point);
  // Π f_{loop,Q_i}(P_i), conjugated when x < 0; pairs with a point at infinity contribute 1.
  static Fq12 miller_loop(std::span<const Pair> pairs);
  static Fq12 final_exponentiation(const Fq12& f);
  static Fq12 multi_pairing(std::span<const Pair> pairs) { return final_exponentiation(miller_loop(pairs)); }
  static Fq12 pairing(const G1Affine& p, const G2Affine& q) {
    const Prepared prepared = prepare_g2(q);
    const Pair pair{p, &prepared};
    return multi_pairing(std::span(&pair, 1));
  }
};

extern template struct Pairing<Bls12_381>;
extern template struct Pairing<Bn254>;

// |x| of BLS12-381; x itself is negative.
inline constexpr std::uint64_t kBlsX = Bls12_381::x;

using G2Prepared = BasicG2Prepared<Bls12_381>;

inline G2Prepared prepare_g2(const G2Affine& point) { return Pairing<Bls12_381>::prepare_g2(point); }
inline Fq12 miller_loop(std::span<const std::pair<G1Affine, const G2Prepared*>> pairs) {
  return Pairing<Bls12_381>::miller_loop(pairs);
}
// f^(3·(q^12 - 1)/r) (see above).
inline Fq12 final_exponentiation(const Fq12& f) { return Pairing<Bls12_381>::final_exponentiation(f); }
// e(P, Q), and the product Π e(P_i, Q_i) with one final exponentiation.
inline Fq12 pairing(const G1Affine& p, const G2Affine& q) { return Pairing<Bls12_381>::pairing(p, q); }
inline Fq12 multi_pairing(std::span<const std::pair<G1Affine, const G2Prepared*>> pairs) {
  return Pairing<Bls12_381>::multi_pairing(pairs);
}

namespace bn254 {

using G2Prepared = BasicG2Prepared<Bn254>;

inline G2Prepared prepare_g2(const G2Affine& point) { return Pairing<Bn254>::prepare_g2(point); }
inline Fq12 miller_loop(std::span<const std::pair<G1Affine, const G2Prepared*>> pairs) {
  return Pairing<Bn254>::miller_loop(pairs);
}
inline Fq12 final_exponentiation(const Fq12& f) { return Pairing<Bn254>::final_exponentiation(f); }
inline Fq12 pairing(const G1Affine& p, const G2Affine& q) { return Pairing<Bn254>::pairing(p, q); }
inline Fq12 multi_pairing(std::span<const std::pair<G1Affine, const G2Prepared*>> pairs) {
  return Pairing<Bn254>::multi_pairing(pairs);
}

}  // namespace bn254
}  // namespace stagehand::math
