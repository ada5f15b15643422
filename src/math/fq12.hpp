// Fq12 = Fq6[w] / (w² - v), the top of the tower and the field of the pairing's values (GT is
// its subgroup of order r), for either curve. An element is c0 + c1·w; with v = w² its six Fq2
// coefficients stand at w^0 (c0.c0), w^2 (c0.c1), w^4 (c0.c2), w^1 (c1.c0), w^3 (c1.c1),
// w^5 (c1.c2). The same representation as @noble/curves' Fp12, so values compare coefficient
// by coefficient.
#pragma once

#include <utility>

#include "math/fq6.hpp"

namespace stagehand::math {

template <class Curve>
struct BasicFq12 {
  using Fq = typename Curve::Fq;
  using Fq2 = typename Curve::Fq2;
  using Fq6 = BasicFq6<Curve>;

  Fq6 c0;
  Fq6 c1;

  static constexpr BasicFq12 zero() { return {Fq6::zero(), Fq6::zero()}; }
  static constexpr BasicFq12 one() { return {Fq6::one(), Fq6::zero()}; }

  constexpr bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  constexpr bool is_one() const { return c0.is_one() && c1.is_zero(); }
  friend constexpr bool operator==(const BasicFq12& a, const BasicFq12& b) = default;

  friend constexpr BasicFq12 operator+(const BasicFq12& a, const BasicFq12& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
  friend constexpr BasicFq12 operator-(const BasicFq12& a, const BasicFq12& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
  constexpr BasicFq12 operator-() const { return {-c0, -c1}; }

  // Karatsuba: three Fq6 multiplications.
  friend constexpr BasicFq12 operator*(const BasicFq12& a, const BasicFq12& b) {
    const Fq6 t0 = a.c0 * b.c0;
    const Fq6 t1 = a.c1 * b.c1;
    return {t0 + t1.multiply_by_v(), (a.c0 + a.c1) * (b.c0 + b.c1) - t0 - t1};
  }
  constexpr BasicFq12& operator*=(const BasicFq12& other) { return *this = *this * other; }

  // Complex squaring: two Fq6 multiplications.
  constexpr BasicFq12 squared() const {
    const Fq6 product = c0 * c1;
    return {(c0 + c1) * (c0 + c1.multiply_by_v()) - product - product.multiply_by_v(), product.doubled()};
  }

  // ·(o0 + o1·v + o4·v·w): the sparse product with a line of the Miller loop (M-type twist).
  constexpr BasicFq12 multiply_by_014(const Fq2& o0, const Fq2& o1, const Fq2& o4) const {
    const Fq6 t0 = c0.multiply_by_01(o0, o1);
    const Fq6 t1 = c1.multiply_by_1(o4);
    return {t1.multiply_by_v() + t0, (c1 + c0).multiply_by_01(o0, o1 + o4) - t0 - t1};
  }

  // ·(o0 + o3·w + o4·v·w): the sparse product with a line of the Miller loop (D-type twist).
  constexpr BasicFq12 multiply_by_034(const Fq2& o0, const Fq2& o3, const Fq2& o4) const {
    const Fq6 t0 = c0 * o0;
    const Fq6 t1 = c1.multiply_by_01(o3, o4);
    return {t1.multiply_by_v() + t0, (c0 + c1).multiply_by_01(o0 + o3, o4) - t0 - t1};
  }

  // The q^6-power Frobenius: c0 - c1·w. On GT (norm one over Fq6) it is the inverse.
  constexpr BasicFq12 conjugate() const { return {c0, -c1}; }

  // Zero maps to zero.
  constexpr BasicFq12 inverse() const {
    const Fq6 norm_inverse = (c0.squared() - c1.squared().multiply_by_v()).inverse();
    return {c0 * norm_inverse, -(c1 * norm_inverse)};
  }

  template <std::size_t ExponentLimbCount>
  constexpr BasicFq12 pow(const Limbs<ExponentLimbCount>& exponent) const {
    BasicFq12 result = one();
    for (std::size_t bit = detail::bit_length(exponent); bit-- > 0;) {
      result = result.squared();
      if (detail::test_bit(exponent, bit)) result *= *this;
    }
    return result;
  }

  // x ↦ x^(q^power) for power 1..11 (0 and 12 are the identity).
  BasicFq12 frobenius(unsigned power = 1) const {
    BasicFq12 result = *this;
    for (unsigned step = 0; step < power % 12; ++step) result = result.frobenius_once();
    return result;
  }

  // Squaring in the cyclotomic subgroup (elements with x^(q^4 - q^2 + 1) = 1, such as the
  // result of the easy part of the final exponentiation); Granger-Scott. Wrong elsewhere.
  BasicFq12 cyclotomic_squared() const {
    const auto [t3, t4] = fq4_square(c0.c0, c1.c1);
    const auto [t5, t6] = fq4_square(c1.c0, c0.c2);
    const auto [t7, t8] = fq4_square(c0.c1, c1.c2);
    const Fq2 t9 = Curve::multiply_by_xi(t8);
    return {{(t3 - c0.c0).doubled() + t3, (t5 - c0.c1).doubled() + t5, (t7 - c0.c2).doubled() + t7},
            {(t9 + c1.c0).doubled() + t9, (t4 + c1.c1).doubled() + t4, (t6 + c1.c2).doubled() + t6}};
  }

 private:
  // γ[i] = ξ^(i·(q - 1)/6) = w^(i·(q - 1)) (w⁶ = ξ): the Frobenius takes c·w^i to conj(c)·γ[i]·w^i.
  // q = 1 mod 6 for both curves (their G2 is a sextic twist).
  struct FrobeniusConstants {
    Fq2 gamma[6];
    FrobeniusConstants() {
      const auto exponent = detail::divide_small(detail::subtract_small(Fq::modulus, 1), 6);
      const Fq2 base = Curve::multiply_by_xi(Fq2::one()).pow(exponent);
      gamma[0] = Fq2::one();
      for (int index = 1; index < 6; ++index) gamma[index] = gamma[index - 1] * base;
    }
  };
  static const FrobeniusConstants& frobenius_constants() {
    static const FrobeniusConstants constants;
    return constants;
  }

  BasicFq12 frobenius_once() const {
    const auto& gamma = frobenius_constants().gamma;
    return {{c0.c0.conjugate(), c0.c1.conjugate() * gamma[2], c0.c2.conjugate() * gamma[4]},
            {c1.c0.conjugate() * gamma[1], c1.c1.conjugate() * gamma[3], c1.c2.conjugate() * gamma[5]}};
  }

  // (a + b·s)² in Fq2[s]/(s² - ξ): (a² + ξ·b², 2ab) with three squarings.
  static std::pair<Fq2, Fq2> fq4_square(const Fq2& a, const Fq2& b) {
    const Fq2 a2 = a.squared();
    const Fq2 b2 = b.squared();
    return {Curve::multiply_by_xi(b2) + a2, (a + b).squared() - a2 - b2};
  }
};

using Fq12 = BasicFq12<Bls12_381>;

}  // namespace stagehand::math
