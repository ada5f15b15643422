#pragma once
// snarkjs's encodings of field elements and points (docs/snarkjs-formats.md, "Encodings"): Fq in
// Montgomery form (48 bytes LE), G1 = x‖y (96 bytes), G2 = x.c0‖x.c1‖y.c0‖y.c1 (192 bytes), the
// point at infinity all zero bytes.

#include "groth16/binfile.hpp"
#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
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

// The canonical little-endian bytes of a prime (checks of the headers against r and q).
template <class Field>
std::vector<std::uint8_t> modulus_bytes() {
  std::vector<std::uint8_t> bytes;
  for (auto limb : Field::modulus)
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<std::uint8_t>(limb >> (8 * i)));
  return bytes;
}

}  // namespace stagehand::groth16
