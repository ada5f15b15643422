#pragma once
// Proofs from Filecoin's assignments against a .params key: the CPU reference of SupraSeal C2's
// prover (docs/supraseal-c2.md). An assignment is what bellperson synthesises for one circuit:
// the a, b, c evaluations per constraint, the input and aux values, and density bitmaps saying
// which variables have a point in the key's A and B queries. Given r and s the computation is
// deterministic, so a device path must give these bytes exactly, even for assignments that
// satisfy nothing.
//
// The proof, bellperson's: with Σa over the inputs and the aux values whose A bit is set, Σb1 and
// Σb2 over the inputs and aux values whose B bits are set (the key's points in that order), H the
// MSM of h's points with bellperson's H coefficients (math::h_coefficients_classic on the domain
// of 7) and L the MSM of l's points with the aux values:
//   A = α1 + r·δ1 + Σa,  B = β2 + s·δ2 + Σb2,
//   C = s·Σa + r·Σb1 + r·s·δ1 + s·α1 + r·β1 + H + L.

#include "groth16/params.hpp"
#include "groth16/prover.hpp"
#include "groth16/zkey.hpp"
#include "math/fr.hpp"
#include "math/ntt.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace stagehand::groth16 {

// Which variables of one kind have a query point: bit i is bit i % 64 of words[i / 64].
struct DensityView {
  std::span<const std::uint64_t> words;  // at least (bit_len + 63) / 64 words
  std::size_t bit_len = 0;
  std::size_t popcount = 0;  // the caller's count of the set bits among the first bit_len
};

// One circuit's assignment, SupraSeal's `Assignment` with its values decoded.
struct AssignmentView {
  DensityView a_aux, b_inp, b_aux;
  std::span<const math::Fr> a, b, c;  // abc_size each, at most the key's domain
  std::span<const math::Fr> inputs;   // the constant one first, then the public inputs
  std::span<const math::Fr> aux;
};

// An assignment's bitmaps and the lengths of its value arrays: what can be checked before any
// value is read (a C caller's lengths say how far its arrays may be read).
struct AssignmentShape {
  DensityView a_aux, b_inp, b_aux;
  std::size_t a = 0, b = 0, c = 0, inputs = 0, aux = 0;
};
AssignmentShape shape_of(const AssignmentView& assignment);

// InputError naming the circuit and the field where the assignment does not fit the key: aux
// count against l, inputs against ic, each bitmap's bit length and popcount (counted here), the
// A and B queries' sizes, a, b and c of equal length at most the domain.
void check_assignment(const ParamsKey& key, const AssignmentShape& shape, std::size_t circuit);
inline void check_assignment(const ParamsKey& key, const AssignmentView& assignment, std::size_t circuit) {
  check_assignment(key, shape_of(assignment), circuit);
}

// The scalars of the A query (the inputs, then the aux values whose a_aux bit is set) and of the
// B queries (the inputs whose b_inp bit is set, then the aux values whose b_aux bit is set), in
// the order of the key's points: what the CPU reference and the device path sum.
std::vector<math::Fr> a_query_scalars(const AssignmentView& assignment);
std::vector<math::Fr> b_query_scalars(const AssignmentView& assignment);
// How many scalars each query has (the popcounts the assignment states, check_assignment's).
std::size_t a_query_count(const AssignmentView& assignment);
std::size_t b_query_count(const AssignmentView& assignment);
// The same scalars, in the same order, written into `out` (exactly the query's count), the aux
// part gathered on up to `thread_count` threads (0: every hardware thread).
void gather_a_query_scalars(const AssignmentView& assignment, std::span<math::Fr> out, unsigned thread_count);
void gather_b_query_scalars(const AssignmentView& assignment, std::span<math::Fr> out, unsigned thread_count);

// One proof's five sums: A, B1 and B2 over their queries, H over bellperson's H coefficients, L
// over the aux values.
struct AssignmentSums {
  math::G1Projective a, b1, h, l;
  math::G2Projective b2;
};
// SupraSeal's assembly of the proof from its sums, r and s (the formula at the top of this file).
Proof assemble_assignment_proof(const VerifyingKey& vk, const AssignmentSums& sums, const ProofRandomness& randomness);

// The key's verifying key in the form ProofVerifier takes.
ProvingKey verifier_key_of(const ParamsKey& key);

// The key's points decoded once for any number of proofs; the key must outlive the prover.
class AssignmentProver {
 public:
  explicit AssignmentProver(const ParamsKey& key, unsigned thread_count = 0);

  // One proof, unchecked (check_assignment first): deterministic bytes for any assignment.
  Proof prove(const AssignmentView& assignment, const ProofRandomness& randomness) const;

  // Checks every assignment, proves each and pairing-checks every proof against the key's
  // verifying key (the public inputs are the inputs after the constant one); InputError naming
  // the circuit where a check fails.
  std::vector<Proof> prove_checked(std::span<const AssignmentView> assignments,
                                   std::span<const ProofRandomness> randomness) const;

 private:
  math::G1Projective h_sum(const AssignmentView& assignment) const;

  const ParamsKey& key_;
  unsigned thread_count_;
  math::Domain domain_;  // the key's domain, roots from 7 (bellperson's)
  std::vector<math::G1Affine> h_, l_, a_, b_g1_;
  std::vector<math::G2Affine> b_g2_;
  ProvingKey verifier_key_;  // the verifying key in the form ProofVerifier takes
};

// SupraSeal's groth16_proof: A (x, y), B (x.c0, x.c1, y.c0, y.c1), C (x, y), each Fq coordinate
// six little-endian u64 limbs of its Montgomery form; a point at infinity is all zeros.
inline constexpr std::size_t kSuprasealProofBytes = 384;
using SuprasealProofBytes = std::array<std::uint8_t, kSuprasealProofBytes>;
SuprasealProofBytes encode_supraseal_proof(const Proof& proof);
// The inverse, for callers' checks: InputError where a coordinate is not below p or a point is
// not on its curve.
Proof decode_supraseal_proof(std::span<const std::uint8_t, kSuprasealProofBytes> bytes);

// A proof as filecoin-proofs stores it (bellperson's Proof::write): A ‖ B ‖ C in zcash's compressed
// encoding (params.hpp), 48 + 96 + 48 bytes.
inline constexpr std::size_t kFilecoinProofBytes = 192;
using FilecoinProofBytes = std::array<std::uint8_t, kFilecoinProofBytes>;
FilecoinProofBytes encode_filecoin_proof(const Proof& proof);
// The inverse: InputError naming the point (A, B or C) and why it is none.
Proof decode_filecoin_proof(std::span<const std::uint8_t, kFilecoinProofBytes> bytes);

}  // namespace stagehand::groth16
