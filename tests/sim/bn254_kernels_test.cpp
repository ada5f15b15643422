// The functional simulator's BN254 host functions (sim/kernels/groth16_kernels.hpp,
// setup_kernels.hpp), each launched with KernelLaunch::curve = bn254 on a functional SimDevice in
// BN254's device layout (64-byte G1, 128-byte G2, Jacobian sums of 96 and 192 bytes), against the
// CPU reference of math::bn254 called directly; and the refusal of a BN254 launch of a kernel that
// has no BN254 instance.
#define BOOST_TEST_MODULE bn254_kernels
#include <boost/test/unit_test.hpp>

#include "device/errors.hpp"
#include "device/groth16_launches.hpp"
#include "device/kernel_abi.hpp"
#include "device/setup_launches.hpp"
#include "groth16/encoding.hpp"
#include "groth16/fixed_base.hpp"
#include "math/bn254.hpp"
#include "math/h_polynomial.hpp"
#include "math/msm.hpp"
#include "math/ntt.hpp"
#include "sim/kernels/functional_kernels.hpp"
#include "support/sim_harness.hpp"

#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace stagehand;
using testing::SimHarness;
namespace bn = math::bn254;

namespace {

constexpr auto kBn254 = kernel::Curve::bn254;
constexpr auto kSizes = kernel::curve_sizes(kBn254);
using Bytes8 = std::vector<std::byte>;

template <class Affine>
Bytes8 device_bytes(const std::vector<Affine>& points) {
  std::vector<std::uint8_t> encoded;
  for (const auto& point : points) groth16::encode_affine(point, encoded);
  Bytes8 bytes(encoded.size());
  std::memcpy(bytes.data(), encoded.data(), encoded.size());
  return bytes;
}

Bytes8 device_bytes(const std::vector<bn::Fr>& scalars) {
  Bytes8 bytes(scalars.size() * kernel::kFrBytes);
  std::memcpy(bytes.data(), scalars.data(), bytes.size());
  return bytes;
}

std::vector<bn::Fr> scalars_in(const Bytes8& bytes) {
  std::vector<bn::Fr> values(bytes.size() / kernel::kFrBytes);
  std::memcpy(values.data(), bytes.data(), values.size() * kernel::kFrBytes);
  return values;
}

template <class Projective>
Projective sum_in(const Bytes8& bytes) {
  return *groth16::decode_jacobian<Projective>(
      std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

// G, 2G, ..., count·G of the group, the one at index `infinity_at` (if any) the point at infinity.
template <class Group>
std::vector<math::AffinePoint<Group>> generator_multiples(int count, int infinity_at = -1) {
  std::vector<math::AffinePoint<Group>> points;
  auto multiple = math::ProjectivePoint<Group>::identity();
  for (int i = 0; i < count; ++i) {
    multiple += Group::generator();
    points.push_back(i == infinity_at ? math::AffinePoint<Group>::identity() : multiple.to_affine());
  }
  return points;
}

// Large scalars (every window of a 254-bit scalar takes part): (step·i + offset)^7.
std::vector<bn::Fr> spread_scalars(std::size_t count, std::uint64_t step, std::uint64_t offset) {
  std::vector<bn::Fr> scalars;
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto base = bn::Fr::from_uint64(step * i + offset);
    auto value = base;
    for (int k = 0; k < 6; ++k) value *= base;
    scalars.push_back(value);
  }
  return scalars;
}

// Each buffer goes up, `launches` runs over their device pointers on one stream (with KernelLaunch::curve
// as each sets it), and every buffer comes back.
void run_on_device(std::vector<Bytes8*> buffers, const testing::LaunchesOver& launches) {
  sim::SimOptions options;
  options.functional = true;
  SimHarness harness("h200", options);
  sim::register_functional_kernels(harness.system);
  testing::run_over_buffers(harness, buffers, launches);
  BOOST_TEST(harness.device.check().clean(), harness.device.check().describe());
}

// groth16_msm_g1 or _g2 over `points` and `scalars` on the device.
template <class Affine, class Projective>
Projective device_msm(const char* name, const std::vector<Affine>& points, const std::vector<bn::Fr>& scalars) {
  auto point_bytes = device_bytes(points);
  auto scalar_bytes = device_bytes(scalars);
  Bytes8 result(groth16::jacobian_bytes<Projective>);
  run_on_device({&point_bytes, &scalar_bytes, &result}, [&](const std::vector<DevicePointer>& at) {
    const kernel::MsmLaunch launch{.kernel = name,
                                   .points = points.size(),
                                   .threads = 1,
                                   .bases = {at[0], point_bytes.size()},
                                   .scalars = {at[1], scalar_bytes.size()},
                                   .result = {at[2], result.size()},
                                   .curve = kBn254};
    return std::vector<KernelLaunch>{launch.to_launch()};
  });
  return sum_in<Projective>(result);
}

// A streamed MSM in batches of `capacity` points over a scratch holding garbage, then its reduction.
template <class Affine, class Projective>
Projective device_batched_msm(const char* batch_name, const char* reduce_name, const std::vector<Affine>& points,
                              const std::vector<bn::Fr>& scalars, std::uint64_t capacity) {
  constexpr std::size_t point_size = groth16::affine_bytes<Affine>;
  auto point_bytes = device_bytes(points);
  auto scalar_bytes = device_bytes(scalars);
  Bytes8 result(groth16::jacobian_bytes<Projective>);
  Bytes8 scratch(groth16::jacobian_bytes<Projective>, std::byte{0x5a});
  run_on_device({&point_bytes, &scalar_bytes, &result, &scratch}, [&](const std::vector<DevicePointer>& at) {
    std::vector<KernelLaunch> launches;
    for (std::uint64_t first = 0; first < points.size(); first += capacity) {
      const std::uint64_t count = std::min<std::uint64_t>(capacity, points.size() - first);
      const kernel::MsmBatchLaunch batch{.kernel = batch_name,
                                         .points = count,
                                         .threads = 1,
                                         .capacity = capacity,
                                         .add = first != 0,
                                         .bases = {at[0] + first * point_size, count * point_size},
                                         .scalars = {at[1] + first * kernel::kFrBytes, count * kernel::kFrBytes},
                                         .scratch = BufferUse{at[3], scratch.size()},
                                         .curve = kBn254};
      launches.push_back(batch.to_launch());
    }
    const kernel::MsmReduceLaunch reduce{.kernel = reduce_name,
                                         .capacity = capacity,
                                         .result = {at[2], result.size()},
                                         .scratch = BufferUse{at[3], scratch.size()},
                                         .curve = kBn254};
    launches.push_back(reduce.to_launch());
    return launches;
  });
  return sum_in<Projective>(result);
}

// The set's precomputed copies made on the device, then the MSM over them.
template <class Affine, class Projective>
Projective device_precomputed_msm(const char* precompute_name, const char* msm_name, const std::vector<Affine>& points,
                                  const std::vector<bn::Fr>& scalars, unsigned window_bits) {
  const std::size_t set_bytes = points.size() * groth16::affine_bytes<Affine>;
  auto copies = device_bytes(points);
  copies.resize(kernel::precomputed_copies(window_bits) * set_bytes);
  auto scalar_bytes = device_bytes(scalars);
  Bytes8 result(groth16::jacobian_bytes<Projective>);
  run_on_device({&copies, &scalar_bytes, &result}, [&](const std::vector<DevicePointer>& at) {
    const kernel::PrecomputeLaunch precompute{.kernel = precompute_name,
                                              .points = points.size(),
                                              .window_bits = window_bits,
                                              .bases = {at[0], set_bytes},
                                              .copies = {at[0], copies.size()},
                                              .curve = kBn254};
    const kernel::MsmLaunch msm{.kernel = msm_name,
                                .points = points.size(),
                                .threads = 1,
                                .window_bits = window_bits,
                                .bases = {at[0], copies.size()},
                                .scalars = {at[1], scalar_bytes.size()},
                                .result = {at[2], result.size()},
                                .curve = kBn254};
    return std::vector<KernelLaunch>{precompute.to_launch(), msm.to_launch()};
  });
  return sum_in<Projective>(result);
}

}  // namespace

BOOST_AUTO_TEST_CASE(bn254_layout_is_the_abis) {
  BOOST_TEST(groth16::affine_bytes<bn::G1Affine> == kSizes.g1_affine);
  BOOST_TEST(groth16::affine_bytes<bn::G2Affine> == kSizes.g2_affine);
  BOOST_TEST(groth16::jacobian_bytes<bn::G1Projective> == kSizes.g1_jacobian);
  BOOST_TEST(groth16::jacobian_bytes<bn::G2Projective> == kSizes.g2_jacobian);
}

BOOST_AUTO_TEST_CASE(groth16_msm_g1_and_g2_over_bn254_equal_math_bn254_msm) {
  const auto g1 = generator_multiples<bn::G1Curve>(9, 4);
  const auto g2 = generator_multiples<bn::G2Curve>(5, 1);
  const auto scalars = spread_scalars(9, 1000, 17);
  const std::vector<bn::Fr> g2_scalars(scalars.begin(), scalars.begin() + 5);
  const auto expected_g1 = bn::msm(g1, scalars, 1);
  const auto expected_g2 = bn::msm(g2, g2_scalars, 1);
  BOOST_TEST(!expected_g1.is_identity());
  BOOST_TEST((device_msm<bn::G1Affine, bn::G1Projective>(kernel::groth16_msm_g1, g1, scalars) == expected_g1));
  BOOST_TEST((device_msm<bn::G2Affine, bn::G2Projective>(kernel::groth16_msm_g2, g2, g2_scalars) == expected_g2));
}

BOOST_AUTO_TEST_CASE(a_streamed_bn254_msm_in_batches_equals_math_bn254_msm) {
  const auto g1 = generator_multiples<bn::G1Curve>(11);
  const auto g2 = generator_multiples<bn::G2Curve>(7);
  const auto scalars = spread_scalars(11, 7919, 3);
  const std::vector<bn::Fr> g2_scalars(scalars.begin(), scalars.begin() + 7);
  BOOST_TEST(
      (device_batched_msm<bn::G1Affine, bn::G1Projective>(kernel::groth16_msm_g1_batch, kernel::groth16_msm_g1_reduce,
                                                          g1, scalars, 4) == bn::msm(g1, scalars, 1)));
  BOOST_TEST(
      (device_batched_msm<bn::G2Affine, bn::G2Projective>(kernel::groth16_msm_g2_batch, kernel::groth16_msm_g2_reduce,
                                                          g2, g2_scalars, 3) == bn::msm(g2, g2_scalars, 1)));
}

BOOST_AUTO_TEST_CASE(a_bn254_msm_over_precomputed_copies_equals_math_bn254_msm) {
  const auto g1 = generator_multiples<bn::G1Curve>(6, 2);
  const auto g2 = generator_multiples<bn::G2Curve>(4);
  const auto scalars = spread_scalars(6, 104729, 11);
  const std::vector<bn::Fr> g2_scalars(scalars.begin(), scalars.begin() + 4);
  BOOST_TEST((device_precomputed_msm<bn::G1Affine, bn::G1Projective>(kernel::groth16_precompute_g1,
                                                                     kernel::groth16_msm_g1_precomputed, g1, scalars,
                                                                     16) == bn::msm(g1, scalars, 1)));
  BOOST_TEST((device_precomputed_msm<bn::G2Affine, bn::G2Projective>(kernel::groth16_precompute_g2,
                                                                     kernel::groth16_msm_g2_precomputed, g2, g2_scalars,
                                                                     20) == bn::msm(g2, g2_scalars, 1)));
}

// The H step as the program launches it (each of a, b, c to the coset, then a·b − c) against
// math::bn254::h_evaluations_snarkjs.
BOOST_AUTO_TEST_CASE(the_bn254_h_step_equals_math_bn254_h_evaluations_snarkjs) {
  constexpr unsigned kLog = 5;
  constexpr std::size_t n = std::size_t{1} << kLog;
  std::vector<bn::Fr> a = spread_scalars(n, 3, 1), b = spread_scalars(n, 5, 2), c = spread_scalars(n, 7, 3);
  auto a_bytes = device_bytes(a), b_bytes = device_bytes(b), c_bytes = device_bytes(c);
  const auto domain = bn::Domain::snarkjs(kLog, 1);
  bn::h_evaluations_snarkjs(a, b, c, domain, 1);
  run_on_device({&a_bytes, &b_bytes, &c_bytes}, [&](const std::vector<DevicePointer>& at) {
    std::vector<KernelLaunch> launches;
    for (std::size_t i = 0; i < 3; ++i) {
      const kernel::HEvaluateLaunch evaluate{
          .log_size = kLog, .threads = 1, .values = {at[i], n * kernel::kFrBytes}, .curve = kBn254};
      launches.push_back(evaluate.to_launch());
    }
    const kernel::HCombineLaunch combine{.log_size = kLog,
                                         .threads = 1,
                                         .a = {at[0], n * kernel::kFrBytes},
                                         .b = {at[1], n * kernel::kFrBytes},
                                         .c = {at[2], n * kernel::kFrBytes},
                                         .curve = kBn254};
    launches.push_back(combine.to_launch());
    return launches;
  });
  BOOST_TEST((scalars_in(a_bytes) == a));
}

// groth16_abc over a three-row matrix written in ConstraintMatrixLayout by hand, against the sums
// computed here from the same entries.
BOOST_AUTO_TEST_CASE(the_bn254_abc_step_equals_the_rows_sums) {
  struct Entry {
    std::uint64_t row;
    std::uint32_t signal;
    std::uint64_t value;
  };
  const std::vector<Entry> a_entries{{0, 0, 3}, {0, 2, 5}, {2, 1, 7}};
  const std::vector<Entry> b_entries{{0, 1, 11}, {1, 3, 13}, {2, 2, 17}, {2, 3, 19}};
  const kernel::ConstraintMatrixLayout layout{3, a_entries.size(), b_entries.size()};
  Bytes8 matrix(layout.total_bytes(), std::byte{0});
  auto write_matrix = [&](const std::vector<Entry>& entries, std::uint64_t offsets, std::uint64_t signals,
                          std::uint64_t values) {
    for (std::size_t k = 0; k < entries.size(); ++k) {
      for (std::uint64_t row = entries[k].row + 1; row <= layout.rows; ++row) {
        std::uint64_t offset;
        std::memcpy(&offset, matrix.data() + offsets + 8 * row, 8);
        offset += 1;
        std::memcpy(matrix.data() + offsets + 8 * row, &offset, 8);
      }
      std::memcpy(matrix.data() + signals + 4 * k, &entries[k].signal, 4);
      const auto value = bn::Fr::from_uint64(entries[k].value);
      std::memcpy(matrix.data() + values + kernel::kFrBytes * k, &value, kernel::kFrBytes);
    }
  };
  write_matrix(a_entries, layout.offsets_a(), layout.signals_a(), layout.values_a());
  write_matrix(b_entries, layout.offsets_b(), layout.signals_b(), layout.values_b());
  const auto witness = spread_scalars(4, 31, 1);
  auto row_sums = [&](const std::vector<Entry>& entries) {
    std::vector<bn::Fr> sums(layout.rows, bn::Fr::zero());
    for (const auto& entry : entries) sums[entry.row] += bn::Fr::from_uint64(entry.value) * witness[entry.signal];
    return sums;
  };
  const auto expected_a = row_sums(a_entries), expected_b = row_sums(b_entries);
  auto witness_bytes = device_bytes(witness);
  Bytes8 a(layout.rows * kernel::kFrBytes), b(a.size()), c(a.size());
  run_on_device({&witness_bytes, &matrix, &a, &b, &c}, [&](const std::vector<DevicePointer>& at) {
    const kernel::AbcLaunch launch{.rows = layout.rows,
                                   .entries_a = layout.entries_a,
                                   .entries_b = layout.entries_b,
                                   .threads = 1,
                                   .witness = {at[0], witness_bytes.size()},
                                   .matrix = {at[1], matrix.size()},
                                   .a = {at[2], a.size()},
                                   .b = {at[3], b.size()},
                                   .c = {at[4], c.size()},
                                   .curve = kBn254};
    return std::vector<KernelLaunch>{launch.to_launch()};
  });
  BOOST_TEST((scalars_in(a) == expected_a));
  BOOST_TEST((scalars_in(b) == expected_b));
  for (std::size_t row = 0; row < layout.rows; ++row)
    BOOST_TEST((scalars_in(c)[row] == expected_a[row] * expected_b[row]));
}

// setup_fixed_base_g1/_g2 over BN254's table of G's multiples: each point is s·G (one-point
// math::bn254 msm), a zero scalar the point at infinity.
template <class Group>
void check_fixed_base(const char* name) {
  using Affine = math::AffinePoint<Group>;
  const groth16::FixedBase<Group> fixed_base(Group::generator());
  auto table = device_bytes(std::vector<Affine>(fixed_base.table().begin(), fixed_base.table().end()));
  auto scalars = spread_scalars(5, 65537, 0);  // the first is zero
  auto scalar_bytes = device_bytes(scalars);
  Bytes8 points(scalars.size() * groth16::affine_bytes<Affine>);
  run_on_device({&table, &scalar_bytes, &points}, [&](const std::vector<DevicePointer>& at) {
    const kernel::FixedBaseLaunch launch{.kernel = name,
                                         .point_count = scalars.size(),
                                         .threads = 1,
                                         .table = {at[0], table.size()},
                                         .scalars = {at[1], scalar_bytes.size()},
                                         .points = {at[2], points.size()},
                                         .curve = kBn254};
    return std::vector<KernelLaunch>{launch.to_launch()};
  });
  const std::vector<Affine> generator{Group::generator()};
  for (std::size_t i = 0; i < scalars.size(); ++i) {
    const auto point = groth16::decode_affine<Affine>(std::span<const std::uint8_t>(
        reinterpret_cast<const std::uint8_t*>(points.data()) + i * groth16::affine_bytes<Affine>,
        groth16::affine_bytes<Affine>));
    BOOST_TEST_REQUIRE(point.has_value(), name << " point " << i);
    BOOST_TEST((*point == bn::msm(generator, std::vector<bn::Fr>{scalars[i]}, 1).to_affine()), name << " point " << i);
  }
}

BOOST_AUTO_TEST_CASE(the_bn254_setup_fixed_base_kernels_equal_math_bn254_multiples) {
  check_fixed_base<bn::G1Curve>(kernel::setup_fixed_base_g1);
  check_fixed_base<bn::G2Curve>(kernel::setup_fixed_base_g2);
}

// A kernel the functional simulator has over BLS12-381 alone (the assignment program's: the classic
// H whole and in its two halves) is refused over BN254, naming the kernel and the curve.
BOOST_AUTO_TEST_CASE(a_bn254_launch_of_a_bls12_381_only_kernel_is_refused_naming_both) {
  for (const char* name : {kernel::h_polynomial_classic, kernel::h_classic_product, kernel::h_classic_finish}) {
    sim::SimOptions options;
    options.functional = true;
    SimHarness harness("h200", options);
    sim::register_functional_kernels(harness.system);
    std::string message;
    try {
      harness.run([name](SimHarness& h) -> asio::awaitable<void> {
        KernelLaunch launch{name, 1, {0}, {}, {}};
        launch.curve = kBn254;
        h.device.launch(launch, h.device.create_stream());
        co_return;
      });
    } catch (const DeviceError& error) {
      BOOST_TEST((error.errc() == DeviceErrc::unknown_kernel), name);
      message = error.what();
    }
    BOOST_TEST(message.find("'" + std::string(name) + "'") != std::string::npos, message);
    BOOST_TEST(message.find("bn254") != std::string::npos, message);
  }
}
