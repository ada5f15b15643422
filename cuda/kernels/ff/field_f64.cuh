// Montgomery multiplication with its limb products made on the FP64 pipe (included by field.cuh;
// used where a field's parameters set f64_products, in the limbs their f64::Layout gives).
//
// Why: the integer multiplication is bound by the FMA-heavy pipe (288 IMAD.WIDE per Fq product,
// two issue cycles each), while the SM's FP64 pipe sits idle and issues DFMAs at a higher rate than
// the integer pipe issues IMAD.WIDE (measured on the H200: bench/RESULTS.md, "Host and driver costs
// on the H200", and bench/journal/2026-11-30.md). A double holds a 53-bit integer exactly,
// so with 48-bit limbs (8 of them make Fq's R = 2^384, the same Montgomery form as the 12
// words, re-cut) one 48x48 product takes two FMAs and one add in place of 2.25 IMAD.WIDE, and a
// row of CIOS has 8 products instead of 12: 128 products in all against 288.
//
// The split of p = a·b (a, b < 2^48, p < 2^96) into p = hi·2^48 + lo:
//   h = fma_rz(a, b, 2^100)          in [2^100, 2^101), whose ulp is 2^48: h = 2^100 + hi·2^48
//   s = (2^100 + 2^52) - h           = 2^52 - hi·2^48, representable, so exact
//   l = fma(a, b, s)                 = 2^52 + lo, representable, so exact
// The bit patterns of h and l are then 0x463·2^52 + hi and 0x433·2^52 + lo: the integers come
// out of the doubles without a conversion. For B-bit limbs the offset is 2^(52+B) (Fr's 52-bit
// limbs: 2^104, pattern 0x467·2^52 + hi); B <= 52 keeps hi and lo below 2^52.
//
// Fr: 5 limbs of 52 bits make 50 products per multiplication against the integer form's 128
// IMAD.WIDE, and 100 column additions against its 288 carry-chain additions. The last row's
// quotient has 48 bits, so that R = 2^256: the result then starts at bit 48 of its columns. The patterns are summed as they are into 64-bit
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

constexpr std::uint64_t kLowBias = 0x4330000000000000;  // the bits of 2^52
constexpr int kMaxLimbs = 8;

SH_HD constexpr std::uint64_t low_mask(int bits) { return (std::uint64_t{1} << bits) - 1; }
// The bits of the double 2^(52 + bits): the high half's offset (see the file comment).
SH_HD constexpr std::uint64_t high_bias(int bits) { return static_cast<std::uint64_t>(0x3ff + 52 + bits) << 52; }

// Limb k (Bits bits) of a value held as little-endian 32-bit words.
template <int Bits, int Words>
SH_HD constexpr std::uint64_t limb(const std::uint32_t (&w)[Words], int k) {
  const int start = k * Bits;
  const int i = start / 32, offset = start % 32;
  std::uint64_t bits = std::uint64_t{w[i]} >> offset;
  if (i + 1 < Words) bits |= std::uint64_t{w[i + 1]} << (32 - offset);
  if (offset + Bits > 64 && i + 2 < Words) bits |= std::uint64_t{w[i + 2]} << (64 - offset);
  return bits & low_mask(Bits);
}
template <class P>
struct ModulusWords {
  std::uint32_t w[P::words] = {};
  constexpr ModulusWords() {
    for (int i = 0; i < P::words; ++i) w[i] = P::modulus(i);
  }
};
template <class P>
SH_HD constexpr std::uint64_t modulus_limb(int k) {
  return limb<P::F64::limb_bits>(ModulusWords<P>{}.w, k);
}

// Whether row `row` of layout L ends with the shift by one column (all but a last row whose
// quotient is narrower than a limb).
template <class L>
constexpr bool shifts(int row) {
  return row + 1 < L::limbs || L::last_shift == L::limb_bits;
}

// The biases each column holds: the split patterns it received since it became a column, as
// montgomery_core below adds them (per row, the product half then the reduction half; a square's
// row r adds products only from column r on). row_carry[i] is column 0's bias when row i takes
// its carry; final[j] is column j's at the end.
struct ColumnBiases {
  std::uint64_t row_carry[kMaxLimbs] = {};
  std::uint64_t final[kMaxLimbs + 1] = {};
};
template <class L>
constexpr ColumnBiases column_biases(bool square) {
  ColumnBiases result;
  std::uint64_t bias[kMaxLimbs + 1] = {};
  for (int row = 0; row < L::limbs; ++row) {
    for (int half = 0; half < 2; ++half) {
      for (int j = half == 0 && square ? row : 0; j < L::limbs; ++j) {
        bias[j] += kLowBias;
        bias[j + 1] += high_bias(L::limb_bits);
      }
    }
    result.row_carry[row] = bias[0];
    if (shifts<L>(row)) {
      for (int j = 0; j < L::limbs; ++j) bias[j] = bias[j + 1];
      bias[L::limbs] = 0;
    }
  }
  for (int j = 0; j <= L::limbs; ++j) result.final[j] = bias[j];
  return result;
}

// -p^-1 mod 2^bits (p odd), by Newton's iteration on 64-bit words.
constexpr std::uint64_t negated_inverse(std::uint64_t p0, int bits) {
  std::uint64_t inverse = 1;
  for (int i = 0; i < 6; ++i) inverse *= 2 - p0 * inverse;
  return (0 - inverse) & low_mask(bits);
}

// An integer below 2^52 as a double: the bits 0x433·2^52 + x are the double 2^52 + x.
SH_HD double to_double(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(__hiloint2double(0x43300000 | static_cast<int>(x >> 32), static_cast<int>(x)), 0x1p52);
#else
  return static_cast<double>(x);
#endif
}

// a·b = hi·2^Bits + lo for integers a, b < 2^Bits held as doubles; returns the bit patterns
// high_bias(Bits) + hi and kLowBias + lo (see the file comment).
template <int Bits>
SH_HD void split_product(double a, double b, std::uint64_t& high, std::uint64_t& low) {
#if defined(__CUDA_ARCH__)
  constexpr double offset = static_cast<double>(std::uint64_t{1} << (Bits - 4)) * 0x1p56;  // 2^(52+Bits)
  const double h = __fma_rz(a, b, offset);
  const double s = __dsub_rn(offset + 0x1p52, h);
  const double l = __fma_rn(a, b, s);
  high = static_cast<std::uint64_t>(__double_as_longlong(h));
  low = static_cast<std::uint64_t>(__double_as_longlong(l));
#else
  __extension__ using Wide = unsigned __int128;
  const Wide p = static_cast<Wide>(static_cast<std::uint64_t>(a)) * static_cast<std::uint64_t>(b);
  high = high_bias(Bits) + static_cast<std::uint64_t>(p >> Bits);
  low = kLowBias + (static_cast<std::uint64_t>(p) & low_mask(Bits));
#endif
}

// t[first..L] += Σ_{j >= first} x_j·y_j·2^(Bits·j) with y_j = y for j = first and y2 after it
// (x·y for first = 0 and y2 = y; a square's row, below, doubles its cross products). Each
// product's halves are added as soon as it is split (column j takes product j's low half with
// product j-1's high half in one three-input add), so that few products are live at once.
template <class L, int First>
SH_HD void add_row(std::uint64_t (&t)[L::limbs + 1], const double (&x)[L::limbs], double y, double y2) {
  std::uint64_t high, low;
  split_product<L::limb_bits>(x[First], y, high, low);
  t[First] += low;
#pragma unroll
  for (int j = First + 1; j < L::limbs; ++j) {
    const std::uint64_t previous_high = high;
    split_product<L::limb_bits>(x[j], y2, high, low);
    t[j] += low + previous_high;
  }
  t[L::limbs] += high;
}

// A square's doubled cross products must stay below 2^(52+Bits) for the split: 48-bit limbs
// leave room, 52-bit ones do not (Fr squares as a product).
template <class L>
constexpr bool kSquareRows = L::limb_bits + 1 <= 52;

// The second factor as the rows read it, a limb at a time: cut from its words as each row needs
// it, or held as doubles already (a factor used many times, as the NTT's twiddles: see
// factor_limbs).
template <class P>
struct WordFactor {
  const std::uint32_t (&w)[P::words];
  template <int Row>
  SH_HD double limb_value() const {
    return to_double(limb<P::F64::limb_bits>(w, Row));
  }
};
template <class P>
struct LimbFactor {
  const double (&d)[P::F64::limbs];
  template <int Row>
  SH_HD double limb_value() const {
    return d[Row];
  }
};
template <class P>
SH_HD void factor_limbs(const std::uint32_t (&w)[P::words], double (&d)[P::F64::limbs]) {
#pragma unroll
  for (int j = 0; j < P::F64::limbs; ++j) d[j] = to_double(limb<P::F64::limb_bits>(w, j));
}

// Row Row of montgomery_core: t += a·b_Row (or a square's share of row Row), then the quotient's
// multiple of p, then the shift by one column (not after a narrower last quotient). A template
// per row, so that a square's rows (which start at column Row) unroll with constant bounds.
template <class P, bool Square, int Row, class Factor>
SH_HD void montgomery_row(std::uint64_t (&t)[P::F64::limbs + 1], const double (&x)[P::F64::limbs],
                          const double (&modulus)[P::F64::limbs], const Factor& b) {
  using L = typename P::F64;
  constexpr ColumnBiases biases = column_biases<L>(Square);
  if constexpr (Square) {
    // Doubling is exact in binary floating point.
    add_row<L, Row>(t, x, x[Row], x[Row] + x[Row]);
  } else {
    const double y = b.template limb_value<Row>();
    add_row<L, 0>(t, x, y, y);
  }
  // The quotient reads the low bits, where the biases are zero.
  constexpr bool shift = shifts<L>(Row);
  constexpr int quotient_bits = shift ? L::limb_bits : L::last_shift;
  constexpr std::uint64_t inverse = negated_inverse(modulus_limb<P>(0), quotient_bits);
  std::uint64_t m;
  if constexpr (inverse == low_mask(quotient_bits) - (std::uint64_t{1} << 32)) {
    // Fr (r = 1 - 2^32 mod 2^64): t·(2^bits - 1 - 2^32) = -(t + t·2^32), two additions in place of a
    // 64-bit multiplication.
    m = (0 - t[0] - (t[0] << 32)) & low_mask(quotient_bits);
  } else {
    m = (t[0] * inverse) & low_mask(quotient_bits);
  }
  const double md = to_double(m);
  add_row<L, 0>(t, modulus, md, md);
  if constexpr (shift) {
    // Column 0 is now 0 mod 2^Bits: its carry, less its bias's, moves up with the columns.
    constexpr int bits = L::limb_bits;
    const std::uint64_t carry = ((t[0] >> bits) - (biases.row_carry[Row] >> bits)) & low_mask(64 - bits);
#pragma unroll
    for (int j = 0; j < L::limbs; ++j) t[j] = t[j + 1];
    t[L::limbs] = 0;
    t[0] += carry;
  }
}

template <class P, bool Square, class Factor, int... Rows>
SH_HD void montgomery_rows(std::uint64_t (&t)[P::F64::limbs + 1], const double (&x)[P::F64::limbs],
                           const double (&modulus)[P::F64::limbs], const Factor& b,
                           std::integer_sequence<int, Rows...>) {
  (montgomery_row<P, Square, Rows>(t, x, modulus, b), ...);
}

// r = a·b·R^-1 mod p (or a^2·R^-1 when Square; b is then not read), below 2p (field.cuh's
// reduce_once finishes it), for a, b < p given as words. CIOS over rows of limbs.
// A square's row r adds a_r^2 and the doubled cross products 2·a_j·a_r for j > r only (the
// products with j < r were doubled into earlier rows, at the same absolute columns): 36
// products instead of 64 for Fq's product half.
// Column bound: a column receives at most four products' halves (each below 2^Bits·2) per row,
// plus carries, over at most Limbs + 1 rows: below 2^55 for Fq, 2^57 for Fr, so its carry fits
// the 64 - Bits bits it is masked to; the result (ab + Mp)/R < 2p.
// With a narrower last quotient (Fr) the last row does not shift: the result is the columns'
// value from bit LastShift on.
template <class P, bool Square, class Factor>
SH_HD void montgomery_core(const std::uint32_t (&a)[P::words], const Factor& b, std::uint32_t (&r)[P::words]) {
  using L = typename P::F64;
  constexpr int bits = L::limb_bits;
  constexpr ColumnBiases biases = column_biases<L>(Square);
  double modulus[L::limbs];
#pragma unroll
  for (int j = 0; j < L::limbs; ++j) modulus[j] = static_cast<double>(modulus_limb<P>(j));
  double x[L::limbs];
#pragma unroll
  for (int j = 0; j < L::limbs; ++j) x[j] = to_double(limb<bits>(a, j));
  std::uint64_t t[L::limbs + 1] = {};
  montgomery_rows<P, Square>(t, x, modulus, b, std::make_integer_sequence<int, L::limbs>{});
  constexpr bool shifted = shifts<L>(L::limbs - 1);
  constexpr int columns = shifted ? L::limbs : L::limbs + 1;
  constexpr int first_bit = shifted ? 0 : L::last_shift;
  std::uint64_t v[columns];
#pragma unroll
  for (int j = 0; j < columns; ++j) v[j] = t[j] - biases.final[j];
#pragma unroll
  for (int j = 0; j + 1 < columns; ++j) {
    v[j + 1] += v[j] >> bits;
    v[j] &= low_mask(bits);
  }
#pragma unroll
  for (int i = 0; i < P::words; ++i) {
    const int start = first_bit + 32 * i;
    const int j = start / bits, offset = start % bits;
    std::uint64_t word = v[j] >> offset;
    if (offset + 32 > bits && j + 1 < columns) word |= v[j + 1] << (bits - offset);
    r[i] = static_cast<std::uint32_t>(word);
  }
}

template <class P>
SH_HD void montgomery_multiply(const std::uint32_t (&a)[P::words], const std::uint32_t (&b)[P::words],
                               std::uint32_t (&r)[P::words]) {
  montgomery_core<P, false>(a, WordFactor<P>{b}, r);
}
// The same with b's limbs given as doubles (factor_limbs).
template <class P>
SH_HD void montgomery_multiply_limbs(const std::uint32_t (&a)[P::words], const double (&b)[P::F64::limbs],
                                     std::uint32_t (&r)[P::words]) {
  montgomery_core<P, false>(a, LimbFactor<P>{b}, r);
}
template <class P>
SH_HD void montgomery_square(const std::uint32_t (&a)[P::words], std::uint32_t (&r)[P::words]) {
  montgomery_core<P, kSquareRows<typename P::F64>>(a, WordFactor<P>{a}, r);
}

}  // namespace stagehand::cuda::f64
