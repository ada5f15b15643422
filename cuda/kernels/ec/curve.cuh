// Elliptic-curve points for the kernels: XYZZ accumulators over any field of field.cuh's kind
// (G1 over Fq here, G2 over Fq2 in g2.cuh), and the affine input points of either curve (the
// curves' constants are ec/curves.cuh's).
//
// XYZZ coordinates (X, Y, ZZ, ZZZ) stand for (X/ZZ, Y/ZZZ), with ZZ^3 = ZZZ^2; ZZ = 0 is the
// point at infinity. Why XYZZ: adding an affine point costs 8M + 2S against 7M + 4S in Jacobian
// coordinates, and the formulas (madd-2008-s, add-2008-s, dbl-2008-s-1, mdbl-2008-s-1 of the
// Explicit-Formulas Database) are short. They use neither a (= 0 on both curves) nor b, so one
// template serves G1 and G2. Every special case an MSM meets (either input at infinity, P + P,
// P + (-P)) is handled. Like field.cuh this compiles for the host too
// (tests/gpu/field_host_test.cpp and, for both curves, tests/kernels/curves_host_test.cpp check
// it against src/math without a GPU).
#pragma once

#include "ff/field.cuh"

namespace stagehand::cuda {

// Jacobian (X, Y, Z): (X/Z^2, Y/Z^3), Z = 0 at infinity; src/math's projective points.
template <class F>
struct JacobianPoint {
  F x;
  F y;
  F z;
};

// A point of all zero bytes has ZZ = 0 and so is the point at infinity: zeroed memory is an
// empty accumulator.
template <class F>
struct XyzzPoint {
  F x;
  F y;
  F zz;
  F zzz;

  SH_HD static XyzzPoint infinity() {
    XyzzPoint p;
    p.x = F::one();
    p.y = F::one();
    p.zz = F::zero();
    p.zzz = F::zero();
    return p;
  }
  SH_HD bool is_infinity() const { return zz.is_zero(); }

  SH_HD static XyzzPoint from_affine(const F& x, const F& y) {
    XyzzPoint p;
    p.x = x;
    p.y = y;
    p.zz = F::one();
    p.zzz = F::one();
    return p;
  }

  // 2·(x, y) for an affine point (mdbl-2008-s-1).
  SH_HD static XyzzPoint double_affine(const F& x, const F& y) {
    const F u = y.doubled();
    const F v = u.squared();
    const F w = u * v;
    const F s = x * v;
    const F x_squared = x.squared();
    const F m = x_squared.doubled() + x_squared;
    XyzzPoint r;
    r.x = m.squared() - s.doubled();
    r.y = m * (s - r.x) - w * y;
    r.zz = v;
    r.zzz = w;
    return r;
  }

  // dbl-2008-s-1 (a = 0): the affine doubling of (X, Y), its ZZ and ZZZ scaled by this one's.
  SH_HD XyzzPoint doubled() const {
    if (is_infinity()) return *this;
    XyzzPoint r = double_affine(x, y);
    r.zz = r.zz * zz;
    r.zzz = r.zzz * zzz;
    return r;
  }

  // this += (x2, y2), an affine point not at infinity (madd-2008-s).
  SH_HD void add_affine(const F& x2, const F& y2) {
    if (is_infinity()) {
      *this = from_affine(x2, y2);
      return;
    }
    const F u2 = x2 * zz;
    const F s2 = y2 * zzz;
    const F p = u2 - x;
    const F r = s2 - y;
    if (p.is_zero()) {
      // Same x: the same point (double it) or its negation (the sum is infinity).
      *this = r.is_zero() ? double_affine(x2, y2) : infinity();
      return;
    }
    const F pp = p.squared();
    const F ppp = p * pp;
    const F q = x * pp;
    const F x3 = r.squared() - ppp - q.doubled();
    y = r * (q - x3) - y * ppp;
    x = x3;
    zz = zz * pp;
    zzz = zzz * ppp;
  }

  // add-2008-s.
  SH_HD friend XyzzPoint operator+(const XyzzPoint& a, const XyzzPoint& b) {
    if (a.is_infinity()) return b;
    if (b.is_infinity()) return a;
    const F u1 = a.x * b.zz;
    const F u2 = b.x * a.zz;
    const F s1 = a.y * b.zzz;
    const F s2 = b.y * a.zzz;
    const F p = u2 - u1;
    const F r = s2 - s1;
    if (p.is_zero()) return r.is_zero() ? a.doubled() : infinity();
    const F pp = p.squared();
    const F ppp = p * pp;
    const F q = u1 * pp;
    XyzzPoint c;
    c.x = r.squared() - ppp - q.doubled();
    c.y = r * (q - c.x) - s1 * ppp;
    c.zz = a.zz * b.zz * pp;
    c.zzz = a.zzz * b.zzz * ppp;
    return c;
  }

  SH_HD XyzzPoint operator-() const {
    XyzzPoint r = *this;
    r.y = -y;
    return r;
  }

  // k·this for a small non-negative k, double-and-add from the top bit.
  SH_HD XyzzPoint times(std::uint32_t k) const {
    XyzzPoint result = infinity();
    for (int bit = 31; bit >= 0; --bit) {
      result = result.doubled();
      if ((k >> bit) & 1) result = result + *this;
    }
    return result;
  }

  // Jacobian with Z = ZZ·ZZZ: X = X·ZZ·ZZZ^2, Y = Y·ZZ^3·ZZZ^2.
  SH_HD JacobianPoint<F> to_jacobian() const {
    JacobianPoint<F> j;
    if (is_infinity()) {
      j.x = F::one();
      j.y = F::one();
      j.z = F::zero();
      return j;
    }
    const F zzz_squared = zzz.squared();
    const F zz_zzz_squared = zz * zzz_squared;
    j.z = zz * zzz;
    j.x = x * zz_zzz_squared;
    j.y = y * zz.squared() * zz_zzz_squared;
    return j;
  }
};

// An affine point as snarkjs and src/math store it: x then y, Montgomery form; the point at
// infinity is all zero bytes ((0, 0) is on neither curve's G1 or G2, as b ≠ 0, so the encoding is
// unambiguous).
template <class F>
struct AffinePoint {
  F x;
  F y;
  SH_HD bool is_infinity() const { return x.is_zero() && y.is_zero(); }
  // y^2 = x^3 + b, or the point at infinity (ec/curves.cuh gives each group's b).
  SH_HD bool is_on_curve(const F& b) const { return is_infinity() || y.squared() == x.squared() * x + b; }
};

// BLS12-381's affine G1 point: 96 bytes.
using G1Affine = AffinePoint<Fq>;

using G1Jacobian = JacobianPoint<Fq>;  // 144 bytes, as src/math's G1Projective
using G1Xyzz = XyzzPoint<Fq>;
static_assert(sizeof(G1Affine) == 96 && sizeof(G1Jacobian) == 144 && sizeof(G1Xyzz) == 192);

}  // namespace stagehand::cuda
