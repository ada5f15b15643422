#pragma once
// The small circuit the engine and service tests prove: out = x·y (public), t = x + 3y; wires
// 0 = 1, 1 = out, 2 = x (public input), 3 = y, 4 = t. Over BLS12-381's Fr, or BN254's.

#include "groth16/r1cs.hpp"
#include "math/bn254.hpp"
#include "math/fr.hpp"

namespace stagehand::testing {

template <class Fr>
groth16::BasicR1cs<Fr> multiplier_circuit_over() {
  groth16::BasicR1cs<Fr> r1cs;
  r1cs.n_wires = 5;
  r1cs.n_outputs = 1;
  r1cs.n_public_inputs = 1;
  r1cs.n_private_inputs = 1;
  r1cs.n_labels = 5;
  const Fr one = Fr::one();
  r1cs.constraints.push_back({{{2, one}}, {{3, one}}, {{1, one}}});
  r1cs.constraints.push_back({{{2, one}, {3, Fr::from_uint64(3)}}, {{0, one}}, {{4, one}}});
  return r1cs;
}

inline groth16::R1cs multiplier_circuit() { return multiplier_circuit_over<math::Fr>(); }
inline groth16::bn254::R1cs bn254_multiplier_circuit() { return multiplier_circuit_over<math::bn254::Fr>(); }

}  // namespace stagehand::testing
