// G2 of BLS12-381 on the device: Fq2 = Fq[u]/(u^2 + 1) and the twist y^2 = x^3 + 4(1 + u), in
// affine input form and XYZZ accumulators. Like field.cuh and curve.cuh this compiles for the
// host too, so that tests/gpu/field_host_test.cpp checks it against src/math without a GPU.
//
// Layout (src/groth16/encoding.hpp, src/math/fq2.hpp): an Fq2 is c0 then c1, each a 48-byte
// Montgomery Fq; an affine G2 point is x.c0‖x.c1‖y.c0‖y.c1, 192 bytes, with the point at infinity
// all zero bytes ((0, 0) is not on the curve since b ≠ 0, so the encoding is unambiguous).
//
// The XYZZ formulas are curve.cuh's G1Xyzz ones (madd-2008-s, add-2008-s, dbl-2008-s-1,
// mdbl-2008-s-1): they use neither a (= 0 on both curves) nor b, so the same code serves any
// field. XyzzPoint<F> is that code written once over the field type; G1Xyzz stays as it is for
// msm.cu, and the host test checks XyzzPoint<Fq> against it as well as XyzzPoint<Fq2> against
// src/math's G2.
#pragma once

#include "curve.cuh"
#include "field.cuh"

// On the device the Fq2 multiplication and squaring are real calls, not inlined: a G2 addition
// inlined down to Fq words is ~30 unrolled CIOS multiplications, which took ptxas minutes per
// kernel and still spilled at 255 registers. A call costs a few moves next to three CIOS
// multiplications; by value, so that the operands travel in registers rather than through
// the stack. `inline` keeps the header's definitions one per program (ODR), noinline is
// the attribute. The host build inlines as usual.
#if defined(__CUDA_ARCH__)
#define SH_HD_CALL __host__ __device__ inline __noinline__
#elif defined(__CUDACC__)
#define SH_HD_CALL __host__ __device__ inline
#else
#define SH_HD_CALL inline
#endif

namespace stagehand::cuda {

struct Fq2;
SH_HD_CALL Fq2 fq2_multiply(Fq2 a, Fq2 b);
SH_HD_CALL Fq2 fq2_square(Fq2 a);

struct Fq2 {
  Fq c0;
  Fq c1;

  SH_HD static Fq2 zero() { return Fq2{Fq::zero(), Fq::zero()}; }
  SH_HD static Fq2 one() { return Fq2{Fq::one(), Fq::zero()}; }
  SH_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  SH_HD friend bool operator==(const Fq2& a, const Fq2& b) { return a.c0 == b.c0 && a.c1 == b.c1; }
  SH_HD friend bool operator!=(const Fq2& a, const Fq2& b) { return !(a == b); }

  SH_HD friend Fq2 operator+(const Fq2& a, const Fq2& b) { return Fq2{a.c0 + b.c0, a.c1 + b.c1}; }
  SH_HD friend Fq2 operator-(const Fq2& a, const Fq2& b) { return Fq2{a.c0 - b.c0, a.c1 - b.c1}; }
  SH_HD Fq2 operator-() const { return Fq2{-c0, -c1}; }
  SH_HD Fq2 doubled() const { return Fq2{c0.doubled(), c1.doubled()}; }

  SH_HD friend Fq2 operator*(const Fq2& a, const Fq2& b) { return fq2_multiply(a, b); }
  SH_HD Fq2 squared() const { return fq2_square(*this); }
  SH_HD Fq2& operator*=(const Fq2& o) { return *this = *this * o; }
  SH_HD Fq2& operator+=(const Fq2& o) { return *this = *this + o; }
  SH_HD Fq2& operator-=(const Fq2& o) { return *this = *this - o; }

  SH_HD Fq2 conjugate() const { return Fq2{c0, -c1}; }
  // 1/(c0 + c1 u) = (c0 - c1 u)/(c0^2 + c1^2); zero maps to zero (Fq's inverse does). Not for
  // hot loops: one Fermat inversion in Fq.
  SH_HD Fq2 inverse() const {
    const Fq norm_inverse = (c0.squared() + c1.squared()).inverse();
    return Fq2{c0 * norm_inverse, -(c1 * norm_inverse)};
  }
};
static_assert(sizeof(Fq2) == 96);

// Karatsuba, as src/math: three Fq multiplications. The sums a0 + a1 are reduced (< q), which is
// what the CIOS multiplication needs of its inputs.
SH_HD_CALL Fq2 fq2_multiply(Fq2 a, Fq2 b) {
  const Fq real_product = a.c0 * b.c0;
  const Fq imaginary_product = a.c1 * b.c1;
  const Fq cross = (a.c0 + a.c1) * (b.c0 + b.c1);
  return Fq2{real_product - imaginary_product, cross - real_product - imaginary_product};
}
// (c0 + c1 u)^2 = (c0 + c1)(c0 - c1) + 2 c0 c1 u: two multiplications.
SH_HD_CALL Fq2 fq2_square(Fq2 a) { return Fq2{(a.c0 + a.c1) * (a.c0 - a.c1), (a.c0 * a.c1).doubled()}; }

// An affine G2 point in the 192-byte layout above.
struct G2Affine {
  Fq2 x;
  Fq2 y;
  SH_HD bool is_infinity() const { return x.is_zero() && y.is_zero(); }
};
static_assert(sizeof(G2Affine) == 192);

// Jacobian (X/Z^2, Y/Z^3), Z = 0 at infinity, as src/math's ProjectivePoint.
template <class F>
struct JacobianPoint {
  F x;
  F y;
  F z;
};

// XYZZ (X/ZZ, Y/ZZZ) with ZZ^3 = ZZZ^2, ZZ = 0 at infinity. Every special case a sum meets
// (either input at infinity, P + P, P + (-P)) is handled. A point of all zero bytes has ZZ = 0
// and so is the point at infinity: zeroed memory is an empty accumulator.
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

  // dbl-2008-s-1 (a = 0).
  SH_HD XyzzPoint doubled() const {
    if (is_infinity()) return *this;
    const F u = y.doubled();
    const F v = u.squared();
    const F w = u * v;
    const F s = x * v;
    const F x_squared = x.squared();
    const F m = x_squared.doubled() + x_squared;
    XyzzPoint r;
    r.x = m.squared() - s.doubled();
    r.y = m * (s - r.x) - w * y;
    r.zz = v * zz;
    r.zzz = w * zzz;
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

using G2Xyzz = XyzzPoint<Fq2>;
static_assert(sizeof(G2Xyzz) == 384);

}  // namespace stagehand::cuda
