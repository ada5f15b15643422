#pragma once
// The Groth16 check of a proof against the verification key inside a .zkey, as snarkjs's
// `groth16 verify` does it: e(-π_A, π_B)·e(vk_x, γ2)·e(π_C, δ2)·e(α1, β2) = 1 with
// vk_x = IC[0] + Σ public_i·IC[i], one multi-pairing (math/pairing.hpp). `stagehand prove` runs it
// on every proof before writing it (the Groth16 workload's finish step).
//
// And the witness against the constraint system (.r1cs), A·w ∘ B·w = C·w row by row, where the
// .r1cs is at hand: the .zkey holds A and B but not C, so without it the pairing check is what
// catches a witness that does not satisfy the circuit.

#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/zkey.hpp"
#include "math/pairing.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <type_traits>
#include <span>
#include <string>

namespace stagehand::groth16 {

// One template for both curves' keys (ProvingKey, bn254::ProvingKey) and proofs.
template <class Key, class Proof>
class BasicProofVerifier {
 public:
  using Description = typename Key::Description;
  using Fr = typename Description::Fr;

  // Prepares the Miller loop's lines of the fixed β2, γ2, δ2 once (a few ms).
  explicit BasicProofVerifier(const Key& key);

  // Nothing when the proof verifies; otherwise why not ("a point is not on its curve", "the
  // pairing check fails", ...). public_signals are w[1..nPublic].
  std::optional<std::string> check(const Proof& proof, std::span<const Fr> public_signals) const;

 private:
  const Key& key_;
  math::BasicG2Prepared<Description> beta2_, gamma2_, delta2_;
};

using ProofVerifier = BasicProofVerifier<ProvingKey, Proof>;
extern template class BasicProofVerifier<ProvingKey, Proof>;
extern template class BasicProofVerifier<bn254::ProvingKey, bn254::Proof>;

namespace bn254 {
using ProofVerifier = BasicProofVerifier<ProvingKey, Proof>;
bool verify_proof(const ProvingKey& key, const Proof& proof, std::span<const math::bn254::Fr> public_signals);
}  // namespace bn254

// One-off form of ProofVerifier::check: true when the proof verifies.
bool verify_proof(const ProvingKey& key, const Proof& proof, std::span<const math::Fr> public_signals);

// The index of the first constraint the witness does not satisfy (A·w · B·w ≠ C·w), or nothing.
// std::invalid_argument when a wire is out of the witness's range.
std::optional<std::size_t> first_unsatisfied_constraint(const R1cs& r1cs, std::span<const math::Fr> witness);
namespace bn254 {
std::optional<std::size_t> first_unsatisfied_constraint(const R1cs& r1cs, std::span<const math::bn254::Fr> witness);
}  // namespace bn254

// InputError naming both files where the constraint system is not the key's circuit's (its wires
// and public signals differ from the key's). Of either curve: the reader of each file checked its
// curve, naming the other file.
template <class R1csType, class Key>
void check_constraint_system(const R1csType& r1cs, const std::filesystem::path& r1cs_path, const Key& key,
                             const std::filesystem::path& zkey_path) {
  static_assert(std::is_same_v<typename R1csType::Fr, typename Key::Description::Fr>, "a circuit and key of one curve");
  if (r1cs.n_wires == key.n_vars && r1cs.n_public() == key.n_public) return;
  throw InputError(fmt::format(
      "{}: {} wires ({} public) but {} has {} signals ({} public): the constraint system of another circuit",
      r1cs_path.string(), r1cs.n_wires, r1cs.n_public(), zkey_path.string(), key.n_vars, key.n_public));
}

}  // namespace stagehand::groth16
