#pragma once
// A synthetic circuit of any size and a witness that satisfies it, for benchmarking setup and
// proving at sizes circom would take long to compile (stagehand_make_circuit writes them as
// files; `stagehand bench prove` keeps them in memory).
//
// The shape, with wires laid out as circom does (0 = the constant 1, then outputs, public
// inputs, private inputs, internal signals):
//   wires 1, 2 public outputs out0, out1; 3, 4 public inputs x, y; 5, 6 private inputs s, t;
//   7 + i the chain z_i.
//   z_0 = x·s
//   for i = 1 .. N-3, by i:
//     i % 16 == 5   linear, A and B empty:  0 = -z_i + k·z_{i-1} + 3·z_{i-2} + y + k'  (5 terms)
//     i % 16 == 11  1·(z_{i-1} + 2·z_{i-2} + k·x + t) = z_i        (A = the constant, B 4 terms)
//     i % 8 == 3    (z_{i-1} + 3·y + 5·t + k)·(z_{i-2} + 2·s) = z_i  (A 4 terms, B 2 terms)
//     otherwise     z_{i-1}·z_{i-1} = z_i - k                       (the square chain)
//   with --bits, the square chain's rows with i % 4 != 1 are bit decompositions instead:
//                   z_i·z_i = z_i, z_i a random 0 or 1               (about 55% of the wires)
//   out0 = z_last·t
//   0 = -out1 + z_last + 2·x + k·y                                  (linear)
// with k, k' small constants drawn from the seed, and x, y, s, t drawn from the seed too.
// One generator for both curves' scalar fields (BLS12-381's by default, BN254's by
// make_synthetic_circuit<math::bn254::Fr>): the same seed draws the same integers for either, and
// the circuit's shape does not depend on the field.

#include "groth16/r1cs.hpp"
#include "groth16/zkey.hpp"
#include "math/bn254.hpp"
#include "math/fr.hpp"

#include <cstdint>
#include <vector>

namespace stagehand::groth16 {

inline constexpr std::uint64_t kSyntheticPublic = 4;  // out0, out1, x, y
inline constexpr std::uint64_t kSyntheticMinimumConstraints = 4;

template <class Fr>
struct BasicSyntheticCircuit {
  BasicR1cs<Fr> r1cs;
  std::vector<Fr> witness;
};
using SyntheticCircuit = BasicSyntheticCircuit<math::Fr>;

// `constraint_count` constraints (at least 4), constants and inputs from `seed`, over Fr
// (math::Fr or math::bn254::Fr).
template <class Fr = math::Fr>
BasicSyntheticCircuit<Fr> make_synthetic_circuit(std::uint64_t constraint_count, std::uint64_t seed, bool bits);
// The most constraints whose Groth16 domain is 2^domain_log2 (snarkjs needs N + public + 1 rows):
// 2^K - 5.
std::uint64_t synthetic_constraints_for_domain(unsigned domain_log2);
// Every constraint A·B = C on the witness; std::logic_error naming the first that fails.
template <class Fr>
void check_synthetic_witness(const BasicSyntheticCircuit<Fr>& circuit);

extern template BasicSyntheticCircuit<math::Fr> make_synthetic_circuit<math::Fr>(std::uint64_t, std::uint64_t, bool);
extern template BasicSyntheticCircuit<math::bn254::Fr> make_synthetic_circuit<math::bn254::Fr>(std::uint64_t,
                                                                                               std::uint64_t, bool);
extern template void check_synthetic_witness<math::Fr>(const BasicSyntheticCircuit<math::Fr>&);
extern template void check_synthetic_witness<math::bn254::Fr>(const BasicSyntheticCircuit<math::bn254::Fr>&);

}  // namespace stagehand::groth16
