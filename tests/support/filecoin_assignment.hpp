#pragma once
// A circuit's assignment as bellperson synthesises it (what Filecoin hands SupraSeal C2), built
// from an .r1cs and a witness: a, b, c per row (the circuit's constraints, then one row per input
// with the input in A), the input and aux values, and density bitmaps marking the variables whose
// A or B column is not empty. And a proof in bellperson's form written out term by term, the
// reference the assignment prover and the .params tests are held to.

#include "groth16/assignment_prover.hpp"
#include "groth16/params.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "math/h_polynomial.hpp"
#include "math/msm.hpp"
#include "math/ntt.hpp"

#include <bit>
#include <cstdint>
#include <vector>

namespace stagehand::testing {

struct FilecoinAssignment {
  std::vector<std::uint64_t> a_aux_words, b_inp_words, b_aux_words;
  std::size_t a_aux_popcount = 0, b_inp_popcount = 0, b_aux_popcount = 0;
  std::vector<math::Fr> a, b, c, inputs, aux;

  groth16::AssignmentView view() const {
    return {{a_aux_words, aux.size(), a_aux_popcount},
            {b_inp_words, inputs.size(), b_inp_popcount},
            {b_aux_words, aux.size(), b_aux_popcount},
            a, b, c, inputs, aux};
  }
};

namespace detail {
inline math::Fr dot(const groth16::LinearCombination& combination, const std::vector<math::Fr>& w) {
  math::Fr sum;
  for (const auto& term : combination) sum += term.coefficient * w[term.wire];
  return sum;
}

// Which wires appear in any constraint's A (in_a) and B (in_b) columns.
inline void columns_used(const groth16::R1cs& r1cs, std::vector<bool>& in_a, std::vector<bool>& in_b) {
  in_a.assign(r1cs.n_wires, false);
  in_b.assign(r1cs.n_wires, false);
  for (const auto& constraint : r1cs.constraints) {
    for (const auto& term : constraint.a) in_a[term.wire] = true;
    for (const auto& term : constraint.b) in_b[term.wire] = true;
  }
}

inline std::vector<std::uint64_t> bitmap(const std::vector<bool>& bits, std::size_t begin, std::size_t end,
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
}  // namespace detail

inline FilecoinAssignment filecoin_assignment(const groth16::R1cs& r1cs, const std::vector<math::Fr>& w) {
  const std::size_t inputs = r1cs.n_public() + 1;
  FilecoinAssignment out;
  for (const auto& constraint : r1cs.constraints) {
    out.a.push_back(detail::dot(constraint.a, w));
    out.b.push_back(detail::dot(constraint.b, w));
    out.c.push_back(detail::dot(constraint.c, w));
  }
  for (std::size_t i = 0; i < inputs; ++i) out.a.push_back(w[i]), out.b.emplace_back(), out.c.emplace_back();
  out.inputs.assign(w.begin(), w.begin() + static_cast<long>(inputs));
  out.aux.assign(w.begin() + static_cast<long>(inputs), w.end());
  std::vector<bool> in_a, in_b;
  detail::columns_used(r1cs, in_a, in_b);
  out.a_aux_words = detail::bitmap(in_a, inputs, w.size(), out.a_aux_popcount);
  out.b_inp_words = detail::bitmap(in_b, 0, inputs, out.b_inp_popcount);
  out.b_aux_words = detail::bitmap(in_b, inputs, w.size(), out.b_aux_popcount);
  return out;
}

// A proof in bellperson's form over the key's sets, in the textbook's terms (A and B1 with their
// blinding, C = L + H + s·A + r·B1 − r·s·δ1), from the witness: a, b, c per row, H's coefficients
// on the domain of 7, the A and B queries over the variables whose column is not empty.
inline groth16::Proof prove_bellperson(const groth16::ParamsKey& key, const groth16::R1cs& r1cs,
                                       const std::vector<math::Fr>& w, const groth16::ProofRandomness& rs) {
  using math::Fr;
  const std::size_t m = key.domain_size(), inputs = key.input_count();
  std::vector<Fr> a(m), b(m), c(m);
  std::vector<bool> in_a, in_b;
  detail::columns_used(r1cs, in_a, in_b);
  for (std::size_t row = 0; row < r1cs.constraints.size(); ++row) {
    const auto& constraint = r1cs.constraints[row];
    a[row] = detail::dot(constraint.a, w), b[row] = detail::dot(constraint.b, w), c[row] = detail::dot(constraint.c, w);
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
  const auto proof_b2 = G2Projective::from_affine(key.vk.beta2) + sum_b2 + G2Projective::from_affine(key.vk.delta2).multiply(rs.s);
  const auto proof_c = sum_l + sum_h + proof_a.multiply(rs.s) + proof_b1.multiply(rs.r) - delta1.multiply(rs.r * rs.s);
  return groth16::Proof{proof_a.to_affine(), proof_b2.to_affine(), proof_c.to_affine()};
}

}  // namespace stagehand::testing
