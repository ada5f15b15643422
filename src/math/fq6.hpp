// Fq6 = Fq2[v] / (v^3 - ξ) with ξ = 1 + u, the middle of the BLS12-381 tower (as @noble/curves
// and zkcrypto's bls12_381 build it). An element is c0 + c1·v + c2·v².
#pragma once

#include "math/fq2.hpp"

namespace stagehand::math {

// a·ξ = a·(1 + u) = (a0 - a1) + (a0 + a1)·u.
constexpr Fq2 multiply_by_xi(const Fq2& a) { return {a.c0 - a.c1, a.c0 + a.c1}; }

struct Fq6 {
  Fq2 c0;
  Fq2 c1;
  Fq2 c2;

  static constexpr Fq6 zero() { return {Fq2::zero(), Fq2::zero(), Fq2::zero()}; }
  static constexpr Fq6 one() { return {Fq2::one(), Fq2::zero(), Fq2::zero()}; }

  constexpr bool is_zero() const { return c0.is_zero() && c1.is_zero() && c2.is_zero(); }
  constexpr bool is_one() const { return c0.is_one() && c1.is_zero() && c2.is_zero(); }
  friend constexpr bool operator==(const Fq6& a, const Fq6& b) = default;

  friend constexpr Fq6 operator+(const Fq6& a, const Fq6& b) { return {a.c0 + b.c0, a.c1 + b.c1, a.c2 + b.c2}; }
  friend constexpr Fq6 operator-(const Fq6& a, const Fq6& b) { return {a.c0 - b.c0, a.c1 - b.c1, a.c2 - b.c2}; }
  constexpr Fq6 operator-() const { return {-c0, -c1, -c2}; }

  // Karatsuba over the three coefficients: six Fq2 multiplications.
  friend constexpr Fq6 operator*(const Fq6& a, const Fq6& b) {
    const Fq2 t0 = a.c0 * b.c0;
    const Fq2 t1 = a.c1 * b.c1;
    const Fq2 t2 = a.c2 * b.c2;
    return {t0 + multiply_by_xi((a.c1 + a.c2) * (b.c1 + b.c2) - t1 - t2),
            (a.c0 + a.c1) * (b.c0 + b.c1) - t0 - t1 + multiply_by_xi(t2),
            (a.c0 + a.c2) * (b.c0 + b.c2) - t0 - t2 + t1};
  }
  friend constexpr Fq6 operator*(const Fq6& a, const Fq2& scale) { return {a.c0 * scale, a.c1 * scale, a.c2 * scale}; }

  constexpr Fq6& operator+=(const Fq6& other) { return *this = *this + other; }
  constexpr Fq6& operator-=(const Fq6& other) { return *this = *this - other; }
  constexpr Fq6& operator*=(const Fq6& other) { return *this = *this * other; }

  constexpr Fq6 doubled() const { return {c0.doubled(), c1.doubled(), c2.doubled()}; }
  constexpr Fq6 squared() const { return *this * *this; }

  // ·v: (c0, c1, c2) -> (ξ·c2, c0, c1).
  constexpr Fq6 multiply_by_v() const { return {multiply_by_xi(c2), c0, c1}; }

  // ·(b0 + b1·v), the sparse product of the Miller loop's lines: five Fq2 multiplications.
  constexpr Fq6 multiply_by_01(const Fq2& b0, const Fq2& b1) const {
    const Fq2 t0 = c0 * b0;
    const Fq2 t1 = c1 * b1;
    return {t0 + multiply_by_xi((c1 + c2) * b1 - t1), (b0 + b1) * (c0 + c1) - t0 - t1, (c0 + c2) * b0 - t0 + t1};
  }
  // ·(b1·v).
  constexpr Fq6 multiply_by_1(const Fq2& b1) const { return {multiply_by_xi(c2 * b1), c0 * b1, c1 * b1}; }

  // Zero maps to zero.
  constexpr Fq6 inverse() const {
    const Fq2 t0 = c0.squared() - multiply_by_xi(c1 * c2);
    const Fq2 t1 = multiply_by_xi(c2.squared()) - c0 * c1;
    const Fq2 t2 = c1.squared() - c0 * c2;
    const Fq2 norm = c0 * t0 + multiply_by_xi(c2 * t1 + c1 * t2);
    const Fq2 norm_inverse = norm.inverse();
    return {t0 * norm_inverse, t1 * norm_inverse, t2 * norm_inverse};
  }
};

}  // namespace stagehand::math
