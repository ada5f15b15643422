#pragma once
// A TEST-ONLY Groth16 trusted setup: the toxic waste (τ, α, β, γ, δ) is drawn at random in this
// process and could be kept by whoever ran it, so keys made here are UNSAFE for real use. It
// exists to make keys for large circuits (2^20 constraints and more) in minutes, where snarkjs's
// powers-of-tau ceremony would take hours, so that proving can be benchmarked.
//
// The key is exactly what snarkjs's `groth16 setup` + `zkey contribute` would produce for these
// secrets: A/B/C/IC points from the Lagrange basis of ⟨ω_n⟩ at τ (roots from 5), the H section
// the odd-index Lagrange basis of size 2n at τ, over δ.

#include "groth16/r1cs.hpp"
#include "groth16/zkey.hpp"

#include <cstdint>
#include <optional>

namespace stagehand::groth16 {

struct SetupOptions {
  std::optional<std::uint64_t> seed;  // derive the secrets from a seed (tests); otherwise /dev/urandom
  unsigned thread_count = 0;          // 0 = every hardware thread
};

ProvingKey setup_from_r1cs(const R1cs& r1cs, const SetupOptions& options = {});

}  // namespace stagehand::groth16
