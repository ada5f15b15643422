#pragma once
// circom's constraint system (.r1cs): section 1 = header, section 2 = constraints (A, B, C
// linear combinations of wires, coefficients in standard form), section 3 = wire labels.

#include "math/fr.hpp"

#include <cstdint>
#include <filesystem>
#include <utility>
#include <vector>

namespace stagehand::groth16 {

struct Term {
  std::uint32_t wire = 0;
  math::Fr coefficient;
};
using LinearCombination = std::vector<Term>;

struct Constraint {
  LinearCombination a, b, c;
};

struct R1cs {
  std::uint32_t n_wires = 0;
  std::uint32_t n_outputs = 0;
  std::uint32_t n_public_inputs = 0;
  std::uint32_t n_private_inputs = 0;
  std::uint64_t n_labels = 0;
  std::vector<Constraint> constraints;
  std::uint32_t n_public() const { return n_outputs + n_public_inputs; }
};

// InputError (naming the file and section) for another prime, a truncated file, wires out of range.
R1cs read_r1cs(const std::filesystem::path& path);
void write_r1cs(const std::filesystem::path& path, const R1cs& r1cs);

}  // namespace stagehand::groth16
