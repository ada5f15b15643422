#pragma once
// snarkjs's encodings of field elements and points (docs/snarkjs-formats.md, "Encodings"): Fq in
// Montgomery form (48 bytes LE), G1 = x‖y (96 bytes), G2 = x.c0‖x.c1‖y.c0‖y.c1 (192 bytes), the
// point at infinity all zero bytes.

#include "groth16/binfile.hpp"
#include "math/bn254.hpp"
#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"

#include <algorithm>
#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace stagehand::groth16 {

inline constexpr std::size_t kG1Bytes = 96;
inline constexpr std::size_t kG2Bytes = 192;

// nullopt when a coordinate is not reduced or the point is not on its curve.
std::optional<math::G1Affine> decode_g1(std::span<const std::uint8_t> bytes);
std::optional<math::G2Affine> decode_g2(std::span<const std::uint8_t> bytes);
void encode_g1(const math::G1Affine& point, std::vector<std::uint8_t>& out);
// The same into a record of its own (so that many can be written in parallel).
void encode_g1(const math::G1Affine& point, std::span<std::uint8_t, kG1Bytes> out);
void encode_g2(const math::G2Affine& point, std::span<std::uint8_t, kG2Bytes> out);
void encode_g2(const math::G2Affine& point, std::vector<std::uint8_t>& out);

// The device's MSM results (device/kernel_abi.hpp): Jacobian X‖Y‖Z of Montgomery Fq (144 bytes)
// or Fq2 (288, each coordinate c0‖c1). nullopt when a coordinate is not reduced; no curve check.
inline constexpr std::size_t kG1JacobianBytes = 144;
inline constexpr std::size_t kG2JacobianBytes = 288;
std::optional<math::G1Projective> decode_g1_jacobian(std::span<const std::uint8_t, kG1JacobianBytes> bytes);
std::optional<math::G2Projective> decode_g2_jacobian(std::span<const std::uint8_t, kG2JacobianBytes> bytes);
void encode_g1_jacobian(const math::G1Projective& point, std::span<std::uint8_t, kG1JacobianBytes> out);
void encode_g2_jacobian(const math::G2Projective& point, std::span<std::uint8_t, kG2JacobianBytes> out);

// Reads `count` points from the reader; fails naming the section and the index of a bad point.
std::vector<math::G1Affine> read_g1_points(SectionReader& reader, std::size_t count, const std::string& what);
std::vector<math::G2Affine> read_g2_points(SectionReader& reader, std::size_t count, const std::string& what);

// The same encoding for the points of either curve (BN254's: 32-byte coordinates, 64 bytes a G1
// point, 128 a G2 point): what the readers of both curves' keys share.
namespace detail {
template <class Field>
struct Coordinates {
  using Base = Field;
  static constexpr std::size_t count = 1;
};
template <class Base_>
struct Coordinates<math::BasicFq2<Base_>> {
  using Base = Base_;
  static constexpr std::size_t count = 2;
};
}  // namespace detail

template <class Affine>
inline constexpr std::size_t affine_bytes =
    2 *
    detail::Coordinates<typename Affine::Field>::count* detail::Coordinates<typename Affine::Field>::Base::byte_count;

// nullopt when a coordinate is not reduced or the point is not on its curve.
template <class Affine>
std::optional<Affine> decode_affine(std::span<const std::uint8_t> bytes) {
  using Coordinates = detail::Coordinates<typename Affine::Field>;
  using Base = typename Coordinates::Base;
  if (std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; })) return Affine::identity();
  std::array<Base, 2 * Coordinates::count> c;
  for (std::size_t i = 0; i < c.size(); ++i) {
    auto value = Base::from_montgomery_bytes(
        std::span<const std::uint8_t, Base::byte_count>(bytes.data() + i * Base::byte_count, Base::byte_count));
    if (!value) return std::nullopt;
    c[i] = *value;
  }
  Affine point;
  if constexpr (Coordinates::count == 1) {
    point = Affine::from_coordinates(c[0], c[1]);
  } else {
    point = Affine::from_coordinates({c[0], c[1]}, {c[2], c[3]});
  }
  if (!point.is_on_curve()) return std::nullopt;
  return point;
}

// Into a record of its own, affine_bytes<Affine> long (std::invalid_argument for a shorter one).
template <class Affine>
void encode_affine(const Affine& point, std::span<std::uint8_t> out) {
  using Coordinates = detail::Coordinates<typename Affine::Field>;
  using Base = typename Coordinates::Base;
  if (out.size() < affine_bytes<Affine>) throw std::invalid_argument("encode_affine: the record is too small");
  if (point.infinity) {
    std::fill_n(out.begin(), affine_bytes<Affine>, std::uint8_t{0});
    return;
  }
  std::size_t at = 0;
  auto put = [&](const Base& value) {
    const auto bytes = value.to_montgomery_bytes();
    std::copy(bytes.begin(), bytes.end(), out.begin() + at);
    at += Base::byte_count;
  };
  for (const auto* coordinate : {&point.x, &point.y}) {
    if constexpr (Coordinates::count == 1) {
      put(*coordinate);
    } else {
      put(coordinate->c0);
      put(coordinate->c1);
    }
  }
}

// The same appended to `out`.
template <class Affine>
void encode_affine(const Affine& point, std::vector<std::uint8_t>& out) {
  const std::size_t at = out.size();
  out.resize(at + affine_bytes<Affine>);
  encode_affine(point, std::span<std::uint8_t>(out).subspan(at));
}

// The device's MSM results of either curve (device/kernel_abi.hpp): Jacobian X‖Y‖Z, each
// coordinate's base field elements in Montgomery form, c0 before c1 (BLS12-381's 144 and 288
// bytes, BN254's 96 and 192).
template <class Projective>
inline constexpr std::size_t jacobian_bytes = 3 * detail::Coordinates<typename Projective::Field>::count*
                                                      detail::Coordinates<typename Projective::Field>::Base::byte_count;

// nullopt when a coordinate is not reduced; no curve check. std::invalid_argument for fewer bytes.
template <class Projective>
std::optional<Projective> decode_jacobian(std::span<const std::uint8_t> bytes) {
  using Coordinates = detail::Coordinates<typename Projective::Field>;
  using Base = typename Coordinates::Base;
  if (bytes.size() < jacobian_bytes<Projective>) throw std::invalid_argument("decode_jacobian: too few bytes");
  std::array<Base, 3 * Coordinates::count> c;
  for (std::size_t i = 0; i < c.size(); ++i) {
    auto value = Base::from_montgomery_bytes(
        std::span<const std::uint8_t, Base::byte_count>(bytes.data() + i * Base::byte_count, Base::byte_count));
    if (!value) return std::nullopt;
    c[i] = *value;
  }
  if constexpr (Coordinates::count == 1) {
    return Projective{c[0], c[1], c[2]};
  } else {
    return Projective{{c[0], c[1]}, {c[2], c[3]}, {c[4], c[5]}};
  }
}

template <class Projective>
void encode_jacobian(const Projective& point, std::span<std::uint8_t> out) {
  using Coordinates = detail::Coordinates<typename Projective::Field>;
  using Base = typename Coordinates::Base;
  if (out.size() < jacobian_bytes<Projective>) throw std::invalid_argument("encode_jacobian: too few bytes");
  std::size_t at = 0;
  auto put = [&](const Base& value) {
    const auto bytes = value.to_montgomery_bytes();
    std::copy(bytes.begin(), bytes.end(), out.begin() + at);
    at += Base::byte_count;
  };
  for (const auto* coordinate : {&point.x, &point.y, &point.z}) {
    if constexpr (Coordinates::count == 1) {
      put(*coordinate);
    } else {
      put(coordinate->c0);
      put(coordinate->c1);
    }
  }
}

// Reads `count` points of either curve from the reader; fails naming the section, `group` ("G1")
// and the index of a bad point.
template <class Affine>
std::vector<Affine> read_affine_points(SectionReader& reader, std::size_t count, const std::string& what,
                                       const char* group) {
  constexpr std::size_t size = affine_bytes<Affine>;
  if (reader.remaining() / size < count) {
    reader.fail(fmt::format("{} bytes left for {} {} points of {} bytes", reader.remaining(), count, group, size));
  }
  const auto bytes = reader.take(count * size);
  std::vector<Affine> points(count);
  for (std::size_t i = 0; i < count; ++i) {
    auto point = decode_affine<Affine>(bytes.subspan(i * size, size));
    if (!point)
      reader.fail(
          fmt::format("{} point {} is not a point of {} (unreduced coordinate or off the curve)", what, i, group));
    points[i] = *point;
  }
  return points;
}

// The canonical little-endian bytes of a prime (checks of the headers against r and q).
template <class Field>
std::vector<std::uint8_t> modulus_bytes() {
  std::vector<std::uint8_t> bytes;
  for (auto limb : Field::modulus)
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<std::uint8_t>(limb >> (8 * i)));
  return bytes;
}

}  // namespace stagehand::groth16
