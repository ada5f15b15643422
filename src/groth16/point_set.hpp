#pragma once
// A proving key's set of points (A, B1, B2, C, H) in the one encoding that snarkjs's .zkey files,
// the device kernels and the pinned host copy share (encoding.hpp: 96 bytes a G1 point, 192 a G2
// point over BLS12-381, 64 and 128 over BN254; Montgomery form, infinity all zero). Kept encoded, a key costs its file's bytes in
// memory (decoded math points take 8% more, and a second copy for the upload), reading it is a
// copy and a check, and a streamed set goes to the device from these bytes as they are.

#include "groth16/encoding.hpp"
#include "util/pinnable_allocator.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace stagehand::groth16 {

// The two forms of a key's H set, each with its own H computation in the prover (a key proved
// with the other's gives proofs that do not verify): snarkjs's (.zkey: n points, the odd-index
// Lagrange basis of size 2n at τ over δ, against A·B − C on the odd coset) and bellperson's
// (.params: n − 1 points τ^i·Z(τ)/δ, against the coefficients of (A·B − C)/Z on the coset of 7).
enum class HForm { snarkjs, bellperson };

// A 2^26 key's sets are 36 GiB, written once by a reader or a setup and then registered in place
// for the streamed sets' uploads (pinnable_allocator.hpp).
using PointBytes = std::vector<std::uint8_t, PinnableAllocator<std::uint8_t>>;

template <class Affine>
class PointSet {
 public:
  static constexpr std::size_t kPointBytes = affine_bytes<Affine>;

  PointSet() = default;
  // `count` points of unspecified value, to be written through mutable_bytes().
  explicit PointSet(std::size_t count) : bytes_(count * kPointBytes) {}
  // Encodes the points on up to `threads` threads (0 = all).
  static PointSet encode(std::span<const Affine> points, unsigned threads = 0);

  std::size_t size() const { return bytes_.size() / kPointBytes; }
  bool empty() const { return bytes_.empty(); }
  std::span<const std::uint8_t> bytes() const { return {bytes_.data(), bytes_.size()}; }
  std::span<std::uint8_t> mutable_bytes() { return {bytes_.data(), bytes_.size()}; }

  // The first point that does not decode (unreduced coordinate, off the curve), or size().
  std::size_t first_invalid(unsigned threads = 0) const;
  // Point i; throws std::logic_error for bytes that are not a point (sets are checked when read).
  Affine at(std::size_t index) const;
  std::vector<Affine> decode(unsigned threads = 0) const;

  bool operator==(const PointSet& other) const {
    return bytes_.size() == other.bytes_.size() && std::equal(bytes_.begin(), bytes_.end(), other.bytes_.begin());
  }

 private:
  PointBytes bytes_;
};

using G1Points = PointSet<math::G1Affine>;
using G2Points = PointSet<math::G2Affine>;
namespace bn254 {
// BN254's sets in the same encoding with its 32-byte coordinates: 64 bytes a G1 point, 128 a G2.
using G1Points = PointSet<math::bn254::G1Affine>;
using G2Points = PointSet<math::bn254::G2Affine>;
}  // namespace bn254

// Reads section `id` of `file`, `count` points, into a set (BinFile::read_section: straight from
// the file where the section is read later) and checks them on every thread; fails naming the
// section where its size is not count points' and naming the first bad point.
G1Points read_g1_set(const BinFile& file, std::uint32_t id, const std::string& what, std::size_t count);
G2Points read_g2_set(const BinFile& file, std::uint32_t id, const std::string& what, std::size_t count);

// The same for either curve's sets (`group` names the group in the messages).
template <class Affine>
PointSet<Affine> read_point_set(const BinFile& file, std::uint32_t id, const std::string& what, std::size_t count,
                                const char* group);

extern template class PointSet<math::G1Affine>;
extern template class PointSet<math::G2Affine>;
extern template class PointSet<math::bn254::G1Affine>;
extern template class PointSet<math::bn254::G2Affine>;

}  // namespace stagehand::groth16
