// The Groth16 kernels' simulator host functions (sim/kernels/groth16_kernels.hpp) and the
// assignment program's classic H in two halves (sim/kernels/assignment_kernels.hpp) on a functional
// SimSystem, against the CPU reference called directly.
#define BOOST_TEST_MODULE groth16_kernels
#include <boost/test/unit_test.hpp>

#include "device/kernel_abi.hpp"
#include "math/g1.hpp"
#include "math/h_polynomial.hpp"
#include "math/msm.hpp"
#include "math/ntt.hpp"
#include "sim/kernels/assignment_kernels.hpp"
#include "sim/kernels/groth16_kernels.hpp"
#include "support/sim_harness.hpp"

#include <cstring>
#include <functional>
#include <random>
#include <string>
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

// ---- The classic H in two halves (h_classic_product, h_classic_finish) ---------------------------

namespace {

using Bytes8 = std::vector<std::byte>;

// Full-width random Fr: a product of four random 64-bit values.
std::vector<math::Fr> random_frs(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::vector<math::Fr> values;
  for (std::size_t i = 0; i < count; ++i) {
    math::Fr value = math::Fr::one();
    for (int k = 0; k < 4; ++k) value *= math::Fr::from_uint64(generator());
    values.push_back(value);
  }
  return values;
}

// ntt_domain_init's arguments for a domain: [log_size, ω w0..w3, g w0..w3].
std::vector<std::uint64_t> domain_arguments(const math::Domain& domain, unsigned log_size) {
  std::vector<std::uint64_t> arguments{log_size};
  for (const math::Fr& value : {domain.root(), domain.coset_generator()}) {
    const auto limbs = value.montgomery_limbs();
    arguments.insert(arguments.end(), limbs.begin(), limbs.end());
  }
  return arguments;
}

// Buffer 0 is the domain (kAssignmentDomainBytes), filled by ntt_domain_init for `domain`; every
// buffer goes up, `launches` runs over their device pointers on one stream, and every buffer comes
// back. A host function's refusal propagates out of the run.
void run_assignment_kernels(std::vector<Bytes8*> buffers, const math::Domain& domain, unsigned domain_log,
                            const testing::LaunchesOver& launches) {
  sim::SimOptions options;
  options.functional = true;
  SimHarness harness("h200", options);
  sim::register_assignment_kernels(harness.system);
  testing::run_over_buffers(harness, buffers, [&](const std::vector<DevicePointer>& pointers) {
    std::vector<KernelLaunch> all{KernelLaunch{kernel::ntt_domain_init,
                                               std::uint64_t{1} << domain_log,
                                               domain_arguments(domain, domain_log),
                                               {},
                                               {{pointers[0], buffers[0]->size()}}}};
    for (auto& launch : launches(pointers)) all.push_back(std::move(launch));
    return all;
  });
  BOOST_TEST(harness.device.check().clean(), harness.device.check().describe());
}

// An H kernel's launch of 2^log_size over the domain at pointers[0] and the writes at `writes`.
KernelLaunch h_launch(const char* name, unsigned log_size, const std::vector<DevicePointer>& pointers,
                      const std::vector<Bytes8*>& buffers, std::initializer_list<std::size_t> writes) {
  KernelLaunch launch{name, std::uint64_t{1} << log_size, {log_size}, {{pointers[0], buffers[0]->size()}}, {}};
  for (const std::size_t i : writes) launch.writes.push_back({pointers[i], buffers[i]->size()});
  return launch;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_classic_h_halves_on_the_simulator_equal_math_h_coefficients_classic) {
  // The product over a and b, then the finish over a and c (a fresh buffer, where the program puts
  // it), against math's whole form and the simulator's h_polynomial_classic on a copy of the same
  // input: a byte for byte the same.
  for (const unsigned log_size : {1u, 4u, 9u}) {
    const std::size_t n = std::size_t{1} << log_size;
    const math::Domain domain = math::Domain::classic(log_size);
    std::vector<math::Fr> a = random_frs(n, 100 + log_size), b = random_frs(n, 200 + log_size),
                          c = random_frs(n, 300 + log_size);
    Bytes8 domain_bytes(sim::kAssignmentDomainBytes);
    Bytes8 a_bytes = device_bytes(a), b_bytes = device_bytes(b), c_bytes = device_bytes(c);
    Bytes8 whole_a = a_bytes, whole_b = b_bytes, whole_c = c_bytes;
    std::vector<Bytes8*> buffers{&domain_bytes, &a_bytes, &b_bytes, &c_bytes, &whole_a, &whole_b, &whole_c};
    run_assignment_kernels(buffers, domain, log_size, [&](const std::vector<DevicePointer>& at) {
      return std::vector<KernelLaunch>{h_launch(kernel::h_classic_product, log_size, at, buffers, {1, 2}),
                                       h_launch(kernel::h_classic_finish, log_size, at, buffers, {1, 3}),
                                       h_launch(kernel::h_polynomial_classic, log_size, at, buffers, {4, 5, 6})};
    });
    const Bytes8 input_a = device_bytes(a);
    math::h_coefficients_classic(a, b, c, domain);
    const Bytes8 expected = device_bytes(a);
    BOOST_TEST(expected != input_a, "2^" << log_size);
    BOOST_TEST((a_bytes == expected), "the halves at 2^" << log_size);
    BOOST_TEST((whole_a == expected), "h_polynomial_classic at 2^" << log_size);
  }
}

namespace {

// The message of the refusal of `launch` (built over buffers domain, a, b of 2^log_size Fr but b,
// which holds `short_by` fewer), the domain of 2^domain_log; empty when nothing is refused.
std::string refusal(
    const std::function<KernelLaunch(const std::vector<DevicePointer>&, const std::vector<Bytes8*>&)>& launch,
    unsigned log_size, unsigned domain_log, std::size_t short_by = 0) {
  const std::size_t n = std::size_t{1} << log_size;
  Bytes8 domain_bytes(sim::kAssignmentDomainBytes);
  Bytes8 a = device_bytes(random_frs(n, 1)), b = device_bytes(random_frs(n - short_by, 2));
  std::vector<Bytes8*> buffers{&domain_bytes, &a, &b};
  try {
    run_assignment_kernels(buffers, math::Domain::classic(domain_log), domain_log,
                           [&](const std::vector<DevicePointer>& at) { return std::vector{launch(at, buffers)}; });
  } catch (const std::exception& error) {
    return error.what();
  }
  return {};
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_classic_h_halves_refuse_bad_launches_naming_the_kernel) {
  for (const char* name : {kernel::h_classic_product, kernel::h_classic_finish}) {
    const auto two_writes = [&](const std::vector<DevicePointer>& at, const std::vector<Bytes8*>& buffers) {
      return h_launch(name, 3, at, buffers, {1, 2});
    };
    const auto one_write = [&](const std::vector<DevicePointer>& at, const std::vector<Bytes8*>& buffers) {
      return h_launch(name, 3, at, buffers, {1});
    };
    const auto no_argument = [&](const std::vector<DevicePointer>& at, const std::vector<Bytes8*>& buffers) {
      KernelLaunch launch = h_launch(name, 3, at, buffers, {1, 2});
      launch.arguments.clear();
      return launch;
    };
    BOOST_TEST(refusal(two_writes, 3, 3).empty(), name);
    const std::string expects = std::string(name) + ": expects [log_size], reads [domain], writes ";
    for (const std::string& message : {refusal(one_write, 3, 3), refusal(no_argument, 3, 3)}) {
      BOOST_TEST(message.starts_with(expects), message);
    }
    BOOST_TEST(refusal(two_writes, 3, 3, 1) == std::string(name) + ": a buffer is smaller than the domain");
    BOOST_TEST(refusal(two_writes, 3, 2) == std::string(name) + ": the domain is of 2^2, the launch of 2^3");
  }
}
