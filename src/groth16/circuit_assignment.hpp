#pragma once
// A circuit's assignment as bellperson synthesises it (what Filecoin hands SupraSeal C2), built
// from an .r1cs and its witness: a, b, c per row (the circuit's constraints, then one row per
// input with the input in A and zeros in B and C), the input and aux values, and density bitmaps
// marking the variables whose A or B column is not empty. A key from `stagehand setup --format
// params` has a point for exactly those variables (its columns are evaluated at a random τ, so a
// non-empty column is non-zero there but with negligible probability); check_assignment compares
// the bitmaps' popcounts with the key's sets before a proof is made.

#include "groth16/assignment_prover.hpp"
#include "groth16/r1cs.hpp"
#include "math/fr.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace stagehand::groth16 {

struct CircuitAssignment {
  std::vector<std::uint64_t> a_aux_words, b_inp_words, b_aux_words;
  std::size_t a_aux_popcount = 0, b_inp_popcount = 0, b_aux_popcount = 0;
  std::vector<math::Fr> a, b, c, inputs, aux;

  // Points into this assignment, which must outlive the view.
  AssignmentView view() const;
};

// Which wires appear in any constraint's A (in_a) and B (in_b) columns.
struct UsedColumns {
  std::vector<bool> in_a, in_b;
};
UsedColumns used_columns(const R1cs& r1cs);

// The value of a linear combination of the witness's wires, over either curve's scalar field.
// std::invalid_argument where a wire is beyond the witness.
template <class Fr>
Fr evaluate(const BasicLinearCombination<Fr>& combination, std::span<const Fr> witness) {
  Fr sum = Fr::zero();
  for (const auto& term : combination) {
    if (term.wire >= witness.size()) {
      throw std::invalid_argument(
          fmt::format("wire {} of the constraint system is beyond the witness's {} values", term.wire, witness.size()));
    }
    sum += term.coefficient * witness[term.wire];
  }
  return sum;
}

// std::invalid_argument where the witness does not have the constraint system's n_wires values.
CircuitAssignment circuit_assignment(const R1cs& r1cs, std::span<const math::Fr> witness);

}  // namespace stagehand::groth16
