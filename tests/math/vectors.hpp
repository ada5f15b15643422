// Access to the @noble/curves vectors (tests/vectors/generate.mjs) for the math tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "math/fq.hpp"
#include "math/fq2.hpp"
#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"

namespace stagehand::math::test {

// The parsed vector file named by $STAGEHAND_MATH_VECTORS (set by ctest). Throws with an
// explanation when it is missing: the math tests must fail, not pass, without their vectors.
const nlohmann::json& vectors();

// Big-endian hexadecimal ("0x...") into little-endian bytes of a given width. Deliberately
// independent of the library's own parsing.
std::vector<std::uint8_t> little_endian_bytes_from_hex(const std::string& text, std::size_t width);

template <class Field>
Field field_from(const nlohmann::json& text) {
  const std::vector<std::uint8_t> bytes = little_endian_bytes_from_hex(text.get<std::string>(), Field::byte_count);
  const auto value = Field::from_canonical_bytes(std::span<const std::uint8_t, Field::byte_count>(bytes.data(), Field::byte_count));
  if (!value) throw std::runtime_error("vector value not below the modulus: " + text.get<std::string>());
  return *value;
}

template <class Field>
typename Field::LimbArray limbs_from(const nlohmann::json& text) {
  const std::vector<std::uint8_t> bytes = little_endian_bytes_from_hex(text.get<std::string>(), Field::byte_count);
  typename Field::LimbArray limbs{};
  for (std::size_t index = 0; index < bytes.size(); ++index) limbs[index / 8] |= std::uint64_t{bytes[index]} << (8 * (index % 8));
  return limbs;
}

template <class Field>
std::string to_hex(const Field& value) {
  static const char digits[] = "0123456789abcdef";
  const auto bytes = value.to_canonical_bytes();
  std::string text = "0x";
  for (std::size_t index = bytes.size(); index-- > 0;) {
    text.push_back(digits[bytes[index] >> 4]);
    text.push_back(digits[bytes[index] & 0xf]);
  }
  return text;
}

Fq2 fq2_from(const nlohmann::json& pair);
std::string to_hex(const Fq2& value);

// {"infinity": true} or {"x": ..., "y": ...}; coordinates are taken as they are (no curve check).
G1Affine g1_from(const nlohmann::json& point);
G2Affine g2_from(const nlohmann::json& point);

template <class Curve>
AffinePoint<Curve> point_from(const nlohmann::json& point);
template <>
inline G1Affine point_from<G1Curve>(const nlohmann::json& point) { return g1_from(point); }
template <>
inline G2Affine point_from<G2Curve>(const nlohmann::json& point) { return g2_from(point); }

template <class Curve>
std::string describe(const AffinePoint<Curve>& point) {
  if (point.infinity) return "infinity";
  return "(" + to_hex(point.x) + ", " + to_hex(point.y) + ")";
}

// The two groups, for tests written once over both (Boost.Test template test cases).
struct G1Case {
  using Curve = G1Curve;
  static constexpr const char* key = "g1";
};
struct G2Case {
  using Curve = G2Curve;
  static constexpr const char* key = "g2";
};

}  // namespace stagehand::math::test
