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
template <class Fr, class NextBytes>
Fr uniform_fr(NextBytes&& next_bytes) {
  for (;;) {
    std::array<std::uint8_t, 32> bytes{};
    next_bytes(bytes);
    bytes[31] &= 0x7f;
    if (auto value = Fr::from_canonical_bytes(bytes)) return *value;
  }
}

template <class Randomness>
Randomness randomness_from_system() {
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  if (!urandom) throw std::runtime_error("cannot open /dev/urandom for the proof's random r and s");
  auto next = [&](std::array<std::uint8_t, 32>& bytes) {
    if (!urandom.read(reinterpret_cast<char*>(bytes.data()), bytes.size())) {
      throw std::runtime_error("cannot read /dev/urandom for the proof's random r and s");
    }
  };
  Randomness randomness;
  randomness.r = uniform_fr<decltype(randomness.r)>(next);
  randomness.s = uniform_fr<decltype(randomness.s)>(next);
  return randomness;
}

template <class Randomness>
Randomness randomness_from_seed(std::uint64_t seed) {
  Random random(seed ^ 0x67726f7468313621ULL);
  auto next = [&](std::array<std::uint8_t, 32>& bytes) {
    for (std::size_t word = 0; word < 4; ++word) {
      const auto value = random.next();
      for (std::size_t i = 0; i < 8; ++i) bytes[8 * word + i] = static_cast<std::uint8_t>(value >> (8 * i));
    }
  };
  Randomness randomness;
  randomness.r = uniform_fr<decltype(randomness.r)>(next);
  randomness.s = uniform_fr<decltype(randomness.s)>(next);
  return randomness;
}

// A key's large set as points: BLS12-381's are kept encoded, BN254's decoded.
template <class Affine>
std::vector<Affine> points_of(const PointSet<Affine>& set, unsigned threads) {
  return set.decode(threads);
}
template <class Affine>
const std::vector<Affine>& points_of(const std::vector<Affine>& points, unsigned) {
  return points;
}

}  // namespace

ProofRandomness ProofRandomness::from_system() { return randomness_from_system<ProofRandomness>(); }

ProofRandomness ProofRandomness::from_seed(std::uint64_t seed) { return randomness_from_seed<ProofRandomness>(seed); }

namespace {

template <class Key>
void check_count_of(const Key& key, std::uint64_t count, const std::filesystem::path& zkey_path,
                    const std::filesystem::path& wtns_path) {
  if (count != key.n_vars) {
    throw InputError(
        fmt::format("{}: section 1 (header): the witness has {} values but {} expects {} (nVars): a witness for "
                    "another circuit",
                    wtns_path.string(), count, zkey_path.string(), key.n_vars));
  }
}

template <class Key, class Fr>
void check_witness_of(const Key& key, std::span<const Fr> witness, const std::filesystem::path& zkey_path,
                      const std::filesystem::path& wtns_path) {
  check_count_of(key, witness.size(), zkey_path, wtns_path);
  if (witness.empty() || !witness[0].is_one()) {
    throw InputError(fmt::format("{}: section 2 (witness values): w[0] must be 1", wtns_path.string()));
  }
}

template <class Key, class Fr>
void evaluate_constraints_of(const Key& key, std::span<const Fr> witness, std::span<Fr> a, std::span<Fr> b,
                             std::span<Fr> c) {
  if (a.size() != key.domain_size || b.size() != key.domain_size || c.size() != key.domain_size ||
      witness.size() != key.n_vars) {
    throw std::invalid_argument("evaluate_constraints: sizes do not match the key");
  }
  std::fill(a.begin(), a.end(), Fr::zero());
  std::fill(b.begin(), b.end(), Fr::zero());
  for (const auto& entry : key.coefficients) {
    auto& target = entry.matrix == 0 ? a[entry.constraint] : b[entry.constraint];
    target += entry.value * witness[entry.signal];
  }
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = a[i] * b[i];
}

// MsmResults of either curve: the five sums before blinding.
template <class G1Projective, class G2Projective>
struct Sums {
  G1Projective a, b1;
  G2Projective b2;
  G1Projective c, h;
};

template <class Proof, class Key, class Sums, class Randomness>
Proof assemble_of(const Key& key, const Sums& msm, const Randomness& randomness) {
  using G1Projective = std::remove_cvref_t<decltype(msm.a)>;
  using G2Projective = std::remove_cvref_t<decltype(msm.b2)>;
  const auto delta1 = G1Projective::from_affine(key.delta1);
  const G1Projective pi_a = msm.a + key.alpha1 + delta1.multiply(randomness.r);
  const G2Projective pi_b = msm.b2 + key.beta2 + G2Projective::from_affine(key.delta2).multiply(randomness.s);
  const G1Projective b1 = msm.b1 + key.beta1 + delta1.multiply(randomness.s);
  const G1Projective pi_c = msm.c + msm.h + pi_a.multiply(randomness.s) + b1.multiply(randomness.r) +
                            delta1.multiply(-(randomness.r * randomness.s));
  return Proof{pi_a.to_affine(), pi_b.to_affine(), pi_c.to_affine()};
}

template <class Affine, class Fr>
auto msm_of(const std::vector<Affine>& points, std::span<const Fr> scalars, unsigned thread_count) {
  return msm(std::span<const Affine>(points), scalars, thread_count);
}

// msm, Domain and h_evaluations_snarkjs of the witness's field are found by argument-dependent
// lookup (stagehand::math or stagehand::math::bn254).
template <class Proof, class Domain, class Key, class Fr, class Randomness>
Proof prove_of(const Key& key, std::span<const Fr> witness, const Randomness& randomness, unsigned thread_count) {
  std::vector<Fr> a(key.domain_size), b(key.domain_size), c(key.domain_size);
  evaluate_constraints_of<Key, Fr>(key, witness, a, b, c);
  const auto domain = Domain::snarkjs(key.domain_log2, thread_count);
  h_evaluations_snarkjs(std::span<Fr>(a), std::span<Fr>(b), std::span<Fr>(c), domain, thread_count);
  Sums<decltype(msm_of(points_of(key.a, 1), witness, 1)), decltype(msm_of(points_of(key.b2, 1), witness, 1))> sums;
  sums.a = msm_of(points_of(key.a, thread_count), witness, thread_count);
  sums.b1 = msm_of(points_of(key.b1, thread_count), witness, thread_count);
  sums.b2 = msm_of(points_of(key.b2, thread_count), witness, thread_count);
  sums.c = msm_of(points_of(key.c, thread_count), witness.subspan(key.n_public + 1), thread_count);
  sums.h = msm_of(points_of(key.h, thread_count), std::span<const Fr>(a), thread_count);
  return assemble_of<Proof>(key, sums, randomness);
}

}  // namespace

void check_witness_count(const ProvingKey& key, std::uint64_t count, const std::filesystem::path& zkey_path,
                         const std::filesystem::path& wtns_path) {
  check_count_of(key, count, zkey_path, wtns_path);
}

void check_witness_matches(const ProvingKey& key, std::span<const math::Fr> witness,
                           const std::filesystem::path& zkey_path, const std::filesystem::path& wtns_path) {
  check_witness_of(key, witness, zkey_path, wtns_path);
}

void evaluate_constraints(const ProvingKey& key, std::span<const math::Fr> witness, std::span<math::Fr> a,
                          std::span<math::Fr> b, std::span<math::Fr> c) {
  evaluate_constraints_of(key, witness, a, b, c);
}

Proof assemble_proof(const ProvingKey& key, const MsmResults& msm, const ProofRandomness& randomness) {
  return assemble_of<Proof>(key, msm, randomness);
}

Proof prove_on_cpu(const ProvingKey& key, std::span<const math::Fr> witness, const ProofRandomness& randomness,
                   unsigned thread_count) {
  return prove_of<Proof, math::Domain>(key, witness, randomness, thread_count);
}

std::vector<math::Fr> public_signals(const ProvingKey& key, std::span<const math::Fr> witness) {
  return std::vector<math::Fr>(witness.begin() + 1, witness.begin() + 1 + key.n_public);
}

namespace bn254 {

ProofRandomness ProofRandomness::from_system() { return randomness_from_system<ProofRandomness>(); }

ProofRandomness ProofRandomness::from_seed(std::uint64_t seed) { return randomness_from_seed<ProofRandomness>(seed); }

void check_witness_matches(const ProvingKey& key, std::span<const math::bn254::Fr> witness,
                           const std::filesystem::path& zkey_path, const std::filesystem::path& wtns_path) {
  check_witness_of(key, witness, zkey_path, wtns_path);
}

Proof prove_on_cpu(const ProvingKey& key, std::span<const math::bn254::Fr> witness, const ProofRandomness& randomness,
                   unsigned thread_count) {
  return prove_of<Proof, math::bn254::Domain>(key, witness, randomness, thread_count);
}

void check_witness_count(const ProvingKey& key, std::uint64_t count, const std::filesystem::path& zkey_path,
                         const std::filesystem::path& wtns_path) {
  check_count_of(key, count, zkey_path, wtns_path);
}

Proof assemble_proof(const ProvingKey& key, const MsmResults& msm, const ProofRandomness& randomness) {
  return assemble_of<Proof>(key, msm, randomness);
}

std::vector<math::bn254::Fr> public_signals(const ProvingKey& key, std::span<const math::bn254::Fr> witness) {
  return std::vector<math::bn254::Fr>(witness.begin() + 1, witness.begin() + 1 + key.n_public);
}

}  // namespace bn254

}  // namespace stagehand::groth16
