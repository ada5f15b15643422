// The base field of BLS12-381: q = 0x1a0111ea...ffffaaab (381 bits), 6 limbs.
#pragma once

#include "math/montgomery_field.hpp"

namespace stagehand::math {

struct FqParameters {
  static constexpr std::size_t limb_count = 6;
  static constexpr Limbs<6> modulus = {0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL,
                                       0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
};

// Coordinates of G1 points. snarkjs stores them in Montgomery form with R = 2^384, the same as
// this type, so Fq::from_montgomery_bytes reads a .zkey coordinate directly.
using Fq = MontgomeryField<FqParameters>;

}  // namespace stagehand::math
