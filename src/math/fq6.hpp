// Fq6 = Fq2[v] / (v^3 - ξ), the middle of the tower, for a curve description (curve_description.hpp)
// that names ξ: 1 + u for BLS12-381 (as @noble/curves and zkcrypto's bls12_381 build it), 9 + u
// for BN254 (as noble and the Ethereum precompiles do). An element is c0 + c1·v + c2·v².
#pragma once

#include "math/curve_description.hpp"

namespace stagehand::math {

template <class Curve>
struct BasicFq6 {
  using Fq2 = typename Curve::Fq2;
  static constexpr Fq2 multiply_by_xi(const Fq2& a) { return Curve::multiply_by_xi(a); }

  Fq2 c0;
  Fq2 c1;
  Fq2 c2;

  static constexpr BasicFq6 zero() { return {Fq2::zero(), Fq2::zero(), Fq2::zero()}; }
  static constexpr BasicFq6 one() { return {Fq2::one(), Fq2::zero(), Fq2::zero()}; }

  constexpr bool is_zero() const { return c0.is_zero() && c1.is_zero() && c2.is_zero(); }
  constexpr bool is_one() const { return c0.is_one() && c1.is_zero() && c2.is_zero(); }
  friend constexpr bool operator==(const BasicFq6& a, const BasicFq6& b) = default;

  friend constexpr BasicFq6 operator+(const BasicFq6& a, const BasicFq6& b) {
    return {a.c0 + b.c0, a.c1 + b.c1, a.c2 + b.c2};
  }
  friend constexpr BasicFq6 operator-(const BasicFq6& a, const BasicFq6& b) {
    return {a.c0 - b.c0, a.c1 - b.c1, a.c2 - b.c2};
  }
  constexpr BasicFq6 operator-() const { return {-c0, -c1, -c2}; }

  // Karatsuba over the three coefficients: six Fq2 multiplications.
  friend constexpr BasicFq6 operator*(const BasicFq6& a, const BasicFq6& b) {
    const Fq2 t0 = a.c0 * b.c0;
    const Fq2 t1 = a.c1 * b.c1;
    const Fq2 t2 = a.c2 * b.c2;
    return {t0 + multiply_by_xi((a.c1 + a.c2) * (b.c1 + b.c2) - t1 - t2),
            (a.c0 + a.c1) * (b.c0 + b.c1) - t0 - t1 + multiply_by_xi(t2), (a.c0 + a.c2) * (b.c0 + b.c2) - t0 - t2 + t1};
  }
  friend constexpr BasicFq6 operator*(const BasicFq6& a, const Fq2& scale) {
    return {a.c0 * scale, a.c1 * scale, a.c2 * scale};
  }

  constexpr BasicFq6& operator+=(const BasicFq6& other) { return *this = *this + other; }
  constexpr BasicFq6& operator-=(const BasicFq6& other) { return *this = *this - other; }
  constexpr BasicFq6& operator*=(const BasicFq6& other) { return *this = *this * other; }

  constexpr BasicFq6 doubled() const { return {c0.doubled(), c1.doubled(), c2.doubled()}; }
  constexpr BasicFq6 squared() const { return *this * *this; }

  // ·v: (c0, c1, c2) -> (ξ·c2, c0, c1).
  constexpr BasicFq6 multiply_by_v() const { return {multiply_by_xi(c2), c0, c1}; }

  // ·(b0 + b1·v), the sparse product of the Miller loop's lines: five Fq2 multiplications.
  constexpr BasicFq6 multiply_by_01(const Fq2& b0, const Fq2& b1) const {
    const Fq2 t0 = c0 * b0;
    const Fq2 t1 = c1 * b1;
    return {t0 + multiply_by_xi((c1 + c2) * b1 - t1), (b0 + b1) * (c0 + c1) - t0 - t1, (c0 + c2) * b0 - t0 + t1};
  }
  // ·(b1·v).
  constexpr BasicFq6 multiply_by_1(const Fq2& b1) const { return {multiply_by_xi(c2 * b1), c0 * b1, c1 * b1}; }

  // Zero maps to zero.
  constexpr BasicFq6 inverse() const {
    const Fq2 t0 = c0.squared() - multiply_by_xi(c1 * c2);
    const Fq2 t1 = multiply_by_xi(c2.squared()) - c0 * c1;
    const Fq2 t2 = c1.squared() - c0 * c2;
    const Fq2 norm = c0 * t0 + multiply_by_xi(c2 * t1 + c1 * t2);
    const Fq2 norm_inverse = norm.inverse();
    return {t0 * norm_inverse, t1 * norm_inverse, t2 * norm_inverse};
  }
};

using Fq6 = BasicFq6<Bls12_381>;

// a·ξ in BLS12-381's tower.
constexpr Fq2 multiply_by_xi(const Fq2& a) { return Bls12_381::multiply_by_xi(a); }

}  // namespace stagehand::math
