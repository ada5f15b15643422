// The fixed-base kernels' arithmetic (cuda/kernels/setup/fixed_base.cuh) compiled for the host
// through field.cuh's carry-flag emulation, against src/math's double-and-add (an independent
// multiplication: 4-bit windows over the generator, no table). Needs no GPU (label unit): the
// per-thread code of setup_fixed_base_g1/_g2 is checked here before any device time is spent.
#define BOOST_TEST_MODULE fixed_base_host
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "groth16/fixed_base.hpp"
#include "point_encoding.hpp"
#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"
#include "setup/fixed_base.cuh"

using namespace stagehand;
namespace fb = stagehand::cuda::fixed_base;

namespace {

using check_encoding::put;

// The kernel's group and the reference's types side by side.
template <class C>
struct Reference;
template <>
struct Reference<fb::G1> {
  using Curve = math::G1Curve;
};
template <>
struct Reference<fb::G2> {
  using Curve = math::G2Curve;
};
using Bn254G1 = fb::Group<cuda::Bn254Curve, false>;
using Bn254G2 = fb::Group<cuda::Bn254Curve, true>;
template <>
struct Reference<Bn254G1> {
  using Curve = math::bn254::G1Curve;
};
template <>
struct Reference<Bn254G2> {
  using Curve = math::bn254::G2Curve;
};

// Canonical values that stress the digits: zero, one, r - 1, r - 2, every single window alone
// (2^(8w)), every digit 255 below the top window (2^248 - 1), the top window alone (r's top byte).
template <class Fr = math::Fr>
std::vector<Fr> edge_scalars() {
  std::vector<Fr> scalars{Fr::zero(),           Fr::one(),           -Fr::one(), -Fr::from_uint64(2),
                          Fr::from_uint64(255), Fr::from_uint64(256)};
  Fr power = Fr::one();
  for (int w = 0; w < 32; ++w) {
    scalars.push_back(power);
    power *= Fr::from_uint64(256);
  }
  math::Limbs<4> below_top{~0ull, ~0ull, ~0ull, (1ull << 56) - 1};
  scalars.push_back(*Fr::from_canonical_limbs(below_top));
  scalars.push_back(*Fr::from_canonical_limbs(math::Limbs<4>{0, 0, 0, Fr::modulus[3] >> 56 << 56}));
  return scalars;
}

template <class Fr = math::Fr>
std::vector<Fr> random_scalars(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<Fr> scalars;
  while (scalars.size() < count) {
    math::Limbs<4> limbs{engine(), engine(), engine(), engine() >> 1};
    if (auto value = Fr::from_canonical_limbs(limbs)) scalars.push_back(*value);  // nullopt when >= r
  }
  return scalars;
}

// multiply_point for each scalar over the encoded table, every output compared byte for byte
// with the reference's encoding.
template <class C>
void check_against_reference(const std::vector<typename Reference<C>::Curve::ScalarField>& scalars) {
  using Curve = typename Reference<C>::Curve;
  const groth16::FixedBase<Curve> base(Curve::generator());
  std::vector<std::uint8_t> table(groth16::kFixedBaseEntries * C::kPointBytes, 0xff);
  for (std::size_t e = 0; e < groth16::kFixedBaseEntries; ++e) put(base.table()[e], table.data() + e * C::kPointBytes);
  const auto generator = math::ProjectivePoint<Curve>::from_affine(Curve::generator());
  alignas(16) std::uint8_t scalar[32];
  alignas(16) std::uint8_t got[C::kPointBytes];
  std::uint8_t expected[C::kPointBytes];
  for (std::size_t i = 0; i < scalars.size(); ++i) {
    std::memcpy(scalar, scalars[i].montgomery_limbs().data(), 32);
    std::memset(got, 0xff, sizeof got);  // never a reduced coordinate
    fb::multiply_point<C>(table.data(), scalar, got);
    put(generator.multiply(scalars[i]).to_affine(), expected);
    BOOST_TEST_CONTEXT("scalar " << i << " = " << scalars[i].to_decimal()) {
      BOOST_TEST(std::memcmp(got, expected, sizeof got) == 0);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(g1_points_equal_the_reference_multiplication) {
  check_against_reference<fb::G1>(edge_scalars());
  check_against_reference<fb::G1>(random_scalars(200, 1));
}

BOOST_AUTO_TEST_CASE(g2_points_equal_the_reference_multiplication) {
  check_against_reference<fb::G2>(edge_scalars());
  check_against_reference<fb::G2>(random_scalars(60, 2));
}

// BN254's instances of the same code, over tables of the reference's own fixed base.
BOOST_AUTO_TEST_CASE(bn254_points_equal_the_reference_multiplication) {
  using Fr = math::bn254::Fr;
  static_assert(Bn254G1::kPointBytes == 64 && Bn254G2::kPointBytes == 128);
  check_against_reference<Bn254G1>(edge_scalars<Fr>());
  check_against_reference<Bn254G1>(random_scalars<Fr>(200, 4));
  check_against_reference<Bn254G2>(edge_scalars<Fr>());
  check_against_reference<Bn254G2>(random_scalars<Fr>(60, 5));
}

BOOST_AUTO_TEST_CASE(the_digits_are_the_canonical_bytes) {
  for (const auto& value : random_scalars(20, 3)) {
    cuda::Fr words;
    std::memcpy(words.w, value.to_canonical_limbs().data(), 32);
    const auto bytes = value.to_canonical_bytes();
    for (int w = 0; w < 32; ++w) BOOST_TEST(fb::digit(words, w) == bytes[w]);
  }
}

// A zeroed table entry is the point at infinity: the sum skips it (so an all-zero table gives
// infinity for every scalar, all zeros out).
BOOST_AUTO_TEST_CASE(zero_entries_count_as_infinity) {
  std::vector<std::uint8_t> table(groth16::kFixedBaseEntries * 96, 0);
  alignas(16) std::uint8_t scalar[32];
  alignas(16) std::uint8_t got[96];
  std::memcpy(scalar, (-math::Fr::one()).montgomery_limbs().data(), 32);
  std::memset(got, 0xff, sizeof got);
  fb::multiply_point<fb::G1>(table.data(), scalar, got);
  for (std::uint8_t byte : got) BOOST_TEST(byte == 0);
}
