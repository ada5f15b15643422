// The MSMs' Jacobian results (msm.hpp's byte layouts: 144 bytes in G1, 288 in G2, Montgomery Fq;
// BN254's 96 and 192)
// as the CPU reference's points, for the host's combine, the benchmark and the checks. nullopt
// where a coordinate is not a reduced Fq (a poisoned or corrupted result). msm_host.cpp.
#pragma once

#include <optional>

#include "math/bn254.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"

namespace stagehand::cuda {

std::optional<math::G1Projective> g1_from_jacobian_bytes(const void* bytes);
std::optional<math::G2Projective> g2_from_jacobian_bytes(const void* bytes);
std::optional<math::bn254::G1Projective> bn254_g1_from_jacobian_bytes(const void* bytes);
std::optional<math::bn254::G2Projective> bn254_g2_from_jacobian_bytes(const void* bytes);

}  // namespace stagehand::cuda
