// G1 of BLS12-381 (y^2 = x^3 + 4 over Fq) for the MSM: affine input points and XYZZ buckets.
//
// XYZZ coordinates (X, Y, ZZ, ZZZ) stand for (X/ZZ, Y/ZZZ), with ZZ^3 = ZZZ^2; ZZ = 0 is the
// point at infinity. Why XYZZ: adding an affine point costs 8M + 2S against 7M + 4S in Jacobian
// coordinates, and the formulas (madd-2008-s, add-2008-s, dbl-2008-s-1, mdbl-2008-s-1 of the
// Explicit-Formulas Database) are short. Every special case an MSM meets (either input at
// infinity, P + P, P + (-P)) is handled. Like field.cuh this compiles for the host too.
#pragma once

#include "field.cuh"

namespace stagehand::cuda {

// An affine G1 point as snarkjs and src/math store it: x then y, Montgomery form, 96 bytes; the
// point at infinity is all zero bytes ((0, 0) is not on the curve, so the encoding is unambiguous).
struct G1Affine {
  Fq x;
  Fq y;
  SH_HD bool is_infinity() const { return x.is_zero() && y.is_zero(); }
};

// Jacobian (X, Y, Z) as src/math's G1Projective: (X/Z^2, Y/Z^3), Z = 0 at infinity. 144 bytes.
struct G1Jacobian {
  Fq x;
  Fq y;
  Fq z;
};

struct G1Xyzz {
  Fq x;
  Fq y;
  Fq zz;
  Fq zzz;

  SH_HD static G1Xyzz infinity() {
    G1Xyzz p;
    p.x = Fq::one();
    p.y = Fq::one();
    p.zz = Fq::zero();
    p.zzz = Fq::zero();
    return p;
  }
  SH_HD bool is_infinity() const { return zz.is_zero(); }

  SH_HD static G1Xyzz from_affine(const Fq& x, const Fq& y) {
    G1Xyzz p;
    p.x = x;
    p.y = y;
    p.zz = Fq::one();
    p.zzz = Fq::one();
    return p;
  }

  // 2·(x, y) for an affine point (mdbl-2008-s-1).
  SH_HD static G1Xyzz double_affine(const Fq& x, const Fq& y) {
    const Fq u = y.doubled();
    const Fq v = u.squared();
    const Fq w = u * v;
    const Fq s = x * v;
    const Fq x_squared = x.squared();
    const Fq m = x_squared.doubled() + x_squared;
    G1Xyzz r;
    r.x = m.squared() - s.doubled();
    r.y = m * (s - r.x) - w * y;
    r.zz = v;
    r.zzz = w;
    return r;
  }

  // dbl-2008-s-1 (a = 0).
  SH_HD G1Xyzz doubled() const {
    if (is_infinity()) return *this;
    const Fq u = y.doubled();
    const Fq v = u.squared();
    const Fq w = u * v;
    const Fq s = x * v;
    const Fq x_squared = x.squared();
    const Fq m = x_squared.doubled() + x_squared;
    G1Xyzz r;
    r.x = m.squared() - s.doubled();
    r.y = m * (s - r.x) - w * y;
    r.zz = v * zz;
    r.zzz = w * zzz;
    return r;
  }

  // this += (x2, y2), an affine point not at infinity (madd-2008-s).
  SH_HD void add_affine(const Fq& x2, const Fq& y2) {
    if (is_infinity()) {
      *this = from_affine(x2, y2);
      return;
    }
    const Fq u2 = x2 * zz;
    const Fq s2 = y2 * zzz;
    const Fq p = u2 - x;
    const Fq r = s2 - y;
    if (p.is_zero()) {
      *this = r.is_zero() ? double_affine(x2, y2) : infinity();
      return;
    }
    const Fq pp = p.squared();
    const Fq ppp = p * pp;
    const Fq q = x * pp;
    const Fq x3 = r.squared() - ppp - q.doubled();
    y = r * (q - x3) - y * ppp;
    x = x3;
    zz = zz * pp;
    zzz = zzz * ppp;
  }

  // add-2008-s.
  SH_HD friend G1Xyzz operator+(const G1Xyzz& a, const G1Xyzz& b) {
    if (a.is_infinity()) return b;
    if (b.is_infinity()) return a;
    const Fq u1 = a.x * b.zz;
    const Fq u2 = b.x * a.zz;
    const Fq s1 = a.y * b.zzz;
    const Fq s2 = b.y * a.zzz;
    const Fq p = u2 - u1;
    const Fq r = s2 - s1;
    if (p.is_zero()) return r.is_zero() ? a.doubled() : infinity();
    const Fq pp = p.squared();
    const Fq ppp = p * pp;
    const Fq q = u1 * pp;
    G1Xyzz c;
    c.x = r.squared() - ppp - q.doubled();
    c.y = r * (q - c.x) - s1 * ppp;
    c.zz = a.zz * b.zz * pp;
    c.zzz = a.zzz * b.zzz * ppp;
    return c;
  }

  SH_HD G1Xyzz operator-() const {
    G1Xyzz r = *this;
    r.y = -y;
    return r;
  }

  // k·this for a small non-negative k, double-and-add from the top bit.
  SH_HD G1Xyzz times(std::uint32_t k) const {
    G1Xyzz result = infinity();
    for (int bit = 31; bit >= 0; --bit) {
      result = result.doubled();
      if ((k >> bit) & 1) result = result + *this;
    }
    return result;
  }

  // Jacobian with Z = ZZ·ZZZ: X = X·ZZ·ZZZ^2, Y = Y·ZZ^3·ZZZ^2.
  SH_HD G1Jacobian to_jacobian() const {
    G1Jacobian j;
    if (is_infinity()) {
      j.x = Fq::one();
      j.y = Fq::one();
      j.z = Fq::zero();
      return j;
    }
    const Fq zzz_squared = zzz.squared();
    const Fq zz_zzz_squared = zz * zzz_squared;
    j.z = zz * zzz;
    j.x = x * zz_zzz_squared;
    j.y = y * zz.squared() * zz_zzz_squared;
    return j;
  }
};

}  // namespace stagehand::cuda
