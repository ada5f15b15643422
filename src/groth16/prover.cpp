#include "groth16/prover.hpp"

#include "groth16/errors.hpp"
#include "math/h_polynomial.hpp"
#include "math/msm.hpp"
#include "math/ntt.hpp"
#include "util/random.hpp"

#include <fmt/format.h>

#include <array>
#include <fstream>

namespace stagehand::groth16 {
namespace {

// A uniform element of Fr from 32 random bytes by rejection (the top bit cleared: r < 2^255).
template <class NextBytes>
math::Fr uniform_fr(NextBytes&& next_bytes) {
  for (;;) {
    std::array<std::uint8_t, 32> bytes{};
    next_bytes(bytes);
    bytes[31] &= 0x7f;
    if (auto value = math::Fr::from_canonical_bytes(bytes)) return *value;
  }
}

}  // namespace

ProofRandomness ProofRandomness::from_system() {
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  if (!urandom) throw std::runtime_error("cannot open /dev/urandom for the proof's random r and s");
  auto next = [&](std::array<std::uint8_t, 32>& bytes) {
    if (!urandom.read(reinterpret_cast<char*>(bytes.data()), bytes.size())) {
      throw std::runtime_error("cannot read /dev/urandom for the proof's random r and s");
    }
  };
  ProofRandomness randomness;
  randomness.r = uniform_fr(next);
  randomness.s = uniform_fr(next);
  return randomness;
}

ProofRandomness ProofRandomness::from_seed(std::uint64_t seed) {
  Random random(seed ^ 0x67726f7468313621ULL);
  auto next = [&](std::array<std::uint8_t, 32>& bytes) {
    for (std::size_t word = 0; word < 4; ++word) {
      const auto value = random.next();
      for (std::size_t i = 0; i < 8; ++i) bytes[8 * word + i] = static_cast<std::uint8_t>(value >> (8 * i));
    }
  };
  ProofRandomness randomness;
  randomness.r = uniform_fr(next);
  randomness.s = uniform_fr(next);
  return randomness;
}

void check_witness_count(const ProvingKey& key, std::uint64_t count, const std::filesystem::path& zkey_path,
                         const std::filesystem::path& wtns_path) {
  if (count != key.n_vars) {
    throw InputError(fmt::format("{}: section 1 (header): the witness has {} values but {} expects {} (nVars): a witness for "
                                 "another circuit",
                                 wtns_path.string(), count, zkey_path.string(), key.n_vars));
  }
}

void check_witness_matches(const ProvingKey& key, std::span<const math::Fr> witness, const std::filesystem::path& zkey_path,
                           const std::filesystem::path& wtns_path) {
  check_witness_count(key, witness.size(), zkey_path, wtns_path);
  if (witness.empty() || !witness[0].is_one()) {
    throw InputError(fmt::format("{}: section 2 (witness values): w[0] must be 1", wtns_path.string()));
  }
}

void evaluate_constraints(const ProvingKey& key, std::span<const math::Fr> witness, std::span<math::Fr> a, std::span<math::Fr> b,
                          std::span<math::Fr> c) {
  if (a.size() != key.domain_size || b.size() != key.domain_size || c.size() != key.domain_size || witness.size() != key.n_vars) {
    throw std::invalid_argument("evaluate_constraints: sizes do not match the key");
  }
  std::fill(a.begin(), a.end(), math::Fr::zero());
  std::fill(b.begin(), b.end(), math::Fr::zero());
  for (const auto& entry : key.coefficients) {
    auto& target = entry.matrix == 0 ? a[entry.constraint] : b[entry.constraint];
    target += entry.value * witness[entry.signal];
  }
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = a[i] * b[i];
}

Proof assemble_proof(const ProvingKey& key, const MsmResults& msm, const ProofRandomness& randomness) {
  using math::G1Projective;
  using math::G2Projective;
  const auto delta1 = G1Projective::from_affine(key.delta1);
  const G1Projective pi_a = msm.a + key.alpha1 + delta1.multiply(randomness.r);
  const G2Projective pi_b = msm.b2 + key.beta2 + G2Projective::from_affine(key.delta2).multiply(randomness.s);
  const G1Projective b1 = msm.b1 + key.beta1 + delta1.multiply(randomness.s);
  const G1Projective pi_c = msm.c + msm.h + pi_a.multiply(randomness.s) + b1.multiply(randomness.r) +
                            delta1.multiply(-(randomness.r * randomness.s));
  return Proof{pi_a.to_affine(), pi_b.to_affine(), pi_c.to_affine()};
}

Proof prove_on_cpu(const ProvingKey& key, std::span<const math::Fr> witness, const ProofRandomness& randomness,
                   unsigned thread_count) {
  std::vector<math::Fr> a(key.domain_size), b(key.domain_size), c(key.domain_size);
  evaluate_constraints(key, witness, a, b, c);
  const auto domain = math::Domain::snarkjs(key.domain_log2, thread_count);
  math::h_evaluations_snarkjs(a, b, c, domain, thread_count);
  MsmResults msm;
  msm.a = math::msm(key.a.decode(thread_count), witness, thread_count);
  msm.b1 = math::msm(key.b1.decode(thread_count), witness, thread_count);
  msm.b2 = math::msm(key.b2.decode(thread_count), witness, thread_count);
  msm.c = math::msm(key.c.decode(thread_count), witness.subspan(key.n_public + 1), thread_count);
  msm.h = math::msm(key.h.decode(thread_count), a, thread_count);
  return assemble_proof(key, msm, randomness);
}

std::vector<math::Fr> public_signals(const ProvingKey& key, std::span<const math::Fr> witness) {
  return std::vector<math::Fr>(witness.begin() + 1, witness.begin() + 1 + key.n_public);
}

}  // namespace stagehand::groth16
