// Fq6, Fq12 and the optimal ate pairing of BLS12-381 and BN254 against @noble/curves: the
// tower's arithmetic and Frobenius, the final exponentiation, e(G1, G2), random pairs with their
// values, bilinearity, products of pairings (one of them the identity of GT), and the degenerate
// cases. Each test is one template over both curves.
#define BOOST_TEST_MODULE math_pairing
#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <vector>

#include "math/fq12.hpp"
#include "math/pairing.hpp"
#include "vectors.hpp"

using namespace stagehand::math;
using stagehand::math::test::field_from;
using stagehand::math::test::fq2_from;
using stagehand::math::test::point_from;
using stagehand::math::test::vectors;

namespace {

// One curve's types and vectors.
template <class CurveVectors>
struct PairingCase : CurveVectors {
  using Curve = typename CurveVectors::Description;
  using Fq = typename Curve::Fq;
  using Fr = typename Curve::Fr;
  using Fq2 = typename Curve::Fq2;
  using Fq6 = BasicFq6<Curve>;
  using Fq12 = BasicFq12<Curve>;
  using G1Curve = typename Curve::G1;
  using G2Curve = typename Curve::G2;
  using G1Affine = AffinePoint<G1Curve>;
  using G2Affine = AffinePoint<G2Curve>;
  using G1Projective = ProjectivePoint<G1Curve>;
  using G2Projective = ProjectivePoint<G2Curve>;
  using Engine = Pairing<Curve>;
  using Prepared = BasicG2Prepared<Curve>;

  static Fq6 fq6_from(const nlohmann::json& value) {
    return {fq2_from<Fq2>(value.at(0)), fq2_from<Fq2>(value.at(1)), fq2_from<Fq2>(value.at(2))};
  }
  static Fq12 fq12_from(const nlohmann::json& value) {
    return {{fq2_from<Fq2>(value.at(0)), fq2_from<Fq2>(value.at(1)), fq2_from<Fq2>(value.at(2))},
            {fq2_from<Fq2>(value.at(3)), fq2_from<Fq2>(value.at(4)), fq2_from<Fq2>(value.at(5))}};
  }
  static G1Affine g1_from(const nlohmann::json& point) { return point_from<G1Curve>(point); }
  static G2Affine g2_from(const nlohmann::json& point) { return point_from<G2Curve>(point); }
};
using Bls12_381Case = PairingCase<test::Bls12_381Vectors>;
using Bn254Case = PairingCase<test::Bn254Vectors>;
using PairingCases = boost::mpl::list<Bls12_381Case, Bn254Case>;

template <class Fq12Type>
std::string describe(const Fq12Type& value) {
  std::string text;
  for (const auto* part : {&value.c0.c0, &value.c0.c1, &value.c0.c2, &value.c1.c0, &value.c1.c1, &value.c1.c2}) {
    text.append(test::to_hex(*part)).append(" ");
  }
  return text;
}

// r, and factor·(q^12 - 1)/r computed here with plain long arithmetic (independent of the chain).
template <std::size_t N>
using Wide = Limbs<N>;

Wide<80> multiply_wide(const Wide<80>& a, const Wide<80>& b) {
  Wide<80> product{};
  for (std::size_t i = 0; i < 80; ++i) {
    detail::Uint128 carry = 0;
    for (std::size_t j = 0; i + j < 80; ++j) {
      const detail::Uint128 current = static_cast<detail::Uint128>(a[i]) * b[j] + product[i + j] + carry;
      product[i + j] = static_cast<std::uint64_t>(current);
      carry = current >> 64;
    }
  }
  return product;
}
// value / divisor for a divisor of up to 4 limbs, by shift-and-subtract (slow, but run once).
Wide<80> divide_wide(const Wide<80>& value, const Wide<80>& divisor) {
  Wide<80> quotient{}, remainder{};
  for (std::size_t bit = 80 * 64; bit-- > 0;) {
    for (std::size_t i = 80; i-- > 1;) remainder[i] = (remainder[i] << 1) | (remainder[i - 1] >> 63);
    remainder[0] = (remainder[0] << 1) | ((value[bit / 64] >> (bit % 64)) & 1);
    bool at_least = true;
    for (std::size_t i = 80; i-- > 0;) {
      if (remainder[i] != divisor[i]) {
        at_least = remainder[i] > divisor[i];
        break;
      }
    }
    if (at_least) {
      std::uint64_t borrow = 0;
      for (std::size_t i = 0; i < 80; ++i) {
        const detail::Uint128 subtrahend = static_cast<detail::Uint128>(divisor[i]) + borrow;
        borrow = remainder[i] < subtrahend ? 1 : 0;
        remainder[i] = static_cast<std::uint64_t>(static_cast<detail::Uint128>(remainder[i]) - subtrahend);
      }
      quotient[bit / 64] |= std::uint64_t{1} << (bit % 64);
    }
  }
  return quotient;
}
// The factor is noble's: 3 for BLS12-381, 2x(6x² + 3x + 1) for BN254 (in the vectors).
template <class Case>
Wide<80> final_exponent(const Wide<80>& factor) {
  using Fq = typename Case::Fq;
  using Fr = typename Case::Fr;
  Wide<80> q{}, power{}, r{};
  for (std::size_t i = 0; i < Fq::limb_count; ++i) q[i] = Fq::modulus[i];
  for (std::size_t i = 0; i < Fr::limb_count; ++i) r[i] = Fr::modulus[i];
  power[0] = 1;
  for (int step = 0; step < 12; ++step) power = multiply_wide(power, q);
  power[0] -= 1;  // q^12 is odd: no borrow
  return multiply_wide(divide_wide(power, r), factor);
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(fq6_arithmetic_matches_noble, Case, PairingCases) {
  using Fq2 = typename Case::Fq2;
  using Fq6 = typename Case::Fq6;
  const auto fq6_from = Case::fq6_from;
  for (const auto& entry : Case::section().at("tower").at("fq6")) {
    const Fq6 a = fq6_from(entry.at("a")), b = fq6_from(entry.at("b"));
    BOOST_CHECK(a * b == fq6_from(entry.at("product")));
    BOOST_CHECK(a.squared() == fq6_from(entry.at("square")));
    BOOST_CHECK(a.inverse() == fq6_from(entry.at("inverse")));
    BOOST_CHECK((a * a.inverse()).is_one());
    // The sparse products against the full one.
    BOOST_CHECK((a.multiply_by_01(b.c0, b.c1) == a * Fq6{b.c0, b.c1, Fq2::zero()}));
    BOOST_CHECK((a.multiply_by_1(b.c1) == a * Fq6{Fq2::zero(), b.c1, Fq2::zero()}));
    BOOST_CHECK((a.multiply_by_v() == a * Fq6{Fq2::zero(), Fq2::one(), Fq2::zero()}));
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(fq12_arithmetic_matches_noble, Case, PairingCases) {
  using Fq2 = typename Case::Fq2;
  using Fq12 = typename Case::Fq12;
  const auto fq12_from = Case::fq12_from;
  for (const auto& entry : Case::section().at("tower").at("fq12")) {
    const Fq12 a = fq12_from(entry.at("a")), b = fq12_from(entry.at("b"));
    BOOST_CHECK(a * b == fq12_from(entry.at("product")));
    BOOST_CHECK(a.squared() == fq12_from(entry.at("square")));
    BOOST_CHECK(a.inverse() == fq12_from(entry.at("inverse")));
    BOOST_CHECK(a.conjugate() == fq12_from(entry.at("conjugate")));
    BOOST_CHECK(a.pow(test::limbs_from<typename Case::Fr>(entry.at("exponent"))) == fq12_from(entry.at("power")));
    for (const auto& frobenius : entry.at("frobenius")) {
      BOOST_TEST_CONTEXT("frobenius " << frobenius.at("power")) {
        BOOST_CHECK(a.frobenius(frobenius.at("power").template get<unsigned>()) == fq12_from(frobenius.at("value")));
      }
    }
    BOOST_CHECK(a.frobenius(12) == a);
    BOOST_CHECK(a.frobenius(6) == a.conjugate());
    // The sparse products of both twists' lines against the full product.
    const Fq2 o0 = b.c0.c0, o1 = b.c0.c1, o3 = b.c1.c0, o4 = b.c1.c1;
    BOOST_CHECK((a.multiply_by_014(o0, o1, o4) == a * Fq12{{o0, o1, Fq2::zero()}, {Fq2::zero(), o4, Fq2::zero()}}));
    BOOST_CHECK((a.multiply_by_034(o0, o3, o4) == a * Fq12{{o0, Fq2::zero(), Fq2::zero()}, {o3, o4, Fq2::zero()}}));
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(the_final_exponentiation_matches_noble_and_the_plain_power, Case, PairingCases) {
  using Fq12 = typename Case::Fq12;
  using Fr = typename Case::Fr;
  const auto fq12_from = Case::fq12_from;
  const auto& section = Case::section().at("pairing");
  const auto exponent =
      final_exponent<Case>(detail::limbs_from_hex<80>(section.at("final_exponent_factor").template get<std::string>()));
  bool first = true;
  for (const auto& entry : section.at("final_exponentiation")) {
    const Fq12 f = fq12_from(entry.at("f"));
    const Fq12 value = Case::Engine::final_exponentiation(f);
    BOOST_CHECK_MESSAGE(value == fq12_from(entry.at("value")), describe(value));
    // Square-and-multiply by the whole exponent (4,500 bits for BLS12-381), independent of the chain.
    if (first) BOOST_CHECK(value == f.pow(exponent));
    // In GT: cyclotomic squaring agrees with squaring, and the order divides r.
    BOOST_CHECK(value.cyclotomic_squared() == value.squared());
    BOOST_CHECK(value.pow(Fr::modulus).is_one());
    first = false;
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(the_pairing_of_the_generators_matches_noble, Case, PairingCases) {
  using Fq12 = typename Case::Fq12;
  using Fr = typename Case::Fr;
  const auto& generators = Case::section().at("pairing").at("generators");
  const auto p = Case::g1_from(generators.at("p"));
  const auto q = Case::g2_from(generators.at("q"));
  BOOST_REQUIRE(p == Case::G1Curve::generator() && q == Case::G2Curve::generator());
  const Fq12 value = Case::Engine::pairing(p, q);
  BOOST_CHECK_MESSAGE(value == Case::fq12_from(generators.at("value")), describe(value));
  BOOST_CHECK(!value.is_one());
  BOOST_CHECK(value.pow(Fr::modulus).is_one());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(random_pairs_match_noble_and_are_bilinear, Case, PairingCases) {
  using Fq12 = typename Case::Fq12;
  using Fr = typename Case::Fr;
  using G1Curve = typename Case::G1Curve;
  using G2Curve = typename Case::G2Curve;
  using G1Projective = typename Case::G1Projective;
  using G2Projective = typename Case::G2Projective;
  const auto pairing = Case::Engine::pairing;
  const Fq12 base = pairing(G1Curve::generator(), G2Curve::generator());
  for (const auto& entry : Case::section().at("pairing").at("pairs")) {
    const Fr a = field_from<Fr>(entry.at("a")), b = field_from<Fr>(entry.at("b"));
    const auto p = Case::g1_from(entry.at("p"));
    const auto q = Case::g2_from(entry.at("q"));
    BOOST_REQUIRE(p == G1Projective::from_affine(G1Curve::generator()).multiply(a).to_affine());
    BOOST_REQUIRE(q == G2Projective::from_affine(G2Curve::generator()).multiply(b).to_affine());
    const Fq12 value = pairing(p, q);
    BOOST_CHECK_MESSAGE(value == Case::fq12_from(entry.at("value")), describe(value));
    BOOST_CHECK(value == base.pow((a * b).to_canonical_limbs()));
    // e(aP, Q) = e(P, aQ), and e(-P, Q) = e(P, Q)^-1 = conj(e(P, Q)).
    BOOST_CHECK(pairing(G1Projective::from_affine(G1Curve::generator()).multiply(a * b).to_affine(),
                        G2Curve::generator()) == value);
    BOOST_CHECK(pairing(-p, q) == value.conjugate());
    BOOST_CHECK(pairing(p, -q) == value.conjugate());
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(products_of_pairings_match_noble_and_one_is_the_identity, Case, PairingCases) {
  using Fq12 = typename Case::Fq12;
  using G1Affine = typename Case::G1Affine;
  using G2Prepared = typename Case::Prepared;
  using Engine = typename Case::Engine;
  bool saw_identity = false;
  for (const auto& entry : Case::section().at("pairing").at("products")) {
    std::vector<G2Prepared> prepared;
    std::vector<G1Affine> points;
    Fq12 separately = Fq12::one();
    for (const auto& pair : entry.at("pairs")) {
      points.push_back(Case::g1_from(pair.at("p")));
      prepared.push_back(Engine::prepare_g2(Case::g2_from(pair.at("q"))));
      separately *= Engine::pairing(points.back(), Case::g2_from(pair.at("q")));
    }
    std::vector<std::pair<G1Affine, const G2Prepared*>> pairs;
    for (std::size_t i = 0; i < points.size(); ++i) pairs.emplace_back(points[i], &prepared[i]);
    const Fq12 value = Engine::multi_pairing(pairs);
    const Fq12 expected = Case::fq12_from(entry.at("value"));
    BOOST_CHECK_MESSAGE(value == expected, describe(value));
    BOOST_CHECK(value == separately);
    saw_identity = saw_identity || expected.is_one();
    if (expected.is_one()) BOOST_CHECK(value.is_one());
  }
  BOOST_CHECK(saw_identity);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(points_at_infinity_contribute_one, Case, PairingCases) {
  using Engine = typename Case::Engine;
  BOOST_CHECK(Engine::pairing(Case::G1Affine::identity(), Case::G2Curve::generator()).is_one());
  BOOST_CHECK(Engine::pairing(Case::G1Curve::generator(), Case::G2Affine::identity()).is_one());
  BOOST_CHECK(Engine::prepare_g2(Case::G2Affine::identity()).infinity);
  BOOST_CHECK(Engine::multi_pairing({}).is_one());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(a_prepared_point_without_its_lines_is_refused, Case, PairingCases) {
  typename Case::Prepared truncated = Case::Engine::prepare_g2(Case::G2Curve::generator());
  truncated.lines.pop_back();
  const std::pair<typename Case::G1Affine, const typename Case::Prepared*> pair{Case::G1Curve::generator(), &truncated};
  BOOST_CHECK_THROW(Case::Engine::miller_loop(std::span(&pair, 1)), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(the_bls12_381_names_are_the_bls12_381_instantiation) {
  // The names the rest of the program uses (math::pairing, math::G2Prepared, ...) give the
  // template's values.
  const Fq12 value = pairing(G1Curve::generator(), G2Curve::generator());
  BOOST_CHECK(value == Pairing<Bls12_381>::pairing(G1Curve::generator(), G2Curve::generator()));
  BOOST_CHECK(value == Bls12_381Case::fq12_from(vectors().at("pairing").at("generators").at("value")));
  const bn254::Fq12 bn254_value = bn254::pairing(bn254::G1Curve::generator(), bn254::G2Curve::generator());
  BOOST_CHECK(bn254_value == Bn254Case::fq12_from(vectors().at("bn254").at("pairing").at("generators").at("value")));
}

BOOST_AUTO_TEST_CASE(the_cost_of_a_four_pairing_product) {
  // Not a limit, a record (the Groth16 check is this product with three prepared points).
  const G2Prepared fixed = prepare_g2(G2Curve::generator());
  const G1Affine p = G1Curve::generator();
  std::vector<std::pair<G1Affine, const G2Prepared*>> pairs(4, {p, &fixed});
  const auto start = std::chrono::steady_clock::now();
  const int rounds = 5;
  Fq12 sink = Fq12::one();
  for (int round = 0; round < rounds; ++round) sink *= multi_pairing(pairs);
  const auto loop_done = std::chrono::steady_clock::now();
  for (int round = 0; round < rounds; ++round) (void)prepare_g2(G2Curve::generator());
  const auto prepare_done = std::chrono::steady_clock::now();
  const double product_ms = std::chrono::duration<double, std::milli>(loop_done - start).count() / rounds;
  const double prepare_ms = std::chrono::duration<double, std::milli>(prepare_done - loop_done).count() / rounds;
  BOOST_TEST_MESSAGE("four-pairing product (prepared G2): " << product_ms << " ms; prepare_g2: " << prepare_ms
                                                            << " ms");
  std::printf("four-pairing product (prepared G2): %.2f ms; prepare_g2: %.2f ms\n", product_ms, prepare_ms);
  BOOST_CHECK(!sink.is_zero());
}
