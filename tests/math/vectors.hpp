// Access to the @noble/curves vectors (tests/vectors/generate.mjs) for the math tests: BLS12-381's
// sections at the top level of the file, BN254's under "bn254".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "math/bn254.hpp"
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
  const auto value =
      Field::from_canonical_bytes(std::span<const std::uint8_t, Field::byte_count>(bytes.data(), Field::byte_count));
  if (!value) throw std::runtime_error("vector value not below the modulus: " + text.get<std::string>());
  return *value;
}

template <class Field>
typename Field::LimbArray limbs_from(const nlohmann::json& text) {
  const std::vector<std::uint8_t> bytes = little_endian_bytes_from_hex(text.get<std::string>(), Field::byte_count);
  typename Field::LimbArray limbs{};
  for (std::size_t index = 0; index < bytes.size(); ++index)
    limbs[index / 8] |= std::uint64_t{bytes[index]} << (8 * (index % 8));
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

// An Fq2 value is the pair [c0, c1].
template <class Fq2Type = Fq2>
Fq2Type fq2_from(const nlohmann::json& pair) {
  using BaseField = typename Fq2Type::Fq;
  return Fq2Type{field_from<BaseField>(pair.at(0)), field_from<BaseField>(pair.at(1))};
}

template <class BaseField>
std::string to_hex(const BasicFq2<BaseField>& value) {
  // Appending rather than chaining operator+ avoids a false -Wrestrict in GCC 12 (bug 105329).
  std::string text = "[";
  text.append(to_hex(value.c0)).append(", ").append(to_hex(value.c1)).append("]");
  return text;
}

// A prime field element or an Fq2 pair, as the field type says.
template <class Field>
Field element_from(const nlohmann::json& value) {
  if constexpr (requires { typename Field::Fq; }) {
    return fq2_from<Field>(value);
  } else {
    return field_from<Field>(value);
  }
}

// {"infinity": true} or {"x": ..., "y": ...}; coordinates are taken as they are (no curve check).
template <class Curve>
AffinePoint<Curve> point_from(const nlohmann::json& point) {
  using Field = typename Curve::BaseField;
  if (point.contains("infinity")) return AffinePoint<Curve>::identity();
  return AffinePoint<Curve>::from_coordinates(element_from<Field>(point.at("x")), element_from<Field>(point.at("y")));
}
inline G1Affine g1_from(const nlohmann::json& point) { return point_from<G1Curve>(point); }
inline G2Affine g2_from(const nlohmann::json& point) { return point_from<G2Curve>(point); }

template <class Curve>
std::string describe(const AffinePoint<Curve>& point) {
  if (point.infinity) return "infinity";
  return "(" + to_hex(point.x) + ", " + to_hex(point.y) + ")";
}

// The vectors of one curve: BLS12-381's are the file's top level, BN254's its "bn254" member.
struct Bls12_381Vectors {
  using Description = Bls12_381;
  static constexpr const char* name = "BLS12-381";
  static const nlohmann::json& section() { return vectors(); }
};
struct Bn254Vectors {
  using Description = Bn254;
  static constexpr const char* name = "BN254";
  static const nlohmann::json& section() { return vectors().at("bn254"); }
};

// The four groups, for tests written once over all (Boost.Test template test cases): Case::Curve,
// Case::key ("g1" or "g2") and Case::section(), the curve's vectors.
template <class CurveVectors, class GroupCurve, const char* Key>
struct GroupCase : CurveVectors {
  using Curve = GroupCurve;
  static constexpr const char* key = Key;
};
inline constexpr char g1_key[] = "g1";
inline constexpr char g2_key[] = "g2";
using G1Case = GroupCase<Bls12_381Vectors, G1Curve, g1_key>;
using G2Case = GroupCase<Bls12_381Vectors, G2Curve, g2_key>;
using Bn254G1Case = GroupCase<Bn254Vectors, bn254::G1Curve, g1_key>;
using Bn254G2Case = GroupCase<Bn254Vectors, bn254::G2Curve, g2_key>;

}  // namespace stagehand::math::test
