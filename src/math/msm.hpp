// Multi-scalar multiplication Σ scalars[i]·points[i] over G1 and G2 of BLS12-381 (msm in
// stagehand::math) and of BN254 (msm in stagehand::math::bn254): one Pippenger's bucket method,
// a template over the group, with signed window digits, spread over std::threads.
#pragma once

#include <cstddef>
#include <span>

#include "math/bn254.hpp"
#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"

namespace stagehand::math {

// How points are added into the window buckets.
enum class BucketAccumulation {
  automatic,     // batch_affine for wide windows (many buckets), jacobian otherwise
  jacobian,      // mixed Jacobian additions, one per point: no batching overhead
  batch_affine,  // affine additions whose inversions are shared by a batch (Montgomery's trick):
                 // about 6 multiplications per point instead of 11, once batches can fill up
};

struct MsmOptions {
  unsigned thread_count = 0;  // 0 = every hardware thread
  unsigned window_bits = 0;   // 0 = chosen from the size and thread count; 1..20 forces a width (tests)
  BucketAccumulation accumulation = BucketAccumulation::automatic;
};

// points and scalars must have the same length (std::invalid_argument otherwise). Points at
// infinity, zero scalars, repeated and opposite points are all allowed.
G1Projective msm(std::span<const G1Affine> points, std::span<const Fr> scalars, unsigned thread_count = 0);
G2Projective msm(std::span<const G2Affine> points, std::span<const Fr> scalars, unsigned thread_count = 0);
G1Projective msm(std::span<const G1Affine> points, std::span<const Fr> scalars, const MsmOptions& options);
G2Projective msm(std::span<const G2Affine> points, std::span<const Fr> scalars, const MsmOptions& options);

namespace bn254 {

G1Projective msm(std::span<const G1Affine> points, std::span<const Fr> scalars, unsigned thread_count = 0);
G2Projective msm(std::span<const G2Affine> points, std::span<const Fr> scalars, unsigned thread_count = 0);
G1Projective msm(std::span<const G1Affine> points, std::span<const Fr> scalars, const MsmOptions& options);
G2Projective msm(std::span<const G2Affine> points, std::span<const Fr> scalars, const MsmOptions& options);

}  // namespace bn254

// The plan msm would use: window width and how many point ranges each window is split into, for
// scalars of scalar_bits bits (BLS12-381's r by default; BN254's r has 254).
struct MsmPlan {
  unsigned window_bits = 0;
  unsigned window_count = 0;
  std::size_t chunk_count = 0;
  bool batch_affine = false;
};
MsmPlan plan_msm(std::size_t point_count, unsigned thread_count, unsigned forced_window_bits = 0,
                 BucketAccumulation accumulation = BucketAccumulation::automatic,
                 unsigned scalar_bits = Fr::modulus_bit_count);

}  // namespace stagehand::math
