#include "groth16/json.hpp"

#include "util/assert.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace stagehand::groth16 {
namespace {

using nlohmann::json;

template <class G1Affine>
json g1_json(const G1Affine& point) {
  if (point.infinity) return json::array({"0", "1", "0"});
  return json::array({point.x.to_decimal(), point.y.to_decimal(), "1"});
}

template <class G2Affine>
json g2_json(const G2Affine& point) {
  if (point.infinity) return json::array({json::array({"0", "0"}), json::array({"1", "0"}), json::array({"0", "0"})});
  return json::array({json::array({point.x.c0.to_decimal(), point.x.c1.to_decimal()}),
                      json::array({point.y.c0.to_decimal(), point.y.c1.to_decimal()}), json::array({"1", "0"})});
}

template <class Proof>
std::string proof_json_of(const Proof& proof, Curve curve) {
  json out;
  out["pi_a"] = g1_json(proof.a);
  out["pi_b"] = g2_json(proof.b);
  out["pi_c"] = g1_json(proof.c);
  out["protocol"] = "groth16";
  out["curve"] = snarkjs_curve_name(curve);
  return out.dump(1) + "\n";
}

template <class Fr>
std::string public_json_of(std::span<const Fr> signals) {
  json out = json::array();
  for (const auto& value : signals) out.push_back(value.to_decimal());
  return out.dump(1) + "\n";
}

template <class Key>
std::string verification_key_json_of(const Key& key, Curve curve) {
  STAGEHAND_ASSERT(!key.ic.empty(), "a verifying key without ic points");
  json out;
  out["protocol"] = "groth16";
  out["curve"] = snarkjs_curve_name(curve);
  out["nPublic"] = key.ic.size() - 1;
  out["vk_alpha_1"] = g1_json(key.alpha1);
  out["vk_beta_2"] = g2_json(key.beta2);
  out["vk_gamma_2"] = g2_json(key.gamma2);
  out["vk_delta_2"] = g2_json(key.delta2);
  json ic = json::array();
  for (const auto& point : key.ic) ic.push_back(g1_json(point));
  out["IC"] = ic;
  return out.dump(1) + "\n";
}

}  // namespace

std::string proof_json(const Proof& proof) { return proof_json_of(proof, Curve::bls12_381); }

std::string public_json(std::span<const math::Fr> signals) { return public_json_of(signals); }

std::string verification_key_json(const ProvingKey& key) {
  return verification_key_json(
      VerifyingKey{key.alpha1, key.beta1, key.delta1, key.beta2, key.gamma2, key.delta2, key.ic});
}

std::string verification_key_json(const VerifyingKey& key) { return verification_key_json_of(key, Curve::bls12_381); }

namespace bn254 {

std::string proof_json(const Proof& proof) { return proof_json_of(proof, Curve::bn254); }

std::string public_json(std::span<const math::bn254::Fr> signals) { return public_json_of(signals); }

std::string verification_key_json(const ProvingKey& key) { return verification_key_json_of(key, Curve::bn254); }

}  // namespace bn254

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(fmt::format("{}: cannot create the file", path.string()));
  out << text;
  if (!out) throw std::runtime_error(fmt::format("{}: cannot write the file", path.string()));
}

}  // namespace stagehand::groth16
