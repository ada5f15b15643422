#include "groth16/assignment_prover.hpp"

#include "groth16/verify.hpp"
#include "math/h_polynomial.hpp"
#include "math/msm.hpp"
#include "math/ntt.hpp"
#include "math/parallel.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>

namespace stagehand::groth16 {
namespace {

using math::Fq;
using math::Fr;
using math::G1Affine;
using math::G1Projective;
using math::G2Affine;
using math::G2Projective;

bool bit_set(const DensityView& density, std::size_t index) { return (density.words[index / 64] >> (index % 64)) & 1U; }

void check_density(const DensityView& density, const char* name, std::size_t expected_bits, const char* of_what,
                   std::size_t circuit) {
  if (density.bit_len != expected_bits) {
    throw InputError(fmt::format("circuit {}: {}_bit_len is {}, but the assignment has {} {}", circuit, name,
                                 density.bit_len, expected_bits, of_what));
  }
  if (density.words.size() < (density.bit_len + 63) / 64) {
    throw InputError(fmt::format("circuit {}: {}_density has {} words, fewer than {} bits need", circuit, name,
                                 density.words.size(), density.bit_len));
  }
  std::size_t count = 0;
  for (std::size_t i = 0; i < density.bit_len; ++i) count += bit_set(density, i) ? 1 : 0;
  if (count != density.popcount) {
    throw InputError(fmt::format("circuit {}: {}_popcount is {}, but {}_density has {} of its {} bits set", circuit,
                                 name, density.popcount, name, count, density.bit_len));
  }
}

void put_fq(const Fq& value, std::uint8_t*& out) {
  std::memcpy(out, value.montgomery_limbs().data(), Fq::byte_count);  // little-endian limbs, as blst lays them out
  out += Fq::byte_count;
}

Fq get_fq(const std::uint8_t*& in, const char* point) {
  Fq::LimbArray limbs{};
  std::memcpy(limbs.data(), in, Fq::byte_count);
  in += Fq::byte_count;
  const auto value = Fq::from_montgomery_limbs(limbs);
  if (!value) throw InputError(fmt::format("groth16_proof: a coordinate of {} is not below p", point));
  return *value;
}

bool all_zero(std::span<const std::uint8_t> bytes) {
  for (const auto byte : bytes) {
    if (byte != 0) return false;
  }
  return true;
}

// A word of `density`'s bitmap, the bits past its bit_len cleared.
std::uint64_t density_word(const DensityView& density, std::size_t word) {
  const std::uint64_t bits = density.words[word];
  const std::size_t end = (word + 1) * 64;
  return end <= density.bit_len ? bits : bits & ((std::uint64_t{1} << (density.bit_len % 64)) - 1);
}

// The scalars of one query into `out`: the inputs (those whose bit is set where `inputs_density`
// is given), then the aux values whose bit is set. The aux part is cut into ranges of whole
// bitmap words: each range's place in `out` is the count of set bits before it, so the ranges are
// written on several threads in the order one thread would write them.
void gather_query(const AssignmentView& assignment, const DensityView* inputs_density, const DensityView& aux_density,
                  std::span<Fr> out, unsigned thread_count) {
  const std::size_t inputs = inputs_density != nullptr ? inputs_density->popcount : assignment.inputs.size();
  STAGEHAND_ASSERT(out.size() == inputs + aux_density.popcount, "{} places for {} + {} scalars", out.size(), inputs,
                   aux_density.popcount);
  STAGEHAND_ASSERT(aux_density.bit_len == assignment.aux.size(), "{} density bits for {} aux values",
                   aux_density.bit_len, assignment.aux.size());
  std::size_t placed = 0;
  for (std::size_t i = 0; i < assignment.inputs.size(); ++i) {
    if (inputs_density == nullptr || bit_set(*inputs_density, i)) out[placed++] = assignment.inputs[i];
  }
  STAGEHAND_ASSERT(placed == inputs, "{} inputs set in the density, {} stated", placed, inputs);
  constexpr std::size_t kWordsPerRange = 4096;
  const std::size_t words = (aux_density.bit_len + 63) / 64;
  const std::size_t ranges = (words + kWordsPerRange - 1) / kWordsPerRange;
  std::vector<std::size_t> first(ranges + 1, 0);  // first[r + 1]: range r's count, then the sums before each
  math::detail::run_tasks(ranges, thread_count, [&](std::size_t range) {
    const std::size_t end = std::min(words, (range + 1) * kWordsPerRange);
    std::size_t count = 0;
    for (std::size_t word = range * kWordsPerRange; word < end; ++word) {
      count += static_cast<std::size_t>(std::popcount(density_word(aux_density, word)));
    }
    first[range + 1] = count;
  });
  std::partial_sum(first.begin(), first.end(), first.begin());
  STAGEHAND_ASSERT(placed + first[ranges] == out.size(), "{} aux bits set, {} stated", first[ranges],
                   aux_density.popcount);
  math::detail::run_tasks(ranges, thread_count, [&](std::size_t range) {
    const std::size_t end = std::min(words, (range + 1) * kWordsPerRange);
    std::size_t at = placed + first[range];
    for (std::size_t word = range * kWordsPerRange; word < end; ++word) {
      for (auto bits = density_word(aux_density, word); bits != 0; bits &= bits - 1) {
        out[at++] = assignment.aux[word * 64 + static_cast<std::size_t>(std::countr_zero(bits))];
      }
    }
  });
}

}  // namespace

AssignmentShape shape_of(const AssignmentView& assignment) {
  return AssignmentShape{assignment.a_aux,    assignment.b_inp,    assignment.b_aux,         assignment.a.size(),
                         assignment.b.size(), assignment.c.size(), assignment.inputs.size(), assignment.aux.size()};
}

std::size_t a_query_count(const AssignmentView& assignment) {
  return assignment.inputs.size() + assignment.a_aux.popcount;
}

std::size_t b_query_count(const AssignmentView& assignment) {
  return assignment.b_inp.popcount + assignment.b_aux.popcount;
}

void gather_a_query_scalars(const AssignmentView& assignment, std::span<Fr> out, unsigned thread_count) {
  gather_query(assignment, nullptr, assignment.a_aux, out, thread_count);
}

void gather_b_query_scalars(const AssignmentView& assignment, std::span<Fr> out, unsigned thread_count) {
  gather_query(assignment, &assignment.b_inp, assignment.b_aux, out, thread_count);
}

std::vector<Fr> a_query_scalars(const AssignmentView& assignment) {
  std::vector<Fr> scalars(a_query_count(assignment));
  gather_a_query_scalars(assignment, scalars, 1);
  return scalars;
}

std::vector<Fr> b_query_scalars(const AssignmentView& assignment) {
  std::vector<Fr> scalars(b_query_count(assignment));
  gather_b_query_scalars(assignment, scalars, 1);
  return scalars;
}

Proof assemble_assignment_proof(const VerifyingKey& vk, const AssignmentSums& sums, const ProofRandomness& randomness) {
  const Fr& r = randomness.r;
  const Fr& s = randomness.s;
  const auto delta1 = G1Projective::from_affine(vk.delta1);
  const auto alpha1 = G1Projective::from_affine(vk.alpha1);
  const G1Projective proof_a = alpha1 + delta1.multiply(r) + sums.a;
  const G2Projective proof_b =
      G2Projective::from_affine(vk.beta2) + G2Projective::from_affine(vk.delta2).multiply(s) + sums.b2;
  const G1Projective proof_c = sums.a.multiply(s) + sums.b1.multiply(r) + delta1.multiply(r * s) + alpha1.multiply(s) +
                               G1Projective::from_affine(vk.beta1).multiply(r) + sums.h + sums.l;
  return Proof{proof_a.to_affine(), proof_b.to_affine(), proof_c.to_affine()};
}

ProvingKey verifier_key_of(const ParamsKey& key) {
  STAGEHAND_ASSERT(!key.vk.ic.empty());
  ProvingKey verifier_key;
  verifier_key.n_public = static_cast<std::uint32_t>(key.vk.ic.size() - 1);
  verifier_key.alpha1 = key.vk.alpha1;
  verifier_key.beta1 = key.vk.beta1;
  verifier_key.delta1 = key.vk.delta1;
  verifier_key.beta2 = key.vk.beta2;
  verifier_key.gamma2 = key.vk.gamma2;
  verifier_key.delta2 = key.vk.delta2;
  verifier_key.ic = key.vk.ic;
  return verifier_key;
}

void check_assignment(const ParamsKey& key, const AssignmentShape& shape, std::size_t circuit) {
  if (shape.aux != key.aux_count()) {
    throw InputError(fmt::format("circuit {}: aux_assignment_size is {}, but the key's l has {} points", circuit,
                                 shape.aux, key.aux_count()));
  }
  if (shape.inputs != key.input_count()) {
    throw InputError(fmt::format("circuit {}: inp_assignment_size is {}, but the key's ic has {} points", circuit,
                                 shape.inputs, key.input_count()));
  }
  check_density(shape.a_aux, "a_aux", shape.aux, "aux values", circuit);
  check_density(shape.b_inp, "b_inp", shape.inputs, "inputs", circuit);
  check_density(shape.b_aux, "b_aux", shape.aux, "aux values", circuit);
  if (shape.inputs + shape.a_aux.popcount != key.a.size()) {
    throw InputError(fmt::format("circuit {}: {} inputs + a_aux_popcount {} is not the key's {} A points", circuit,
                                 shape.inputs, shape.a_aux.popcount, key.a.size()));
  }
  if (shape.b_inp.popcount + shape.b_aux.popcount != key.b_g1.size()) {
    throw InputError(fmt::format("circuit {}: b_inp_popcount {} + b_aux_popcount {} is not the key's {} B points",
                                 circuit, shape.b_inp.popcount, shape.b_aux.popcount, key.b_g1.size()));
  }
  if (shape.b != shape.a || shape.c != shape.a) {
    throw InputError(
        fmt::format("circuit {}: a, b and c have {}, {} and {} values", circuit, shape.a, shape.b, shape.c));
  }
  if (shape.a > key.domain_size()) {
    throw InputError(
        fmt::format("circuit {}: abc_size is {}, above the key's domain of {}", circuit, shape.a, key.domain_size()));
  }
}

AssignmentProver::AssignmentProver(const ParamsKey& key, unsigned thread_count)
    : key_(key),
      thread_count_(thread_count),
      domain_(math::Domain::classic(static_cast<unsigned>(std::countr_zero(key.domain_size())), thread_count)),
      h_(key.h.decode(thread_count)),
      l_(key.l.decode(thread_count)),
      a_(key.a.decode(thread_count)),
      b_g1_(key.b_g1.decode(thread_count)),
      b_g2_(key.b_g2.decode(thread_count)),
      verifier_key_(verifier_key_of(key)) {
  STAGEHAND_ASSERT(b_g1_.size() == b_g2_.size() && !key.vk.ic.empty() && domain_.size() == key.domain_size());
}

// bellperson's H: a, b, c zero-padded to the domain m, the quotient's coefficients on the domain
// of 7 (h_coefficients_classic), and the first m - 1 of them against h's m - 1 points.
G1Projective AssignmentProver::h_sum(const AssignmentView& assignment) const {
  const std::size_t m = key_.domain_size();
  std::vector<Fr> a(m), b(m), c(m);
  std::copy(assignment.a.begin(), assignment.a.end(), a.begin());
  std::copy(assignment.b.begin(), assignment.b.end(), b.begin());
  std::copy(assignment.c.begin(), assignment.c.end(), c.begin());
  math::h_coefficients_classic(a, b, c, domain_, thread_count_);
  return math::msm(h_, std::span<const Fr>(a).first(m - 1), thread_count_);
}

Proof AssignmentProver::prove(const AssignmentView& assignment, const ProofRandomness& randomness) const {
  STAGEHAND_ASSERT(assignment.aux.size() == l_.size() && assignment.a.size() <= key_.domain_size());
  const auto a_scalars = a_query_scalars(assignment);
  const auto b_scalars = b_query_scalars(assignment);
  STAGEHAND_ASSERT(a_scalars.size() == a_.size() && b_scalars.size() == b_g1_.size());
  AssignmentSums sums;
  sums.a = math::msm(a_, a_scalars, thread_count_);
  sums.b1 = math::msm(b_g1_, b_scalars, thread_count_);
  sums.b2 = math::msm(b_g2_, b_scalars, thread_count_);
  sums.l = math::msm(l_, assignment.aux, thread_count_);
  sums.h = h_sum(assignment);
  return assemble_assignment_proof(key_.vk, sums, randomness);
}

std::vector<Proof> AssignmentProver::prove_checked(std::span<const AssignmentView> assignments,
                                                   std::span<const ProofRandomness> randomness) const {
  if (assignments.size() != randomness.size()) {
    throw InputError(fmt::format("{} assignments but {} pairs of r and s", assignments.size(), randomness.size()));
  }
  for (std::size_t circuit = 0; circuit < assignments.size(); ++circuit) {
    check_assignment(key_, assignments[circuit], circuit);
  }
  const ProofVerifier verifier(verifier_key_);
  std::vector<Proof> proofs;
  proofs.reserve(assignments.size());
  for (std::size_t circuit = 0; circuit < assignments.size(); ++circuit) {
    const auto& assignment = assignments[circuit];
    proofs.push_back(prove(assignment, randomness[circuit]));
    if (const auto why = verifier.check(proofs.back(), assignment.inputs.subspan(1))) {
      throw InputError(
          fmt::format("circuit {}: the proof does not verify against the key ({}): the assignment does "
                      "not satisfy the circuit",
                      circuit, *why));
    }
  }
  STAGEHAND_ASSERT(proofs.size() == assignments.size());
  return proofs;
}

SuprasealProofBytes encode_supraseal_proof(const Proof& proof) {
  SuprasealProofBytes bytes{};  // points at infinity stay all zeros
  std::uint8_t* out = bytes.data();
  if (!proof.a.is_identity()) put_fq(proof.a.x, out), put_fq(proof.a.y, out);
  out = bytes.data() + 2 * Fq::byte_count;
  if (!proof.b.is_identity()) {
    for (const Fq* coordinate : {&proof.b.x.c0, &proof.b.x.c1, &proof.b.y.c0, &proof.b.y.c1}) put_fq(*coordinate, out);
  }
  out = bytes.data() + 6 * Fq::byte_count;
  if (!proof.c.is_identity()) put_fq(proof.c.x, out), put_fq(proof.c.y, out);
  return bytes;
}

Proof decode_supraseal_proof(std::span<const std::uint8_t, kSuprasealProofBytes> bytes) {
  constexpr std::size_t fq = Fq::byte_count;
  auto g1 = [&](std::size_t at, const char* name) {
    if (all_zero(bytes.subspan(at, 2 * fq))) return G1Affine::identity();
    const std::uint8_t* in = bytes.data() + at;
    const Fq x = get_fq(in, name), y = get_fq(in, name);
    const auto point = G1Affine::from_coordinates(x, y);
    if (!point.is_on_curve()) throw InputError(fmt::format("groth16_proof: {} is not on the curve", name));
    return point;
  };
  Proof proof{g1(0, "A"), G2Affine::identity(), g1(6 * fq, "C")};
  if (!all_zero(bytes.subspan(2 * fq, 4 * fq))) {
    const std::uint8_t* in = bytes.data() + 2 * fq;
    math::Fq2 x, y;
    x.c0 = get_fq(in, "B"), x.c1 = get_fq(in, "B"), y.c0 = get_fq(in, "B"), y.c1 = get_fq(in, "B");
    proof.b = G2Affine::from_coordinates(x, y);
    if (!proof.b.is_on_curve()) throw InputError("groth16_proof: B is not on the curve");
  }
  return proof;
}

FilecoinProofBytes encode_filecoin_proof(const Proof& proof) {
  FilecoinProofBytes bytes{};
  const auto out = std::span(bytes);
  encode_zcash_g1_compressed(proof.a, out.subspan<0, kZcashG1CompressedBytes>());
  encode_zcash_g2_compressed(proof.b, out.subspan<kZcashG1CompressedBytes, kZcashG2CompressedBytes>());
  encode_zcash_g1_compressed(proof.c,
                             out.subspan<kZcashG1CompressedBytes + kZcashG2CompressedBytes, kZcashG1CompressedBytes>());
  return bytes;
}

Proof decode_filecoin_proof(std::span<const std::uint8_t, kFilecoinProofBytes> bytes) {
  // Each point's decoder says why; the message adds which point it is.
  auto named = [](const char* name, auto&& decode) {
    try {
      return decode();
    } catch (const InputError& error) {
      throw InputError(fmt::format("filecoin proof: {}: {}", name, error.what()));
    }
  };
  constexpr std::size_t g1 = kZcashG1CompressedBytes, g2 = kZcashG2CompressedBytes;
  return Proof{named("A", [&] { return decode_zcash_g1_compressed(bytes.subspan<0, g1>()); }),
               named("B", [&] { return decode_zcash_g2_compressed(bytes.subspan<g1, g2>()); }),
               named("C", [&] { return decode_zcash_g1_compressed(bytes.subspan<g1 + g2, g1>()); })};
}

}  // namespace stagehand::groth16
