#pragma once
// snarkjs's Groth16 proving key (.zkey) over BLS12-381 (ProvingKey) or BN254 (bn254::ProvingKey), as
// docs/snarkjs-formats.md lays it out:
// sections 1 (protocol), 2 (header), 3 (IC), 4 (coefficients), 5 (A), 6 (B1), 7 (B2), 8 (C),
// 9 (H), 10 (contributions; not read).

#include "groth16/binfile.hpp"
#include "groth16/curve.hpp"
#include "groth16/point_set.hpp"
#include "math/bn254.hpp"
#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"
#include "util/pinnable_allocator.hpp"

#include <cstdint>
#include <filesystem>
#include <span>
#include <variant>
#include <vector>

namespace stagehand::groth16 {

// One entry of section 4: the A (matrix 0) or B (matrix 1) coefficient of `signal` in
// `constraint`.
template <class Fr>
struct BasicCoefficient {
  std::uint32_t matrix = 0;
  std::uint32_t constraint = 0;
  std::uint32_t signal = 0;
  Fr value;
};
using Coefficient = BasicCoefficient<math::Fr>;

// A key's coefficient records, in PinnableAllocator's memory: huge pages where large, and not
// written when the list is sized (read_zkey's threads write each record).
template <class Fr>
using BasicCoefficientList = std::vector<BasicCoefficient<Fr>, PinnableAllocator<BasicCoefficient<Fr>>>;
using CoefficientList = BasicCoefficientList<math::Fr>;

struct ProvingKey {
  static constexpr HForm h_form = HForm::snarkjs;
  static constexpr Curve curve = Curve::bls12_381;
  using Description = math::Bls12_381;

  std::uint32_t n_vars = 0;
  std::uint32_t n_public = 0;  // public outputs + public inputs, not the constant 1
  std::uint32_t domain_size = 0;
  unsigned domain_log2 = 0;
  math::G1Affine alpha1, beta1, delta1;
  math::G2Affine beta2, gamma2, delta2;
  std::vector<math::G1Affine> ic;  // n_public + 1
  CoefficientList coefficients;
  // The large sets, encoded (point_set.hpp).
  G1Points a;   // n_vars
  G1Points b1;  // n_vars
  G2Points b2;  // n_vars
  G1Points c;   // n_vars - n_public - 1 (wires n_public+1 ..)
  G1Points h;   // domain_size
};

// Reads and checks a .zkey: protocol Groth16, curve BLS12-381 (both primes; CurveError naming
// both curves for a BN254 key), section sizes that
// agree with the header, points on their curves, coefficients within range. InputError naming
// the file and section otherwise.
ProvingKey read_zkey(const std::filesystem::path& path);
// The same from a file already open (by open_zkey, or by a caller that checked it first).
ProvingKey read_zkey(InputFile file);
// Opens a .zkey for read_zkey (open_input); InputError naming it where it cannot.
InputFile open_zkey(const std::filesystem::path& path);

// Writes a .zkey snarkjs reads (section 10 holds a zero circuit hash and no contributions).
void write_zkey(const std::filesystem::path& path, const ProvingKey& key);

namespace bn254 {
// A BN254 key: its large sets kept encoded as BLS12-381's are (point_set.hpp: 64 bytes a G1
// point, 128 a G2 point, the file's and the device's layout).
struct ProvingKey {
  static constexpr HForm h_form = HForm::snarkjs;
  static constexpr Curve curve = Curve::bn254;
  using Description = math::Bn254;

  std::uint32_t n_vars = 0;
  std::uint32_t n_public = 0;
  std::uint32_t domain_size = 0;
  unsigned domain_log2 = 0;
  math::bn254::G1Affine alpha1, beta1, delta1;
  math::bn254::G2Affine beta2, gamma2, delta2;
  std::vector<math::bn254::G1Affine> ic;
  BasicCoefficientList<math::bn254::Fr> coefficients;
  G1Points a;   // n_vars
  G1Points b1;  // n_vars
  G2Points b2;  // n_vars
  G1Points c;   // n_vars - n_public - 1
  G1Points h;   // domain_size
};

// read_zkey's checks for a BN254 key (CurveError naming both curves for a BLS12-381 key).
ProvingKey read_zkey(const std::filesystem::path& path);
ProvingKey read_zkey(InputFile file);
// write_zkey's file of a BN254 key ("bn128" to snarkjs).
void write_zkey(const std::filesystem::path& path, const ProvingKey& key);
}  // namespace bn254

// The curve of a .zkey's header (its primes q and r); InputError naming the file for a file that
// is not a .zkey or whose primes are of no curve Stagehand knows.
Curve zkey_curve(const std::filesystem::path& path);

// A key of either curve, opened and read once: the header's primes, read before the other
// sections, pick the reader (InputError naming the file as zkey_curve's, then each reader's).
using AnyProvingKey = std::variant<ProvingKey, bn254::ProvingKey>;
AnyProvingKey read_any_zkey(const std::filesystem::path& path);
AnyProvingKey read_any_zkey(InputFile file);

namespace detail {
// Section 4's records (44 bytes each: matrix, constraint, signal, then the value in snarkjs's
// double Montgomery form) into `out`, one per element, on up to `threads` threads (0 = all) in
// ranges of at least `minimum_range` records. Returns the index of the first record out of range
// (a matrix other than 0 or 1, a constraint or signal past the key's, a value not below r), or
// out.size(); the fields of that record are in `out`.
template <class Fr>
std::uint64_t decode_coefficients(std::span<const std::uint8_t> records, std::uint32_t domain_size,
                                  std::uint32_t n_vars, std::span<BasicCoefficient<Fr>> out, unsigned threads,
                                  std::size_t minimum_range = 1 << 16);
inline std::uint64_t decode_coefficients(std::span<const std::uint8_t> records, std::uint32_t domain_size,
                                         std::uint32_t n_vars, std::span<Coefficient> out, unsigned threads,
                                         std::size_t minimum_range = 1 << 16) {
  return decode_coefficients<math::Fr>(records, domain_size, n_vars, out, threads, minimum_range);
}
}  // namespace detail

// The largest evaluation domain Stagehand supports, 2^28: readers and setup refuse larger ones
// before reserving memory for them.
constexpr unsigned kMaxDomainLog2 = 28;

// The header-derived sizes a .zkey must have for a circuit (used by readers and setup).
unsigned domain_log2_for(std::uint64_t constraint_count, std::uint64_t public_count);

}  // namespace stagehand::groth16
