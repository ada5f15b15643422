// Signed c-bit window digits of MSM scalars by one addition (host and device; the host test
// checks them against carrying window by window).
//
// With W = ceil(256/c) windows, half = 2^(c-1) and beta = half - 1, add the bias
// B = Σ_{j<W-1} beta·2^(cj) to the scalar s once: t = s + B. Then window j < W-1 of t, less beta,
// is the digit d_j in [-(half-1), half], and the top window is t's remaining bits with no bias.
// Σ d_j·2^(cj) = s, and since the range holds 2^c consecutive values these are the digits that
// carrying window by window gives (a raw window above half becomes raw - 2^c and carries one).
// Why: each digit then needs only the words of t under its own window, not every lower window
// for its carry, so the digits of a window read 4 or 8 bytes per scalar from a word-major copy of
// t instead of all 32 (msm.cu).
// Bounds: s < r < 2^255 and B < 2^(c(W-1)) <= 2^255, so t fits in 256 bits; the top digit is at
// most ((r - 1 + B) >> c(W-1)) <= half for every c in 2..24 (r's top bits), so it needs no sign.
#pragma once

#include <cstdint>

#include "ff/field.cuh"

namespace stagehand::cuda {

struct DigitBias {
  std::uint32_t w[8] = {};
};

SH_HD constexpr unsigned digit_window_count(unsigned window_bits) { return (256 + window_bits - 1) / window_bits; }

// B for c = window_bits (2..24). The terms do not overlap: beta has c - 1 bits, windows are c apart.
inline DigitBias digit_bias(unsigned window_bits) {
  DigitBias bias;
  const std::uint32_t beta = (1u << (window_bits - 1)) - 1;
  const unsigned windows = digit_window_count(window_bits);
  for (unsigned j = 0; j + 1 < windows; ++j) {
    const unsigned bit = j * window_bits;
    bias.w[bit / 32] |= beta << (bit % 32);
    if (bit % 32 + window_bits - 1 > 32) bias.w[bit / 32 + 1] |= beta >> (32 - bit % 32);
  }
  return bias;
}

// t = s + B, word by word with the carry (s < r, so nothing carries out of the top word).
SH_HD void add_digit_bias(std::uint32_t (&words)[8], const DigitBias& bias) {
  std::uint32_t carry = 0;
  for (int k = 0; k < 8; ++k) {
    const std::uint64_t sum = std::uint64_t{words[k]} + bias.w[k] + carry;
    words[k] = static_cast<std::uint32_t>(sum);
    carry = static_cast<std::uint32_t>(sum >> 32);
  }
}

// The c bits of t at `bit` (= c·window), from the word holding it (low) and the next (high; 0
// past the top).
SH_HD std::uint32_t window_bits_at(std::uint32_t low, std::uint32_t high, unsigned bit, unsigned window_bits) {
  const std::uint64_t pair = (std::uint64_t{high} << 32) | low;
  return static_cast<std::uint32_t>(pair >> (bit % 32)) & ((1u << window_bits) - 1);
}

// Window `window`'s signed digit from its c bits of t: magnitude in the low 31 bits, sign in bit 31.
SH_HD std::uint32_t signed_digit(std::uint32_t raw, unsigned window, unsigned window_bits) {
  if (window + 1 == digit_window_count(window_bits)) return raw;  // the top window: no bias
  const std::uint32_t beta = (1u << (window_bits - 1)) - 1;
  return raw >= beta ? raw - beta : (beta - raw) | 0x80000000u;
}

}  // namespace stagehand::cuda
