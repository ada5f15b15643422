#include "groth16/circuit_assignment.hpp"

#include "util/assert.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace stagehand::groth16 {
namespace {

// Bits [begin, end) of `bits` as u64 words, bit i - begin in bit (i - begin) % 64 of its word.
std::vector<std::uint64_t> bitmap(const std::vector<bool>& bits, std::size_t begin, std::size_t end,
                                  std::size_t& popcount) {
  std::vector<std::uint64_t> words((end - begin + 63) / 64);
  popcount = 0;
  for (std::size_t i = begin; i < end; ++i) {
    if (!bits[i]) continue;
    words[(i - begin) / 64] |= std::uint64_t{1} << ((i - begin) % 64);
    ++popcount;
  }
  return words;
}

}  // namespace

AssignmentView CircuitAssignment::view() const {
  return {{a_aux_words, aux.size(), a_aux_popcount},
          {b_inp_words, inputs.size(), b_inp_popcount},
          {b_aux_words, aux.size(), b_aux_popcount},
          a,
          b,
          c,
          inputs,
          aux};
}

UsedColumns used_columns(const R1cs& r1cs) {
  UsedColumns used{std::vector<bool>(r1cs.n_wires, false), std::vector<bool>(r1cs.n_wires, false)};
  for (const auto& constraint : r1cs.constraints) {
    for (const auto& term : constraint.a) used.in_a.at(term.wire) = true;
    for (const auto& term : constraint.b) used.in_b.at(term.wire) = true;
  }
  return used;
}

CircuitAssignment circuit_assignment(const R1cs& r1cs, std::span<const math::Fr> witness) {
  if (witness.size() != r1cs.n_wires) {
    throw std::invalid_argument(
        fmt::format("the witness has {} values, but the constraint system {} wires", witness.size(), r1cs.n_wires));
  }
  const std::size_t inputs = r1cs.n_public() + 1;
  STAGEHAND_ASSERT(inputs <= witness.size());
  CircuitAssignment out;
  const std::size_t rows = r1cs.constraints.size() + inputs;
  out.a.reserve(rows), out.b.reserve(rows), out.c.reserve(rows);
  for (const auto& constraint : r1cs.constraints) {
    out.a.push_back(evaluate<math::Fr>(constraint.a, witness));
    out.b.push_back(evaluate<math::Fr>(constraint.b, witness));
    out.c.push_back(evaluate<math::Fr>(constraint.c, witness));
  }
  // bellperson's rows that make the inputs dense in A (and bind them into the proof).
  for (std::size_t i = 0; i < inputs; ++i) out.a.push_back(witness[i]), out.b.emplace_back(), out.c.emplace_back();
  out.inputs.assign(witness.begin(), witness.begin() + static_cast<long>(inputs));
  out.aux.assign(witness.begin() + static_cast<long>(inputs), witness.end());
  const auto used = used_columns(r1cs);
  out.a_aux_words = bitmap(used.in_a, inputs, witness.size(), out.a_aux_popcount);
  out.b_inp_words = bitmap(used.in_b, 0, inputs, out.b_inp_popcount);
  out.b_aux_words = bitmap(used.in_b, inputs, witness.size(), out.b_aux_popcount);
  STAGEHAND_ASSERT(out.a.size() == rows && out.aux.size() + out.inputs.size() == witness.size());
  return out;
}

}  // namespace stagehand::groth16
