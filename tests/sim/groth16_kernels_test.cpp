// The Groth16 kernels' simulator host functions (sim/kernels/groth16_kernels.hpp) on a functional
// SimSystem, against the CPU reference called directly.
#define BOOST_TEST_MODULE groth16_kernels
#include <boost/test/unit_test.hpp>

#include "device/kernel_abi.hpp"
#include "math/g1.hpp"
#include "math/msm.hpp"
#include "sim/kernels/groth16_kernels.hpp"
#include "support/sim_harness.hpp"

#include <cstring>
#include <vector>

using namespace stagehand;
using testing::SimHarness;

namespace {

constexpr std::size_t kFqBytes = kernel::kG1AffineBytes / 2;

std::vector<std::byte> device_bytes(const std::vector<math::G1Affine>& points) {
  std::vector<std::byte> bytes(points.size() * kernel::kG1AffineBytes, std::byte{0});  // zeros: infinity
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].infinity) continue;
    std::memcpy(bytes.data() + i * kernel::kG1AffineBytes, points[i].x.montgomery_limbs().data(), kFqBytes);
    std::memcpy(bytes.data() + i * kernel::kG1AffineBytes + kFqBytes, points[i].y.montgomery_limbs().data(), kFqBytes);
  }
  return bytes;
}

// Montgomery Fr, 32 bytes each: the scalars' device layout.
std::vector<std::byte> device_bytes(const std::vector<math::Fr>& scalars) {
  std::vector<std::byte> bytes(scalars.size() * kernel::kFrBytes);
  std::memcpy(bytes.data(), scalars.data(), bytes.size());
  return bytes;
}

math::Fq fq_at(const std::vector<std::byte>& bytes, std::size_t offset) {
  math::Fq::LimbArray limbs;
  std::memcpy(limbs.data(), bytes.data() + offset, kFqBytes);
  return *math::Fq::from_montgomery_limbs(limbs);
}

// G, 2G, ..., count·G, the one at index `infinity_at` (if any) replaced by the point at infinity.
std::vector<math::G1Affine> generator_multiples(int count, int infinity_at = -1) {
  std::vector<math::G1Affine> points;
  auto multiple = math::G1Projective::identity();
  for (int i = 0; i < count; ++i) {
    multiple += math::G1Curve::generator();
    points.push_back(i == infinity_at ? math::G1Affine::identity() : multiple.to_affine());
  }
  return points;
}

// step·i + offset for i < count.
std::vector<math::Fr> spaced_scalars(std::size_t count, std::uint64_t step, std::uint64_t offset) {
  std::vector<math::Fr> scalars;
  for (std::uint64_t i = 0; i < count; ++i) scalars.push_back(math::Fr::from_uint64(step * i + offset));
  return scalars;
}

HostRange host_range(std::vector<std::byte>& bytes) {
  return HostRange{reinterpret_cast<std::uintptr_t>(bytes.data()), bytes.size()};
}

}  // namespace

BOOST_AUTO_TEST_CASE(groth16_msm_g1_on_the_simulator_equals_math_msm) {
  // Multiples of the generator, one of them the point at infinity.
  const auto points = generator_multiples(7, 3);
  const auto scalars = spaced_scalars(points.size(), 1000, 17);
  const auto expected = math::msm(points, scalars, 1).to_affine();

  sim::SimOptions options;
  options.functional = true;
  SimHarness harness("h200", options);
  sim::register_groth16_kernels(harness.system);
  auto point_bytes = device_bytes(points);
  auto scalar_bytes = device_bytes(scalars);
  std::vector<std::byte> result(kernel::kG1JacobianBytes);
  harness.run([&](SimHarness& h) -> asio::awaitable<void> {
    auto& device = h.device;
    auto stream = device.create_stream();
    auto on_points = co_await device.allocate(point_bytes.size());
    auto on_scalars = co_await device.allocate(scalar_bytes.size());
    auto on_result = co_await device.allocate(result.size());
    co_await device.copy_to_device(on_points, host_range(point_bytes), stream);
    co_await device.copy_to_device(on_scalars, host_range(scalar_bytes), stream);
    KernelLaunch launch{kernel::groth16_msm_g1,
                        points.size(),
                        {1},
                        {{on_points, point_bytes.size()}, {on_scalars, scalar_bytes.size()}},
                        {{on_result, result.size()}}};
    device.launch(launch, stream);
    co_await device.copy_to_host(host_range(result), on_result, stream);
    co_await device.synchronize_stream(stream);
    for (auto pointer : {on_points, on_scalars, on_result}) co_await device.free(pointer);
    device.destroy_stream(stream);
  });
  BOOST_TEST(harness.device.check().clean(), harness.device.check().describe());
  math::G1Projective sum{fq_at(result, 0), fq_at(result, kFqBytes), fq_at(result, 2 * kFqBytes)};
  BOOST_TEST((sum.to_affine() == expected));
  BOOST_TEST(!expected.infinity);
}

BOOST_AUTO_TEST_CASE(a_streamed_msm_in_batches_on_the_simulator_equals_math_msm) {
  // Eleven multiples of the generator in batches of 4, 4 and 3 (capacity 4), the first afresh
  // over a scratch that holds garbage, the rest added, then the reduction.
  const auto points = generator_multiples(11);
  const auto scalars = spaced_scalars(points.size(), 7919, 3);
  const auto expected = math::msm(points, scalars, 1).to_affine();

  sim::SimOptions options;
  options.functional = true;
  SimHarness harness("h200", options);
  sim::register_groth16_kernels(harness.system);
  // The model has no scratch for these kernels: the functional kernels ask for their own.
  const Bytes scratch_bytes = harness.device.kernel_scratch_bytes(kernel::groth16_msm_g1_batch, 4);
  BOOST_TEST(scratch_bytes >= kernel::kG1JacobianBytes);
  auto point_bytes = device_bytes(points);
  auto scalar_bytes = device_bytes(scalars);
  std::vector<std::byte> garbage(scratch_bytes, std::byte{0x5a});
  std::vector<std::byte> result(kernel::kG1JacobianBytes);
  harness.run([&](SimHarness& h) -> asio::awaitable<void> {
    auto& device = h.device;
    auto stream = device.create_stream();
    auto on_points = co_await device.allocate(point_bytes.size());
    auto on_scalars = co_await device.allocate(scalar_bytes.size());
    auto on_result = co_await device.allocate(result.size());
    auto on_scratch = co_await device.allocate(scratch_bytes);
    co_await device.copy_to_device(on_points, host_range(point_bytes), stream);
    co_await device.copy_to_device(on_scalars, host_range(scalar_bytes), stream);
    co_await device.copy_to_device(on_scratch, host_range(garbage), stream);
    for (std::uint64_t first = 0; first < points.size(); first += 4) {
      const std::uint64_t count = std::min<std::uint64_t>(4, points.size() - first);
      KernelLaunch batch{kernel::groth16_msm_g1_batch,
                         count,
                         {1, 4, first == 0 ? 0u : 1u},
                         {{on_points + first * kernel::kG1AffineBytes, count * kernel::kG1AffineBytes},
                          {on_scalars + first * kernel::kFrBytes, count * kernel::kFrBytes}},
                         {{on_scratch, scratch_bytes}}};
      device.launch(batch, stream);
    }
    KernelLaunch reduce{
        kernel::groth16_msm_g1_reduce, 1, {4}, {}, {{on_result, result.size()}, {on_scratch, scratch_bytes}}};
    device.launch(reduce, stream);
    co_await device.copy_to_host(host_range(result), on_result, stream);
    co_await device.synchronize_stream(stream);
    for (auto pointer : {on_points, on_scalars, on_result, on_scratch}) co_await device.free(pointer);
    device.destroy_stream(stream);
  });
  BOOST_TEST(harness.device.check().clean(), harness.device.check().describe());
  math::G1Projective sum{fq_at(result, 0), fq_at(result, kFqBytes), fq_at(result, 2 * kFqBytes)};
  BOOST_TEST((sum.to_affine() == expected));
}

BOOST_AUTO_TEST_CASE(both_kernels_are_registered_under_their_abi_names) {
  sim::SimOptions options;
  options.functional = true;
  sim::SimSystem system(options);
  sim::register_groth16_kernels(system);
  BOOST_TEST(system.kernel_function(kernel::groth16_h_evaluate) != nullptr);
  BOOST_TEST(system.kernel_function(kernel::groth16_h_combine) != nullptr);
  BOOST_TEST(system.kernel_function(kernel::groth16_msm_g1) != nullptr);
  for (const char* name : {kernel::groth16_msm_g1_batch, kernel::groth16_msm_g2_batch, kernel::groth16_msm_g1_reduce,
                           kernel::groth16_msm_g2_reduce}) {
    BOOST_TEST(system.kernel_function(name) != nullptr, name);
  }
}
