#pragma once
// The device encoding of points (src/groth16/encoding.hpp, written out here so that the GPU checks'
// one-call builds need src/math alone): x‖y in Montgomery limbs, G2 coordinates c0‖c1, zeros for
// infinity.

#include "math/g1.hpp"
#include "math/g2.hpp"

#include <cstdint>
#include <cstring>

namespace stagehand::check_encoding {

inline void put_fq(const math::Fq& value, std::uint8_t* out) { std::memcpy(out, value.montgomery_limbs().data(), 48); }
inline void put(const math::G1Affine& point, std::uint8_t* out) {
  std::memset(out, 0, 96);
  if (point.infinity) return;
  put_fq(point.x, out);
  put_fq(point.y, out + 48);
}
inline void put(const math::G2Affine& point, std::uint8_t* out) {
  std::memset(out, 0, 192);
  if (point.infinity) return;
  put_fq(point.x.c0, out);
  put_fq(point.x.c1, out + 48);
  put_fq(point.y.c0, out + 96);
  put_fq(point.y.c1, out + 144);
}

}  // namespace stagehand::check_encoding
