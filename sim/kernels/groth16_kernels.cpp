#include "sim/kernels/groth16_kernels.hpp"

#include "device/kernel_abi.hpp"
#include "math/fq.hpp"
#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/h_polynomial.hpp"
#include "math/msm.hpp"
#include "math/ntt.hpp"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <vector>

namespace stagehand::sim {
namespace {

static_assert(sizeof(math::Fr) == kernel::kFrBytes, "Fr must be its four Montgomery limbs, so that Fr arrays are device bytes");
constexpr std::size_t kFqBytes = kernel::kG1AffineBytes / 2;
static_assert(sizeof(math::Fq::LimbArray) == kFqBytes, "a G1 coordinate is 48 bytes of Montgomery limbs");

math::Fq fq_from(const std::byte* data) {
  math::Fq::LimbArray limbs;
  std::memcpy(limbs.data(), data, kFqBytes);
  return *math::Fq::from_montgomery_limbs(limbs);
}

// The device bytes of G1 points back into points (no curve check: the key was checked on load).
std::vector<math::G1Affine> decode_device_points(std::span<const std::byte> bytes, std::size_t count) {
  std::vector<math::G1Affine> points(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::byte* data = bytes.data() + i * kernel::kG1AffineBytes;
    bool zero = true;
    for (std::size_t k = 0; k < kernel::kG1AffineBytes && zero; ++k) zero = data[k] == std::byte{0};
    if (!zero) points[i] = math::G1Affine::from_coordinates(fq_from(data), fq_from(data + kFqBytes));
  }
  return points;
}

// One snarkjs domain per size, built once: the host function runs for every proof.
const math::Domain& snarkjs_domain(unsigned log_size, unsigned threads) {
  static std::mutex mutex;
  static std::map<unsigned, std::unique_ptr<math::Domain>> domains;
  std::lock_guard lock(mutex);
  auto& slot = domains[log_size];
  if (!slot) slot = std::make_unique<math::Domain>(math::Domain::snarkjs(log_size, threads));
  return *slot;
}

void groth16_h(KernelContext& context) {
  const auto log_size = static_cast<unsigned>(context.argument(0));
  const auto threads = static_cast<unsigned>(context.argument(1));
  const std::size_t n = std::size_t{1} << log_size;
  auto as_fr = [n](std::span<std::byte> bytes) {
    if (bytes.size() < n * kernel::kFrBytes) {
      throw std::invalid_argument(fmt::format("{}: a buffer is smaller than the domain", kernel::groth16_h));
    }
    return std::span<math::Fr>(reinterpret_cast<math::Fr*>(bytes.data()), n);
  };
  math::h_evaluations_snarkjs(as_fr(context.write(0)), as_fr(context.write(1)), as_fr(context.write(2)),
                              snarkjs_domain(log_size, threads), threads);
}

void groth16_msm_g1(KernelContext& context) {
  const std::size_t count = context.launch().work_units;
  const auto threads = static_cast<unsigned>(context.argument(0));
  auto points_bytes = context.read(0);
  auto scalar_bytes = context.read(1);
  auto result = context.write(0);
  if (points_bytes.size() < count * kernel::kG1AffineBytes || scalar_bytes.size() < count * kernel::kFrBytes ||
      result.size() < kernel::kG1JacobianBytes) {
    throw std::invalid_argument(fmt::format("{}: a buffer is smaller than the launch", kernel::groth16_msm_g1));
  }
  const auto points = decode_device_points(points_bytes, count);
  std::span<const math::Fr> scalars(reinterpret_cast<const math::Fr*>(scalar_bytes.data()), count);
  const auto sum = math::msm(points, scalars, threads);
  std::memcpy(result.data(), sum.x.montgomery_limbs().data(), kFqBytes);
  std::memcpy(result.data() + kFqBytes, sum.y.montgomery_limbs().data(), kFqBytes);
  std::memcpy(result.data() + 2 * kFqBytes, sum.z.montgomery_limbs().data(), kFqBytes);
}

}  // namespace

void register_groth16_kernels(SimSystem& system) {
  system.register_kernel(kernel::groth16_h, groth16_h);
  system.register_kernel(kernel::groth16_msm_g1, groth16_msm_g1);
}

}  // namespace stagehand::sim
