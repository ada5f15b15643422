// The scalar field of BLS12-381: r = 0x73eda753...00000001 (255 bits), 4 limbs.
#pragma once

#include "math/montgomery_field.hpp"

namespace stagehand::math {

struct FrParameters {
  static constexpr std::size_t limb_count = 4;
  static constexpr Limbs<4> modulus = {0xffffffff00000001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL,
                                       0x73eda753299d7d48ULL};
};

// Elements of Fr: witness values, NTT values and MSM scalars. snarkjs's Montgomery form of Fr
// uses R = 2^256, the same as this type, so Fr::from_montgomery_bytes reads it directly.
using Fr = MontgomeryField<FrParameters>;

}  // namespace stagehand::math
