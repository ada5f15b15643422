// The optimal ate pairing of BLS12-381, e: G1 × G2 -> GT ⊂ Fq12, with the same values as
// @noble/curves' `bls12_381.pairing` (tests/math/pairing_test.cpp checks them).
//
//   Miller loop   over |x| = 0xd201000000010000 (x = -0xd201000000010000, so the result is
//                 conjugated at the end). The line coefficients of a G2 point depend on it alone:
//                 prepare_g2 computes them once (T in homogeneous projective coordinates, no
//                 inversion), and a fixed point (a key's β2, γ2, δ2) is prepared once for every proof.
//                 G2 is the M-type sextic twist y² = x³ + 4ξ, untwisted by (x, y) ↦ (x/w², y/w³);
//                 the line through T (slope λ, affine), scaled by w³, is
//                 (λ·x_T - y_T) + (-λ·x_P)·v + y_P·v·w: a sparse 0, 1, 4 product
//                 (Fq12::multiply_by_014); the projective form scales it by a factor in Fq2,
//                 which the final exponentiation removes.
//   final exponentiation  f^(3·(q^12 - 1)/r): the easy part f^((q^6 - 1)(q^2 + 1)), then the
//                 hard part by the addition chain in x of Hayashida, Hayasaka and Teruya that
//                 @noble/curves and zkcrypto's bls12_381 use, which raises to 3·(q^4 - q^2 + 1)/r.
//                 3 is prime to r, so this is the cube of the textbook pairing: as bilinear and
//                 non-degenerate, equal to 1 exactly when the textbook one is, and noble's values.
//
// A product of pairings shares the loop's squarings and one final exponentiation
// (multi_pairing), which is how the Groth16 check runs. Nothing here is constant-time.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "math/fq12.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"

namespace stagehand::math {

// |x| of BLS12-381; x itself is negative.
inline constexpr std::uint64_t kBlsX = 0xd201000000010000ULL;

// The Miller loop's line coefficients of one G2 point: for each doubling and each addition in
// loop order, the line at P = (x_P, y_P) is c0 + (c1·x_P)·v + (c2·y_P)·v·w.
struct G2Prepared {
  struct Line {
    Fq2 c0, c1, c2;
  };
  bool infinity = true;
  std::vector<Line> lines;
};

// For a point of G2 (check is_in_subgroup first: outside it the values mean nothing).
G2Prepared prepare_g2(const G2Affine& point);

// Π f_{|x|,Q_i}(P_i), conjugated (x < 0); pairs with a point at infinity contribute 1.
Fq12 miller_loop(std::span<const std::pair<G1Affine, const G2Prepared*>> pairs);

// f^(3·(q^12 - 1)/r) (see above).
Fq12 final_exponentiation(const Fq12& f);

// e(P, Q), and the product Π e(P_i, Q_i) with one final exponentiation.
Fq12 pairing(const G1Affine& p, const G2Affine& q);
Fq12 multi_pairing(std::span<const std::pair<G1Affine, const G2Prepared*>> pairs);

}  // namespace stagehand::math
