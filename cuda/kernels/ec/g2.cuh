// G2 of BLS12-381 on the device: Fq2 = Fq[u]/(u^2 + 1) and the twist y^2 = x^3 + 4(1 + u), in
// affine input form and XYZZ accumulators. Like field.cuh and curve.cuh this compiles for the
// host too, so that tests/gpu/field_host_test.cpp checks it against src/math without a GPU.
//
// Layout (src/groth16/encoding.hpp, src/math/fq2.hpp): an Fq2 is c0 then c1, each a 48-byte
// Montgomery Fq; an affine G2 point is x.c0‖x.c1‖y.c0‖y.c1, 192 bytes, with the point at infinity
// all zero bytes ((0, 0) is not on the curve since b ≠ 0, so the encoding is unambiguous).
//
// The XYZZ accumulator is curve.cuh's XyzzPoint over Fq2: its formulas use neither a nor b.
// BN254's Fq2 is Fq[u]/(u^2 + 1) too: Fq2Over<bn254::Fq> is its (ec/curves.cuh).
#pragma once

#include "ec/curve.cuh"
#include "ff/field.cuh"

// On the device the Fq2 multiplication and squaring are real calls (SH_HD_CALL, field.cuh), not
// inlined: a G2 addition inlined down to Fq words is ~30 unrolled CIOS multiplications, which
// took ptxas minutes per kernel and still spilled at 255 registers. A call costs a few moves next
// to three CIOS multiplications. Over FqCalled and FqF64Called, whose own products are calls, the
// Fq2 products are inlined instead (a call around three calls buys nothing).

namespace stagehand::cuda {

// Over any form of Fq (Fq2 over the integer products, Fq2F64 over FqF64's FP64 products, and
// Fq2Called, Fq2F64Called over their called forms); all share their bytes, as their bases do.
template <class B>
struct Fq2Over;
template <class B>
SH_HD_CALL Fq2Over<B> fq2_multiply(Fq2Over<B> a, Fq2Over<B> b);
template <class B>
SH_HD_CALL Fq2Over<B> fq2_square(Fq2Over<B> a);

template <class B>
struct Fq2Over {
  B c0;
  B c1;

  SH_HD static Fq2Over zero() { return Fq2Over{B::zero(), B::zero()}; }
  SH_HD static Fq2Over one() { return Fq2Over{B::one(), B::zero()}; }
  SH_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  SH_HD friend bool operator==(const Fq2Over& a, const Fq2Over& b) { return a.c0 == b.c0 && a.c1 == b.c1; }
  SH_HD friend bool operator!=(const Fq2Over& a, const Fq2Over& b) { return !(a == b); }

  SH_HD friend Fq2Over operator+(const Fq2Over& a, const Fq2Over& b) { return Fq2Over{a.c0 + b.c0, a.c1 + b.c1}; }
  SH_HD friend Fq2Over operator-(const Fq2Over& a, const Fq2Over& b) { return Fq2Over{a.c0 - b.c0, a.c1 - b.c1}; }
  SH_HD Fq2Over operator-() const { return Fq2Over{-c0, -c1}; }
  SH_HD Fq2Over doubled() const { return Fq2Over{c0.doubled(), c1.doubled()}; }

  SH_HD friend Fq2Over operator*(const Fq2Over& a, const Fq2Over& b) {
    if constexpr (B::Params::called_products)
      return karatsuba(a, b);
    else
      return fq2_multiply(a, b);
  }
  SH_HD Fq2Over squared() const {
    if constexpr (B::Params::called_products)
      return square_of(*this);
    else
      return fq2_square(*this);
  }
  // Karatsuba, as src/math: three Fq multiplications. The sums a0 + a1 are reduced (< q), which
  // is what the CIOS multiplication needs of its inputs.
  SH_HD static Fq2Over karatsuba(const Fq2Over& a, const Fq2Over& b) {
    const B real_product = a.c0 * b.c0;
    const B imaginary_product = a.c1 * b.c1;
    const B cross = (a.c0 + a.c1) * (b.c0 + b.c1);
    return Fq2Over{real_product - imaginary_product, cross - real_product - imaginary_product};
  }
  // (c0 + c1 u)^2 = (c0 + c1)(c0 - c1) + 2 c0 c1 u: two multiplications.
  SH_HD static Fq2Over square_of(const Fq2Over& a) {
    return Fq2Over{(a.c0 + a.c1) * (a.c0 - a.c1), (a.c0 * a.c1).doubled()};
  }
  SH_HD Fq2Over& operator*=(const Fq2Over& o) { return *this = *this * o; }
  SH_HD Fq2Over& operator+=(const Fq2Over& o) { return *this = *this + o; }
  SH_HD Fq2Over& operator-=(const Fq2Over& o) { return *this = *this - o; }

  SH_HD Fq2Over conjugate() const { return Fq2Over{c0, -c1}; }
  // 1/(c0 + c1 u) = (c0 - c1 u)/(c0^2 + c1^2); zero maps to zero (Fq's inverse does). Not for
  // hot loops: one Fermat inversion in Fq.
  SH_HD Fq2Over inverse() const {
    const B norm_inverse = (c0.squared() + c1.squared()).inverse();
    return Fq2Over{c0 * norm_inverse, -(c1 * norm_inverse)};
  }
};
using Fq2 = Fq2Over<Fq>;
using Fq2F64 = Fq2Over<FqF64>;
using Fq2Called = Fq2Over<FqCalled>;
using Fq2F64Called = Fq2Over<FqF64Called>;
static_assert(sizeof(Fq2) == 96 && sizeof(Fq2F64) == 96 && sizeof(Fq2Called) == 96 && sizeof(Fq2F64Called) == 96);

template <class B>
SH_HD_CALL Fq2Over<B> fq2_multiply(Fq2Over<B> a, Fq2Over<B> b) {
  return Fq2Over<B>::karatsuba(a, b);
}
template <class B>
SH_HD_CALL Fq2Over<B> fq2_square(Fq2Over<B> a) {
  return Fq2Over<B>::square_of(a);
}

// An affine G2 point in the 192-byte layout above.
using G2Affine = AffinePoint<Fq2>;
static_assert(sizeof(G2Affine) == 192);

using G2Xyzz = XyzzPoint<Fq2>;
static_assert(sizeof(G2Xyzz) == 384);

}  // namespace stagehand::cuda
