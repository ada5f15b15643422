// Random inputs for the kernel tests and the benchmark, made on the host with the CPU reference.
//
// Random G1 points are expensive one by one (a scalar multiplication each), so the points are
// an arithmetic walk P_i = (a + i·d)·G with random a and d: distinct, valid, of known discrete
// logarithm, and made at one mixed addition per point (in parallel chunks, one inversion per
// chunk). Knowing the logarithms lets a test check an MSM of any size in O(n) field operations:
// Σ s_i·P_i = (Σ s_i·(a + i·d))·G.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "math/bn254.hpp"
#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"

namespace stagehand::cuda {

template <class Fr>
struct BasicPointWalk {
  Fr start;  // a
  Fr step;   // d
};
using PointWalk = BasicPointWalk<math::Fr>;
using Bn254PointWalk = BasicPointWalk<math::bn254::Fr>;

// Fills out (point_count·96 bytes) with P_i = (a + i·d)·G as affine Montgomery bytes.
PointWalk fill_sample_points(std::span<std::uint8_t> out, std::uint64_t point_count, std::uint64_t seed,
                             unsigned thread_count = 0);

// The same walk in G2 (point_count·192 bytes, x.c0‖x.c1‖y.c0‖y.c1), with G2's generator.
PointWalk fill_sample_g2_points(std::span<std::uint8_t> out, std::uint64_t point_count, std::uint64_t seed,
                                unsigned thread_count = 0);

// Uniform random Fr values: canonical (montgomery = false) or Montgomery words, 32 bytes each.
void fill_sample_scalars(std::span<std::uint8_t> out, std::uint64_t count, std::uint64_t seed, bool montgomery);

// Random Fr elements as the reference type.
std::vector<math::Fr> random_fr(std::uint64_t count, std::uint64_t seed);

// (Σ s_i·(a + i·d))·G for canonical scalar bytes: the expected MSM of fill_sample_points' points.
math::G1Projective expected_walk_msm(std::span<const std::uint8_t> canonical_scalars, std::uint64_t count,
                                     const PointWalk& walk, unsigned thread_count = 0);
math::G2Projective expected_walk_g2_msm(std::span<const std::uint8_t> canonical_scalars, std::uint64_t count,
                                        const PointWalk& walk, unsigned thread_count = 0);

// The same for BN254 (math::bn254; 64-byte G1 and 128-byte G2 points, its Fr's scalars).
Bn254PointWalk fill_bn254_sample_points(std::span<std::uint8_t> out, std::uint64_t point_count, std::uint64_t seed,
                                        unsigned thread_count = 0);
Bn254PointWalk fill_bn254_sample_g2_points(std::span<std::uint8_t> out, std::uint64_t point_count, std::uint64_t seed,
                                           unsigned thread_count = 0);
void fill_bn254_sample_scalars(std::span<std::uint8_t> out, std::uint64_t count, std::uint64_t seed, bool montgomery);
math::bn254::G1Projective expected_bn254_walk_msm(std::span<const std::uint8_t> canonical_scalars, std::uint64_t count,
                                                  const Bn254PointWalk& walk, unsigned thread_count = 0);
math::bn254::G2Projective expected_bn254_walk_g2_msm(std::span<const std::uint8_t> canonical_scalars,
                                                     std::uint64_t count, const Bn254PointWalk& walk,
                                                     unsigned thread_count = 0);

}  // namespace stagehand::cuda
