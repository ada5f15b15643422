// Pippenger MSM over G1 and G2 of BLS12-381 and BN254 against @noble/curves (Point.msm, itself
// checked against the naive sum up to 100 points) and, up to 100 points, against the naive sum
// here: sizes 1, 2, 3, 100 and 2^12 with zero scalars, repeated and opposite points and points at
// infinity, across thread counts and window widths.
#define BOOST_TEST_MODULE math_msm
#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "math/msm.hpp"
#include "vectors.hpp"

using namespace stagehand::math;
using stagehand::math::test::field_from;
using stagehand::math::test::point_from;
using stagehand::math::test::vectors;

namespace {

using CurveCases = boost::mpl::list<test::G1Case, test::G2Case, test::Bn254G1Case, test::Bn254G2Case>;

template <class Curve>
struct MsmCase {
  std::string name;
  std::vector<AffinePoint<Curve>> points;
  std::vector<typename Curve::ScalarField> scalars;
  AffinePoint<Curve> expected;
};

template <class Case>
std::vector<MsmCase<typename Case::Curve>> load_cases() {
  using Curve = typename Case::Curve;
  std::vector<MsmCase<Curve>> cases;
  for (const auto& entry : Case::section().at("msm").at(Case::key)) {
    MsmCase<Curve> loaded;
    loaded.name = entry.at("name").template get<std::string>();
    for (const auto& point : entry.at("points")) loaded.points.push_back(point_from<Curve>(point));
    for (const auto& scalar : entry.at("scalars")) {
      loaded.scalars.push_back(field_from<typename Curve::ScalarField>(scalar));
    }
    loaded.expected = point_from<Curve>(entry.at("result"));
    BOOST_REQUIRE_EQUAL(loaded.points.size(), entry.at("size").template get<std::size_t>());
    cases.push_back(std::move(loaded));
  }
  return cases;
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(msm_matches_noble, Case, CurveCases) {
  using Curve = typename Case::Curve;
  const auto cases = load_cases<Case>();
  std::vector<std::size_t> sizes;
  for (const auto& msm_case : cases) {
    const auto result = msm(std::span<const AffinePoint<Curve>>(msm_case.points), msm_case.scalars);
    BOOST_CHECK_MESSAGE(result.to_affine() == msm_case.expected, "msm '" << msm_case.name << "'");
    if (msm_case.points.size() <= 100) {
      auto naive = ProjectivePoint<Curve>::identity();
      for (std::size_t index = 0; index < msm_case.points.size(); ++index) {
        naive += ProjectivePoint<Curve>::from_affine(msm_case.points[index]).multiply(msm_case.scalars[index]);
      }
      BOOST_CHECK_MESSAGE(result == naive, "msm '" << msm_case.name << "' against the naive sum");
    }
    sizes.push_back(msm_case.points.size());
  }
  for (const std::size_t size : {1u, 2u, 3u, 100u, 4096u}) {
    BOOST_CHECK_MESSAGE(std::find(sizes.begin(), sizes.end(), size) != sizes.end(), "a case of size " << size);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(msm_matches_noble_for_every_thread_count_and_window, Case, CurveCases) {
  using Curve = typename Case::Curve;
  for (const auto& msm_case : load_cases<Case>()) {
    const std::span<const AffinePoint<Curve>> points(msm_case.points);
    const std::size_t size = points.size();
    std::vector<MsmOptions> variants;
    for (const auto accumulation : {BucketAccumulation::jacobian, BucketAccumulation::batch_affine}) {
      for (const unsigned threads : {1u, 2u, 3u, 7u}) variants.push_back(MsmOptions{threads, 0, accumulation});
      // Narrow windows on the small cases (every digit pattern, many windows, and for batch-affine
      // buckets many collisions), a few wide ones on the larger cases, where wide windows are what
      // the planner picks.
      if (size <= 100) {
        for (unsigned window_bits = 1; window_bits <= 8; ++window_bits) {
          variants.push_back(MsmOptions{3, window_bits, accumulation});
        }
      }
      if (size >= 100) {
        for (const unsigned window_bits : {11u, 13u}) variants.push_back(MsmOptions{2, window_bits, accumulation});
      }
    }
    for (const MsmOptions& options : variants) {
      const auto result = msm(points, msm_case.scalars, options);
      BOOST_CHECK_MESSAGE(
          result.to_affine() == msm_case.expected,
          "msm '" << msm_case.name << "' with " << options.thread_count << " threads, window " << options.window_bits
                  << ", " << (options.accumulation == BucketAccumulation::jacobian ? "Jacobian" : "batch-affine")
                  << " buckets");
    }
  }
}

BOOST_AUTO_TEST_CASE(msm_splits_points_across_threads_when_windows_are_few) {
  // With many threads the windows alone cannot keep them busy and the plan splits each window's
  // points into chunks; the result must not change (the chunked path is checked above with 7
  // threads, this makes sure that path is really taken).
  const MsmPlan plan = plan_msm(4096, 64);
  BOOST_TEST(plan.chunk_count > 1u);
  const auto cases = load_cases<test::G1Case>();
  const auto& largest = cases.back();
  BOOST_REQUIRE_EQUAL(largest.points.size(), 4096u);
  BOOST_TEST((msm(std::span<const G1Affine>(largest.points), largest.scalars, 64).to_affine() == largest.expected));
}

BOOST_AUTO_TEST_CASE(msm_rejects_mismatched_lengths_and_accepts_empty_input) {
  const std::vector<G1Affine> points(3, G1Curve::generator());
  const std::vector<Fr> scalars(2, Fr::one());
  BOOST_CHECK_THROW(msm(std::span<const G1Affine>(points), scalars), std::invalid_argument);
  BOOST_TEST(msm(std::span<const G1Affine>(), std::span<const Fr>()).is_identity());
  BOOST_TEST(msm(std::span<const G2Affine>(), std::span<const Fr>()).is_identity());
  const std::vector<bn254::Fr> bn254_scalars(2, bn254::Fr::one());
  const std::vector<bn254::G1Affine> bn254_points(3, bn254::G1Curve::generator());
  BOOST_CHECK_THROW(msm(std::span<const bn254::G1Affine>(bn254_points), bn254_scalars), std::invalid_argument);
  BOOST_TEST(msm(std::span<const bn254::G2Affine>(), std::span<const bn254::Fr>()).is_identity());
}

BOOST_AUTO_TEST_CASE(msm_plans_windows_for_the_scalar_width) {
  // Windows of 3 bits: BLS12-381's 255-bit scalars take 255/3 + 1 = 86 (bit 255 of the last is
  // zero), BN254's 254-bit ones 254/3 + 1 = 85.
  BOOST_TEST(plan_msm(64, 1, 3, BucketAccumulation::jacobian, 255).window_count == 86u);
  BOOST_TEST(plan_msm(64, 1, 3, BucketAccumulation::jacobian, 254).window_count == 85u);
}
