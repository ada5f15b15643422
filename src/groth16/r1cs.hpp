#pragma once
// circom's constraint system (.r1cs): section 1 = header, section 2 = constraints (A, B, C
// linear combinations of wires, coefficients in standard form), section 3 = wire labels. The
// header's prime is the curve's scalar field: BLS12-381's (R1cs) or BN254's (bn254::R1cs).

#include "groth16/binfile.hpp"
#include "groth16/curve.hpp"
#include "math/bn254.hpp"
#include "math/fr.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace stagehand::groth16 {

template <class Fr>
struct BasicTerm {
  std::uint32_t wire = 0;
  Fr coefficient;
};
template <class Fr>
using BasicLinearCombination = std::vector<BasicTerm<Fr>>;

template <class Fr>
struct BasicConstraint {
  BasicLinearCombination<Fr> a, b, c;
};

template <class Fr_>
struct BasicR1cs {
  using Fr = Fr_;
  std::uint32_t n_wires = 0;
  std::uint32_t n_outputs = 0;
  std::uint32_t n_public_inputs = 0;
  std::uint32_t n_private_inputs = 0;
  std::uint64_t n_labels = 0;
  std::vector<BasicConstraint<Fr>> constraints;
  std::uint32_t n_public() const { return n_outputs + n_public_inputs; }
};

using Term = BasicTerm<math::Fr>;
using LinearCombination = BasicLinearCombination<math::Fr>;
using Constraint = BasicConstraint<math::Fr>;
using R1cs = BasicR1cs<math::Fr>;

// InputError (naming the file and section) for a truncated file or wires out of range; a
// CurveError naming both curves for a BN254 circuit, and an InputError for a prime of no known
// curve. `hint`, where given, is added to a curve error (what the other inputs are, e.g. "the key
// k.zkey is BLS12-381's"), so that a mismatch names every file.
R1cs read_r1cs(const std::filesystem::path& path, const std::string& hint = {});
// The same from a file already open (the service's, once it has checked where it lies).
R1cs read_r1cs(InputFile input, const std::string& hint = {});
void write_r1cs(const std::filesystem::path& path, const R1cs& r1cs);

namespace bn254 {
using Term = BasicTerm<math::bn254::Fr>;
using LinearCombination = BasicLinearCombination<math::bn254::Fr>;
using Constraint = BasicConstraint<math::bn254::Fr>;
using R1cs = BasicR1cs<math::bn254::Fr>;
// read_r1cs's checks for a BN254 circuit (CurveError naming both curves for a BLS12-381 one).
R1cs read_r1cs(const std::filesystem::path& path, const std::string& hint = {});
void write_r1cs(const std::filesystem::path& path, const R1cs& r1cs);
}  // namespace bn254

// A constraint system of either curve, read once: the header's prime picks the reader. InputError
// naming the file for a prime of no known curve.
using AnyR1cs = std::variant<R1cs, bn254::R1cs>;
AnyR1cs read_any_r1cs(const std::filesystem::path& path);

}  // namespace stagehand::groth16
