// The test-only setup's point multiplications on a Device (groth16/device_setup.hpp), run on the
// functional simulator, whose setup_fixed_base host functions (sim/kernels/setup_kernels.hpp)
// stand in for the CUDA kernels: every point against src/math's own double-and-add, and against
// the CPU setup's FixedBase; in one chunk and in many (both streams' slots reused); the device's
// memory all freed and the race checker clean.
#define BOOST_TEST_MODULE device_setup
#include <boost/test/unit_test.hpp>

#include "device/kernel_abi.hpp"
#include "groth16/device_setup.hpp"
#include "groth16/encoding.hpp"
#include "groth16/fixed_base.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"
#include "sim/kernels/setup_kernels.hpp"
#include "support/sim_harness.hpp"

#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

using namespace stagehand;
using namespace stagehand::groth16;
using testing::SimHarness;

namespace {

// Zero, one, r - 1, r - 2, 2^(8w) for every window, 2^248 - 1 (every digit 255 below the top
// window), the top window alone; then uniform values below r.
std::vector<math::Fr> test_scalars(std::size_t random_count, std::uint64_t seed) {
  std::vector<math::Fr> scalars{math::Fr::zero(), math::Fr::one(), -math::Fr::one(), -math::Fr::from_uint64(2)};
  math::Fr power = math::Fr::one();
  for (int w = 0; w < 32; ++w, power *= math::Fr::from_uint64(256)) scalars.push_back(power);
  scalars.push_back(*math::Fr::from_canonical_limbs(math::Limbs<4>{~0ull, ~0ull, ~0ull, (1ull << 56) - 1}));
  scalars.push_back(*math::Fr::from_canonical_limbs(math::Limbs<4>{0, 0, 0, 0x73ull << 56}));
  std::mt19937_64 engine(seed);
  for (std::size_t i = 0; i < random_count;) {
    if (auto value = math::Fr::from_canonical_limbs(math::Limbs<4>{engine(), engine(), engine(), engine() >> 1})) {
      scalars.push_back(*value);
      ++i;
    }
  }
  return scalars;
}

template <class Curve>
struct GroupOf;
template <>
struct GroupOf<math::G1Curve> {
  static constexpr SetupGroup group = SetupGroup::g1;
  static std::vector<std::uint8_t> encode(const math::G1Affine& p) {
    std::vector<std::uint8_t> out;
    encode_g1(p, out);
    return out;
  }
};
template <>
struct GroupOf<math::G2Curve> {
  static constexpr SetupGroup group = SetupGroup::g2;
  static std::vector<std::uint8_t> encode(const math::G2Affine& p) {
    std::vector<std::uint8_t> out;
    encode_g2(p, out);
    return out;
  }
};

// multiply_generator_on_device on a fresh functional simulated H200 (optionally held to
// `memory_bytes`); the race checker must be clean and every byte freed.
std::vector<std::uint8_t> on_simulator(SetupGroup group, const std::vector<math::Fr>& scalars,
                                       DeviceSetupOptions options, Bytes memory_bytes = 0) {
  sim::SimOptions sim_options;
  sim_options.functional = true;
  SimHarness harness("h200", sim_options);
  if (memory_bytes != 0) harness.device.set_memory_bytes(memory_bytes);
  sim::register_setup_kernels(harness.system);
  std::vector<std::uint8_t> points;
  harness.run([&](SimHarness& h) -> asio::awaitable<void> {
    points = co_await multiply_generator_on_device(h.device, group, scalars, options);
  });
  BOOST_TEST(harness.device.check().clean(), harness.device.check().describe());
  const auto memory = harness.device.memory_info();
  BOOST_TEST(memory.free_bytes == memory.total_bytes);
  return points;
}

template <class Curve>
void check_points(const std::vector<math::Fr>& scalars, const std::vector<std::uint8_t>& points) {
  using G = GroupOf<Curve>;
  const std::size_t bytes = setup_point_bytes(G::group);
  BOOST_REQUIRE_EQUAL(points.size(), scalars.size() * bytes);
  const FixedBase<Curve> fixed_base(Curve::generator());
  const auto generator = math::ProjectivePoint<Curve>::from_affine(Curve::generator());
  for (std::size_t i = 0; i < scalars.size(); ++i) {
    const auto expected = generator.multiply(scalars[i]).to_affine();
    const std::vector<std::uint8_t> got(points.begin() + static_cast<std::ptrdiff_t>(i * bytes),
                                        points.begin() + static_cast<std::ptrdiff_t>((i + 1) * bytes));
    BOOST_TEST_CONTEXT("point " << i << ", scalar " << scalars[i].to_decimal()) {
      BOOST_TEST((got == G::encode(expected)));
      BOOST_TEST((fixed_base.multiply(scalars[i]).to_affine() == expected));
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(g1_points_equal_the_cpu_reference_in_one_chunk_and_in_many) {
  const auto scalars = test_scalars(300, 1);
  const auto whole = on_simulator(SetupGroup::g1, scalars, DeviceSetupOptions{});
  check_points<math::G1Curve>(scalars, whole);
  // 37 points a chunk: ten chunks, the last short, each slot used five times.
  const auto chunked = on_simulator(SetupGroup::g1, scalars, DeviceSetupOptions{37, 2});
  BOOST_TEST((chunked == whole));
}

BOOST_AUTO_TEST_CASE(g2_points_equal_the_cpu_reference_in_one_chunk_and_in_many) {
  const auto scalars = test_scalars(100, 2);
  const auto whole = on_simulator(SetupGroup::g2, scalars, DeviceSetupOptions{});
  check_points<math::G2Curve>(scalars, whole);
  const auto chunked = on_simulator(SetupGroup::g2, scalars, DeviceSetupOptions{29, 2});
  BOOST_TEST((chunked == whole));
}

// The table the kernels get: entry 256·w + d is d·2^(8w)·G (zeros for d = 0), checked against
// math's multiplication for every window and a few digits.
BOOST_AUTO_TEST_CASE(the_table_holds_the_generators_multiples) {
  for (SetupGroup group : {SetupGroup::g1, SetupGroup::g2}) {
    const auto table = fixed_base_table_bytes(group);
    const std::size_t bytes = setup_point_bytes(group);
    BOOST_REQUIRE_EQUAL(table.size(), kernel::kFixedBaseTableEntries * bytes);
    math::Fr window = math::Fr::one();
    for (std::size_t w = 0; w < 32; ++w, window *= math::Fr::from_uint64(256)) {
      for (std::uint64_t d : {0, 1, 2, 127, 255}) {
        const math::Fr scalar = window * math::Fr::from_uint64(d);
        const std::vector<std::uint8_t> entry(table.begin() + static_cast<std::ptrdiff_t>((256 * w + d) * bytes),
                                              table.begin() + static_cast<std::ptrdiff_t>((256 * w + d + 1) * bytes));
        const auto expected =
            group == SetupGroup::g1
                ? GroupOf<math::G1Curve>::encode(
                      math::G1Projective::from_affine(math::G1Curve::generator()).multiply(scalar).to_affine())
                : GroupOf<math::G2Curve>::encode(
                      math::G2Projective::from_affine(math::G2Curve::generator()).multiply(scalar).to_affine());
        BOOST_TEST((entry == expected), "window " << w << " digit " << d);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(chunks_fit_half_the_free_memory) {
  const Bytes g1_table = kernel::kFixedBaseTableEntries * 96, g2_table = kernel::kFixedBaseTableEntries * 192;
  BOOST_TEST(setup_chunk_points(SetupGroup::g1, 1000, 100 * kGiB, std::uint64_t{1} << 24) == 1000u);
  BOOST_TEST(setup_chunk_points(SetupGroup::g1, std::uint64_t{1} << 28, 100 * kGiB, std::uint64_t{1} << 24) ==
             std::uint64_t{1} << 24);
  // Two chunks of 128 bytes (G1) or 224 bytes (G2) a point beside the table in half the memory.
  BOOST_TEST(setup_chunk_points(SetupGroup::g1, 1u << 20, 2 * (g1_table + 2 * 128 * 1000), 1u << 24) == 1000u);
  BOOST_TEST(setup_chunk_points(SetupGroup::g2, 1u << 20, 2 * (g2_table + 2 * 224 * 1000) + 1, 1u << 24) == 1000u);
  BOOST_TEST(setup_chunk_points(SetupGroup::g2, 1u << 20, 2 * g2_table, 1u << 24) == 0u);
  BOOST_TEST(setup_chunk_points(SetupGroup::g1, 1u << 20, 0, 1u << 24) == 0u);
}

BOOST_AUTO_TEST_CASE(a_small_device_takes_small_chunks) {
  // 4 MiB: half of it holds the G1 table and about 5100 points a chunk.
  const auto scalars = test_scalars(12000, 3);
  const auto points = on_simulator(SetupGroup::g1, scalars, DeviceSetupOptions{}, 4 * kMiB);
  const auto generator = math::G1Projective::from_affine(math::G1Curve::generator());
  for (std::size_t i : {std::size_t{0}, std::size_t{1}, std::size_t{5000}, std::size_t{5200}, scalars.size() - 1}) {
    std::vector<std::uint8_t> expected;
    encode_g1(generator.multiply(scalars[i]).to_affine(), expected);
    BOOST_TEST(std::memcmp(points.data() + 96 * i, expected.data(), 96) == 0, "point " << i);
  }
}

BOOST_AUTO_TEST_CASE(refusals_leave_nothing_behind) {
  const auto scalars = test_scalars(10, 4);
  // A device whose free memory holds not even the table.
  BOOST_CHECK_THROW(on_simulator(SetupGroup::g2, scalars, DeviceSetupOptions{}, 2 * kMiB), std::runtime_error);
  BOOST_CHECK_THROW(on_simulator(SetupGroup::g1, scalars, DeviceSetupOptions{0, 1}), std::invalid_argument);
  // No scalars: no points, and the device untouched.
  BOOST_TEST(on_simulator(SetupGroup::g1, {}, DeviceSetupOptions{}).empty());
  // An output of the wrong size.
  sim::SimOptions options;
  options.functional = true;
  SimHarness harness("h200", options);
  sim::register_setup_kernels(harness.system);
  std::vector<std::uint8_t> out(96 * scalars.size() - 1);
  BOOST_CHECK_THROW(harness.run([&](SimHarness& h) -> asio::awaitable<void> {
    co_await multiply_generator_on_device(h.device, SetupGroup::g1, scalars, std::span<std::uint8_t>(out));
  }),
                    std::invalid_argument);
}
