#pragma once
// Filecoin's Groth16 parameter files (.params), as bellperson's `Parameters::write` lays them out:
// no header, no padding; the verifying key (alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1,
// delta_g2, then a big-endian u32 count and the ic points), then for each of h, l, a, b_g1 and
// b_g2 a big-endian u32 count and its points. Points are zcash's uncompressed encoding: G1 is
// x ‖ y, G2 is x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0, each coordinate 48 bytes big-endian and canonical, and
// the top three bits of the first byte are flags (compressed, infinity, sign).
//
// The key read here keeps its sets in the encoding every other key of Stagehand uses
// (point_set.hpp), so that a set is uploaded and streamed as a .zkey's is. Its H set is
// bellperson's (HForm::bellperson), which needs another H computation than a .zkey's.

#include "groth16/binfile.hpp"
#include "groth16/errors.hpp"
#include "groth16/point_set.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace stagehand::groth16 {

// What snarkjs's vk.json holds, and bellperson's verifying key (beta1 and delta1 beside).
struct VerifyingKey {
  math::G1Affine alpha1, beta1, delta1;
  math::G2Affine beta2, gamma2, delta2;
  std::vector<math::G1Affine> ic;  // one per public input, the constant one first
};

// A .params key. bellperson's variables are its inputs (the constant one, then the public
// signals) and its aux variables (the rest of the witness).
struct ParamsKey {
  static constexpr HForm h_form = HForm::bellperson;

  VerifyingKey vk;
  G1Points h;     // domain size - 1 points, τ^i·Z(τ)/δ
  G1Points l;     // one per aux variable
  G1Points a;     // one per variable whose A column evaluates to non-zero at τ, inputs first
  G1Points b_g1;  // one per variable whose B column evaluates to non-zero at τ, inputs first
  G2Points b_g2;  // the same variables as b_g1

  std::size_t domain_size() const { return h.size() + 1; }
  std::size_t input_count() const { return vk.ic.size(); }
  std::size_t aux_count() const { return l.size(); }
};

// Reads and checks a .params file: every point's flags (compression clear, sign clear, infinity
// only as the flag alone with every other bit zero), every coordinate below p, every point on
// its curve and none the point at infinity (bellperson's reader refuses them too), the verifying
// key's points in their subgroups, the domain size (h + 1) a power of two up to 2^kMaxDomainLog2,
// each count against the bytes the file has left before anything is allocated for it, and no
// byte after b_g2. InputError naming the file, the section and the index of the first bad point
// otherwise ("<file>: section h: point 3 is not on the curve"). Regular files only: read in
// pieces with pread (a mapped file that another process truncates raises SIGBUS), and an error
// where the file changes while it is read. Each set is read and checked in chunks on `threads`
// threads (0 = every hardware thread), each thread converting the chunk it has just read.
ParamsKey read_params(const std::filesystem::path& path, unsigned threads = 0);
// The same from a file already open (the service's, once it has checked where it lies); its name
// is the one the messages give.
ParamsKey read_params(InputFile input, unsigned threads = 0);

// Writes `key` as bellperson writes it (a TEST-ONLY key's writer: `stagehand setup --format
// params`). To a temporary file renamed over `path` at the end, so that a failed write leaves
// `path` as it was; std::runtime_error naming the file where it cannot be written.
void write_params(const std::filesystem::path& path, const ParamsKey& key);

// The sizes of the encodings in a .params file.
inline constexpr std::size_t kZcashG1Bytes = 96;
inline constexpr std::size_t kZcashG2Bytes = 192;

// zcash's compressed encoding, in which filecoin-proofs stores a proof's points: x alone (G1: 48
// big-endian bytes; G2: x.c1 ‖ x.c0, 96), the compression flag set, the sign flag where y is the
// larger of y and −y (G2: by c1, by c0 where c1 is zero), the point at infinity as the compression
// and infinity flags alone.
inline constexpr std::size_t kZcashG1CompressedBytes = 48;
inline constexpr std::size_t kZcashG2CompressedBytes = 96;
void encode_zcash_g1_compressed(const math::G1Affine& point, std::span<std::uint8_t, kZcashG1CompressedBytes> out);
void encode_zcash_g2_compressed(const math::G2Affine& point, std::span<std::uint8_t, kZcashG2CompressedBytes> out);
// The inverse: InputError saying why where the bytes are no point of the curve's subgroup (a flag
// missing or out of place, x not below p, no y for x, a point outside the subgroup).
math::G1Affine decode_zcash_g1_compressed(std::span<const std::uint8_t, kZcashG1CompressedBytes> bytes);
math::G2Affine decode_zcash_g2_compressed(std::span<const std::uint8_t, kZcashG2CompressedBytes> bytes);

namespace detail {
// The reader reads and checks a set in chunks of this many bytes (2^15 G1 points, 2^14 G2): for the
// tests of sets that span several.
inline constexpr std::size_t kParamsReadChunkBytes = std::size_t{3} << 20;

// A point's uncompressed zcash encoding (the identity as the infinity flag alone): for the
// writer, and for tests that make points the reader must refuse.
void encode_zcash_g1(const math::G1Affine& point, std::span<std::uint8_t, kZcashG1Bytes> out);
void encode_zcash_g2(const math::G2Affine& point, std::span<std::uint8_t, kZcashG2Bytes> out);
}  // namespace detail

}  // namespace stagehand::groth16
