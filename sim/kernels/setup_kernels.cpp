#include "sim/kernels/setup_kernels.hpp"

#include "device/kernel_abi.hpp"
#include "device/setup_launches.hpp"
#include "groth16/encoding.hpp"
#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"
#include "math/parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <stdexcept>
#include <vector>

namespace stagehand::sim {
namespace {

static_assert(sizeof(math::Fr) == kernel::kFrBytes,
              "Fr must be its four Montgomery limbs, so that Fr arrays are device bytes");

// The group's encoding, from groth16/encoding.hpp.
template <class Curve>
struct Encoding;
template <>
struct Encoding<math::G1Curve> {
  static constexpr std::size_t kBytes = kernel::kG1AffineBytes;
  static std::optional<math::G1Affine> decode(std::span<const std::uint8_t> bytes) { return groth16::decode_g1(bytes); }
  static void encode(const math::G1Affine& point, std::uint8_t* out) {
    groth16::encode_g1(point, std::span<std::uint8_t, kBytes>(out, kBytes));
  }
};
template <>
struct Encoding<math::G2Curve> {
  static constexpr std::size_t kBytes = kernel::kG2AffineBytes;
  static std::optional<math::G2Affine> decode(std::span<const std::uint8_t> bytes) { return groth16::decode_g2(bytes); }
  static void encode(const math::G2Affine& point, std::uint8_t* out) {
    groth16::encode_g2(point, std::span<std::uint8_t, kBytes>(out, kBytes));
  }
};

std::span<const std::uint8_t> as_bytes(std::span<std::byte> bytes) {
  return {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()};
}

template <class Curve>
void setup_fixed_base(KernelContext& context, const char* name) {
  using E = Encoding<Curve>;
  using Projective = math::ProjectivePoint<Curve>;
  const auto launch = kernel::FixedBaseLaunch::from_launch(context.launch());
  const std::size_t count = launch.point_count;
  const auto threads = static_cast<unsigned>(launch.threads);
  const auto table_bytes = as_bytes(context.bytes(launch.table));
  const auto scalar_bytes = context.bytes(launch.scalars);
  auto points = context.bytes(launch.points);
  if (table_bytes.size() < kernel::kFixedBaseTableEntries * E::kBytes ||
      scalar_bytes.size() < count * kernel::kFrBytes || points.size() < count * E::kBytes) {
    throw std::invalid_argument(fmt::format("{}: a buffer is smaller than the launch", name));
  }
  std::vector<math::AffinePoint<Curve>> table(kernel::kFixedBaseTableEntries);
  for (std::size_t e = 0; e < table.size(); ++e) {
    const auto entry = E::decode(table_bytes.subspan(e * E::kBytes, E::kBytes));
    if (!entry) throw std::invalid_argument(fmt::format("{}: table entry {} is not a point of the curve", name, e));
    table[e] = *entry;
  }
  const std::span<const math::Fr> scalars(reinterpret_cast<const math::Fr*>(scalar_bytes.data()), count);
  auto* out = reinterpret_cast<std::uint8_t*>(points.data());
  constexpr std::size_t kChunk = 4096;  // points per batch_to_affine
  math::detail::run_tasks((count + kChunk - 1) / kChunk, threads, [&](std::size_t task) {
    const std::size_t begin = task * kChunk, end = std::min(count, begin + kChunk);
    std::vector<Projective> sums(end - begin, Projective::identity());
    for (std::size_t i = begin; i < end; ++i) {
      const auto digits = scalars[i].to_canonical_bytes();
      for (std::size_t w = 0; w < digits.size(); ++w) sums[i - begin] += table[256 * w + digits[w]];
    }
    std::vector<math::AffinePoint<Curve>> affine(sums.size());
    math::batch_to_affine<Curve>(sums, affine);
    for (std::size_t i = begin; i < end; ++i) E::encode(affine[i - begin], out + i * E::kBytes);
  });
}

void setup_fixed_base_g1(KernelContext& context) {
  setup_fixed_base<math::G1Curve>(context, kernel::setup_fixed_base_g1);
}
void setup_fixed_base_g2(KernelContext& context) {
  setup_fixed_base<math::G2Curve>(context, kernel::setup_fixed_base_g2);
}

}  // namespace

void register_setup_kernels(SimSystem& system) {
  system.register_kernel(kernel::setup_fixed_base_g1, setup_fixed_base_g1);
  system.register_kernel(kernel::setup_fixed_base_g2, setup_fixed_base_g2);
}

}  // namespace stagehand::sim
