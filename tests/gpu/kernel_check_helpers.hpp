// Helpers shared by the kernel checks (kernel_checks.cpp) and the launcher checks
// (launcher_checks.cpp): device buffers poisoned with 0xff bytes, Fr and G1 conversions from the
// kernels' byte layouts, and the sample points that checks of sizes <= 2^22 share.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "check_support.hpp"
#include "math/fr.hpp"
#include "math/g1.hpp"
#include "msm/msm.hpp"
#include "msm/msm_results_host.hpp"
#include "ntt/ntt.hpp"
#include "synthetic/sample_data.hpp"
#include "util/common_host.hpp"
#include "util/device_buffer.hpp"

namespace stagehand::cuda::checks {

using Clock = std::chrono::steady_clock;

// Fr values travel as their Montgomery limbs; a poisoned (unwritten) element is >= r and fails
// from_montgomery_limbs, so it can never compare equal.
using FrLimbs = math::Limbs<4>;

inline std::vector<FrLimbs> limbs_of(const std::vector<math::Fr>& values) {
  std::vector<FrLimbs> limbs(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) limbs[i] = values[i].montgomery_limbs();
  return limbs;
}

// Index of the first mismatch, or -1.
inline long long first_mismatch(const std::vector<FrLimbs>& device, const std::vector<math::Fr>& expected) {
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (device[i] != expected[i].montgomery_limbs()) return static_cast<long long>(i);
  }
  return -1;
}

inline void words_of(FrWords& words, const math::Fr& value) {
  const auto& limbs = value.montgomery_limbs();
  for (int i = 0; i < 4; ++i) words[i] = limbs[i];
}

inline double seconds_since(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

using check_support::rejects;
using check_support::report;

// A buffer of `count` Fr plus guard elements behind it: poisoned, then the input copied in; the
// guard must still hold the poison after the kernel.
inline constexpr std::uint64_t kGuard = 64;
inline bool guard_intact(const DeviceBuffer& buffer, std::uint64_t count) {
  std::vector<std::uint8_t> bytes(kGuard * 32);
  STAGEHAND_CUDA_CHECK(cudaMemcpy(bytes.data(), static_cast<std::uint8_t*>(buffer.pointer) + count * 32, bytes.size(),
                                  cudaMemcpyDeviceToHost));
  for (std::uint8_t byte : bytes) {
    if (byte != 0xff) return false;
  }
  return true;
}

// An unreduced coordinate (poison) gives (0, 0, 1), which is not on the curve and so never
// equals an expected point.
inline math::G1Projective point_from(const G1JacobianBytes& bytes) {
  return g1_from_jacobian_bytes(bytes.bytes)
      .value_or(math::G1Projective{math::Fq::zero(), math::Fq::zero(), math::Fq::one()});
}

inline std::vector<math::G1Affine> affine_from_bytes(const std::uint8_t* bytes, std::uint64_t count) {
  std::vector<math::G1Affine> points(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    math::Limbs<6> x, y;
    std::memcpy(x.data(), bytes + 96 * i, 48);
    std::memcpy(y.data(), bytes + 96 * i + 48, 48);
    if (std::all_of(x.begin(), x.end(), [](auto l) { return l == 0; }) &&
        std::all_of(y.begin(), y.end(), [](auto l) { return l == 0; })) {
      points[i] = math::G1Affine::identity();
    } else {
      points[i] =
          math::G1Affine::from_coordinates(*math::Fq::from_montgomery_limbs(x), *math::Fq::from_montgomery_limbs(y));
    }
  }
  return points;
}

inline std::vector<math::Fr> scalars_from_bytes(const std::uint8_t* bytes, std::uint64_t count, bool montgomery) {
  std::vector<math::Fr> scalars(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    math::Limbs<4> limbs;
    std::memcpy(limbs.data(), bytes + 32 * i, 32);
    scalars[i] = montgomery ? *math::Fr::from_montgomery_limbs(limbs) : *math::Fr::from_canonical_limbs(limbs);
  }
  return scalars;
}

// The sample points are expensive; tests of sizes <= 2^22 share prefixes of one set.
struct PointSet {
  std::vector<std::uint8_t> bytes;
  PointWalk walk;
  std::uint64_t count = 0;
};
inline const PointSet& shared_points(std::uint64_t count) {
  static PointSet set;
  if (set.count < count) {
    set.bytes.assign(count * 96, 0);
    set.walk = fill_sample_points(set.bytes, count, 4242);
    set.count = count;
  }
  return set;
}

}  // namespace stagehand::cuda::checks
