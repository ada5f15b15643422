#pragma once
// proof.json, public.json and the verification key, in snarkjs's JSON (decimal strings of affine
// coordinates; G1 as [x, y, "1"], G2 as [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]]).

#include "groth16/params.hpp"
#include "groth16/prover.hpp"
#include "groth16/zkey.hpp"

#include <filesystem>
#include <span>
#include <string>

namespace stagehand::groth16 {

std::string proof_json(const Proof& proof);
std::string public_json(std::span<const math::Fr> signals);
// vk_alphabeta_12 is left out: `snarkjs groth16 verify` does not read it (it needs a pairing).
std::string verification_key_json(const ProvingKey& key);
// The same of a .params key's verifying key (nPublic: its ic points less the constant one's).
std::string verification_key_json(const VerifyingKey& key);

namespace bn254 {
// The same of a BN254 key's proof and verifying key: "curve": "bn128", as snarkjs writes them.
std::string proof_json(const Proof& proof);
std::string public_json(std::span<const math::bn254::Fr> signals);
std::string verification_key_json(const ProvingKey& key);
}  // namespace bn254

// Writes text (or any bytes held in a string) to a file as they are; std::runtime_error naming the
// file when it cannot.
void write_text_file(const std::filesystem::path& path, const std::string& text);

}  // namespace stagehand::groth16
