// NTTs and the H-polynomial step against @noble/curves: roots of unity, forward, inverse and
// coset transforms over BLS12-381's Fr at 2^1..2^12 (and 2^14) and BN254's at 2^1..2^10,
// compared in full with noble's FFT and at sampled positions with direct evaluation (for the
// small sizes, every position: the naive DFT); both H forms (BLS12-381) against a computation
// without any FFT, and the classic form's two halves (both curves) against the transforms.
#define BOOST_TEST_MODULE math_ntt
#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "math/h_polynomial.hpp"
#include "math/ntt.hpp"
#include "vectors.hpp"

using namespace stagehand::math;
using stagehand::math::test::field_from;
using stagehand::math::test::to_hex;
using stagehand::math::test::vectors;

namespace {

template <class Field = Fr>
std::vector<Field> scalars_from(const nlohmann::json& list) {
  std::vector<Field> values;
  values.reserve(list.size());
  for (const auto& entry : list) values.push_back(field_from<Field>(entry));
  return values;
}

template <class Field>
BasicDomain<Field> domain_for(const std::string& convention, unsigned log_size) {
  if (convention == "snarkjs") return BasicDomain<Field>::snarkjs(log_size);
  if (convention == "classic") return BasicDomain<Field>::classic(log_size);
  throw std::runtime_error("unknown convention " + convention);
}

// Each curve's scalar field, its vectors, and the fewest transform entries they must hold.
struct Bls12_381Scalars : test::Bls12_381Vectors {
  using Field = stagehand::math::Fr;
  static constexpr std::size_t minimum_entries = 24;
};
struct Bn254Scalars : test::Bn254Vectors {
  using Field = bn254::Fr;
  static constexpr std::size_t minimum_entries = 14;
};
using ScalarCases = boost::mpl::list<Bls12_381Scalars, Bn254Scalars>;

// The first differing position, or -1.
template <class Fr>
long first_difference(const std::vector<Fr>& actual, const std::vector<Fr>& expected) {
  if (actual.size() != expected.size()) return 0;
  for (std::size_t index = 0; index < actual.size(); ++index) {
    if (actual[index] != expected[index]) return static_cast<long>(index);
  }
  return -1;
}

// Divides a 4-limb integer by a small one, returning the remainder.
std::uint64_t divide_in_place(Limbs<4>& value, std::uint64_t divisor) {
  detail::Uint128 remainder = 0;
  for (std::size_t index = 4; index-- > 0;) {
    const detail::Uint128 current = (remainder << 64) | value[index];
    value[index] = static_cast<std::uint64_t>(current / divisor);
    remainder = current % divisor;
  }
  return static_cast<std::uint64_t>(remainder);
}

// value·factor, for products known to fit in 4 limbs.
void multiply_in_place(Limbs<4>& value, std::uint64_t factor) {
  detail::Uint128 carry = 0;
  for (auto& limb : value) {
    const detail::Uint128 product = static_cast<detail::Uint128>(limb) * factor + carry;
    limb = static_cast<std::uint64_t>(product);
    carry = product >> 64;
  }
  BOOST_REQUIRE_EQUAL(static_cast<std::uint64_t>(carry), 0u);
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(roots_of_unity_match_noble_and_have_exact_order, Case, ScalarCases) {
  using Fr = typename Case::Field;
  using Domain = BasicDomain<Fr>;
  const auto& constants = Case::section().at("constants");
  for (const auto& [generator, key] : {std::pair{5u, "roots_from_5"}, std::pair{7u, "roots_from_7"}}) {
    const auto& roots = constants.at(key);
    BOOST_REQUIRE_EQUAL(roots.size(), Fr::two_adicity + 1);
    for (unsigned log_size = 0; log_size <= Fr::two_adicity; ++log_size) {
      const Fr expected = field_from<Fr>(roots.at(log_size));
      const Fr root =
          Fr::from_uint64(generator).pow(detail::shift_right(detail::subtract_small(Fr::modulus, 1), log_size));
      BOOST_CHECK_MESSAGE(root == expected, "root of order 2^" << log_size << " from " << generator);
      // Exact order 2^k: squaring k - 1 times gives -1, once more gives 1.
      Fr power = root;
      for (unsigned step = 0; step + 1 < log_size; ++step) power = power.squared();
      if (log_size == 0) {
        BOOST_CHECK(root.is_one());
      } else {
        BOOST_CHECK_MESSAGE(power == -Fr::one(), "order of the root 2^" << log_size << " from " << generator);
      }
      if (log_size >= 1 && log_size <= 12) {
        const Domain domain = Domain::from_group_generator(log_size, Fr::from_uint64(generator), Fr::from_uint64(7));
        BOOST_CHECK(domain.root() == expected);
        BOOST_CHECK(domain.root() * domain.inverse_root() == Fr::one());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(five_and_seven_are_non_residues_and_seven_generates_fr) {
  // 5 and 7 are quadratic non-residues, so their 2-power roots have the full order 2^32.
  BOOST_TEST(!Fr::from_uint64(5).is_square());
  BOOST_TEST(!Fr::from_uint64(7).is_square());
  BOOST_TEST(Fr::from_uint64(4).is_square());
  // 7 generates Fr*: 7^((r-1)/p) != 1 for every prime p dividing r - 1. The factorisation is
  // checked here (the product is r - 1 and every factor is prime), not trusted.
  const std::vector<std::uint64_t> odd_factors = {3,      11,      19,      10177,    125527,    859267,   906349,
                                                  906349, 2508409, 2529403, 52437899, 254760293, 254760293};
  Limbs<4> remaining = detail::subtract_small(Fr::modulus, 1);
  for (int power = 0; power < 32; ++power) BOOST_REQUIRE_EQUAL(divide_in_place(remaining, 2), 0u);
  for (const std::uint64_t factor : odd_factors) BOOST_REQUIRE_EQUAL(divide_in_place(remaining, factor), 0u);
  BOOST_REQUIRE((remaining == Limbs<4>{1, 0, 0, 0}));
  std::vector<std::uint64_t> primes = {2};
  for (const std::uint64_t factor : odd_factors) {
    bool prime = true;
    for (std::uint64_t divisor = 2; divisor * divisor <= factor; ++divisor) prime = prime && factor % divisor != 0;
    BOOST_REQUIRE_MESSAGE(prime, factor << " is prime");
    primes.push_back(factor);
  }
  const Fr seven = Fr::from_uint64(7);
  for (const std::uint64_t prime : primes) {
    Limbs<4> exponent = detail::subtract_small(Fr::modulus, 1);
    divide_in_place(exponent, prime);
    BOOST_CHECK_MESSAGE(!seven.pow(exponent).is_one(), "7^((r-1)/" << prime << ") != 1");
  }
}

BOOST_AUTO_TEST_CASE(five_generates_bn254_fr_and_seven_is_a_non_residue) {
  using bn254::Fr;
  BOOST_TEST(!Fr::from_uint64(5).is_square());
  BOOST_TEST(!Fr::from_uint64(7).is_square());
  BOOST_TEST(Fr::two_adicity == 28u);
  // 5 generates Fr*: 5^((r-1)/p) != 1 for every prime p dividing r - 1 =
  // 2^28·3^2·13·29·983·11003·237073·405928799·1670836401704629·13818364434197438864469338081.
  // The product is checked here; the primality of the two largest factors is taken on trust.
  const Limbs<4> largest = detail::limbs_from_hex<4>("2ca6487cfcd795e8729527e1");
  const std::vector<std::uint64_t> small_factors = {3, 3, 13, 29, 983, 11003, 237073, 405928799, 1670836401704629};
  Limbs<4> remaining = detail::subtract_small(Fr::modulus, 1);
  for (int power = 0; power < 28; ++power) BOOST_REQUIRE_EQUAL(divide_in_place(remaining, 2), 0u);
  for (const std::uint64_t factor : small_factors) BOOST_REQUIRE_EQUAL(divide_in_place(remaining, factor), 0u);
  BOOST_REQUIRE((remaining == largest));
  const Fr five = Fr::from_uint64(5);
  for (const std::uint64_t prime :
       {2ULL, 3ULL, 13ULL, 29ULL, 983ULL, 11003ULL, 237073ULL, 405928799ULL, 1670836401704629ULL}) {
    Limbs<4> exponent = detail::subtract_small(Fr::modulus, 1);
    divide_in_place(exponent, prime);
    BOOST_CHECK_MESSAGE(!five.pow(exponent).is_one(), "5^((r-1)/" << prime << ") != 1");
  }
  // (r - 1)/largest, the exponent for the largest prime, is the product of the others.
  Limbs<4> cofactor{std::uint64_t{1} << 28, 0, 0, 0};
  for (const std::uint64_t factor : small_factors) multiply_in_place(cofactor, factor);
  BOOST_CHECK_MESSAGE(!five.pow(cofactor).is_one(), "5^((r-1)/largest prime) != 1");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(transforms_match_noble_and_direct_evaluation, Case, ScalarCases) {
  using Fr = typename Case::Field;
  using Domain = BasicDomain<Fr>;
  std::size_t entries = 0;
  for (const auto& entry : Case::section().at("ntt_vectors")) {
    const auto log_size = entry.at("log_size").template get<unsigned>();
    const std::string convention = entry.at("convention").template get<std::string>();
    const std::string label = convention + " 2^" + std::to_string(log_size);
    const Domain domain = domain_for<Fr>(convention, log_size);
    BOOST_CHECK_MESSAGE(domain.root() == field_from<Fr>(entry.at("root")), "root " << label);
    BOOST_CHECK_MESSAGE(domain.coset_generator() == field_from<Fr>(entry.at("coset_generator")),
                        "coset generator " << label);

    const std::vector<Fr> coefficients = scalars_from<Fr>(entry.at("coefficients"));
    const std::vector<Fr> values = scalars_from<Fr>(entry.at("values"));
    for (const unsigned threads : {1u, 2u, 3u}) {
      const std::string variant = label + " on " + std::to_string(threads) + " threads";
      std::vector<Fr> evaluations = coefficients;
      ntt(evaluations, domain, threads);
      BOOST_CHECK_MESSAGE(first_difference(evaluations, scalars_from<Fr>(entry.at("evaluations"))) == -1,
                          "ntt " << variant);
      std::vector<Fr> coset_evaluations = coefficients;
      coset_ntt(coset_evaluations, domain, threads);
      std::vector<Fr> interpolated = values;
      intt(interpolated, domain, threads);
      BOOST_CHECK_MESSAGE(first_difference(interpolated, scalars_from<Fr>(entry.at("interpolated"))) == -1,
                          "intt " << variant);
      std::vector<Fr> coset_interpolated = values;
      coset_intt(coset_interpolated, domain, threads);
      if (!entry.at("coset_evaluations").is_null()) {
        BOOST_CHECK_MESSAGE(first_difference(coset_evaluations, scalars_from<Fr>(entry.at("coset_evaluations"))) == -1,
                            "coset_ntt " << variant);
        BOOST_CHECK_MESSAGE(
            first_difference(coset_interpolated, scalars_from<Fr>(entry.at("coset_interpolated"))) == -1,
            "coset_intt " << variant);
      }
      // Direct evaluation (Horner's rule in noble's field) at sampled positions.
      for (const auto& sample : entry.at("samples")) {
        const auto index = sample.at("index").template get<std::size_t>();
        BOOST_CHECK_MESSAGE(evaluations[index] == field_from<Fr>(sample.at("evaluation")),
                            "ntt sample " << index << " " << variant);
        BOOST_CHECK_MESSAGE(coset_evaluations[index] == field_from<Fr>(sample.at("coset_evaluation")),
                            "coset_ntt sample " << index << " " << variant);
        BOOST_CHECK_MESSAGE(interpolated[index] == field_from<Fr>(sample.at("coefficient")),
                            "intt sample " << index << " " << variant);
        BOOST_CHECK_MESSAGE(coset_interpolated[index] == field_from<Fr>(sample.at("coset_coefficient")),
                            "coset_intt sample " << index << " " << variant);
      }
      // And back again.
      intt(evaluations, domain, threads);
      BOOST_CHECK_MESSAGE(first_difference(evaluations, coefficients) == -1, "intt after ntt " << variant);
      coset_intt(coset_evaluations, domain, threads);
      BOOST_CHECK_MESSAGE(first_difference(coset_evaluations, coefficients) == -1,
                          "coset_intt after coset_ntt " << variant);
    }
    ++entries;
  }
  BOOST_TEST(entries >= Case::minimum_entries);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(transforms_match_a_naive_dft, Case, ScalarCases) {
  // Σ_i c_i·x^i at every x of the domain and of its coset, term by term, in this library's field
  // but without any transform: the definition the butterflies must meet.
  using Fr = typename Case::Field;
  std::mt19937_64 generator(20261205);
  for (const std::string convention : {"snarkjs", "classic"}) {
    for (unsigned log_size = 1; log_size <= 6; ++log_size) {
      const BasicDomain<Fr> domain = domain_for<Fr>(convention, log_size);
      std::vector<Fr> coefficients(domain.size());
      for (auto& coefficient : coefficients) coefficient = Fr::from_uint64(generator());
      auto naive = [&](const Fr& shift) {
        std::vector<Fr> evaluations(domain.size(), Fr::zero());
        for (std::size_t j = 0; j < domain.size(); ++j) {
          const Fr x = shift * domain.root().pow(j);
          Fr power = Fr::one();
          for (const Fr& coefficient : coefficients) {
            evaluations[j] += coefficient * power;
            power *= x;
          }
        }
        return evaluations;
      };
      const std::string label = convention + " 2^" + std::to_string(log_size);
      std::vector<Fr> values = coefficients;
      ntt(values, domain, 2);
      BOOST_CHECK_MESSAGE(first_difference(values, naive(Fr::one())) == -1, "ntt against the DFT " << label);
      std::vector<Fr> coset_values = coefficients;
      coset_ntt(coset_values, domain, 2);
      BOOST_CHECK_MESSAGE(first_difference(coset_values, naive(domain.coset_generator())) == -1,
                          "coset_ntt against the DFT " << label);
      intt(values, domain, 2);
      BOOST_CHECK_MESSAGE(first_difference(values, coefficients) == -1, "intt inverts the DFT " << label);
    }
  }
}

BOOST_AUTO_TEST_CASE(domains_check_their_roots_and_sizes) {
  const auto& roots = vectors().at("constants").at("roots_from_5");
  const Fr root_of_eight = field_from<Fr>(roots.at(3));
  const Fr seven = Fr::from_uint64(7);
  // Any primitive root works: ω^3 also has order 8.
  const Domain other_root = Domain::from_root(3, root_of_eight.pow(3), seven);
  BOOST_CHECK(other_root.root() == root_of_eight.pow(3));
  // Roots of the wrong order are refused: ω^2 has order 4, the root of order 16 is not of order 8.
  BOOST_CHECK_THROW(Domain::from_root(3, root_of_eight.squared(), seven), std::invalid_argument);
  BOOST_CHECK_THROW(Domain::from_root(3, field_from<Fr>(roots.at(4)), seven), std::invalid_argument);
  // A coset generator inside the domain would make Z vanish on the coset.
  BOOST_CHECK_THROW(Domain::from_root(3, root_of_eight, root_of_eight), std::invalid_argument);
  BOOST_CHECK_THROW(Domain::from_root(3, root_of_eight, Fr::one()), std::invalid_argument);
  BOOST_CHECK_THROW(Domain::snarkjs(Fr::two_adicity), std::invalid_argument);
  std::vector<Fr> wrong_size(4);
  BOOST_CHECK_THROW(ntt(wrong_size, Domain::snarkjs(3)), std::invalid_argument);
  // Size 1 is the identity.
  std::vector<Fr> single = {Fr::from_uint64(42)};
  ntt(single, Domain::snarkjs(0));
  intt(single, Domain::snarkjs(0));
  BOOST_CHECK(single[0] == Fr::from_uint64(42));
}

BOOST_AUTO_TEST_CASE(h_polynomial_matches_computation_without_fft) {
  std::size_t checked = 0;
  for (const auto& entry : vectors().at("h")) {
    const auto log_size = entry.at("log_size").get<unsigned>();
    const std::string convention = entry.at("convention").get<std::string>();
    const bool satisfied = entry.at("satisfied").get<bool>();
    const std::string label = convention + " 2^" + std::to_string(log_size) + (satisfied ? "" : " unsatisfied");
    const Domain domain = domain_for<Fr>(convention, log_size);
    std::vector<Fr> a = scalars_from(entry.at("a"));
    std::vector<Fr> b = scalars_from(entry.at("b"));
    std::vector<Fr> c = scalars_from(entry.at("c"));
    const std::vector<Fr> expected = scalars_from(entry.at("expected"));
    if (convention == "snarkjs") {
      h_evaluations_snarkjs(a, b, c, domain);
    } else {
      h_coefficients_classic(a, b, c, domain);
      BOOST_CHECK_MESSAGE(a.back().is_zero(), "top coefficient of h is zero " << label);
    }
    const long difference = first_difference(a, expected);
    BOOST_CHECK_MESSAGE(difference == -1, "h " << label << " differs at " << difference);
    ++checked;
  }
  BOOST_TEST(checked >= 19u);
}

BOOST_AUTO_TEST_CASE(h_forms_agree_with_each_other) {
  // On a satisfied instance the snarkjs values are h·Z at x_j = ω_2n^(2j+1), and Z(x_j) =
  // x_j^n - 1 = -2. Compute h with the classic form on the snarkjs roots (coset 7) and compare.
  for (const auto& entry : vectors().at("h")) {
    if (entry.at("convention") != "snarkjs" || !entry.at("satisfied").get<bool>()) continue;
    const auto log_size = entry.at("log_size").get<unsigned>();
    const Domain snarkjs_domain = Domain::snarkjs(log_size);
    const Domain classic_on_snarkjs_roots = Domain::from_root(log_size, snarkjs_domain.root(), Fr::from_uint64(7));
    std::vector<Fr> h = scalars_from(entry.at("a"));
    std::vector<Fr> b = scalars_from(entry.at("b"));
    std::vector<Fr> c = scalars_from(entry.at("c"));
    h_coefficients_classic(h, b, c, classic_on_snarkjs_roots);
    coset_ntt(h, snarkjs_domain);
    const std::vector<Fr> expected = scalars_from(entry.at("expected"));
    const Fr minus_two = -Fr::from_uint64(2);
    for (std::size_t index = 0; index < h.size(); ++index) {
      BOOST_CHECK_MESSAGE(h[index] * minus_two == expected[index], "h·Z at position " << index << " of 2^" << log_size);
    }
  }
}

BOOST_AUTO_TEST_CASE(bn254_h_forms_agree_on_a_satisfied_instance) {
  // BN254's two H forms (no noble vectors for them): with c = a∘b on the domain, the classic h has
  // a zero top coefficient and, evaluated on the snarkjs coset, times Z(x_j) = -2 gives the
  // snarkjs values; an unsatisfied c leaves the top coefficient non-zero.
  using bn254::Fr;
  constexpr unsigned log_size = 4;
  const auto snarkjs_domain = bn254::Domain::snarkjs(log_size);
  const auto classic_on_snarkjs_roots = bn254::Domain::from_root(log_size, snarkjs_domain.root(), Fr::from_uint64(7));
  std::vector<Fr> a, b, c;
  for (std::uint64_t i = 0; i < (1u << log_size); ++i) {
    a.push_back(Fr::from_uint64(3 * i + 1).pow(5));
    b.push_back(Fr::from_uint64(7 * i + 2).pow(3));
    c.push_back(a.back() * b.back());
  }
  std::vector<Fr> snarkjs_a = a, snarkjs_b = b, snarkjs_c = c;
  bn254::h_evaluations_snarkjs(snarkjs_a, snarkjs_b, snarkjs_c, snarkjs_domain);
  std::vector<Fr> h = a, classic_b = b, classic_c = c;
  bn254::h_coefficients_classic(h, classic_b, classic_c, classic_on_snarkjs_roots);
  BOOST_CHECK(h.back().is_zero());
  bn254::coset_ntt(h, snarkjs_domain);
  const Fr minus_two = -Fr::from_uint64(2);
  for (std::size_t index = 0; index < h.size(); ++index) {
    BOOST_CHECK_MESSAGE(h[index] * minus_two == snarkjs_a[index], "BN254 h·Z at position " << index);
  }
  c[3] += Fr::one();
  bn254::h_coefficients_classic(a, b, c, classic_on_snarkjs_roots);
  BOOST_CHECK(!a.back().is_zero());
}

BOOST_AUTO_TEST_CASE_TEMPLATE(classic_h_halves_are_the_product_on_the_coset_then_the_quotient, Case, ScalarCases) {
  // Against transforms called directly: h_classic_product leaves A·B on the coset in a and B on the
  // coset in b; h_classic_finish then leaves h with h·Z = A·B − C on the coset and C on the coset in
  // c. Together they give h_coefficients_classic's a byte for byte (montgomery limbs compared).
  using Fr = typename Case::Field;
  std::mt19937_64 generator(20261205);
  for (const unsigned log_size : {1u, 3u, 6u}) {
    const BasicDomain<Fr> domain = BasicDomain<Fr>::classic(log_size);
    const std::string label = "2^" + std::to_string(log_size);
    const auto random_values = [&] {
      std::vector<Fr> values(domain.size());
      for (auto& value : values) value = Fr::from_uint64(generator()) * Fr::from_uint64(generator()).pow(3);
      return values;
    };
    const auto on_coset = [&](std::vector<Fr> values) {
      intt(values, domain);
      coset_ntt(values, domain);
      return values;
    };
    const std::vector<Fr> a = random_values(), b = random_values(), c = random_values();
    const std::vector<Fr> a_coset = on_coset(a), b_coset = on_coset(b), c_coset = on_coset(c);
    std::vector<Fr> h = a, product_b = b, finish_c = c;
    h_classic_product(h, product_b, domain);
    BOOST_CHECK_MESSAGE(first_difference(product_b, b_coset) == -1, "b on the coset " << label);
    const Fr vanishing = domain.coset_generator().pow(domain.size()) - Fr::one();
    for (std::size_t j = 0; j < h.size(); ++j) {
      BOOST_CHECK_MESSAGE(h[j] == a_coset[j] * b_coset[j], "A·B at " << j << " of " << label);
    }
    h_classic_finish(h, finish_c, domain);
    BOOST_CHECK_MESSAGE(first_difference(finish_c, c_coset) == -1, "c on the coset " << label);
    std::vector<Fr> h_coset = h;
    coset_ntt(h_coset, domain);
    for (std::size_t j = 0; j < h.size(); ++j) {
      BOOST_CHECK_MESSAGE(h_coset[j] * vanishing == a_coset[j] * b_coset[j] - c_coset[j],
                          "h·Z at " << j << " of " << label);
    }
    std::vector<Fr> whole_a = a, whole_b = b, whole_c = c;
    h_coefficients_classic(whole_a, whole_b, whole_c, domain);
    for (std::size_t j = 0; j < h.size(); ++j) {
      BOOST_CHECK_MESSAGE(h[j].montgomery_limbs() == whole_a[j].montgomery_limbs(),
                          "whole form at " << j << " of " << label);
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(classic_h_halves_refuse_a_wrong_size_before_writing, Case, ScalarCases) {
  using Fr = typename Case::Field;
  const BasicDomain<Fr> domain = BasicDomain<Fr>::classic(3);
  std::vector<Fr> a(8, Fr::from_uint64(5)), b(8, Fr::from_uint64(6)), short_b(4), short_c(4), long_c(16);
  const std::vector<Fr> a_before = a;
  BOOST_CHECK_THROW(h_classic_product(a, short_b, domain), std::invalid_argument);
  BOOST_CHECK_THROW(h_classic_product(short_b, b, domain), std::invalid_argument);
  BOOST_CHECK_THROW(h_classic_finish(a, short_c, domain), std::invalid_argument);
  BOOST_CHECK_THROW(h_classic_finish(a, long_c, domain), std::invalid_argument);
  BOOST_CHECK(first_difference(a, a_before) == -1);
  try {
    h_classic_finish(a, short_c, domain);
  } catch (const std::invalid_argument& error) {
    BOOST_TEST(std::string(error.what()).starts_with("h_classic_finish: "), error.what());
  }
  // The whole form checks all three before it writes any: a bad c leaves a and b as they were.
  BOOST_CHECK_THROW(h_coefficients_classic(a, b, short_c, domain), std::invalid_argument);
  BOOST_CHECK(first_difference(a, a_before) == -1);
}

BOOST_AUTO_TEST_CASE(h_evaluations_snarkjs_requires_a_snarkjs_coset) {
  std::vector<Fr> a(8), b(8), c(8);
  BOOST_CHECK_THROW(h_evaluations_snarkjs(a, b, c, Domain::classic(3)), std::invalid_argument);
  std::vector<Fr> short_c(4);
  BOOST_CHECK_THROW(h_evaluations_snarkjs(a, b, short_c, Domain::snarkjs(3)), std::invalid_argument);
}
