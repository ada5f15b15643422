// Multi-precision helpers on little-endian arrays of 64-bit limbs.
//
// These are the building blocks of the Montgomery fields. They are constexpr so that the
// fields can derive their Montgomery constants from the modulus at compile time instead of
// carrying hand-copied constants that could silently disagree with it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <x86intrin.h>
#define STAGEHAND_MATH_HAVE_CARRY_INTRINSICS 1
#else
#define STAGEHAND_MATH_HAVE_CARRY_INTRINSICS 0
#endif

namespace stagehand::math {

template <std::size_t LimbCount>
using Limbs = std::array<std::uint64_t, LimbCount>;

namespace detail {

// GCC and Clang accept 128-bit integers as an extension; __extension__ keeps -Wpedantic quiet.
__extension__ using Uint128 = unsigned __int128;

// Returns the low word of a + b + carry and leaves the carry (0 or 1) in `carry`.
constexpr std::uint64_t add_with_carry(std::uint64_t a, std::uint64_t b, std::uint64_t& carry) {
  const Uint128 sum = Uint128{a} + b + carry;
  carry = static_cast<std::uint64_t>(sum >> 64);
  return static_cast<std::uint64_t>(sum);
}

// Returns the low word of a - b - borrow and leaves the borrow (0 or 1) in `borrow`.
constexpr std::uint64_t subtract_with_borrow(std::uint64_t a, std::uint64_t b, std::uint64_t& borrow) {
  const Uint128 difference = Uint128{a} - b - borrow;
  borrow = static_cast<std::uint64_t>(difference >> 127);
  return static_cast<std::uint64_t>(difference);
}

// Returns the low word of a * b + addend + carry and leaves the high word in `carry`. The sum
// cannot overflow 128 bits: (2^64 - 1)^2 + 2 (2^64 - 1) = 2^128 - 1.
constexpr std::uint64_t multiply_add(std::uint64_t a, std::uint64_t b, std::uint64_t addend, std::uint64_t& carry) {
  const Uint128 product = Uint128{a} * b + addend + carry;
  carry = static_cast<std::uint64_t>(product >> 64);
  return static_cast<std::uint64_t>(product);
}

template <std::size_t N>
constexpr bool is_zero(const Limbs<N>& value) {
  for (const std::uint64_t limb : value) {
    if (limb != 0) return false;
  }
  return true;
}

// Returns true when a >= b.
template <std::size_t N>
constexpr bool greater_or_equal(const Limbs<N>& a, const Limbs<N>& b) {
  for (std::size_t index = N; index-- > 0;) {
    if (a[index] != b[index]) return a[index] > b[index];
  }
  return true;
}

// a + b, returning the carry out of the top limb. GCC turns the carry intrinsics into one adc
// chain; from the portable code it makes setc/movzbl/or sequences twice as long.
template <std::size_t N>
constexpr std::uint64_t add_in_place(Limbs<N>& a, const Limbs<N>& b) {
#if STAGEHAND_MATH_HAVE_CARRY_INTRINSICS
  if (!std::is_constant_evaluated()) {
    unsigned char carry_flag = 0;
    for (std::size_t index = 0; index < N; ++index) {
      unsigned long long sum = 0;
      carry_flag = _addcarry_u64(carry_flag, a[index], b[index], &sum);
      a[index] = sum;
    }
    return carry_flag;
  }
#endif
  std::uint64_t carry = 0;
  for (std::size_t index = 0; index < N; ++index) a[index] = add_with_carry(a[index], b[index], carry);
  return carry;
}

// a - b, returning the borrow out of the top limb.
template <std::size_t N>
constexpr std::uint64_t subtract_in_place(Limbs<N>& a, const Limbs<N>& b) {
#if STAGEHAND_MATH_HAVE_CARRY_INTRINSICS
  if (!std::is_constant_evaluated()) {
    unsigned char borrow_flag = 0;
    for (std::size_t index = 0; index < N; ++index) {
      unsigned long long difference = 0;
      borrow_flag = _subborrow_u64(borrow_flag, a[index], b[index], &difference);
      a[index] = difference;
    }
    return borrow_flag;
  }
#endif
  std::uint64_t borrow = 0;
  for (std::size_t index = 0; index < N; ++index) {
    a[index] = subtract_with_borrow(a[index], b[index], borrow);
  }
  return borrow;
}

template <std::size_t N>
constexpr Limbs<N> add_small(Limbs<N> value, std::uint64_t small) {
  std::uint64_t carry = small;
  for (std::size_t index = 0; index < N && carry != 0; ++index) {
    value[index] = add_with_carry(value[index], 0, carry);
  }
  return value;
}

template <std::size_t N>
constexpr Limbs<N> subtract_small(Limbs<N> value, std::uint64_t small) {
  std::uint64_t borrow = small;
  for (std::size_t index = 0; index < N && borrow != 0; ++index) {
    value[index] = subtract_with_borrow(value[index], 0, borrow);
  }
  return value;
}

// value / divisor, rounded down, for a divisor below 2^64 (such as (q - 1)/6 for the Frobenius).
template <std::size_t N>
constexpr Limbs<N> divide_small(Limbs<N> value, std::uint64_t divisor) {
  Uint128 remainder = 0;
  for (std::size_t index = N; index-- > 0;) {
    const Uint128 current = (remainder << 64) | value[index];
    value[index] = static_cast<std::uint64_t>(current / divisor);
    remainder = current % divisor;
  }
  return value;
}

template <std::size_t N>
constexpr Limbs<N> shift_right(const Limbs<N>& value, unsigned bit_count) {
  Limbs<N> result{};
  const std::size_t limb_shift = bit_count / 64;
  const unsigned bit_shift = bit_count % 64;
  for (std::size_t index = 0; index + limb_shift < N; ++index) {
    result[index] = value[index + limb_shift] >> bit_shift;
    if (bit_shift != 0 && index + limb_shift + 1 < N) {
      result[index] |= value[index + limb_shift + 1] << (64 - bit_shift);
    }
  }
  return result;
}

template <std::size_t N>
constexpr bool test_bit(const Limbs<N>& value, std::size_t bit) {
  return bit < 64 * N && ((value[bit / 64] >> (bit % 64)) & 1) != 0;
}

// Number of significant bits (0 for zero).
template <std::size_t N>
constexpr std::size_t bit_length(const Limbs<N>& value) {
  for (std::size_t index = N; index-- > 0;) {
    if (value[index] != 0) {
      std::size_t bits = 0;
      for (std::uint64_t limb = value[index]; limb != 0; limb >>= 1) ++bits;
      return 64 * index + bits;
    }
  }
  return 0;
}

// The number of trailing zero bits of a non-zero value.
template <std::size_t N>
constexpr unsigned trailing_zero_bits(const Limbs<N>& value) {
  unsigned count = 0;
  while (!test_bit(value, count)) ++count;
  return count;
}

}  // namespace detail
}  // namespace stagehand::math

namespace stagehand::math::detail {

// Big-endian hexadecimal digits (an optional "0x" prefix) into limbs; throws on bad digits or
// on a value wider than N limbs. For constants and test vectors, not for hot paths.
template <std::size_t N>
constexpr Limbs<N> limbs_from_hex(std::string_view text) {
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  if (text.empty()) throw std::invalid_argument("limbs_from_hex: no digits");
  Limbs<N> limbs{};
  std::size_t nibble_index = 0;
  for (std::size_t position = text.size(); position-- > 0; ++nibble_index) {
    const char character = text[position];
    std::uint64_t nibble = 0;
    if (character >= '0' && character <= '9') {
      nibble = static_cast<std::uint64_t>(character - '0');
    } else if (character >= 'a' && character <= 'f') {
      nibble = static_cast<std::uint64_t>(character - 'a' + 10);
    } else if (character >= 'A' && character <= 'F') {
      nibble = static_cast<std::uint64_t>(character - 'A' + 10);
    } else {
      throw std::invalid_argument("limbs_from_hex: not a hexadecimal digit");
    }
    if (nibble_index >= 16 * N) {
      if (nibble != 0) throw std::invalid_argument("limbs_from_hex: value too wide");
      continue;
    }
    limbs[nibble_index / 16] |= nibble << (4 * (nibble_index % 16));
  }
  return limbs;
}

}  // namespace stagehand::math::detail
