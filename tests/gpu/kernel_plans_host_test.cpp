// The kernel library's host-side plans, checked without a GPU (label unit):
// - the MSM's signed window digits by one biased addition (msm_digits.cuh, what the digit kernels
//   compute) against carrying window by window, and their sum against the scalar in Fr;
// - how the streamed MSM groups windows (msm_batch_plan) and cuts its points into batches
//   (streamed_batches, msm_host.cpp): every point in exactly one batch, in order, no batch above
//   the size the device buffers hold, and a short lead batch whenever there is more than one;
// - the NTT domain's size as the partition program asks for it (partition_kernel_scratch_bytes).
// - the MSMs' results decoded as the CPU reference's points (msm_results_host.hpp).
#define BOOST_TEST_MODULE kernel_plans_host
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "device/kernel_abi.hpp"
#include "launch/partition_launchers.hpp"
#include "math/fr.hpp"
#include "msm/msm.hpp"
#include "msm/msm_digits.cuh"
#include "msm/msm_results_host.hpp"
#include "ntt/ntt.hpp"

using stagehand::cuda::MsmBatch;
using stagehand::cuda::streamed_batches;
namespace cuda = stagehand::cuda;
namespace kernel = stagehand::kernel;
namespace math = stagehand::math;

namespace {

using Words = std::uint32_t[8];

std::uint32_t bits_at(const Words& s, unsigned bit, unsigned width) {
  std::uint64_t pair = 0;
  if (bit / 32 < 8) pair = s[bit / 32];
  if (bit / 32 + 1 < 8) pair |= std::uint64_t{s[bit / 32 + 1]} << 32;
  return static_cast<std::uint32_t>(pair >> (bit % 32)) & ((1u << width) - 1);
}

// The reference: window by window, a digit above half becomes digit - 2^c and carries one.
std::vector<std::int64_t> carried_digits(const Words& s, unsigned c) {
  std::vector<std::int64_t> digits;
  const std::int64_t half = std::int64_t{1} << (c - 1);
  std::int64_t carry = 0;
  for (unsigned w = 0; w < (256 + c - 1) / c; ++w) {
    std::int64_t digit = bits_at(s, w * c, c) + carry;
    carry = digit > half ? 1 : 0;
    digits.push_back(digit - (carry << c));
  }
  BOOST_TEST(carry == 0);  // the top window never carries out (scalars below r)
  return digits;
}

// What the device computes: t = s + B once, then each window from the words under it.
std::vector<std::int64_t> biased_digits(const Words& s, unsigned c) {
  std::uint32_t t[8];
  for (int k = 0; k < 8; ++k) t[k] = s[k];
  cuda::add_digit_bias(t, cuda::digit_bias(c));
  std::vector<std::int64_t> digits;
  for (unsigned w = 0; w < cuda::digit_window_count(c); ++w) {
    const unsigned bit = w * c;
    const std::uint32_t high = bit / 32 + 1 < 8 ? t[bit / 32 + 1] : 0;
    const std::uint32_t digit = cuda::signed_digit(cuda::window_bits_at(t[bit / 32], high, bit, c), w, c);
    const std::int64_t magnitude = digit & 0x7fffffffu;
    digits.push_back((digit >> 31) != 0 ? -magnitude : magnitude);
  }
  return digits;
}

void check_scalar(const math::Fr& scalar, unsigned c) {
  const auto limbs = scalar.to_canonical_limbs();
  Words s;
  for (int k = 0; k < 4; ++k) {
    s[2 * k] = static_cast<std::uint32_t>(limbs[k]);
    s[2 * k + 1] = static_cast<std::uint32_t>(limbs[k] >> 32);
  }
  const auto expected = carried_digits(s, c);
  const auto got = biased_digits(s, c);
  BOOST_TEST(got == expected, "c=" << c);
  // Σ d_j·2^(cj) = s, in Fr's own arithmetic.
  const std::int64_t half = std::int64_t{1} << (c - 1);
  math::Fr sum = math::Fr::zero();
  const math::Fr radix = math::Fr::from_uint64(2).pow(c);
  math::Fr scale = math::Fr::one();
  for (const std::int64_t digit : got) {
    BOOST_TEST((digit > -half && digit <= half), "c=" << c << " digit " << digit);
    const math::Fr magnitude = math::Fr::from_uint64(static_cast<std::uint64_t>(digit < 0 ? -digit : digit));
    sum += (digit < 0 ? -magnitude : magnitude) * scale;
    scale *= radix;
  }
  BOOST_TEST((sum == scalar), "c=" << c);
}

// The batches tile [0, point_count) in order, each 1..batch_points points.
void expect_tiling(const std::vector<MsmBatch>& batches, std::uint64_t point_count, std::uint64_t batch_points) {
  std::uint64_t next = 0;
  for (const MsmBatch& batch : batches) {
    BOOST_TEST(batch.first == next);
    BOOST_TEST(batch.count >= 1u);
    BOOST_TEST(batch.count <= batch_points);
    next = batch.first + batch.count;
  }
  BOOST_TEST(next == point_count);
}

}  // namespace

BOOST_AUTO_TEST_CASE(biased_digits_equal_carried_digits_for_every_window_width) {
  std::mt19937_64 engine(20261130);
  std::vector<math::Fr> scalars = {math::Fr::zero(), math::Fr::one(), -math::Fr::one(), -math::Fr::from_uint64(2)};
  // Word patterns whose windows sit at half, just under or over it, or are all ones, so that
  // carries run through many windows (kept below r by their top word).
  for (std::uint32_t pattern :
       {0x80008000u, 0x80808080u, 0x88888888u, 0xaaaaaaaau, 0x7fff7fffu, 0xffffffffu, 0x00080008u, 0x40000000u}) {
    math::Fr::LimbArray limbs;
    for (auto& limb : limbs) limb = (std::uint64_t{pattern} << 32) | pattern;
    limbs[3] &= 0x0fffffffffffffffull;
    scalars.push_back(*math::Fr::from_canonical_limbs(limbs));
  }
  while (scalars.size() < 200) {
    math::Fr::LimbArray limbs;
    for (auto& limb : limbs) limb = engine();
    limbs[3] >>= 1;
    if (const auto value = math::Fr::from_canonical_limbs(limbs)) scalars.push_back(*value);
  }
  for (unsigned c = 2; c <= 24; ++c) {  // up to 22 for every plan, 23 and 24 for precomputed bases
    for (const math::Fr& scalar : scalars) check_scalar(scalar, c);
  }
}

BOOST_AUTO_TEST_CASE(batches_group_windows_up_to_2_24_pairs_and_2_21_buckets) {
  using stagehand::cuda::msm_batch_plan;
  using stagehand::cuda::msm_plan;
  // The benchmark's streamed shapes: 2^22-point batches at c = 20 in groups of 4 windows; 2^18
  // at c = 13, all 20 windows in one group, 2^20 at c = 16, all 16.
  BOOST_TEST(msm_batch_plan(std::uint64_t{1} << 22, 20).windows_per_group == 4u);
  BOOST_TEST(msm_batch_plan(std::uint64_t{1} << 18).windows_per_group == 20u);
  BOOST_TEST(msm_batch_plan(std::uint64_t{1} << 20).windows_per_group == 16u);
  // 2^24 points already sort 2^24 pairs per window; a small batch at c = 20 stops at 2^21 buckets.
  BOOST_TEST(msm_batch_plan(std::uint64_t{1} << 24, 20).windows_per_group == 1u);
  BOOST_TEST(msm_batch_plan((std::uint64_t{1} << 13) + 5, 20).windows_per_group == 4u);
  for (std::uint64_t points : {1ull, 1000ull, 1ull << 16, 1ull << 23, 1ull << 26}) {
    for (unsigned bits : {0u, 2u, 8u, 13u, 16u, 20u, 22u}) {
      const auto plan = msm_batch_plan(points, bits);
      const auto base = msm_plan(points, bits);
      BOOST_TEST(plan.window_bits == base.window_bits);
      BOOST_TEST(plan.windows_per_group >= base.windows_per_group);
      BOOST_TEST(plan.windows_per_group <= plan.window_count);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_planner_takes_the_fewest_windows_whose_buckets_get_ten_points) {
  using stagehand::cuda::msm_plan;
  using stagehand::cuda::MsmGroup;
  // The widths the H200 ran fastest (bench/RESULTS.md): 8 bits at 2^12, 11 at 2^14, 13 at 2^16
  // and 2^18, 16 at 2^20 and 2^22, 20 from 2^24; the switches where n reaches 10·2^(c-1).
  const std::pair<std::uint64_t, unsigned> widths[] = {
      {1, 8},           {1ull << 12, 8},  {10239, 8},       {10240, 11},      {1ull << 14, 11}, {40959, 11},
      {40960, 13},      {1ull << 16, 13}, {1ull << 18, 13}, {327679, 13},     {327680, 16},     {1ull << 20, 16},
      {1ull << 22, 16}, {5242879, 16},    {5242880, 20},    {1ull << 24, 20}, {1ull << 26, 20}};
  for (const auto& [points, bits] : widths) {
    for (const auto group : {MsmGroup::g1, MsmGroup::g2}) {
      BOOST_TEST_CONTEXT(points << " points, " << (group == MsmGroup::g1 ? "G1" : "G2")) {
        BOOST_TEST(msm_plan(points, 0, group).window_bits == bits);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(precomputed_plans_share_one_set_of_buckets_and_keep_their_copies_below_2_30_points) {
  using stagehand::cuda::msm_precomputed_bytes;
  using stagehand::cuda::msm_precomputed_plan;
  using stagehand::cuda::msm_result_bytes;
  using stagehand::cuda::msm_sum_count;
  using stagehand::cuda::MsmGroup;
  // 2^26 points: c = 22 (the H200's fastest), its 12 copies 12·2^26 points (under 2^30), its
  // sorts of at most 2^28 pairs (4 windows a group), one sum; 2^22 points: c = 20, one group.
  const auto plan = msm_precomputed_plan(std::uint64_t{1} << 26);
  BOOST_TEST(plan.precomputed);
  BOOST_TEST(plan.window_bits == 22u);
  BOOST_TEST(plan.window_count == 12u);
  BOOST_TEST(plan.windows_per_group == 4u);
  BOOST_TEST(msm_sum_count(plan) == 1u);
  BOOST_TEST(msm_result_bytes(plan) == 144u);
  BOOST_TEST(msm_precomputed_bytes(plan) == 12ull * 96 * (1ull << 26));
  BOOST_TEST(msm_precomputed_plan(std::uint64_t{1} << 22).window_bits == 20u);
  BOOST_TEST(msm_precomputed_plan(std::uint64_t{1} << 22).windows_per_group == 13u);
  BOOST_TEST(msm_precomputed_plan(std::uint64_t{1} << 23).window_bits == 22u);
  BOOST_TEST(msm_precomputed_plan((std::uint64_t{1} << 22) - 1).window_bits == 16u);
  BOOST_TEST(msm_precomputed_plan(1000).window_bits == 16u);
  // G2 takes 20 bits from 2^20 points (G1 16 until 2^22), then the same as G1.
  BOOST_TEST(msm_precomputed_plan(std::uint64_t{1} << 20, 0, MsmGroup::g2).window_bits == 20u);
  BOOST_TEST(msm_precomputed_plan(std::uint64_t{1} << 20).window_bits == 16u);
  BOOST_TEST(msm_precomputed_plan((std::uint64_t{1} << 20) - 1, 0, MsmGroup::g2).window_bits == 16u);
  BOOST_TEST(msm_precomputed_plan(std::uint64_t{1} << 24, 0, MsmGroup::g2).window_bits == 22u);
  const auto g2 = msm_precomputed_plan(1000, 13, MsmGroup::g2);
  BOOST_TEST(msm_result_bytes(g2) == 288u);
  BOOST_TEST(msm_precomputed_bytes(g2) == 20ull * 192 * 1000);
  // Every size the planner takes: a width whose copies stay below 2^30 points, every window in
  // one group while their pairs fit 2^28.
  for (std::uint64_t points : {1ull, 1000ull, 1ull << 16, 1ull << 20, 1ull << 24, (1ull << 26) + 1}) {
    const auto chosen = msm_precomputed_plan(points);
    BOOST_TEST(std::uint64_t{chosen.window_count} * points < (1ull << 30));
    BOOST_TEST(chosen.windows_per_group >= 1u);
    BOOST_TEST(chosen.windows_per_group <= chosen.window_count);
    if (chosen.window_count * points <= (1ull << 28)) BOOST_TEST(chosen.windows_per_group == chosen.window_count);
  }
  // The planner's width does not fit below 2^30 points at 2^27 (12 copies); a forced width
  // beyond 24 bits or too many copies is refused.
  BOOST_CHECK_THROW(msm_precomputed_plan(1ull << 27), std::invalid_argument);
  BOOST_CHECK_THROW(msm_precomputed_plan(1000, 25), std::invalid_argument);
  BOOST_CHECK_THROW(msm_precomputed_plan(1ull << 26, 16), std::invalid_argument);  // 16 copies: 2^30
  BOOST_CHECK_THROW(stagehand::cuda::msm_plan(1000, 23), std::invalid_argument);   // only precomputed plans go past 22
}

BOOST_AUTO_TEST_CASE(points_that_fit_are_one_batch) {
  const auto batches = streamed_batches(1000, 1000);
  BOOST_TEST_REQUIRE(batches.size() == 1u);
  BOOST_TEST(batches[0].first == 0u);
  BOOST_TEST(batches[0].count == 1000u);
  BOOST_TEST(streamed_batches(0, 8).empty());
}

BOOST_AUTO_TEST_CASE(a_quarter_batch_leads_then_full_batches_then_the_rest) {
  // The benchmark's shape: 2^24 points in batches of 2^22.
  const std::uint64_t batch = std::uint64_t{1} << 22;
  const auto batches = streamed_batches(std::uint64_t{1} << 24, batch);
  BOOST_TEST_REQUIRE(batches.size() == 5u);
  BOOST_TEST(batches[0].count == batch / 4);
  for (std::size_t i = 1; i < 4; ++i) BOOST_TEST(batches[i].count == batch);
  BOOST_TEST(batches[4].count == batch - batch / 4);
  expect_tiling(batches, std::uint64_t{1} << 24, batch);
}

BOOST_AUTO_TEST_CASE(every_split_tiles_the_points) {
  for (std::uint64_t batch : {1u, 2u, 3u, 4u, 5u, 7u, 16u, 1029u}) {
    for (std::uint64_t count = 1; count <= 3 * batch + 9; ++count) {
      const auto batches = streamed_batches(count, batch);
      expect_tiling(batches, count, batch);
      if (count > batch) BOOST_TEST(batches[0].count == std::max<std::uint64_t>(1, batch / 4));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_zero_batch_size_is_refused) {
  BOOST_CHECK_THROW(streamed_batches(10, 0), std::invalid_argument);
}

// The MSMs' results decode as the CPU reference's points (msm.hpp's layouts); a coordinate that is
// not a reduced Fq (the poison the checks write) decodes as nothing.
BOOST_AUTO_TEST_CASE(msm_results_decode_as_reference_points) {
  const auto g1 = math::G1Projective::from_affine(math::G1Curve::generator()).doubled();
  const auto g2 = math::G2Projective::from_affine(math::G2Curve::generator()).doubled();
  std::uint8_t bytes1[cuda::kG1JacobianBytes], bytes2[cuda::kG2JacobianBytes];
  const math::Fq g1_coordinates[] = {g1.x, g1.y, g1.z};
  for (int c = 0; c < 3; ++c) std::memcpy(bytes1 + 48 * c, g1_coordinates[c].montgomery_limbs().data(), 48);
  const math::Fq g2_coordinates[] = {g2.x.c0, g2.x.c1, g2.y.c0, g2.y.c1, g2.z.c0, g2.z.c1};
  for (int c = 0; c < 6; ++c) std::memcpy(bytes2 + 48 * c, g2_coordinates[c].montgomery_limbs().data(), 48);
  BOOST_TEST((cuda::g1_from_jacobian_bytes(bytes1) == std::optional{g1}));
  BOOST_TEST((cuda::g2_from_jacobian_bytes(bytes2) == std::optional{g2}));
  std::memset(bytes1 + 96, 0xff, 48);
  std::memset(bytes2 + 240, 0xff, 48);
  BOOST_TEST(!cuda::g1_from_jacobian_bytes(bytes1).has_value());
  BOOST_TEST(!cuda::g2_from_jacobian_bytes(bytes2).has_value());
}

// BN254's plans: the same widths and groupings as BLS12-381's (the planners' tuning is shared), the
// curve carried, and the byte sizes of BN254's points and sums (kernel::curve_sizes).
BOOST_AUTO_TEST_CASE(bn254_plans_carry_their_curve_and_its_sizes) {
  using cuda::MsmGroup;
  using kernel::Curve;
  for (const std::uint64_t points : {1ull, 1000ull, 1ull << 16, 1ull << 20, 1ull << 24}) {
    for (const auto group : {MsmGroup::g1, MsmGroup::g2}) {
      BOOST_TEST_CONTEXT(points << " points, " << (group == MsmGroup::g1 ? "G1" : "G2")) {
        const auto bls = cuda::msm_plan(points, 0, group);
        const auto bn = cuda::msm_plan(points, 0, group, Curve::bn254);
        BOOST_TEST((bls.curve == Curve::bls12_381 && bn.curve == Curve::bn254));
        BOOST_TEST(bn.window_bits == bls.window_bits);
        BOOST_TEST(bn.windows_per_group == bls.windows_per_group);
        BOOST_TEST((bn.tuning.item_sum == bls.tuning.item_sum));
        const std::uint64_t sum_bytes = group == MsmGroup::g1 ? 96 : 192;
        BOOST_TEST(cuda::msm_result_bytes(bn) == bn.window_count * sum_bytes);
        BOOST_TEST(cuda::msm_result_bytes(bls) == bls.window_count * sum_bytes * 3 / 2);
        BOOST_TEST((cuda::msm_batch_plan(points, 0, group, Curve::bn254).curve == Curve::bn254));
        if (points < (1ull << 24)) {
          const auto copies = cuda::msm_precomputed_plan(points, 0, group, Curve::bn254);
          BOOST_TEST((copies.curve == Curve::bn254));
          BOOST_TEST(cuda::msm_precomputed_bytes(copies) ==
                     std::uint64_t{copies.window_count} * points * (group == MsmGroup::g1 ? 64 : 128));
          BOOST_TEST(cuda::msm_result_bytes(copies) == sum_bytes);
        }
      }
    }
  }
}

// BN254's results decode as its reference's points; poison decodes as nothing.
BOOST_AUTO_TEST_CASE(bn254_msm_results_decode_as_reference_points) {
  namespace bn = math::bn254;
  const auto g1 = bn::G1Projective::from_affine(bn::G1Curve::generator()).doubled();
  const auto g2 = bn::G2Projective::from_affine(bn::G2Curve::generator()).doubled();
  std::uint8_t bytes1[96], bytes2[192];
  const bn::Fq g1_coordinates[] = {g1.x, g1.y, g1.z};
  for (int c = 0; c < 3; ++c) std::memcpy(bytes1 + 32 * c, g1_coordinates[c].montgomery_limbs().data(), 32);
  const bn::Fq g2_coordinates[] = {g2.x.c0, g2.x.c1, g2.y.c0, g2.y.c1, g2.z.c0, g2.z.c1};
  for (int c = 0; c < 6; ++c) std::memcpy(bytes2 + 32 * c, g2_coordinates[c].montgomery_limbs().data(), 32);
  BOOST_TEST((cuda::bn254_g1_from_jacobian_bytes(bytes1) == std::optional{g1}));
  BOOST_TEST((cuda::bn254_g2_from_jacobian_bytes(bytes2) == std::optional{g2}));
  std::memset(bytes1 + 64, 0xff, 32);
  std::memset(bytes2 + 96, 0xff, 32);
  BOOST_TEST(!cuda::bn254_g1_from_jacobian_bytes(bytes1).has_value());
  BOOST_TEST(!cuda::bn254_g2_from_jacobian_bytes(bytes2).has_value());
}

BOOST_AUTO_TEST_CASE(the_partition_asks_for_the_whole_ntt_domain) {
  using stagehand::cuda::ntt_domain_bytes;
  using stagehand::cuda::partition_kernel_scratch_bytes;
  for (unsigned log_size = stagehand::cuda::kNttMinLogSize; log_size <= stagehand::cuda::kNttMaxLogSize; ++log_size) {
    BOOST_TEST(partition_kernel_scratch_bytes(kernel::ntt_twiddles, std::uint64_t{1} << log_size) ==
               ntt_domain_bytes(log_size));
  }
  // Up to 2^22 the domain holds an exact twiddle for every element (the last pass reads its
  // twiddles from it): one polynomial's 32 bytes per element and a little more, twice the
  // program's 16 bytes per element; below 2^12 the fixed tables make it more. From 2^23 it is
  // less than the program's 16.
  BOOST_TEST(ntt_domain_bytes(10) > 16u * 1024);
  BOOST_TEST(ntt_domain_bytes(11) > 16u * 2048);
  for (unsigned log_size = 16; log_size <= 22; ++log_size) {
    const std::uint64_t n = std::uint64_t{1} << log_size;
    BOOST_TEST(ntt_domain_bytes(log_size) >= 32 * n, "2^" << log_size);
    BOOST_TEST(ntt_domain_bytes(log_size) <= 34 * n, "2^" << log_size);
  }
  for (unsigned log_size = 23; log_size <= stagehand::cuda::kNttMaxLogSize; ++log_size) {
    BOOST_TEST(ntt_domain_bytes(log_size) <= 16 * (std::uint64_t{1} << log_size), "2^" << log_size);
  }
  BOOST_TEST(partition_kernel_scratch_bytes(kernel::ntt_twiddles, 1000) == 0u);  // not a power of two
  BOOST_TEST(partition_kernel_scratch_bytes(kernel::ntt_twiddles, 0) == 0u);
}
