// Fq2 = Fq[u] / (u^2 + 1), the field of G2 coordinates, over the base field of either curve
// (BLS12-381's Fq2 below; BN254's in bn254.hpp). An element is c0 + c1·u.
#pragma once

#include <optional>

#include "math/fq.hpp"

namespace stagehand::math {

// -1 must be a non-residue in the base field (q = 3 mod 4), which both curves' fields satisfy
// and which the square root below relies on.
template <class BaseField>
struct BasicFq2 {
  using Fq = BaseField;
  static_assert(Fq::modulus[0] % 4 == 3, "Fq2 = Fq[u]/(u^2 + 1) needs q = 3 mod 4");

  Fq c0;
  Fq c1;

  static constexpr BasicFq2 zero() { return {Fq::zero(), Fq::zero()}; }
  static constexpr BasicFq2 one() { return {Fq::one(), Fq::zero()}; }

  constexpr bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  constexpr bool is_one() const { return c0.is_one() && c1.is_zero(); }
  friend constexpr bool operator==(const BasicFq2& a, const BasicFq2& b) = default;

  friend constexpr BasicFq2 operator+(const BasicFq2& a, const BasicFq2& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
  friend constexpr BasicFq2 operator-(const BasicFq2& a, const BasicFq2& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
  constexpr BasicFq2 operator-() const { return {-c0, -c1}; }

  // Karatsuba: three base-field multiplications instead of four.
  friend constexpr BasicFq2 operator*(const BasicFq2& a, const BasicFq2& b) {
    const Fq real_product = a.c0 * b.c0;
    const Fq imaginary_product = a.c1 * b.c1;
    const Fq cross = (a.c0 + a.c1) * (b.c0 + b.c1);
    return {real_product - imaginary_product, cross - real_product - imaginary_product};
  }
  friend constexpr BasicFq2 operator*(const BasicFq2& a, const Fq& scale) { return {a.c0 * scale, a.c1 * scale}; }

  constexpr BasicFq2& operator+=(const BasicFq2& other) { return *this = *this + other; }
  constexpr BasicFq2& operator-=(const BasicFq2& other) { return *this = *this - other; }
  constexpr BasicFq2& operator*=(const BasicFq2& other) { return *this = *this * other; }

  constexpr BasicFq2 doubled() const { return {c0.doubled(), c1.doubled()}; }
  // (c0 + c1 u)^2 = (c0 + c1)(c0 - c1) + 2 c0 c1 u: two multiplications.
  constexpr BasicFq2 squared() const { return {(c0 + c1) * (c0 - c1), (c0 * c1).doubled()}; }
  constexpr BasicFq2 conjugate() const { return {c0, -c1}; }
  // c0^2 + c1^2, the norm down to Fq.
  constexpr Fq norm() const { return c0.squared() + c1.squared(); }

  // Zero maps to zero, as in Fq.
  constexpr BasicFq2 inverse() const { return conjugate() * norm().inverse(); }

  template <std::size_t ExponentLimbCount>
  constexpr BasicFq2 pow(const Limbs<ExponentLimbCount>& exponent) const {
    BasicFq2 result = one();
    for (std::size_t bit = detail::bit_length(exponent); bit-- > 0;) {
      result = result.squared();
      if (detail::test_bit(exponent, bit)) result *= *this;
    }
    return result;
  }

  // An element of Fq2 is a square exactly when its norm is a square in Fq.
  constexpr bool is_square() const { return norm().is_square(); }

  // One of the two square roots, or nothing for a non-residue. Algorithm 9 of Adj and
  // Rodríguez-Henríquez, "Square root computation over even extension fields" (q = 3 mod 4).
  constexpr std::optional<BasicFq2> sqrt() const {
    if (is_zero()) return *this;
    constexpr auto exponent_three_quarters = detail::shift_right(detail::subtract_small(Fq::modulus, 3), 2);
    constexpr auto exponent_half = detail::shift_right(detail::subtract_small(Fq::modulus, 1), 1);
    const BasicFq2 a1 = pow(exponent_three_quarters);
    const BasicFq2 alpha = a1 * a1 * *this;
    // alpha^q is the conjugate (Frobenius), so alpha^(q+1) = conjugate(alpha)·alpha.
    const BasicFq2 alpha_norm = alpha.conjugate() * alpha;
    if (alpha_norm == -one()) return std::nullopt;
    const BasicFq2 x0 = a1 * *this;
    BasicFq2 root;
    if (alpha == -one()) {
      root = BasicFq2{-x0.c1, x0.c0};  // u · x0
    } else {
      root = (alpha + one()).pow(exponent_half) * x0;
    }
    if (root.squared() != *this) return std::nullopt;
    return root;
  }
};

using Fq2 = BasicFq2<Fq>;

}  // namespace stagehand::math
