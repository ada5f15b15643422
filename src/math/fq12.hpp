// Fq12 = Fq6[w] / (w² - v), the top of the BLS12-381 tower and the field of the pairing's values
// (GT is its subgroup of order r). An element is c0 + c1·w; with v = w² its six Fq2 coefficients
// stand at w^0 (c0.c0), w^2 (c0.c1), w^4 (c0.c2), w^1 (c1.c0), w^3 (c1.c1), w^5 (c1.c2).
// The same representation as @noble/curves' Fp12, so values compare coefficient by coefficient.
#pragma once

#include "math/fq6.hpp"

namespace stagehand::math {

struct Fq12 {
  Fq6 c0;
  Fq6 c1;

  static constexpr Fq12 zero() { return {Fq6::zero(), Fq6::zero()}; }
  static constexpr Fq12 one() { return {Fq6::one(), Fq6::zero()}; }

  constexpr bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  constexpr bool is_one() const { return c0.is_one() && c1.is_zero(); }
  friend constexpr bool operator==(const Fq12& a, const Fq12& b) = default;

  friend constexpr Fq12 operator+(const Fq12& a, const Fq12& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
  friend constexpr Fq12 operator-(const Fq12& a, const Fq12& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
  constexpr Fq12 operator-() const { return {-c0, -c1}; }

  // Karatsuba: three Fq6 multiplications.
  friend constexpr Fq12 operator*(const Fq12& a, const Fq12& b) {
    const Fq6 t0 = a.c0 * b.c0;
    const Fq6 t1 = a.c1 * b.c1;
    return {t0 + t1.multiply_by_v(), (a.c0 + a.c1) * (b.c0 + b.c1) - t0 - t1};
  }
  constexpr Fq12& operator*=(const Fq12& other) { return *this = *this * other; }

  // Complex squaring: two Fq6 multiplications.
  constexpr Fq12 squared() const {
    const Fq6 product = c0 * c1;
    return {(c0 + c1) * (c0 + c1.multiply_by_v()) - product - product.multiply_by_v(), product.doubled()};
  }

  // ·(o0 + o1·v + o4·v·w): the sparse product with a line of the Miller loop (M-type twist).
  constexpr Fq12 multiply_by_014(const Fq2& o0, const Fq2& o1, const Fq2& o4) const {
    const Fq6 t0 = c0.multiply_by_01(o0, o1);
    const Fq6 t1 = c1.multiply_by_1(o4);
    return {t1.multiply_by_v() + t0, (c1 + c0).multiply_by_01(o0, o1 + o4) - t0 - t1};
  }

  // The q^6-power Frobenius: c0 - c1·w. On GT (norm one over Fq6) it is the inverse.
  constexpr Fq12 conjugate() const { return {c0, -c1}; }

  // Zero maps to zero.
  constexpr Fq12 inverse() const {
    const Fq6 norm_inverse = (c0.squared() - c1.squared().multiply_by_v()).inverse();
    return {c0 * norm_inverse, -(c1 * norm_inverse)};
  }

  template <std::size_t ExponentLimbCount>
  constexpr Fq12 pow(const Limbs<ExponentLimbCount>& exponent) const {
    Fq12 result = one();
    for (std::size_t bit = detail::bit_length(exponent); bit-- > 0;) {
      result = result.squared();
      if (detail::test_bit(exponent, bit)) result *= *this;
    }
    return result;
  }

  // x ↦ x^(q^power) for power 1..11 (0 and 12 are the identity).
  Fq12 frobenius(unsigned power = 1) const;

  // Squaring in the cyclotomic subgroup (elements with x^(q^4 - q^2 + 1) = 1, such as the
  // result of the easy part of the final exponentiation); Granger-Scott. Wrong elsewhere.
  Fq12 cyclotomic_squared() const;
};

}  // namespace stagehand::math
