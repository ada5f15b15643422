// Fr, Fq and Fq2 of BLS12-381 and BN254 against @noble/curves: constants, arithmetic, square
// roots and encodings.
#define BOOST_TEST_MODULE math_field
#include <boost/mpl/list.hpp>
#include <boost/test/unit_test.hpp>

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "math/bn254.hpp"
#include "math/fq.hpp"
#include "math/fq2.hpp"
#include "math/fr.hpp"
#include "vectors.hpp"

using namespace stagehand::math;
using stagehand::math::test::field_from;
using stagehand::math::test::fq2_from;
using stagehand::math::test::limbs_from;
using stagehand::math::test::to_hex;
using stagehand::math::test::vectors;

namespace {

template <class CurveVectors, class PrimeField, const char* Key>
struct FieldCase : CurveVectors {
  using Field = PrimeField;
  static constexpr const char* key = Key;
};
constexpr char fr_key[] = "fr";
constexpr char fq_key[] = "fq";
using FrCase = FieldCase<test::Bls12_381Vectors, Fr, fr_key>;
using FqCase = FieldCase<test::Bls12_381Vectors, Fq, fq_key>;
using Bn254FrCase = FieldCase<test::Bn254Vectors, bn254::Fr, fr_key>;
using Bn254FqCase = FieldCase<test::Bn254Vectors, bn254::Fq, fq_key>;
using PrimeFieldCases = boost::mpl::list<FrCase, FqCase, Bn254FrCase, Bn254FqCase>;

// Each curve's fields and the sizes the vectors must show.
struct Bls12_381Fields : test::Bls12_381Vectors {
  using Fr = stagehand::math::Fr;
  using Fq = stagehand::math::Fq;
  static constexpr std::size_t fr_bits = 255, fq_bits = 381;
};
struct Bn254Fields : test::Bn254Vectors {
  using Fr = bn254::Fr;
  using Fq = bn254::Fq;
  static constexpr std::size_t fr_bits = 254, fq_bits = 254;
};
using CurveFieldCases = boost::mpl::list<Bls12_381Fields, Bn254Fields>;

template <class Field>
std::span<const std::uint8_t, Field::byte_count> as_span(const std::array<std::uint8_t, Field::byte_count>& bytes) {
  return std::span<const std::uint8_t, Field::byte_count>(bytes);
}

template <class Field>
std::array<std::uint8_t, Field::byte_count> bytes_of(const typename Field::LimbArray& limbs) {
  std::array<std::uint8_t, Field::byte_count> bytes{};
  for (std::size_t index = 0; index < bytes.size(); ++index)
    bytes[index] = static_cast<std::uint8_t>(limbs[index / 8] >> (8 * (index % 8)));
  return bytes;
}

// The multiplication implementations to check: the portable C++ always, and the x86-64
// mulx/adx assembly where this CPU has it. The fixture restores the startup choice.
std::vector<bool> multiplication_backends() {
  std::vector<bool> backends = {false};
#if STAGEHAND_MATH_HAVE_ASSEMBLY
  if (detail::cpu_has_mulx_and_adx()) backends.push_back(true);
#endif
  return backends;
}

void use_assembly_multiplication(bool enabled) {
#if STAGEHAND_MATH_HAVE_ASSEMBLY
  detail::assembly_multiplication_enabled = enabled;
#else
  (void)enabled;
#endif
}

struct RestoreMultiplicationBackend {
#if STAGEHAND_MATH_HAVE_ASSEMBLY
  bool saved = detail::assembly_multiplication_enabled;
  ~RestoreMultiplicationBackend() { detail::assembly_multiplication_enabled = saved; }
#endif
};

const char* backend_name(bool assembly) { return assembly ? "mulx/adx assembly" : "portable C++"; }

}  // namespace

BOOST_AUTO_TEST_CASE(assembly_and_portable_multiplication_agree) {
  // Random operands, and operands next to the modulus where the final subtraction and the
  // carries are decided. Each backend is checked against noble below; this adds volume.
  RestoreMultiplicationBackend restore;
  const auto backends = multiplication_backends();
  BOOST_TEST_MESSAGE("multiplication backends on this CPU: " << backends.size());
  std::mt19937_64 generator(20261129);
  auto check_field = [&](auto field_tag) {
    using Field = decltype(field_tag);
    for (int round = 0; round < 20000; ++round) {
      typename Field::LimbArray a_limbs{};
      typename Field::LimbArray b_limbs{};
      for (auto& limb : a_limbs) limb = generator();
      for (auto& limb : b_limbs) limb = generator();
      const std::uint64_t top_mask = (std::uint64_t{1} << ((Field::modulus_bit_count - 1) % 64)) - 1;
      a_limbs.back() &= top_mask;
      b_limbs.back() &= top_mask;
      if (round % 3 == 0) a_limbs = detail::subtract_small(Field::modulus, 1 + generator() % 4);
      if (round % 5 == 0) b_limbs = detail::subtract_small(Field::modulus, 1 + generator() % 4);
      const Field a = *Field::from_montgomery_limbs(a_limbs);
      const Field b = *Field::from_montgomery_limbs(b_limbs);
      std::vector<Field> products;
      for (const bool assembly : backends) {
        use_assembly_multiplication(assembly);
        products.push_back(a * b);
      }
      for (const Field& product : products) BOOST_REQUIRE(product == products.front());
    }
  };
  check_field(Fr{});
  check_field(Fq{});
  // BN254's 4-limb Fq leaves two top bits free: the no-carry products must hold there too.
  check_field(bn254::Fr{});
  check_field(bn254::Fq{});
}

BOOST_AUTO_TEST_CASE_TEMPLATE(constants_match_noble, Case, CurveFieldCases) {
  using Fr = typename Case::Fr;
  using Fq = typename Case::Fq;
  const auto& constants = Case::section().at("constants");
  BOOST_TEST((Fr::modulus == limbs_from<Fr>(constants.at("fr_modulus"))));
  BOOST_TEST((Fq::modulus == limbs_from<Fq>(constants.at("fq_modulus"))));
  // Derived Montgomery constants: R mod p is the Montgomery form of one, R^2 mod p converts in.
  BOOST_TEST((Fr::one().montgomery_limbs() == limbs_from<Fr>(constants.at("fr_montgomery_r"))));
  BOOST_TEST(
      (Fr::montgomery_constants.r_squared_mod_modulus == limbs_from<Fr>(constants.at("fr_montgomery_r_squared"))));
  BOOST_TEST((Fq::one().montgomery_limbs() == limbs_from<Fq>(constants.at("fq_montgomery_r"))));
  BOOST_TEST(
      (Fq::montgomery_constants.r_squared_mod_modulus == limbs_from<Fq>(constants.at("fq_montgomery_r_squared"))));
  // -p^-1 mod 2^64 times p is -1 mod 2^64.
  BOOST_TEST(Fr::montgomery_constants.negative_modulus_inverse * Fr::modulus[0] == ~std::uint64_t{0});
  BOOST_TEST(Fq::montgomery_constants.negative_modulus_inverse * Fq::modulus[0] == ~std::uint64_t{0});
  BOOST_TEST(Fr::two_adicity == constants.at("fr_two_adicity").template get<unsigned>());
  BOOST_TEST(Fr::modulus_bit_count == Case::fr_bits);
  BOOST_TEST(Fq::modulus_bit_count == Case::fq_bits);
}

BOOST_AUTO_TEST_CASE(bn254_sizes_are_the_documented_ones) {
  BOOST_TEST(bn254::Fr::two_adicity == 28u);
  BOOST_TEST(bn254::Fq::limb_count == 4u);
  BOOST_TEST(bn254::Fr::limb_count == 4u);
}

template <class Field>
std::size_t check_prime_field_arithmetic(const nlohmann::json& section) {
  std::size_t checked = 0;
  for (const auto& entry : section.at("binary")) {
    const Field a = field_from<Field>(entry.at("a"));
    const Field b = field_from<Field>(entry.at("b"));
    BOOST_CHECK_MESSAGE(a + b == field_from<Field>(entry.at("sum")), "sum of " << to_hex(a) << " and " << to_hex(b));
    BOOST_CHECK_MESSAGE(a - b == field_from<Field>(entry.at("difference")),
                        "difference of " << to_hex(a) << " and " << to_hex(b));
    BOOST_CHECK_MESSAGE(a * b == field_from<Field>(entry.at("product")),
                        "product of " << to_hex(a) << " and " << to_hex(b));
    Field accumulated = a;
    accumulated *= b;
    BOOST_CHECK(accumulated == a * b);
    ++checked;
  }
  for (const auto& entry : section.at("unary")) {
    const Field a = field_from<Field>(entry.at("a"));
    BOOST_CHECK_MESSAGE(a.squared() == field_from<Field>(entry.at("square")), "square of " << to_hex(a));
    BOOST_CHECK_MESSAGE(a.doubled() == a + a, "double of " << to_hex(a));
    BOOST_CHECK_MESSAGE(-a == field_from<Field>(entry.at("negation")), "negation of " << to_hex(a));
    if (entry.at("inverse").is_null()) {
      BOOST_CHECK_MESSAGE(a.is_zero() && a.inverse().is_zero(), "zero inverts to zero");
    } else {
      BOOST_CHECK_MESSAGE(a.inverse() == field_from<Field>(entry.at("inverse")), "inverse of " << to_hex(a));
    }
    const std::vector<std::uint8_t> exponent_bytes =
        test::little_endian_bytes_from_hex(entry.at("exponent").template get<std::string>(), 32);
    Limbs<4> exponent{};
    for (std::size_t index = 0; index < 32; ++index)
      exponent[index / 8] |= std::uint64_t{exponent_bytes[index]} << (8 * (index % 8));
    BOOST_CHECK_MESSAGE(a.pow(exponent) == field_from<Field>(entry.at("power")), "power of " << to_hex(a));
    ++checked;
  }
  return checked;
}

BOOST_AUTO_TEST_CASE_TEMPLATE(prime_field_arithmetic_matches_noble, Case, PrimeFieldCases) {
  RestoreMultiplicationBackend restore;
  for (const bool assembly : multiplication_backends()) {
    use_assembly_multiplication(assembly);
    BOOST_TEST_CONTEXT("multiplication: " << backend_name(assembly)) {
      BOOST_TEST(check_prime_field_arithmetic<typename Case::Field>(Case::section().at(Case::key)) > 100u);
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(prime_field_square_roots_match_noble, Case, PrimeFieldCases) {
  using Field = typename Case::Field;
  std::size_t residues = 0;
  std::size_t non_residues = 0;
  for (const auto& entry : Case::section().at(Case::key).at("unary")) {
    const Field a = field_from<Field>(entry.at("a"));
    const bool expected_square = entry.at("is_square").template get<bool>();
    BOOST_CHECK_MESSAGE(a.is_square() == expected_square, "is_square of " << to_hex(a));
    const auto root = a.sqrt();
    BOOST_CHECK_MESSAGE(root.has_value() == expected_square, "sqrt existence for " << to_hex(a));
    if (expected_square && root) {
      // Either root is correct; noble promises a particular one, this library does not.
      const Field noble_root = field_from<Field>(entry.at("sqrt"));
      BOOST_CHECK_MESSAGE(*root == noble_root || *root == -noble_root, "sqrt of " << to_hex(a));
      BOOST_CHECK(root->squared() == a);
    }
    (expected_square ? residues : non_residues)++;
  }
  BOOST_TEST(residues > 10u);
  BOOST_TEST(non_residues > 10u);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(prime_field_encodings_match_noble, Case, PrimeFieldCases) {
  using Field = typename Case::Field;
  for (const auto& entry : Case::section().at(Case::key).at("unary")) {
    const Field a = field_from<Field>(entry.at("a"));
    const std::string decimal = entry.at("decimal").template get<std::string>();
    BOOST_CHECK_EQUAL(a.to_decimal(), decimal);
    const auto parsed = Field::from_decimal(decimal);
    BOOST_CHECK_MESSAGE(parsed && *parsed == a, "from_decimal " << decimal);

    // snarkjs's encodings: value·R (Fq coordinates, Fr Montgomery form) and value·R^2 (.zkey
    // coefficients), as noble computes them.
    const auto montgomery = limbs_from<Field>(entry.at("montgomery"));
    BOOST_CHECK_MESSAGE(a.montgomery_limbs() == montgomery, "Montgomery limbs of " << to_hex(a));
    const auto montgomery_bytes = bytes_of<Field>(montgomery);
    BOOST_CHECK(a.to_montgomery_bytes() == montgomery_bytes);
    const auto from_montgomery = Field::from_montgomery_bytes(as_span<Field>(montgomery_bytes));
    BOOST_CHECK(from_montgomery && *from_montgomery == a);
    const auto double_montgomery = bytes_of<Field>(limbs_from<Field>(entry.at("double_montgomery")));
    const auto from_double = Field::from_double_montgomery_bytes(as_span<Field>(double_montgomery));
    BOOST_CHECK_MESSAGE(from_double && *from_double == a, "double Montgomery decoding of " << to_hex(a));

    const auto canonical = a.to_canonical_bytes();
    const auto round_trip = Field::from_canonical_bytes(as_span<Field>(canonical));
    BOOST_CHECK(round_trip && *round_trip == a);
  }

  // Encodings at or above the modulus are rejected, not reduced.
  const auto modulus_bytes = bytes_of<Field>(Field::modulus);
  BOOST_CHECK(!Field::from_canonical_bytes(as_span<Field>(modulus_bytes)));
  BOOST_CHECK(!Field::from_montgomery_bytes(as_span<Field>(modulus_bytes)));
  BOOST_CHECK(!Field::from_double_montgomery_bytes(as_span<Field>(modulus_bytes)));
  std::array<std::uint8_t, Field::byte_count> all_ones{};
  all_ones.fill(0xff);
  BOOST_CHECK(!Field::from_canonical_bytes(as_span<Field>(all_ones)));
  const std::string modulus_decimal = (-Field::one()).to_decimal();
  std::string modulus_text = modulus_decimal;
  modulus_text.back() = static_cast<char>(modulus_text.back() + 1);  // p - 1 ends in an even digit
  BOOST_CHECK(!Field::from_decimal(modulus_text));
  BOOST_CHECK(!Field::from_decimal(""));
  BOOST_CHECK(!Field::from_decimal("-1"));
  BOOST_CHECK(!Field::from_decimal("12a"));
  BOOST_CHECK(!Field::from_decimal(std::string(200, '9')));
  BOOST_CHECK(Field::from_decimal("0007") == Field::from_uint64(7));
}

using Fq2Cases = boost::mpl::list<Bls12_381Fields, Bn254Fields>;

template <class Fq2Type>
void check_fq2_arithmetic(const nlohmann::json& section) {
  for (const auto& entry : section.at("binary")) {
    const Fq2Type a = fq2_from<Fq2Type>(entry.at("a"));
    const Fq2Type b = fq2_from<Fq2Type>(entry.at("b"));
    BOOST_CHECK_MESSAGE(a + b == fq2_from<Fq2Type>(entry.at("sum")), "sum of " << to_hex(a) << " and " << to_hex(b));
    BOOST_CHECK_MESSAGE(a - b == fq2_from<Fq2Type>(entry.at("difference")),
                        "difference of " << to_hex(a) << " and " << to_hex(b));
    BOOST_CHECK_MESSAGE(a * b == fq2_from<Fq2Type>(entry.at("product")),
                        "product of " << to_hex(a) << " and " << to_hex(b));
  }
  for (const auto& entry : section.at("unary")) {
    const Fq2Type a = fq2_from<Fq2Type>(entry.at("a"));
    BOOST_CHECK_MESSAGE(a.squared() == fq2_from<Fq2Type>(entry.at("square")), "square of " << to_hex(a));
    BOOST_CHECK_MESSAGE(-a == fq2_from<Fq2Type>(entry.at("negation")), "negation of " << to_hex(a));
    if (entry.at("inverse").is_null()) {
      BOOST_CHECK(a.is_zero() && a.inverse().is_zero());
    } else {
      BOOST_CHECK_MESSAGE(a.inverse() == fq2_from<Fq2Type>(entry.at("inverse")), "inverse of " << to_hex(a));
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(fq2_arithmetic_matches_noble, Case, Fq2Cases) {
  using Fq2Type = BasicFq2<typename Case::Fq>;
  const auto& section = Case::section().at("fq2");
  BOOST_TEST(section.at("unary").size() > 50u);
  RestoreMultiplicationBackend restore;
  for (const bool assembly : multiplication_backends()) {
    use_assembly_multiplication(assembly);
    BOOST_TEST_CONTEXT("multiplication: " << backend_name(assembly)) { check_fq2_arithmetic<Fq2Type>(section); }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(fq2_square_roots_match_noble, Case, Fq2Cases) {
  using Fq2Type = BasicFq2<typename Case::Fq>;
  std::size_t residues = 0;
  std::size_t non_residues = 0;
  for (const auto& entry : Case::section().at("fq2").at("unary")) {
    const Fq2Type a = fq2_from<Fq2Type>(entry.at("a"));
    const bool expected_square = entry.at("is_square").template get<bool>();
    BOOST_CHECK_MESSAGE(a.is_square() == expected_square, "is_square of " << to_hex(a));
    const auto root = a.sqrt();
    BOOST_CHECK_MESSAGE(root.has_value() == expected_square, "sqrt existence for " << to_hex(a));
    if (expected_square && root) {
      const Fq2Type noble_root = fq2_from<Fq2Type>(entry.at("sqrt"));
      BOOST_CHECK_MESSAGE(*root == noble_root || *root == -noble_root, "sqrt of " << to_hex(a));
    }
    (expected_square ? residues : non_residues)++;
  }
  BOOST_TEST(residues > 10u);
  BOOST_TEST(non_residues > 10u);
}
