#pragma once
// The Groth16 prover's computation, exactly as snarkjs 0.7.6 does it (docs/snarkjs-formats.md, "What
// the prover computes"), split into the steps a GPU program runs: the a/b/c step, the H
// evaluations, the MSMs and the assembly of the proof on the host.

#include "groth16/zkey.hpp"
#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace stagehand::groth16 {

struct Proof {
  math::G1Affine a;
  math::G2Affine b;
  math::G1Affine c;
};

// The blinding scalars r and s.
struct ProofRandomness {
  math::Fr r;
  math::Fr s;
  // From the operating system's CSPRNG (/dev/urandom): what real proofs use.
  static ProofRandomness from_system();
  // Deterministic, for tests (`--seed`): the proof is still valid, but not zero-knowledge.
  static ProofRandomness from_seed(std::uint64_t seed);
};

// InputError naming both files when the witness does not belong to the key (its length differs
// from nVars) or does not start with the constant 1.
void check_witness_matches(const ProvingKey& key, std::span<const math::Fr> witness,
                           const std::filesystem::path& zkey_path, const std::filesystem::path& wtns_path);
// The length part alone, for a witness already checked by check_wtns (its count of values).
void check_witness_count(const ProvingKey& key, std::uint64_t count, const std::filesystem::path& zkey_path,
                         const std::filesystem::path& wtns_path);

// The a/b/c step: a[c] = Σ coef·w[s] over the A records of constraint c, b likewise over the B
// records, c[i] = a[i]·b[i]. Each output has domain_size entries (zero padded).
void evaluate_constraints(const ProvingKey& key, std::span<const math::Fr> witness, std::span<math::Fr> a,
                          std::span<math::Fr> b, std::span<math::Fr> c);

// The results of the five MSMs (Jacobian), before blinding.
struct MsmResults {
  math::G1Projective a;   // Σ w_i·A_i
  math::G1Projective b1;  // Σ w_i·B1_i
  math::G2Projective b2;  // Σ w_i·B2_i
  math::G1Projective c;   // Σ_{i>nPublic} w_i·C_i
  math::G1Projective h;   // Σ P_j·H_j
};

// Adds α, β, δ and the blinding: π_A = α1 + A + r·δ1, π_B = β2 + B2 + s·δ2,
// π_C = C + H + s·π_A + r·(β1 + B1 + s·δ1) − r·s·δ1.
Proof assemble_proof(const ProvingKey& key, const MsmResults& msm, const ProofRandomness& randomness);

// The whole proof on the CPU reference, no Device involved (the oracle of the device path's
// tests). thread_count 0 = every hardware thread.
Proof prove_on_cpu(const ProvingKey& key, std::span<const math::Fr> witness, const ProofRandomness& randomness,
                   unsigned thread_count = 0);

// w[1..nPublic].
std::vector<math::Fr> public_signals(const ProvingKey& key, std::span<const math::Fr> witness);

namespace bn254 {
// The same proof of a BN254 key on the CPU reference (one template with BLS12-381's prove_on_cpu).
struct Proof {
  math::bn254::G1Affine a;
  math::bn254::G2Affine b;
  math::bn254::G1Affine c;
};
struct ProofRandomness {
  math::bn254::Fr r;
  math::bn254::Fr s;
  static ProofRandomness from_system();
  static ProofRandomness from_seed(std::uint64_t seed);
};
void check_witness_matches(const ProvingKey& key, std::span<const math::bn254::Fr> witness,
                           const std::filesystem::path& zkey_path, const std::filesystem::path& wtns_path);
Proof prove_on_cpu(const ProvingKey& key, std::span<const math::bn254::Fr> witness, const ProofRandomness& randomness,
                   unsigned thread_count = 0);
std::vector<math::bn254::Fr> public_signals(const ProvingKey& key, std::span<const math::bn254::Fr> witness);
void check_witness_count(const ProvingKey& key, std::uint64_t count, const std::filesystem::path& zkey_path,
                         const std::filesystem::path& wtns_path);
// The five MSMs' sums and the proof assembled from them, as BLS12-381's (the device path's last step).
struct MsmResults {
  math::bn254::G1Projective a, b1;
  math::bn254::G2Projective b2;
  math::bn254::G1Projective c, h;
};
Proof assemble_proof(const ProvingKey& key, const MsmResults& msm, const ProofRandomness& randomness);
}  // namespace bn254

}  // namespace stagehand::groth16
