#pragma once
// The small circuit the engine and service tests prove: out = x·y (public), t = x + 3y; wires
// 0 = 1, 1 = out, 2 = x (public input), 3 = y, 4 = t.

#include "groth16/r1cs.hpp"
#include "math/fr.hpp"

namespace stagehand::testing {

inline groth16::R1cs multiplier_circuit() {
  using math::Fr;
  groth16::R1cs r1cs;
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

}  // namespace stagehand::testing
