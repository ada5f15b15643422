// The core kernels' launches (launchers.hpp's table: the NTT domain, the transforms, the H forms and
// msm_g1) as typed values, in the form of src/device/groth16_launches.hpp: to_launch() for callers
// that build launches (the checks), from_launch() for the launchers. Each pair is the one place that
// knows a kernel's argument and buffer positions; from_launch() throws std::invalid_argument naming
// the kernel where a launch has too few of them, and the buffers' sizes are the launchers' to check.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "device/kernel_abi.hpp"
#include "device/types.hpp"
#include "launch/launch_args.hpp"

namespace stagehand::cuda {

// An Fr in Montgomery form as four 64-bit words (ntt.hpp's FrWords).
using FrArgument = std::array<std::uint64_t, 4>;

namespace core_launch_detail {
inline FrArgument words_at(const KernelLaunch& launch, std::size_t first) {
  return {launch.arguments[first], launch.arguments[first + 1], launch.arguments[first + 2],
          launch.arguments[first + 3]};
}
inline void append(std::vector<std::uint64_t>& arguments, const FrArgument& words) {
  arguments.insert(arguments.end(), words.begin(), words.end());
}
}  // namespace core_launch_detail

// ntt_domain_init: the tables of (2^log_size, ω, g) into `domain`.
struct DomainInitLaunch {
  std::uint64_t log_size = 0;
  FrArgument root{}, coset_generator{};
  BufferUse domain;

  KernelLaunch to_launch(kernel::Curve curve) const {
    KernelLaunch launch{kernel::ntt_domain_init, std::uint64_t{1} << log_size, {log_size}, {}, {domain}};
    core_launch_detail::append(launch.arguments, root);
    core_launch_detail::append(launch.arguments, coset_generator);
    launch.curve = curve;
    return launch;
  }
  static DomainInitLaunch from_launch(const KernelLaunch& launch) {
    need(launch, 9, 0, 1);
    return {launch.arguments[0], core_launch_detail::words_at(launch, 1), core_launch_detail::words_at(launch, 5),
            launch.writes[0]};
  }
};

// ntt_forward, ntt_inverse, coset_ntt, coset_intt (`kernel`): `values` in place over `domain`.
struct NttLaunch {
  std::string kernel;
  std::uint64_t log_size = 0;
  BufferUse domain, values;

  KernelLaunch to_launch(kernel::Curve curve) const {
    KernelLaunch launch{kernel, std::uint64_t{1} << log_size, {log_size}, {domain}, {values}};
    launch.curve = curve;
    return launch;
  }
  static NttLaunch from_launch(const KernelLaunch& launch) {
    need(launch, 1, 1, 1);
    return {launch.name, launch.arguments[0], launch.reads[0], launch.writes[0]};
  }
};

// h_pointwise: a[i] = (a[i]·b[i] − c[i])·factor for i < count (factor 1 when absent).
struct HPointwiseLaunch {
  std::uint64_t count = 0;
  std::optional<FrArgument> factor = std::nullopt;
  BufferUse a, b, c;

  KernelLaunch to_launch(kernel::Curve curve) const {
    KernelLaunch launch{kernel::h_pointwise, count, {}, {b, c}, {a}};
    if (factor) core_launch_detail::append(launch.arguments, *factor);
    launch.curve = curve;
    return launch;
  }
  static HPointwiseLaunch from_launch(const KernelLaunch& launch) {
    need(launch, 0, 2, 1);
    std::optional<FrArgument> factor;
    if (launch.arguments.size() >= 4) factor = core_launch_detail::words_at(launch, 0);
    return {launch.work_units, factor, launch.writes[0], launch.reads[0], launch.reads[1]};
  }
};

// h_polynomial_snarkjs, h_polynomial_classic (`kernel`): the H form over a, b, c, result in a.
struct HPolynomialLaunch {
  std::string kernel;
  std::uint64_t log_size = 0;
  BufferUse domain, a, b, c;

  KernelLaunch to_launch(kernel::Curve curve) const {
    KernelLaunch launch{kernel, std::uint64_t{1} << log_size, {log_size}, {domain}, {a, b, c}};
    launch.curve = curve;
    return launch;
  }
  static HPolynomialLaunch from_launch(const KernelLaunch& launch) {
    need(launch, 1, 1, 3);
    return {launch.name, launch.arguments[0], launch.reads[0], launch.writes[0], launch.writes[1], launch.writes[2]};
  }
};

// h_classic_product, h_classic_finish (`kernel`): the classic form's halves over a and `other` (b for
// the product, c for the finish), result in a.
struct HClassicHalfLaunch {
  std::string kernel;
  std::uint64_t log_size = 0;
  BufferUse domain, a, other;

  KernelLaunch to_launch(kernel::Curve curve) const {
    KernelLaunch launch{kernel, std::uint64_t{1} << log_size, {log_size}, {domain}, {a, other}};
    launch.curve = curve;
    return launch;
  }
  static HClassicHalfLaunch from_launch(const KernelLaunch& launch) {
    need(launch, 1, 1, 2);
    return {launch.name, launch.arguments[0], launch.reads[0], launch.writes[0], launch.writes[1]};
  }
};

// msm_g1: the window sums of Σ scalars[i]·points[i] (msm_plan(points, window_bits)).
struct MsmG1Launch {
  std::uint64_t points = 0;
  bool scalars_montgomery = false;
  std::uint64_t window_bits = 0;  // 0: the planner's
  BufferUse bases, scalars, window_sums, scratch;

  KernelLaunch to_launch(kernel::Curve curve) const {
    KernelLaunch launch{
        kernel::msm_g1, points, {scalars_montgomery ? 1u : 0u, window_bits}, {bases, scalars}, {window_sums, scratch}};
    launch.curve = curve;
    return launch;
  }
  static MsmG1Launch from_launch(const KernelLaunch& launch) {
    need(launch, 2, 2, 2);
    return {launch.work_units, launch.arguments[0] != 0, launch.arguments[1], launch.reads[0],
            launch.reads[1],   launch.writes[0],         launch.writes[1]};
  }
};

}  // namespace stagehand::cuda
