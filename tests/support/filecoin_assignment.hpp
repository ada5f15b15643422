#pragma once
// A circuit's assignment as bellperson synthesises it (groth16/circuit_assignment.hpp, under the
// tests' name), and a proof in bellperson's form written out term by term, the reference the
// assignment prover and the .params tests are held to.

#include "groth16/assignment_prover.hpp"
#include "groth16/circuit_assignment.hpp"
#include "groth16/params.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "math/h_polynomial.hpp"
#include "math/msm.hpp"
#include "math/ntt.hpp"

#include <bit>
#include <cstdint>
#include <vector>

namespace stagehand::testing {

// The assignment tests' test-only setup: seed 42, two threads (the same key every run).
inline groth16::SetupOptions seeded() {
  groth16::SetupOptions options;
  options.seed = 42;
  options.thread_count = 2;
  return options;
}

// The assignment itself is the library's (groth16/circuit_assignment.hpp), which `stagehand prove
// --params` makes too.
using FilecoinAssignment = groth16::CircuitAssignment;

inline FilecoinAssignment filecoin_assignment(const groth16::R1cs& r1cs, const std::vector<math::Fr>& w) {
  return groth16::circuit_assignment(r1cs, w);
}

// A proof in bellperson's form over the key's sets, in the textbook's terms (A and B1 with their
// blinding, C = L + H + s·A + r·B1 − r·s·δ1), from the witness: a, b, c per row, H's coefficients
// on the domain of 7, the A and B queries over the variables whose column is not empty.
inline groth16::Proof prove_bellperson(const groth16::ParamsKey& key, const groth16::R1cs& r1cs,
                                       const std::vector<math::Fr>& w, const groth16::ProofRandomness& rs) {
  using math::Fr;
  const std::size_t m = key.domain_size(), inputs = key.input_count();
  std::vector<Fr> a(m), b(m), c(m);
  auto [in_a, in_b] = groth16::used_columns(r1cs);
  for (std::size_t row = 0; row < r1cs.constraints.size(); ++row) {
    const auto& constraint = r1cs.constraints[row];
    a[row] = groth16::evaluate<math::Fr>(constraint.a, w), b[row] = groth16::evaluate<math::Fr>(constraint.b, w),
    c[row] = groth16::evaluate<math::Fr>(constraint.c, w);
  }
  for (std::size_t i = 0; i < inputs; ++i) a[r1cs.constraints.size() + i] = w[i], in_a[i] = true;
  math::h_coefficients_classic(a, b, c, math::Domain::classic(static_cast<unsigned>(std::countr_zero(m)), 2), 2);
  auto query = [&](const std::vector<bool>& density) {
    std::vector<Fr> scalars;
    for (std::size_t i = 0; i < w.size(); ++i)
      if (density[i]) scalars.push_back(w[i]);
    return scalars;
  };
  const auto sum_a = math::msm(key.a.decode(), query(in_a), 2);
  const auto sum_b1 = math::msm(key.b_g1.decode(), query(in_b), 2);
  const auto sum_b2 = math::msm(key.b_g2.decode(), query(in_b), 2);
  const auto sum_l = math::msm(key.l.decode(), std::vector<Fr>(w.begin() + static_cast<long>(inputs), w.end()), 2);
  const auto sum_h = math::msm(key.h.decode(), std::vector<Fr>(a.begin(), a.begin() + static_cast<long>(m - 1)), 2);
  using math::G1Projective;
  using math::G2Projective;
  const auto delta1 = G1Projective::from_affine(key.vk.delta1);
  const auto proof_a = G1Projective::from_affine(key.vk.alpha1) + sum_a + delta1.multiply(rs.r);
  const auto proof_b1 = G1Projective::from_affine(key.vk.beta1) + sum_b1 + delta1.multiply(rs.s);
  const auto proof_b2 =
      G2Projective::from_affine(key.vk.beta2) + sum_b2 + G2Projective::from_affine(key.vk.delta2).multiply(rs.s);
  const auto proof_c = sum_l + sum_h + proof_a.multiply(rs.s) + proof_b1.multiply(rs.r) - delta1.multiply(rs.r * rs.s);
  return groth16::Proof{proof_a.to_affine(), proof_b2.to_affine(), proof_c.to_affine()};
}

}  // namespace stagehand::testing
