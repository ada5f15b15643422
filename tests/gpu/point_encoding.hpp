#pragma once
// The device encoding of points (src/groth16/encoding.hpp, written out here so that the GPU checks'
// one-call builds need src/math alone): x‖y in Montgomery limbs, G2 coordinates c0‖c1, zeros for
// infinity. BN254's the same over its 32-byte Fq (kernel::curve_sizes).

#include "math/bn254.hpp"
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

inline void put_fq(const math::bn254::Fq& value, std::uint8_t* out) {
  std::memcpy(out, value.montgomery_limbs().data(), 32);
}
inline void put(const math::bn254::G1Affine& point, std::uint8_t* out) {
  std::memset(out, 0, 64);
  if (point.infinity) return;
  put_fq(point.x, out);
  put_fq(point.y, out + 32);
}
inline void put(const math::bn254::G2Affine& point, std::uint8_t* out) {
  std::memset(out, 0, 128);
  if (point.infinity) return;
  put_fq(point.x.c0, out);
  put_fq(point.x.c1, out + 32);
  put_fq(point.y.c0, out + 64);
  put_fq(point.y.c1, out + 96);
}

}  // namespace stagehand::check_encoding
