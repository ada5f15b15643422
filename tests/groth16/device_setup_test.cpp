// The test-only setup's point multiplications on a Device (groth16/device_setup.hpp), run on the
// functional simulator, whose setup_fixed_base host functions (sim/kernels/setup_kernels.hpp)
// stand in for the CUDA kernels: every point against src/math's own double-and-add, and against
// the CPU setup's FixedBase; in one chunk and in many (both streams' slots reused); the device's
// memory all freed and the race checker clean. The same over BN254 (its kernel instances, its
// 64- and 128-byte points), and whole keys of either curve made through the device the same bytes
// as the CPU setup's for the same seed.
#define BOOST_TEST_MODULE device_setup
#include <boost/test/unit_test.hpp>

#include "device/kernel_abi.hpp"
#include "groth16/device_setup.hpp"
#include "groth16/encoding.hpp"
#include "groth16/fixed_base.hpp"
#include "groth16/setup.hpp"
#include "groth16/synthetic_circuit.hpp"
#include "groth16/zkey.hpp"
#include "math/bn254.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"
#include "sim/kernels/setup_kernels.hpp"
#include "support/sim_harness.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>
#include <unistd.h>

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

namespace {

namespace bn = math::bn254;

// BN254's scalars as test_scalars draws BLS12-381's: zero, one, r - 1, r - 2, 2^(8w) for every
// window, then uniform values below r (< 2^254).
std::vector<bn::Fr> bn254_test_scalars(std::size_t random_count, std::uint64_t seed) {
  std::vector<bn::Fr> scalars{bn::Fr::zero(), bn::Fr::one(), -bn::Fr::one(), -bn::Fr::from_uint64(2)};
  bn::Fr power = bn::Fr::one();
  for (int w = 0; w < 32; ++w, power *= bn::Fr::from_uint64(256)) scalars.push_back(power);
  std::mt19937_64 engine(seed);
  for (std::size_t i = 0; i < random_count;) {
    if (auto value = bn::Fr::from_canonical_limbs(math::Limbs<4>{engine(), engine(), engine(), engine() >> 2})) {
      scalars.push_back(*value);
      ++i;
    }
  }
  return scalars;
}

// A fresh functional simulated H200 whose setup kernels are registered, checked clean and empty
// once `program` has run.
void on_fresh_simulator(const std::function<asio::awaitable<void>(SimHarness&)>& program) {
  sim::SimOptions sim_options;
  sim_options.functional = true;
  SimHarness harness("h200", sim_options);
  sim::register_setup_kernels(harness.system);
  harness.run(program);
  BOOST_TEST(harness.device.check().clean(), harness.device.check().describe());
  const auto memory = harness.device.memory_info();
  BOOST_TEST(memory.free_bytes == memory.total_bytes);
}

// scalars[i]·G for BN254's generator of Group on the device, each point against math's
// double-and-add in the 64- or 128-byte encoding; in one chunk and in chunks of `chunk`.
template <class Group>
void check_bn254_points(SetupGroup group, const std::vector<bn::Fr>& scalars, std::uint64_t chunk) {
  using Affine = math::AffinePoint<Group>;
  constexpr std::size_t bytes = affine_bytes<Affine>;
  BOOST_REQUIRE_EQUAL(setup_point_bytes(group, kernel::Curve::bn254), bytes);
  std::vector<std::uint8_t> whole, chunked;
  on_fresh_simulator([&](SimHarness& h) -> asio::awaitable<void> {
    whole = co_await multiply_generator_on_device(h.device, group, std::span<const bn::Fr>(scalars));
    chunked = co_await multiply_generator_on_device(h.device, group, std::span<const bn::Fr>(scalars),
                                                    DeviceSetupOptions{chunk, 2});
  });
  BOOST_REQUIRE_EQUAL(whole.size(), scalars.size() * bytes);
  BOOST_TEST((chunked == whole));
  const auto generator = math::ProjectivePoint<Group>::from_affine(Group::generator());
  for (std::size_t i = 0; i < scalars.size(); ++i) {
    std::vector<std::uint8_t> expected;
    encode_affine(generator.multiply(scalars[i]).to_affine(), expected);
    const std::vector<std::uint8_t> got(whole.begin() + static_cast<std::ptrdiff_t>(i * bytes),
                                        whole.begin() + static_cast<std::ptrdiff_t>((i + 1) * bytes));
    BOOST_TEST((got == expected), "point " << i << ", scalar " << scalars[i].to_decimal());
  }
}

// Options whose multiplications run on `harness`'s device, counting the points they made.
template <class Description>
BasicSetupOptions<Description> options_on(SimHarness& harness, std::uint64_t seed, std::size_t& points_made) {
  using Options = BasicSetupOptions<Description>;
  using Fr = typename Options::Fr;
  Options options;
  options.seed = seed;
  options.thread_count = 2;
  auto multiply = [&harness, &points_made]<class Set>(SetupGroup group, std::span<const Fr> scalars, Set points) {
    harness.run([&](SimHarness& h) -> asio::awaitable<void> {
      co_await multiply_generator_on_device(h.device, group, scalars, points.mutable_bytes(),
                                            DeviceSetupOptions{97, 2});
    });
    points_made += points.size();
    return points;
  };
  options.multiply_g1 = [multiply](std::span<const Fr> scalars) {
    return multiply(SetupGroup::g1, scalars, typename Options::G1Set(scalars.size()));
  };
  options.multiply_g2 = [multiply](std::span<const Fr> scalars) {
    return multiply(SetupGroup::g2, scalars, typename Options::G2Set(scalars.size()));
  };
  return options;
}

std::vector<char> file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The .zkey of a synthetic circuit over Description's curve made twice from seed 7, its sets on
// the CPU and on the simulator's device: the two files must be the same bytes, and every large
// set must have gone through the device (A, B1, B2 and C a point a wire or private wire, H a point
// a row of the domain).
template <class Description, class Setup, class Write>
void check_device_key_is_the_cpu_key(const std::string& curve, Setup setup, Write write) {
  using Fr = typename Description::Fr;
  const auto circuit = make_synthetic_circuit<Fr>(300, 3, false);
  const auto dir =
      std::filesystem::temp_directory_path() / ("stagehand_device_setup_" + curve + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  BasicSetupOptions<Description> on_cpu;
  on_cpu.seed = 7;
  on_cpu.thread_count = 2;
  write(dir / "cpu.zkey", setup(circuit.r1cs, on_cpu));

  sim::SimOptions sim_options;
  sim_options.functional = true;
  SimHarness harness("h200", sim_options);
  sim::register_setup_kernels(harness.system);
  std::size_t points_made = 0;
  const auto key = setup(circuit.r1cs, options_on<Description>(harness, 7, points_made));
  BOOST_TEST(harness.device.check().clean(), harness.device.check().describe());
  BOOST_TEST(harness.device.memory_info().free_bytes == harness.device.memory_info().total_bytes);
  const std::size_t private_wires = key.n_vars - key.n_public - 1u;
  BOOST_TEST(points_made == 3u * key.n_vars + private_wires + key.domain_size);
  write(dir / "device.zkey", key);

  const auto cpu_bytes = file_bytes(dir / "cpu.zkey");
  BOOST_TEST(!cpu_bytes.empty());
  BOOST_TEST((file_bytes(dir / "device.zkey") == cpu_bytes));
  std::filesystem::remove_all(dir);
}

}  // namespace

BOOST_AUTO_TEST_CASE(bn254_points_equal_the_cpu_reference_in_one_chunk_and_in_many) {
  check_bn254_points<bn::G1Curve>(SetupGroup::g1, bn254_test_scalars(200, 5), 37);
  check_bn254_points<bn::G2Curve>(SetupGroup::g2, bn254_test_scalars(60, 6), 29);
}

// BN254's table: 64- and 128-byte entries, entry 256·w + d = d·2^(8w)·G.
BOOST_AUTO_TEST_CASE(the_bn254_table_holds_the_generators_multiples) {
  auto check = [](SetupGroup group, auto generator) {
    using Affine = decltype(generator.to_affine());
    constexpr std::size_t bytes = affine_bytes<Affine>;
    const auto table = fixed_base_table_bytes(group, kernel::Curve::bn254);
    BOOST_REQUIRE_EQUAL(table.size(), kernel::kFixedBaseTableEntries * bytes);
    bn::Fr window = bn::Fr::one();
    for (std::size_t w = 0; w < 32; ++w, window *= bn::Fr::from_uint64(256)) {
      for (std::uint64_t d : {0, 1, 2, 127, 255}) {
        std::vector<std::uint8_t> expected;
        encode_affine(generator.multiply(window * bn::Fr::from_uint64(d)).to_affine(), expected);
        const std::vector<std::uint8_t> entry(table.begin() + static_cast<std::ptrdiff_t>((256 * w + d) * bytes),
                                              table.begin() + static_cast<std::ptrdiff_t>((256 * w + d + 1) * bytes));
        BOOST_TEST((entry == expected), "window " << w << " digit " << d);
      }
    }
  };
  check(SetupGroup::g1, math::ProjectivePoint<bn::G1Curve>::from_affine(bn::G1Curve::generator()));
  check(SetupGroup::g2, math::ProjectivePoint<bn::G2Curve>::from_affine(bn::G2Curve::generator()));
}

BOOST_AUTO_TEST_CASE(bn254_chunks_fit_half_the_free_memory) {
  const Bytes g1_table = kernel::kFixedBaseTableEntries * 64, g2_table = kernel::kFixedBaseTableEntries * 128;
  // Two chunks of 96 bytes (G1: a 32-byte scalar and a 64-byte point) or 160 bytes (G2) a point.
  BOOST_TEST(setup_chunk_points(SetupGroup::g1, 1u << 20, 2 * (g1_table + 2 * 96 * 1000), 1u << 24,
                                kernel::Curve::bn254) == 1000u);
  BOOST_TEST(setup_chunk_points(SetupGroup::g2, 1u << 20, 2 * (g2_table + 2 * 160 * 1000) + 1, 1u << 24,
                                kernel::Curve::bn254) == 1000u);
  BOOST_TEST(setup_chunk_points(SetupGroup::g2, 1u << 20, 2 * g2_table, 1u << 24, kernel::Curve::bn254) == 0u);
}

BOOST_AUTO_TEST_CASE(a_bn254_key_made_on_the_device_is_the_cpu_setups_key) {
  check_device_key_is_the_cpu_key<math::Bn254>(
      "bn254",
      [](const bn254::R1cs& r1cs, const bn254::SetupOptions& options) { return bn254::setup_from_r1cs(r1cs, options); },
      [](const std::filesystem::path& path, const bn254::ProvingKey& key) { bn254::write_zkey(path, key); });
}

BOOST_AUTO_TEST_CASE(a_bls12_381_key_made_on_the_device_is_the_cpu_setups_key) {
  check_device_key_is_the_cpu_key<math::Bls12_381>(
      "bls12_381", [](const R1cs& r1cs, const SetupOptions& options) { return setup_from_r1cs(r1cs, options); },
      [](const std::filesystem::path& path, const ProvingKey& key) { write_zkey(path, key); });
}
