// Fq's Montgomery multiplication with its 48x48-bit products made on the FP64 pipe (included by
// field.cuh; used where a field's parameters set f64_products).
//
// Why: the integer multiplication is bound by the FMA-heavy pipe (288 IMAD.WIDE per Fq product,
// two issue cycles each; bench/RESULTS.md "Field multiplication"), while the SM's FP64 pipe sits
// idle (measured on the H200: 51.5 DFMA per clock per SM against 30.6 IMAD.WIDE). A double holds a 53-bit integer exactly,
// so with 48-bit limbs (8 of them make Fq's R = 2^384, the same Montgomery form as the 12
// words, re-cut) one 48x48 product takes two FMAs and one add in place of 2.25 IMAD.WIDE, and a
// row of CIOS has 8 products instead of 12: 128 products in all against 288.
//
// The split of p = a·b (a, b < 2^48, p < 2^96) into p = hi·2^48 + lo:
//   h = fma_rz(a, b, 2^100)          in [2^100, 2^101), whose ulp is 2^48: h = 2^100 + hi·2^48
//   s = (2^100 + 2^52) - h           = 2^52 - hi·2^48, representable, so exact
//   l = fma(a, b, s)                 = 2^52 + lo, representable, so exact
// The bit patterns of h and l are then 0x463·2^52 + hi and 0x433·2^52 + lo: the integers come
// out of the doubles without a conversion. The patterns are summed as they are into 64-bit
// column accumulators; the biases (multiples of 2^52, so invisible to the low 48 bits that the
// Montgomery quotient reads) are known for every column at every step and taken off where a
// column's high bits are used: its carry, and the result.
//
// The host computes the same split with 128-bit integers, so the integer side (columns, biases,
// quotient, carries) is checked without a GPU (tests/gpu/field_host_test.cpp); the FP64 side is
// checked on the device against the integer multiplication (bench/field_throughput.cu) and by
// the MSM checks (tests/gpu/kernel_checks.cpp), whose bucket accumulation uses it.
#pragma once

#include <cstdint>
#include <utility>

namespace stagehand::cuda::f64 {

constexpr int kLimbs = 8;  // of 48 bits: 384
constexpr std::uint64_t kLimbMask = (std::uint64_t{1} << 48) - 1;
constexpr std::uint64_t kHighBias = 0x4630000000000000;  // the bits of 2^100
constexpr std::uint64_t kLowBias = 0x4330000000000000;   // the bits of 2^52

// Limb k (48 bits) of a value held as 12 little-endian 32-bit words; three words make two limbs
// (the even limb is words 0 and the low half of 1 of its three, the odd one the rest).
SH_HD constexpr std::uint64_t limb_of(std::uint32_t w0, std::uint32_t w1, std::uint32_t w2, bool odd) {
  return odd ? (std::uint64_t{w1 >> 16} | (std::uint64_t{w2} << 16)) : (std::uint64_t{w0} | (std::uint64_t{w1 & 0xffffu} << 32));
}
SH_HD std::uint64_t limb(const std::uint32_t (&w)[12], int k) {
  const int g = k / 2 * 3;
  return limb_of(w[g], w[g + 1], w[g + 2], k % 2 != 0);
}
template <class P>
SH_HD constexpr std::uint64_t modulus_limb(int k) {
  const int g = k / 2 * 3;
  return limb_of(P::modulus(g), P::modulus(g + 1), P::modulus(g + 2), k % 2 != 0);
}

// The biases each column holds: the split patterns it received since it became a column, as
// montgomery_core below adds them (per row, the product half then the reduction half; a square's
// row r adds products only from column r on). row_carry[i] is column 0's bias when row i takes
// its carry; final[j] is column j's at the end.
struct ColumnBiases {
  std::uint64_t row_carry[kLimbs] = {};
  std::uint64_t final[kLimbs] = {};
};
constexpr ColumnBiases column_biases(bool square) {
  ColumnBiases result;
  std::uint64_t bias[kLimbs + 1] = {};
  for (int row = 0; row < kLimbs; ++row) {
    for (int half = 0; half < 2; ++half) {
      for (int j = half == 0 && square ? row : 0; j < kLimbs; ++j) {
        bias[j] += kLowBias;
        bias[j + 1] += kHighBias;
      }
    }
    result.row_carry[row] = bias[0];
    for (int j = 0; j < kLimbs; ++j) bias[j] = bias[j + 1];
    bias[kLimbs] = 0;
  }
  for (int j = 0; j < kLimbs; ++j) result.final[j] = bias[j];
  return result;
}

// -p^-1 mod 2^48 (p odd), by Newton's iteration on 64-bit words.
constexpr std::uint64_t negated_inverse(std::uint64_t p0) {
  std::uint64_t inverse = 1;
  for (int i = 0; i < 6; ++i) inverse *= 2 - p0 * inverse;
  return (0 - inverse) & kLimbMask;
}

// An integer below 2^48 as a double: the bits 0x433·2^52 + x are the double 2^52 + x.
SH_HD double to_double(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(__hiloint2double(0x43300000 | static_cast<int>(x >> 32), static_cast<int>(x)), 0x1p52);
#else
  return static_cast<double>(x);
#endif
}

// a·b = hi·2^48 + lo for integers a, b < 2^48 held as doubles; returns the bit patterns
// kHighBias + hi and kLowBias + lo (see the file comment).
SH_HD void split_product(double a, double b, std::uint64_t& high, std::uint64_t& low) {
#if defined(__CUDA_ARCH__)
  const double h = __fma_rz(a, b, 0x1p100);
  const double s = __dsub_rn(0x1p100 + 0x1p52, h);
  const double l = __fma_rn(a, b, s);
  high = static_cast<std::uint64_t>(__double_as_longlong(h));
  low = static_cast<std::uint64_t>(__double_as_longlong(l));
#else
  __extension__ using Wide = unsigned __int128;
  const Wide p = static_cast<Wide>(static_cast<std::uint64_t>(a)) * static_cast<std::uint64_t>(b);
  high = kHighBias + static_cast<std::uint64_t>(p >> 48);
  low = kLowBias + (static_cast<std::uint64_t>(p) & kLimbMask);
#endif
}

// t[first..8] += Σ_{j >= first} x_j·y_j·2^(48j) with y_j = y for j = first and y2 after it
// (x·y for first = 0 and y2 = y; a square's row, below, doubles its cross products). Each
// product's halves are added as soon as it is split (column j takes product j's low half with
// product j-1's high half in one three-input add), so that few products are live at once.
template <int First>
SH_HD void add_row(std::uint64_t (&t)[kLimbs + 1], const double (&x)[kLimbs], double y, double y2) {
  std::uint64_t high, low;
  split_product(x[First], y, high, low);
  t[First] += low;
#pragma unroll
  for (int j = First + 1; j < kLimbs; ++j) {
    const std::uint64_t previous_high = high;
    split_product(x[j], y2, high, low);
    t[j] += low + previous_high;
  }
  t[kLimbs] += high;
}

// r = a·b·2^-384 mod p (or a^2·2^-384 when Square; b is then not read), below 2p (field.cuh's
// reduce_once finishes it), for a, b < p given as 12 words. CIOS over 8 rows of 48-bit limbs.
// A square's row r adds a_r^2 and the doubled cross products 2·a_j·a_r for j > r only (the
// products with j < r were doubled into earlier rows, at the same absolute columns): 36
// products instead of 64 for the product half; a doubled product is below 2^97, which the
// split still takes exactly. Column bound: a column receives at most four products' halves
// (each below 2^49) per row, plus carries below 2^16, over at most nine rows, so its value stays
// below 2^55 and its carry below 2^16; the result (ab + Mp)/2^384 < 2p < 2^382.
// Row Row of montgomery_core: t += a·b_Row (or a square's share of row Row), then the quotient's
// multiple of p, then the shift by one column. A template per row, so that a square's rows
// (which start at column Row) unroll with constant bounds.
template <class P, bool Square, int Row>
SH_HD void montgomery_row(std::uint64_t (&t)[kLimbs + 1], const double (&x)[kLimbs], const double (&modulus)[kLimbs],
                          const std::uint32_t (&b)[12]) {
  constexpr ColumnBiases biases = column_biases(Square);
  if constexpr (Square) {
    // Doubling is exact in binary floating point.
    add_row<Row>(t, x, x[Row], x[Row] + x[Row]);
  } else {
    const double y = to_double(limb(b, Row));
    add_row<0>(t, x, y, y);
  }
  // The quotient reads the low 48 bits, where the biases are zero.
  constexpr std::uint64_t inverse = negated_inverse(modulus_limb<P>(0));
  const std::uint64_t m = (t[0] * inverse) & kLimbMask;
  const double md = to_double(m);
  add_row<0>(t, modulus, md, md);
  // Column 0 is now 0 mod 2^48: its carry, less its bias's, moves up with the columns.
  const std::uint64_t carry = ((t[0] >> 48) - (biases.row_carry[Row] >> 48)) & 0xffffu;
#pragma unroll
  for (int j = 0; j < kLimbs; ++j) t[j] = t[j + 1];
  t[kLimbs] = 0;
  t[0] += carry;
}

template <class P, bool Square, int... Rows>
SH_HD void montgomery_rows(std::uint64_t (&t)[kLimbs + 1], const double (&x)[kLimbs], const double (&modulus)[kLimbs],
                           const std::uint32_t (&b)[12], std::integer_sequence<int, Rows...>) {
  (montgomery_row<P, Square, Rows>(t, x, modulus, b), ...);
}

// r = a·b·2^-384 mod p (or a^2·2^-384 when Square; b is then not read), below 2p (field.cuh's
// reduce_once finishes it), for a, b < p given as 12 words. CIOS over 8 rows of 48-bit limbs.
// A square's row r adds a_r^2 and the doubled cross products 2·a_j·a_r for j > r only (the
// products with j < r were doubled into earlier rows, at the same absolute columns): 36
// products instead of 64 for the product half; a doubled product is below 2^97, which the
// split still takes exactly. Column bound: a column receives at most four products' halves
// (each below 2^49) per row, plus carries below 2^16, over at most nine rows, so its value stays
// below 2^55 and its carry below 2^16; the result (ab + Mp)/2^384 < 2p < 2^382.
template <class P, bool Square>
SH_HD void montgomery_core(const std::uint32_t (&a)[12], const std::uint32_t (&b)[12], std::uint32_t (&r)[12]) {
  constexpr ColumnBiases biases = column_biases(Square);
  double modulus[kLimbs];
#pragma unroll
  for (int j = 0; j < kLimbs; ++j) modulus[j] = static_cast<double>(modulus_limb<P>(j));
  double x[kLimbs];
#pragma unroll
  for (int j = 0; j < kLimbs; ++j) x[j] = to_double(limb(a, j));
  std::uint64_t t[kLimbs + 1] = {};
  montgomery_rows<P, Square>(t, x, modulus, b, std::make_integer_sequence<int, kLimbs>{});
  std::uint64_t v[kLimbs];
#pragma unroll
  for (int j = 0; j < kLimbs; ++j) v[j] = t[j] - biases.final[j];
#pragma unroll
  for (int j = 0; j + 1 < kLimbs; ++j) {
    v[j + 1] += v[j] >> 48;
    v[j] &= kLimbMask;
  }
#pragma unroll
  for (int k = 0; k < kLimbs / 2; ++k) {
    r[3 * k] = static_cast<std::uint32_t>(v[2 * k]);
    r[3 * k + 1] = static_cast<std::uint32_t>(v[2 * k] >> 32) | static_cast<std::uint32_t>(v[2 * k + 1] << 16);
    r[3 * k + 2] = static_cast<std::uint32_t>(v[2 * k + 1] >> 16);
  }
}

template <class P>
SH_HD void montgomery_multiply(const std::uint32_t (&a)[12], const std::uint32_t (&b)[12], std::uint32_t (&r)[12]) {
  montgomery_core<P, false>(a, b, r);
}
template <class P>
SH_HD void montgomery_square(const std::uint32_t (&a)[12], std::uint32_t (&r)[12]) {
  montgomery_core<P, true>(a, a, r);
}

}  // namespace stagehand::cuda::f64
