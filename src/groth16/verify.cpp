#include "groth16/verify.hpp"

#include "groth16/circuit_assignment.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>
#include <vector>

namespace stagehand::groth16 {

template <class Key, class Proof>
BasicProofVerifier<Key, Proof>::BasicProofVerifier(const Key& key)
    : key_(key),
      beta2_(math::Pairing<Description>::prepare_g2(key.beta2)),
      gamma2_(math::Pairing<Description>::prepare_g2(key.gamma2)),
      delta2_(math::Pairing<Description>::prepare_g2(key.delta2)) {}

template <class Key, class Proof>
std::optional<std::string> BasicProofVerifier<Key, Proof>::check(const Proof& proof,
                                                                 std::span<const Fr> public_signals) const {
  using G1Projective = math::ProjectivePoint<typename Description::G1>;
  using Pairing = math::Pairing<Description>;
  if (public_signals.size() != key_.n_public || key_.ic.size() != key_.n_public + 1) {
    return fmt::format("{} public signals for a key with {} (and {} IC points)", public_signals.size(), key_.n_public,
                       key_.ic.size());
  }
  if (!proof.a.is_on_curve() || !proof.c.is_on_curve()) return std::string("π_A or π_C is not a point of G1's curve");
  if (!proof.b.is_on_curve()) return std::string("π_B is not a point of G2's curve");
  if (!proof.a.is_in_subgroup() || !proof.c.is_in_subgroup())
    return std::string("π_A or π_C is not in G1's subgroup of order r");
  if (!proof.b.is_in_subgroup()) return std::string("π_B is not in G2's subgroup of order r");

  G1Projective vk_x = G1Projective::from_affine(key_.ic[0]);
  for (std::size_t i = 0; i < public_signals.size(); ++i) {
    vk_x += G1Projective::from_affine(key_.ic[i + 1]).multiply(public_signals[i]);
  }
  const auto pi_b = Pairing::prepare_g2(proof.b);
  const typename Pairing::Pair pairs[] = {
      {-proof.a, &pi_b}, {vk_x.to_affine(), &gamma2_}, {proof.c, &delta2_}, {key_.alpha1, &beta2_}};
  if (!Pairing::multi_pairing(pairs).is_one()) {
    return std::string("the pairing check e(-π_A, π_B)·e(vk_x, γ2)·e(π_C, δ2)·e(α1, β2) = 1 fails");
  }
  return std::nullopt;
}

template class BasicProofVerifier<ProvingKey, Proof>;
template class BasicProofVerifier<bn254::ProvingKey, bn254::Proof>;

namespace bn254 {
bool verify_proof(const ProvingKey& key, const Proof& proof, std::span<const math::bn254::Fr> public_signals) {
  return !ProofVerifier(key).check(proof, public_signals).has_value();
}
}  // namespace bn254

bool verify_proof(const ProvingKey& key, const Proof& proof, std::span<const math::Fr> public_signals) {
  return !ProofVerifier(key).check(proof, public_signals).has_value();
}

namespace {
template <class Fr>
std::optional<std::size_t> first_unsatisfied(const BasicR1cs<Fr>& r1cs, std::span<const Fr> witness) {
  for (std::size_t index = 0; index < r1cs.constraints.size(); ++index) {
    const auto& constraint = r1cs.constraints[index];
    if (!(evaluate<Fr>(constraint.a, witness) * evaluate<Fr>(constraint.b, witness) ==
          evaluate<Fr>(constraint.c, witness)))
      return index;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::size_t> first_unsatisfied_constraint(const R1cs& r1cs, std::span<const math::Fr> witness) {
  return first_unsatisfied(r1cs, witness);
}

namespace bn254 {
std::optional<std::size_t> first_unsatisfied_constraint(const R1cs& r1cs, std::span<const math::bn254::Fr> witness) {
  return first_unsatisfied(r1cs, witness);
}
}  // namespace bn254

}  // namespace stagehand::groth16
