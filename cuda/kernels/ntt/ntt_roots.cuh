// snarkjs's NTT domain of a curve's Fr on the host, with field.cuh's arithmetic (it compiles for
// the host too, so tests/kernels/curves_host_test.cpp checks it against src/math without a GPU):
// g = ω_2n = 5^((r-1)/2n), ω = g^2 (math::BasicDomain::snarkjs).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "ff/field.cuh"

namespace stagehand::cuda {

// base^exponent, exponent as eight little-endian 32-bit words.
template <class F>
F field_power(const F& base, const std::uint32_t (&exponent)[8]) {
  F result = F::one();
  for (int bit = 255; bit >= 0; --bit) {
    result = result * result;
    if ((exponent[bit / 32] >> (bit % 32)) & 1) result = result * base;
  }
  return result;
}

// The root and coset generator of snarkjs's domain of 2^log_size over Curve::Fr, whose 2^(log_size+1)-th
// root must exist: log_size below Curve::two_adicity (32 for BLS12-381, 28 for BN254).
template <class Curve>
void snarkjs_roots(unsigned log_size, typename Curve::Fr& root, typename Curve::Fr& coset_generator) {
  using Fr = typename Curve::Fr;
  static_assert(Fr::N == 8 && Curve::two_adicity <= 32);
  if (log_size < 1 || log_size >= Curve::two_adicity) {
    throw std::invalid_argument(std::string("snarkjs_roots: log_size ") + std::to_string(log_size) + " outside 1.." +
                                std::to_string(Curve::two_adicity - 1) + " for " + Curve::name);
  }
  std::uint32_t r_minus_1[8];
  for (int i = 0; i < 8; ++i) r_minus_1[i] = Fr::Params::modulus(i);
  r_minus_1[0] -= 1;                    // r is odd: no borrow
  const unsigned shift = log_size + 1;  // <= two_adicity <= 32
  std::uint32_t exponent[8];
  for (int i = 0; i < 8; ++i) {
    const std::uint32_t high = i + 1 < 8 ? r_minus_1[i + 1] : 0;
    exponent[i] = shift == 32 ? high : (r_minus_1[i] >> shift) | (high << (32 - shift));
  }
  const Fr one = Fr::one();
  const Fr five = one + one + one + one + one;
  coset_generator = field_power(five, exponent);
  root = coset_generator * coset_generator;
}

}  // namespace stagehand::cuda
