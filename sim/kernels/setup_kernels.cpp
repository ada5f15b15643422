#include "sim/kernels/setup_kernels.hpp"

#include "device/kernel_abi.hpp"
#include "device/setup_launches.hpp"
#include "math/parallel.hpp"
#include "sim/kernels/curve_math.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <stdexcept>
#include <vector>

namespace stagehand::sim {
namespace {

std::span<const std::uint8_t> as_bytes(std::span<std::byte> bytes) {
  return {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()};
}

// setup_fixed_base_g1/_g2 over one curve's group `Group` (its G1 or G2 description).
template <kernel::Curve Curve, class Group>
void setup_fixed_base(KernelContext& context) {
  using Fr = typename CurveMath<Curve>::Fr;
  using Affine = math::AffinePoint<Group>;
  using Projective = math::ProjectivePoint<Group>;
  constexpr std::size_t point_bytes = groth16::affine_bytes<Affine>;
  const auto launch = kernel::FixedBaseLaunch::from_launch(context.launch());
  const std::size_t count = launch.point_count;
  const auto threads = static_cast<unsigned>(launch.threads);
  const auto table_bytes = as_bytes(context.bytes(launch.table));
  const auto scalar_bytes = context.bytes(launch.scalars);
  auto points = context.bytes(launch.points);
  if (table_bytes.size() < kernel::kFixedBaseTableEntries * point_bytes ||
      scalar_bytes.size() < count * kernel::kFrBytes || points.size() < count * point_bytes) {
    throw std::invalid_argument(fmt::format("{}: a buffer is smaller than the launch", launch.kernel));
  }
  std::vector<Affine> table(kernel::kFixedBaseTableEntries);
  for (std::size_t e = 0; e < table.size(); ++e) {
    const auto entry = groth16::decode_affine<Affine>(table_bytes.subspan(e * point_bytes, point_bytes));
    if (!entry) {
      throw std::invalid_argument(fmt::format("{}: table entry {} is not a point of the curve", launch.kernel, e));
    }
    table[e] = *entry;
  }
  const std::span<const Fr> scalars(reinterpret_cast<const Fr*>(scalar_bytes.data()), count);
  auto* out = reinterpret_cast<std::uint8_t*>(points.data());
  constexpr std::size_t kChunk = 4096;  // points per batch_to_affine
  math::detail::run_tasks((count + kChunk - 1) / kChunk, threads, [&](std::size_t task) {
    const std::size_t begin = task * kChunk, end = std::min(count, begin + kChunk);
    std::vector<Projective> sums(end - begin, Projective::identity());
    for (std::size_t i = begin; i < end; ++i) {
      const auto digits = scalars[i].to_canonical_bytes();
      for (std::size_t w = 0; w < digits.size(); ++w) sums[i - begin] += table[256 * w + digits[w]];
    }
    std::vector<Affine> affine(sums.size());
    math::batch_to_affine<Group>(sums, affine);
    for (std::size_t i = begin; i < end; ++i)
      groth16::encode_affine(affine[i - begin], std::span<std::uint8_t>(out + i * point_bytes, point_bytes));
  });
}

template <kernel::Curve Curve, class Description>
void register_for(SimSystem& system) {
  system.register_kernel(kernel::setup_fixed_base_g1, Curve, setup_fixed_base<Curve, typename Description::G1>);
  system.register_kernel(kernel::setup_fixed_base_g2, Curve, setup_fixed_base<Curve, typename Description::G2>);
}

}  // namespace

void register_setup_kernels(SimSystem& system) {
  register_for<kernel::Curve::bls12_381, math::Bls12_381>(system);
  register_for<kernel::Curve::bn254, math::Bn254>(system);
}

}  // namespace stagehand::sim
