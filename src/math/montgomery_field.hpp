// A prime field in Montgomery form with 64-bit limbs, shared by both curves' Fr (4 limbs) and Fq (6 limbs for
// BLS12-381, 4 for BN254).
//
// An element x is stored as x·R mod p with R = 2^(64·limb_count). Only the modulus comes from
// the parameters: R mod p, R^2 mod p and -p^-1 mod 2^64 are derived from it at compile time, so
// no second hand-copied constant can disagree with the modulus.
//
// Nothing here is constant-time: this is the reference and test path, not a signer.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "math/limbs.hpp"
#include "math/montgomery_assembly.hpp"

// GCC's unroll hint for the host loops below. nvcc's front end does not know GCC's pragma and
// warns about it, so the CUDA sources that include this header compile the loops without the hint.
#if defined(__CUDACC__)
#define STAGEHAND_GCC_UNROLL_8
#else
#define STAGEHAND_GCC_UNROLL_8 _Pragma("GCC unroll 8")
#endif

namespace stagehand::math {

namespace detail {

template <std::size_t N>
struct MontgomeryConstants {
  Limbs<N> r_mod_modulus{};                    // R mod p: the Montgomery form of 1
  Limbs<N> r_squared_mod_modulus{};            // R^2 mod p: converts canonical values into Montgomery form
  std::uint64_t negative_modulus_inverse = 0;  // -p^-1 mod 2^64
};

// 2·value mod modulus for value < modulus. The modulus leaves the top bit free (checked by the
// field), so the doubled value still fits in N limbs.
template <std::size_t N>
constexpr Limbs<N> double_modulo(Limbs<N> value, const Limbs<N>& modulus) {
  add_in_place(value, value);
  if (greater_or_equal(value, modulus)) subtract_in_place(value, modulus);
  return value;
}

template <std::size_t N>
constexpr MontgomeryConstants<N> derive_montgomery_constants(const Limbs<N>& modulus) {
  MontgomeryConstants<N> constants;
  // Newton's iteration doubles the number of correct low bits of the inverse each step; the
  // modulus is odd, so starting from 1 (correct to one bit) six steps give all 64 bits.
  std::uint64_t inverse = 1;
  for (int step = 0; step < 6; ++step) inverse *= 2 - modulus[0] * inverse;
  constants.negative_modulus_inverse = ~inverse + 1;

  Limbs<N> power{};
  power[0] = 1;
  for (std::size_t bit = 0; bit < 64 * N; ++bit) power = double_modulo(power, modulus);
  constants.r_mod_modulus = power;
  for (std::size_t bit = 0; bit < 64 * N; ++bit) power = double_modulo(power, modulus);
  constants.r_squared_mod_modulus = power;
  return constants;
}

}  // namespace detail

// Parameters must provide `static constexpr std::size_t limb_count` and
// `static constexpr Limbs<limb_count> modulus` (little-endian limbs of an odd prime).
template <class Parameters>
class MontgomeryField {
 public:
  static constexpr std::size_t limb_count = Parameters::limb_count;
  static constexpr std::size_t byte_count = 8 * limb_count;
  using LimbArray = Limbs<limb_count>;
  using ByteArray = std::array<std::uint8_t, byte_count>;

  static constexpr LimbArray modulus = Parameters::modulus;
  static constexpr detail::MontgomeryConstants<limb_count> montgomery_constants =
      detail::derive_montgomery_constants(modulus);
  static constexpr std::size_t modulus_bit_count = detail::bit_length(modulus);

  // The multiplication below skips the final carry word of textbook CIOS; that is only sound
  // when the top limb of the modulus leaves room (gnark-crypto's "no-carry" condition).
  static_assert(modulus[limb_count - 1] < 0x7fffffffffffffffULL,
                "the no-carry Montgomery multiplication needs a spare top bit in the modulus");
  static_assert((modulus[0] & 1) == 1, "the modulus must be odd");

  constexpr MontgomeryField() = default;

  static constexpr MontgomeryField zero() { return MontgomeryField{}; }
  static constexpr MontgomeryField one() { return from_raw(montgomery_constants.r_mod_modulus); }

  static constexpr MontgomeryField from_uint64(std::uint64_t value) {
    LimbArray limbs{};
    limbs[0] = value;
    // Values below 2^64 are below the modulus of every field here, but reduce anyway so the
    // template stays correct for any modulus.
    while (detail::greater_or_equal(limbs, modulus)) detail::subtract_in_place(limbs, modulus);
    return from_raw(montgomery_multiply(limbs, montgomery_constants.r_squared_mod_modulus));
  }

  // Canonical (standard-form) limbs; values at or above the modulus are rejected.
  static constexpr std::optional<MontgomeryField> from_canonical_limbs(const LimbArray& limbs) {
    if (detail::greater_or_equal(limbs, modulus)) return std::nullopt;
    return from_raw(montgomery_multiply(limbs, montgomery_constants.r_squared_mod_modulus));
  }

  // Montgomery limbs, value·R mod p, as snarkjs stores Fq coordinates (R = 2^384) and the
  // Montgomery form of Fr (R = 2^256). Unreduced encodings are rejected.
  static constexpr std::optional<MontgomeryField> from_montgomery_limbs(const LimbArray& limbs) {
    if (detail::greater_or_equal(limbs, modulus)) return std::nullopt;
    return from_raw(limbs);
  }

  // Limbs holding value·R^2 mod p, as the coefficients of a snarkjs .zkey (section 4) are stored:
  // one Montgomery reduction turns them into the Montgomery form of the value.
  static constexpr std::optional<MontgomeryField> from_double_montgomery_limbs(const LimbArray& limbs) {
    if (detail::greater_or_equal(limbs, modulus)) return std::nullopt;
    LimbArray one_limbs{};
    one_limbs[0] = 1;
    return from_raw(montgomery_multiply(limbs, one_limbs));
  }

  // Whether little-endian bytes hold a value below the modulus (what from_canonical_bytes and
  // from_montgomery_bytes accept), without converting it.
  static constexpr bool bytes_below_modulus(std::span<const std::uint8_t, byte_count> bytes) {
    return !detail::greater_or_equal(limbs_from_bytes(bytes), modulus);
  }
  static constexpr std::optional<MontgomeryField> from_canonical_bytes(
      std::span<const std::uint8_t, byte_count> bytes) {
    return from_canonical_limbs(limbs_from_bytes(bytes));
  }
  static constexpr std::optional<MontgomeryField> from_montgomery_bytes(
      std::span<const std::uint8_t, byte_count> bytes) {
    return from_montgomery_limbs(limbs_from_bytes(bytes));
  }
  static constexpr std::optional<MontgomeryField> from_double_montgomery_bytes(
      std::span<const std::uint8_t, byte_count> bytes) {
    return from_double_montgomery_limbs(limbs_from_bytes(bytes));
  }

  // Decimal digits only, no sign, no whitespace; the value must be below the modulus.
  static std::optional<MontgomeryField> from_decimal(std::string_view text) {
    if (text.empty()) return std::nullopt;
    Limbs<limb_count + 1> wide{};
    for (const char character : text) {
      if (character < '0' || character > '9') return std::nullopt;
      std::uint64_t carry = static_cast<std::uint64_t>(character - '0');
      for (auto& limb : wide) limb = detail::multiply_add(limb, 10, 0, carry);
      if (carry != 0) return std::nullopt;
    }
    if (wide[limb_count] != 0) return std::nullopt;
    LimbArray limbs{};
    std::copy_n(wide.begin(), limb_count, limbs.begin());
    return from_canonical_limbs(limbs);
  }

  constexpr LimbArray to_canonical_limbs() const {
    LimbArray one_limbs{};
    one_limbs[0] = 1;
    return montgomery_multiply(limbs_, one_limbs);
  }
  constexpr const LimbArray& montgomery_limbs() const { return limbs_; }

  constexpr ByteArray to_canonical_bytes() const { return bytes_from_limbs(to_canonical_limbs()); }
  constexpr ByteArray to_montgomery_bytes() const { return bytes_from_limbs(limbs_); }

  std::string to_decimal() const {
    LimbArray value = to_canonical_limbs();
    if (detail::is_zero(value)) return "0";
    // Peel off 19 decimal digits at a time: 10^19 is the largest power of ten below 2^64.
    constexpr std::uint64_t chunk_divisor = 10000000000000000000ULL;
    std::string reversed;
    while (!detail::is_zero(value)) {
      detail::Uint128 remainder = 0;
      for (std::size_t index = limb_count; index-- > 0;) {
        const detail::Uint128 current = (remainder << 64) | value[index];
        value[index] = static_cast<std::uint64_t>(current / chunk_divisor);
        remainder = current % chunk_divisor;
      }
      auto chunk = static_cast<std::uint64_t>(remainder);
      for (int digit = 0; digit < 19; ++digit) {
        reversed.push_back(static_cast<char>('0' + chunk % 10));
        chunk /= 10;
      }
    }
    while (reversed.size() > 1 && reversed.back() == '0') reversed.pop_back();
    return std::string(reversed.rbegin(), reversed.rend());
  }

  constexpr bool is_zero() const { return detail::is_zero(limbs_); }
  constexpr bool is_one() const { return limbs_ == montgomery_constants.r_mod_modulus; }

  // Limb by limb rather than the defaulted comparison, which GCC turns into a call to memcmp: a
  // measurable share of an MSM's time went there.
  friend constexpr bool operator==(const MontgomeryField& a, const MontgomeryField& b) {
    std::uint64_t difference = 0;
    for (std::size_t index = 0; index < limb_count; ++index) difference |= a.limbs_[index] ^ b.limbs_[index];
    return difference == 0;
  }

  friend constexpr MontgomeryField operator+(const MontgomeryField& a, const MontgomeryField& b) {
    LimbArray sum = a.limbs_;
    detail::add_in_place(sum, b.limbs_);
    return from_raw(reduce_once(sum));
  }
  friend constexpr MontgomeryField operator-(const MontgomeryField& a, const MontgomeryField& b) {
    LimbArray difference = a.limbs_;
    if (detail::subtract_in_place(difference, b.limbs_) != 0) detail::add_in_place(difference, modulus);
    return from_raw(difference);
  }
  constexpr MontgomeryField operator-() const {
    if (is_zero()) return *this;
    LimbArray negation = modulus;
    detail::subtract_in_place(negation, limbs_);
    return from_raw(negation);
  }
  friend constexpr MontgomeryField operator*(const MontgomeryField& a, const MontgomeryField& b) {
    return from_raw(montgomery_multiply(a.limbs_, b.limbs_));
  }
  constexpr MontgomeryField& operator+=(const MontgomeryField& other) { return *this = *this + other; }
  constexpr MontgomeryField& operator-=(const MontgomeryField& other) { return *this = *this - other; }
  constexpr MontgomeryField& operator*=(const MontgomeryField& other) { return *this = *this * other; }

  constexpr MontgomeryField doubled() const { return *this + *this; }
  constexpr MontgomeryField squared() const { return *this * *this; }

  // Left-to-right square and multiply over the bits of an exponent of any width.
  template <std::size_t ExponentLimbCount>
  constexpr MontgomeryField pow(const Limbs<ExponentLimbCount>& exponent) const {
    MontgomeryField result = one();
    for (std::size_t bit = detail::bit_length(exponent); bit-- > 0;) {
      result = result.squared();
      if (detail::test_bit(exponent, bit)) result *= *this;
    }
    return result;
  }
  constexpr MontgomeryField pow(std::uint64_t exponent) const { return pow(Limbs<1>{exponent}); }

  // Fermat's little theorem: x^(p-2). Zero has no inverse and maps to zero; callers that can meet
  // zero must check for it (batch inversions skip zeros explicitly).
  constexpr MontgomeryField inverse() const { return pow(detail::subtract_small(modulus, 2)); }

  // Euler's criterion. Zero counts as a square (its root is zero).
  constexpr bool is_square() const {
    if (is_zero()) return true;
    return pow(detail::shift_right(detail::subtract_small(modulus, 1), 1)).is_one();
  }

  // One of the two square roots (no particular one is promised), or nothing for a non-residue.
  constexpr std::optional<MontgomeryField> sqrt() const {
    if (is_zero()) return *this;
    if constexpr (modulus[0] % 4 == 3) {
      // p = 3 mod 4: x^((p+1)/4) is a root whenever one exists.
      const MontgomeryField candidate = pow(detail::shift_right(detail::add_small(modulus, 1), 2));
      if (candidate.squared() == *this) return candidate;
      return std::nullopt;
    } else {
      return tonelli_shanks();
    }
  }

  // 2^two_adicity is the largest power of two dividing p - 1: the largest NTT domain.
  static constexpr unsigned two_adicity = detail::trailing_zero_bits(detail::subtract_small(modulus, 1));

 private:
  static constexpr MontgomeryField from_raw(const LimbArray& limbs) {
    MontgomeryField element;
    element.limbs_ = limbs;
    return element;
  }

  static constexpr LimbArray reduce_once(LimbArray value) {
    LimbArray reduced = value;
    if (detail::subtract_in_place(reduced, modulus) == 0) return reduced;
    return value;
  }

  // Coarsely integrated operand scanning without the extra carry word (see the static_assert
  // above); the result is a·b·R^-1 mod p for a, b < p.
  static constexpr LimbArray montgomery_multiply(const LimbArray& a, const LimbArray& b) {
#if STAGEHAND_MATH_HAVE_ASSEMBLY
    if constexpr (limb_count == 4 || limb_count == 6) {
      if (!std::is_constant_evaluated() && detail::assembly_multiplication_enabled) {
        LimbArray product;
        detail::montgomery_multiply_assembly(product, a, b, modulus, montgomery_constants.negative_modulus_inverse);
        return reduce_once(product);
      }
    }
#endif
    return montgomery_multiply_portable(a, b);
  }

  static constexpr LimbArray montgomery_multiply_portable(const LimbArray& a, const LimbArray& b) {
    constexpr std::uint64_t inverse = montgomery_constants.negative_modulus_inverse;
    LimbArray t{};
    // Full unrolling lets the compiler keep t in registers; without it GCC spills every limb.
    STAGEHAND_GCC_UNROLL_8
    for (std::size_t i = 0; i < limb_count; ++i) {
      std::uint64_t product_carry = 0;
      t[0] = detail::multiply_add(a[0], b[i], t[0], product_carry);
      const std::uint64_t m = t[0] * inverse;
      std::uint64_t reduction_carry = 0;
      (void)detail::multiply_add(m, modulus[0], t[0], reduction_carry);
      STAGEHAND_GCC_UNROLL_8
      for (std::size_t j = 1; j < limb_count; ++j) {
        t[j] = detail::multiply_add(a[j], b[i], t[j], product_carry);
        t[j - 1] = detail::multiply_add(m, modulus[j], t[j], reduction_carry);
      }
      t[limb_count - 1] = reduction_carry + product_carry;
    }
    return reduce_once(t);
  }

  static constexpr LimbArray limbs_from_bytes(std::span<const std::uint8_t, byte_count> bytes) {
    LimbArray limbs{};
    // At run time on a little-endian host the bytes are the limbs: one copy, where the loop's 32
    // or 48 shifts cost the witness reader 2.7 times its Montgomery product (perf, 2^22 values).
    if (!std::is_constant_evaluated() && std::endian::native == std::endian::little) {
      std::memcpy(limbs.data(), bytes.data(), byte_count);
      return limbs;
    }
    for (std::size_t index = 0; index < byte_count; ++index) {
      limbs[index / 8] |= std::uint64_t{bytes[index]} << (8 * (index % 8));
    }
    return limbs;
  }
  static constexpr ByteArray bytes_from_limbs(const LimbArray& limbs) {
    ByteArray bytes{};
    for (std::size_t index = 0; index < byte_count; ++index) {
      bytes[index] = static_cast<std::uint8_t>(limbs[index / 8] >> (8 * (index % 8)));
    }
    return bytes;
  }

  // Tonelli-Shanks for p = 1 mod 2^s (Fr has s = 32). The non-residue is the smallest one, found
  // by Euler's criterion rather than taken on trust.
  constexpr std::optional<MontgomeryField> tonelli_shanks() const {
    constexpr LimbArray odd_part = detail::shift_right(detail::subtract_small(modulus, 1), two_adicity);
    MontgomeryField non_residue = from_uint64(2);
    while (non_residue.is_square()) non_residue += one();

    MontgomeryField c = non_residue.pow(odd_part);
    MontgomeryField x = pow(detail::shift_right(detail::add_small(odd_part, 1), 1));
    MontgomeryField b = pow(odd_part);
    unsigned m = two_adicity;
    while (!b.is_one()) {
      // The least i with b^(2^i) = 1; i = m means b has no root in the subgroup, so x has none.
      unsigned i = 0;
      MontgomeryField power = b;
      while (!power.is_one()) {
        power = power.squared();
        if (++i == m) return std::nullopt;
      }
      MontgomeryField g = c;
      for (unsigned step = 0; step + i + 1 < m; ++step) g = g.squared();
      x *= g;
      c = g.squared();
      b *= c;
      m = i;
    }
    return x;
  }

  LimbArray limbs_{};
};

}  // namespace stagehand::math
