// The setup kernels' GPU checks and timing (setup_checks.hpp).
#include "setup_checks.hpp"
#include "point_encoding.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "device/kernel_abi.hpp"
#include "groth16/fixed_base.hpp"
#include "kernel_check_helpers.hpp"
#include "launch/setup_launchers.hpp"
#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"
#include "util/common_host.hpp"

namespace stagehand::cuda::setup_checks {
namespace {

using check_support::rejects;
using check_support::report;
using checks::Clock;
using checks::seconds_since;

constexpr std::uint64_t kGuardPoints = 16;

using check_encoding::put;

const char* kernel_name(FixedBaseGroup group) {
  return group == FixedBaseGroup::g1 ? kernel::setup_fixed_base_g1 : kernel::setup_fixed_base_g2;
}

// The table (FixedBase's, encoded) and the reference s·G (math's double-and-add, no table).
template <class Curve>
std::vector<std::uint8_t> table_of(std::uint64_t point_bytes) {
  const groth16::FixedBase<Curve> base(Curve::generator());
  std::vector<std::uint8_t> table(groth16::kFixedBaseEntries * point_bytes);
  for (std::size_t e = 0; e < groth16::kFixedBaseEntries; ++e) put(base.table()[e], table.data() + e * point_bytes);
  return table;
}
std::vector<std::uint8_t> table_of(FixedBaseGroup group) {
  return group == FixedBaseGroup::g1 ? table_of<math::G1Curve>(96) : table_of<math::G2Curve>(192);
}
std::vector<std::uint8_t> expected_point(FixedBaseGroup group, const math::Fr& scalar) {
  std::vector<std::uint8_t> bytes(fixed_base_point_bytes(group));
  if (group == FixedBaseGroup::g1) {
    put(math::G1Projective::from_affine(math::G1Curve::generator()).multiply(scalar).to_affine(), bytes.data());
  } else {
    put(math::G2Projective::from_affine(math::G2Curve::generator()).multiply(scalar).to_affine(), bytes.data());
  }
  return bytes;
}

std::vector<math::Fr> edge_scalars() {
  std::vector<math::Fr> scalars{math::Fr::zero(), math::Fr::one(), -math::Fr::one(), -math::Fr::from_uint64(2)};
  math::Fr power = math::Fr::one();
  for (int w = 0; w < 32; ++w, power *= math::Fr::from_uint64(256)) scalars.push_back(power);
  scalars.push_back(*math::Fr::from_canonical_limbs(math::Limbs<4>{~0ull, ~0ull, ~0ull, (1ull << 56) - 1}));
  scalars.push_back(*math::Fr::from_canonical_limbs(math::Limbs<4>{0, 0, 0, 0x73ull << 56}));
  return scalars;
}

void add_random_scalars(std::vector<math::Fr>& scalars, std::uint64_t count, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  for (std::uint64_t i = 0; i < count;) {
    if (auto value = math::Fr::from_canonical_limbs(math::Limbs<4>{engine(), engine(), engine(), engine() >> 1})) {
      scalars.push_back(*value);
      ++i;
    }
  }
}

std::vector<std::uint8_t> montgomery_bytes(const std::vector<math::Fr>& scalars) {
  std::vector<std::uint8_t> bytes(scalars.size() * 32);
  for (std::size_t i = 0; i < scalars.size(); ++i)
    std::memcpy(bytes.data() + 32 * i, scalars[i].montgomery_limbs().data(), 32);
  return bytes;
}

BufferUse use(const DeviceBuffer& buffer, std::uint64_t bytes, std::uint64_t offset = 0) {
  return buffer.use(offset, bytes);
}

const KernelLauncher& launcher(FixedBaseGroup group) {
  const KernelLauncher* found = find_launcher(kernel_name(group));
  if (found == nullptr) throw std::logic_error(std::string(kernel_name(group)) + " is not registered");
  return *found;
}

KernelLaunch launch_of(FixedBaseGroup group, std::uint64_t n, const DeviceBuffer& table, const DeviceBuffer& scalars,
                       const DeviceBuffer& points) {
  return KernelLaunch{kernel_name(group),
                      n,
                      {0},
                      {use(table, table.bytes), use(scalars, n * 32)},
                      {use(points, n * fixed_base_point_bytes(group))}};
}

bool all_poison(const std::uint8_t* bytes, std::uint64_t count) {
  return std::all_of(bytes, bytes + count, [](std::uint8_t byte) { return byte == 0xff; });
}

// The launcher's refusals of buffers that do not fit a launch of 100 points.
Result check_fixed_base_refusals(std::ostream& out, FixedBaseGroup group, DeviceBuffer& device_table,
                                 DeviceBuffer& device_scalars, DeviceBuffer& points) {
  Result result;
  const std::string name = kernel_name(group);
  const std::uint64_t point_bytes = fixed_base_point_bytes(group);
  const std::uint64_t m = 100;
  result.add(rejects(out, name + " refuses a short table", [&] {
    auto launch = launch_of(group, m, device_table, device_scalars, points);
    launch.reads[0].bytes -= 16;
    launcher(group)(launch, nullptr);
  }));
  result.add(rejects(out, name + " refuses short scalars", [&] {
    auto launch = launch_of(group, m, device_table, device_scalars, points);
    launch.reads[1].bytes = (m - 1) * 32;
    launcher(group)(launch, nullptr);
  }));
  result.add(rejects(out, name + " refuses a short output", [&] {
    auto launch = launch_of(group, m, device_table, device_scalars, points);
    launch.writes[0].bytes = m * point_bytes - 1;
    launcher(group)(launch, nullptr);
  }));
  result.add(rejects(out, name + " refuses a misaligned output", [&] {
    auto launch = launch_of(group, m, device_table, device_scalars, points);
    launch.writes[0] = use(points, m * point_bytes, 8);
    launcher(group)(launch, nullptr);
  }));
  result.add(rejects(out, name + " refuses a launch without the scalars", [&] {
    auto launch = launch_of(group, m, device_table, device_scalars, points);
    launch.reads.pop_back();
    launcher(group)(launch, nullptr);
  }));
  return result;
}

}  // namespace

Result check_fixed_base(std::ostream& out, FixedBaseGroup group, unsigned log, std::uint64_t seed) {
  Result result;
  const std::string name = kernel_name(group);
  const std::uint64_t point_bytes = fixed_base_point_bytes(group);
  std::vector<math::Fr> scalars = edge_scalars();
  add_random_scalars(scalars, std::uint64_t{1} << log, seed);
  const std::uint64_t n = scalars.size();  // not a multiple of the block size: a partial last block
  const auto table = table_of(group);
  DeviceBuffer device_table(table.size()), device_scalars(n * 32), points((n + kGuardPoints) * point_bytes);
  device_table.upload(table);
  device_scalars.upload(montgomery_bytes(scalars));
  const auto started = Clock::now();
  launcher(group)(launch_of(group, n, device_table, device_scalars, points), nullptr);
  STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
  const double gpu_seconds = seconds_since(started);
  const auto got = points.download<std::uint8_t>((n + kGuardPoints) * point_bytes);
  long long first_bad = -1;
  std::uint64_t bad = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (std::memcmp(got.data() + i * point_bytes, expected_point(group, scalars[i]).data(), point_bytes) != 0) {
      if (first_bad < 0) first_bad = static_cast<long long>(i);
      ++bad;
    }
  }
  result.add(
      report(out, bad == 0,
             name + " " + std::to_string(n) + " points (2^" + std::to_string(log) + " random + edge cases) vs math",
             bad == 0 ? "(gpu " + std::to_string(gpu_seconds).substr(0, 5) + " s)"
                      : std::to_string(bad) + " wrong, the first at " + std::to_string(first_bad)));
  result.add(report(out, all_poison(got.data() + n * point_bytes, kGuardPoints * point_bytes),
                    name + " leaves the guard alone"));
  // A zero scalar gives infinity: all zeros (point 0 of the set is the scalar 0).
  result.add(report(out,
                    std::all_of(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(point_bytes),
                                [](std::uint8_t b) { return b == 0; }),
                    name + " of the scalar 0 is all zeros"));

  // No points: nothing written, even with buffers too small for any.
  DeviceBuffer untouched(point_bytes);
  launcher(group)(launch_of(group, 0, device_table, device_scalars, untouched), nullptr);
  STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
  result.add(report(out, all_poison(untouched.download<std::uint8_t>(point_bytes).data(), point_bytes),
                    name + " of no points writes nothing"));

  result.add(check_fixed_base_refusals(out, group, device_table, device_scalars, points));
  STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
  return result;
}

Result time_fixed_base(std::ostream& out, FixedBaseGroup group, unsigned log, int repetitions,
                       double& points_per_second) {
  Result result;
  points_per_second = 0;
  const std::string name = kernel_name(group);
  const std::uint64_t n = std::uint64_t{1} << log, point_bytes = fixed_base_point_bytes(group);
  // 2^16 distinct random scalars repeated: the kernel's work does not depend on which values
  // repeat, and the host draws far fewer.
  std::vector<math::Fr> distinct;
  add_random_scalars(distinct, std::min<std::uint64_t>(n, 1u << 16), 7000 + log);
  const auto distinct_bytes = montgomery_bytes(distinct);
  std::vector<std::uint8_t> scalar_bytes(n * 32);
  for (std::uint64_t at = 0; at < scalar_bytes.size(); at += distinct_bytes.size()) {
    std::memcpy(scalar_bytes.data() + at, distinct_bytes.data(),
                std::min<std::uint64_t>(distinct_bytes.size(), scalar_bytes.size() - at));
  }
  const auto table = table_of(group);
  DeviceBuffer device_table(table.size()), device_scalars(n * 32), points(n * point_bytes);
  device_table.upload(table);
  device_scalars.upload(scalar_bytes);
  const KernelLaunch launch = launch_of(group, n, device_table, device_scalars, points);
  const auto timing =
      check_support::time_launches(repetitions, [&](cudaStream_t stream) { launcher(group)(launch, stream); });
  points_per_second = static_cast<double>(n) / (timing.median / 1000.0);
  // A sample spread over the whole output, the last point included.
  std::uint64_t bad = 0;
  std::vector<std::uint8_t> got(point_bytes);
  for (std::uint64_t k = 0; k <= 64; ++k) {
    const std::uint64_t i = k == 64 ? n - 1 : (n / 64) * k + (k * 7919) % std::max<std::uint64_t>(1, n / 64);
    STAGEHAND_CUDA_CHECK(cudaMemcpy(got.data(), static_cast<std::uint8_t*>(points.pointer) + i * point_bytes,
                                    point_bytes, cudaMemcpyDeviceToHost));
    if (got != expected_point(group, distinct[i % distinct.size()])) ++bad;
  }
  if (bad != 0) points_per_second = 0;
  char line[256];
  std::snprintf(line, sizeof line, "median %.2f ms (min %.2f, max %.2f, %d runs): %.2f M points/s", timing.median,
                timing.min, timing.max, repetitions, static_cast<double>(n) / (timing.median / 1000.0) / 1e6);
  out << "time  " << name << " 2^" << log << ": " << line << std::endl;
  result.add(report(out, bad == 0, name + " 2^" + std::to_string(log) + " timed output, 65 points vs math",
                    bad == 0 ? "" : std::to_string(bad) + " wrong"));
  return result;
}

Result bench(std::ostream& out, unsigned g1_small, unsigned g1_large, unsigned g2_small, unsigned g2_large,
             int repetitions) {
  Result result;
  double g1_rate = 0, g2_rate = 0, rate = 0;
  for (unsigned log : {g1_small, g1_large}) {
    if (log == 0) continue;
    result.add(time_fixed_base(out, FixedBaseGroup::g1, log, repetitions, rate));
    g1_rate = rate;  // the larger size's, when both ran
  }
  for (unsigned log : {g2_small, g2_large}) {
    if (log == 0) continue;
    result.add(time_fixed_base(out, FixedBaseGroup::g2, log, repetitions, rate));
    g2_rate = rate;
  }
  if (g1_rate > 0 && g2_rate > 0) {
    const double g1_seconds = static_cast<double>(std::uint64_t{1} << 28) / g1_rate;
    const double g2_seconds = static_cast<double>(std::uint64_t{1} << 26) / g2_rate;
    char line[256];
    std::snprintf(line, sizeof line,
                  "2^28 G1 %.1f s + 2^26 G2 %.1f s = %.1f s of kernels (transfers and the host's share not included)",
                  g1_seconds, g2_seconds, g1_seconds + g2_seconds);
    out << "time  projected 2^26 setup: " << line << std::endl;
  }
  return result;
}

}  // namespace stagehand::cuda::setup_checks
