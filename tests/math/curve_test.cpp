// G1 and G2 of BLS12-381 and BN254 against @noble/curves: addition (projective and mixed),
// doubling, scalar multiplication, batch conversion to affine, on-curve and subgroup checks.
#define BOOST_TEST_MODULE math_curve
#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <vector>

#include "math/bn254.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"
#include "vectors.hpp"

using namespace stagehand::math;
using stagehand::math::test::describe;
using stagehand::math::test::field_from;
using stagehand::math::test::fq2_from;
using stagehand::math::test::point_from;
using stagehand::math::test::vectors;

namespace {

using CurveCases = boost::mpl::list<test::G1Case, test::G2Case, test::Bn254G1Case, test::Bn254G2Case>;

// A non-trivial Z for Jacobian coordinates, so that the formulas are exercised with Z != 1.
template <class Field>
Field scale_factor(std::size_t index) {
  if constexpr (requires { typename Field::Fq; }) {
    using BaseField = typename Field::Fq;
    return Field{BaseField::from_uint64(5 * index + 7), BaseField::from_uint64(index + 1)};
  } else {
    return Field::from_uint64(3 * index + 2);
  }
}

template <class Curve>
ProjectivePoint<Curve> rescaled(const AffinePoint<Curve>& point, std::size_t index) {
  using Field = typename Curve::BaseField;
  ProjectivePoint<Curve> result = ProjectivePoint<Curve>::from_affine(point);
  if (point.infinity) return result;
  const Field lambda = scale_factor<Field>(index);
  const Field lambda_squared = lambda.squared();
  result.x = point.x * lambda_squared;
  result.y = point.y * lambda_squared * lambda;
  result.z = lambda;
  return result;
}

}  // namespace

BOOST_AUTO_TEST_CASE(generators_and_coefficients_match_noble) {
  const auto& constants = vectors().at("constants");
  BOOST_TEST((G1Curve::generator() == point_from<G1Curve>(constants.at("g1_generator"))));
  BOOST_TEST((G2Curve::generator() == point_from<G2Curve>(constants.at("g2_generator"))));
  BOOST_TEST((G1Curve::b() == field_from<Fq>(constants.at("g1_b"))));
  BOOST_TEST((G2Curve::b() == fq2_from(constants.at("g2_b"))));
  BOOST_TEST(G1Curve::generator().is_on_curve());
  BOOST_TEST(G1Curve::generator().is_in_subgroup());
  BOOST_TEST(G2Curve::generator().is_on_curve());
  BOOST_TEST(G2Curve::generator().is_in_subgroup());
}

BOOST_AUTO_TEST_CASE(bn254_generators_and_coefficients_match_noble) {
  const auto& constants = test::Bn254Vectors::section().at("constants");
  BOOST_TEST((bn254::G1Curve::generator() == point_from<bn254::G1Curve>(constants.at("g1_generator"))));
  BOOST_TEST((bn254::G2Curve::generator() == point_from<bn254::G2Curve>(constants.at("g2_generator"))));
  BOOST_TEST((bn254::G1Curve::b() == field_from<bn254::Fq>(constants.at("g1_b"))));
  BOOST_TEST((bn254::G2Curve::b() == fq2_from<bn254::Fq2>(constants.at("g2_b"))));
  // b' = 3/ξ with ξ = 9 + u: the D-type twist.
  const bn254::Fq2 xi{bn254::Fq::from_uint64(9), bn254::Fq::one()};
  BOOST_TEST((bn254::G2Curve::b() * xi == bn254::Fq2{bn254::Fq::from_uint64(3), bn254::Fq::zero()}));
  BOOST_TEST((Bn254::multiply_by_xi(bn254::G2Curve::b()) == bn254::G2Curve::b() * xi));
  BOOST_TEST(bn254::G1Curve::generator().is_on_curve());
  BOOST_TEST(bn254::G1Curve::generator().is_in_subgroup());
  BOOST_TEST(bn254::G2Curve::generator().is_on_curve());
  BOOST_TEST(bn254::G2Curve::generator().is_in_subgroup());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(addition_matches_noble, Case, CurveCases) {
  using Curve = typename Case::Curve;
  using Projective = ProjectivePoint<Curve>;
  const auto& entries = Case::section().at(Case::key).at("addition");
  std::vector<Projective> sums;
  std::vector<AffinePoint<Curve>> expected_sums;
  std::size_t index = 0;
  for (const auto& entry : entries) {
    const auto p = point_from<Curve>(entry.at("p"));
    const auto q = point_from<Curve>(entry.at("q"));
    const auto expected = point_from<Curve>(entry.at("sum"));
    const std::string label = describe(p) + " + " + describe(q);
    const Projective full = rescaled(p, index) + rescaled(q, index + 1);
    const Projective mixed = rescaled(p, index) + q;
    const Projective from_one = Projective::from_affine(p) + Projective::from_affine(q);
    BOOST_CHECK_MESSAGE(full.to_affine() == expected, "projective addition " << label);
    BOOST_CHECK_MESSAGE(mixed.to_affine() == expected, "mixed addition " << label);
    BOOST_CHECK_MESSAGE(from_one.to_affine() == expected, "addition from affine " << label);
    BOOST_CHECK_MESSAGE(full == Projective::from_affine(expected), "projective equality " << label);
    BOOST_CHECK(full.is_on_curve());
    BOOST_CHECK_MESSAGE((full - rescaled(q, index + 2)).to_affine() == p, "subtraction " << label);
    sums.push_back(full);
    expected_sums.push_back(expected);
    ++index;
  }
  BOOST_TEST(entries.size() >= 15u);

  // One inversion for the lot, identities included.
  std::vector<AffinePoint<Curve>> affine(sums.size());
  batch_to_affine<Curve>(sums, affine);
  for (std::size_t position = 0; position < sums.size(); ++position) {
    BOOST_CHECK_MESSAGE(affine[position] == expected_sums[position], "batch_to_affine at " << position);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(doubling_matches_noble, Case, CurveCases) {
  using Curve = typename Case::Curve;
  std::size_t index = 0;
  for (const auto& entry : Case::section().at(Case::key).at("doubling")) {
    const auto p = point_from<Curve>(entry.at("p"));
    const auto expected = point_from<Curve>(entry.at("result"));
    BOOST_CHECK_MESSAGE(rescaled(p, index++).doubled().to_affine() == expected, "doubling " << describe(p));
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(scalar_multiplication_matches_noble, Case, CurveCases) {
  using Curve = typename Case::Curve;
  std::size_t index = 0;
  for (const auto& entry : Case::section().at(Case::key).at("scalar_multiplication")) {
    const auto p = point_from<Curve>(entry.at("p"));
    const auto k = field_from<typename Curve::ScalarField>(entry.at("k"));
    const auto expected = point_from<Curve>(entry.at("result"));
    BOOST_CHECK_MESSAGE(rescaled(p, index++).multiply(k).to_affine() == expected,
                        "scalar multiplication of " << describe(p) << " by " << k.to_decimal());
  }
  BOOST_TEST(Case::section().at(Case::key).at("scalar_multiplication").size() >= 10u);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(curve_and_subgroup_checks_match_noble, Case, CurveCases) {
  using Curve = typename Case::Curve;
  std::size_t outside_subgroup = 0;
  std::size_t off_curve = 0;
  std::size_t index = 0;
  for (const auto& entry : Case::section().at(Case::key).at("checks")) {
    const auto point = point_from<Curve>(entry.at("point"));
    const bool on_curve = entry.at("on_curve").template get<bool>();
    const bool in_subgroup = entry.at("in_subgroup").template get<bool>();
    BOOST_CHECK_MESSAGE(point.is_on_curve() == on_curve, "is_on_curve of " << describe(point));
    BOOST_CHECK_MESSAGE(rescaled(point, index++).is_on_curve() == on_curve,
                        "projective is_on_curve of " << describe(point));
    BOOST_CHECK_MESSAGE(point.is_in_subgroup() == in_subgroup, "is_in_subgroup of " << describe(point));
    if (on_curve && !in_subgroup) ++outside_subgroup;
    if (Curve::cofactor_is_one && on_curve) {
      // is_in_subgroup takes the cofactor's word for it; the product by r checks the word.
      BOOST_CHECK_MESSAGE(rescaled(point, index).multiply_by_limbs(Curve::ScalarField::modulus).is_identity(),
                          "r times " << describe(point) << " is the identity");
    }
    if (!on_curve) ++off_curve;
  }
  // With cofactor one (BN254's G1) every point on the curve is in the group.
  if (Curve::cofactor_is_one) {
    BOOST_TEST(outside_subgroup == 0u);
  } else {
    BOOST_TEST(outside_subgroup >= 4u);
  }
  BOOST_TEST(off_curve >= 4u);
}
