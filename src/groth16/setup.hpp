#pragma once
// A TEST-ONLY Groth16 trusted setup: the toxic waste (τ, α, β, γ, δ) is drawn at random in this
// process and could be kept by whoever ran it, so keys made here are UNSAFE for real use. It
// exists to make keys for large circuits (2^20 constraints and more) in minutes, where snarkjs's
// powers-of-tau ceremony would take hours, so that proving can be benchmarked.
//
// The key is exactly what snarkjs's `groth16 setup` + `zkey contribute` would produce for these
// secrets: A/B/C/IC points from the Lagrange basis of ⟨ω_n⟩ at τ (roots from 5), the H section
// the odd-index Lagrange basis of size 2n at τ, over δ.

#include "groth16/params.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/zkey.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <optional>

namespace stagehand::groth16 {

// The options of a key of Description's curve (math::Bls12_381 or math::Bn254): SetupOptions and
// bn254::SetupOptions.
template <class Description>
struct BasicSetupOptions {
  using Fr = typename Description::Fr;
  using G1Set = PointSet<math::AffinePoint<typename Description::G1>>;
  using G2Set = PointSet<math::AffinePoint<typename Description::G2>>;

  std::optional<std::uint64_t> seed;  // derive the secrets from a seed (tests); otherwise /dev/urandom
  unsigned thread_count = 0;          // 0 = every hardware thread
  // scalars[i]·G for the generator G of G1 (G2) and every i, encoded: the key's large sets. Where
  // unset, the CPU's fixed-base tables; a device does it far faster (device_setup.hpp).
  std::function<G1Set(std::span<const Fr> scalars)> multiply_g1;
  std::function<G2Set(std::span<const Fr> scalars)> multiply_g2;
};
using SetupOptions = BasicSetupOptions<math::Bls12_381>;
namespace bn254 {
using SetupOptions = BasicSetupOptions<math::Bn254>;
}  // namespace bn254

// What every command that runs this setup prints first.
inline constexpr const char* kTestOnlySetupWarning =
    "WARNING: `stagehand setup` is a TEST-ONLY trusted setup. Its toxic waste (tau, alpha, beta, gamma, delta) is "
    "drawn\n"
    "WARNING: in this process with no ceremony: whoever ran it could forge proofs. The keys it writes are UNSAFE for "
    "any\n"
    "WARNING: real use; they exist to benchmark and test proving. Use a snarkjs ceremony for real keys.\n";

ProvingKey setup_from_r1cs(const R1cs& r1cs, const SetupOptions& options = {});

namespace bn254 {
// The same setup of a BN254 circuit, its sets by `options`' multiply_g1 and multiply_g2 where set.
// Its domain is at most 2^27 (the H section needs the 2^(k+1)-th roots of unity, and BN254's r - 1
// has 2-adicity 28).
ProvingKey setup_from_r1cs(const R1cs& r1cs, const SetupOptions& options = {});
}  // namespace bn254

// The same setup in bellperson's form (a .params key, as its generate_parameters makes one): the
// domain ⟨ω⟩ of roots from 7, of m = the constraints plus one row a public input and the
// constant, rounded up to a power of two; the H set τ^i·Z(τ)/δ for i < m − 1 (Z(τ) = τ^m − 1);
// A and B without the variables whose column is zero at τ; L for every private wire
// (std::invalid_argument where a private wire is in no constraint). The same seed gives the same
// toxic waste as setup_from_r1cs, so the same α, β, γ and δ points (ic differs: another domain).
ParamsKey setup_params_from_r1cs(const R1cs& r1cs, const SetupOptions& options = {});
// bellperson's domain for a circuit: log2 of its rows (constraints + public + 1) rounded up.
unsigned params_domain_log2_for(std::uint64_t constraint_count, std::uint64_t public_count);

// The key's coefficient section for `r1cs`, in the order the setup writes it: each
// constraint's A then B terms, constraint by constraint, then the A-only rows of the public
// signals and the constant.
CoefficientList constraint_coefficients(const R1cs& r1cs);

}  // namespace stagehand::groth16
