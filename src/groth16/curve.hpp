#pragma once
// The curves a snarkjs file may be of, told apart by the primes in its header (a .zkey's q and r,
// a .wtns's or .r1cs's r), and the error for a file of a curve its reader does not take.

#include "groth16/binfile.hpp"
#include "groth16/errors.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace stagehand::groth16 {

enum class Curve { bls12_381, bn254 };

// "BLS12-381", "BN254": what messages call them.
std::string_view curve_name(Curve curve);
// snarkjs's names, the "curve" of proof.json and vk.json: "bls12381", "bn128".
std::string_view snarkjs_curve_name(Curve curve);
// The circom option that compiles a circuit for the curve ("--prime bls12381", "--prime bn128").
std::string_view circom_prime_option(Curve curve);

// The curve whose scalar field prime r these little-endian bytes are (any length), or nothing.
std::optional<Curve> curve_of_scalar_prime(std::span<const std::uint8_t> r);
// The same of a base field prime q.
std::optional<Curve> curve_of_base_prime(std::span<const std::uint8_t> q);

// A file of a known curve other than the one its reader or the other inputs take: `found` is the
// file's, `expected` the one wanted. The message names the file and both curves.
class CurveError : public InputError {
 public:
  CurveError(const std::string& message, Curve found, Curve expected)
      : InputError(message), found_(found), expected_(expected) {}
  Curve found() const { return found_; }
  Curve expected() const { return expected_; }

 private:
  Curve found_;
  Curve expected_;
};

// Fails through the reader (naming the file and section) unless `found` is `expected`: a prime of no
// known curve is an InputError naming the curve expected, a known curve other than it a CurveError
// naming both. `prime` names the prime checked ("the scalar field prime r"), `file_kind` what the
// file is ("key", "witness") and `hint` what to do instead (may be empty).
void expect_curve(const SectionReader& reader, std::optional<Curve> found, Curve expected, std::string_view prime,
                  std::string_view file_kind, std::string_view hint = {});

}  // namespace stagehand::groth16
