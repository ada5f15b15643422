// The kernels' field and curve arithmetic (cuda/kernels/field.cuh, curve.cuh), compiled for the
// host through their carry-flag emulation, against the CPU reference. Needs no GPU (label unit):
// a wrong carry chain or constant shows up here before any device time is spent.
#define BOOST_TEST_MODULE kernel_field_host
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <random>

#include "ec/curve.cuh"
#include "ec/g2.cuh"
#include "math/fq.hpp"
#include "math/fq2.hpp"
#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"

using namespace stagehand;

namespace {

template <class Device, class Reference>
Device to_device(const Reference& value) {
  Device d;
  std::memcpy(d.w, value.montgomery_limbs().data(), sizeof(d.w));
  return d;
}

template <class Device, class Reference>
bool same(const Device& d, const Reference& value) {
  return std::memcmp(d.w, value.montgomery_limbs().data(), sizeof(d.w)) == 0;
}

template <class Reference>
Reference random_element(std::mt19937_64& engine) {
  for (;;) {
    typename Reference::LimbArray limbs;
    for (auto& limb : limbs) limb = engine();
    limbs[Reference::limb_count - 1] >>= 1;
    if (auto value = Reference::from_montgomery_limbs(limbs)) return *value;
  }
}

template <class Device, class Reference>
void check_field() {
  std::mt19937_64 engine(7);
  const Reference specials[] = {Reference::zero(), Reference::one(), -Reference::one(), Reference::from_uint64(2)};
  for (int i = 0; i < 20000; ++i) {
    const Reference a = i < 16 ? specials[i % 4] : random_element<Reference>(engine);
    const Reference b = i < 16 ? specials[i / 4] : random_element<Reference>(engine);
    const Device da = to_device<Device>(a), db = to_device<Device>(b);
    BOOST_REQUIRE(same(da * db, a * b));
    BOOST_REQUIRE(same(da.squared(), a * a));
    BOOST_REQUIRE(same(Device::multiply_narrow(da, db), a * b));
    BOOST_REQUIRE(same(da + db, a + b));
    BOOST_REQUIRE(same(da - db, a - b));
    BOOST_REQUIRE(same(-da, -a));
  }
  const Reference a = random_element<Reference>(engine);
  BOOST_TEST(same(to_device<Device>(a).inverse(), a.inverse()));
  BOOST_TEST(same(Device::one(), Reference::one()));
}

cuda::Fq fq(const math::Fq& value) { return to_device<cuda::Fq>(value); }

math::G1Projective reference_of(const cuda::G1Xyzz& point) {
  const cuda::G1Jacobian j = point.to_jacobian();
  math::G1Projective p;
  math::Limbs<6> limbs;
  std::memcpy(limbs.data(), j.x.w, 48);
  p.x = *math::Fq::from_montgomery_limbs(limbs);
  std::memcpy(limbs.data(), j.y.w, 48);
  p.y = *math::Fq::from_montgomery_limbs(limbs);
  std::memcpy(limbs.data(), j.z.w, 48);
  p.z = *math::Fq::from_montgomery_limbs(limbs);
  return p;
}

}  // namespace

BOOST_AUTO_TEST_CASE(fr_matches_reference) { check_field<cuda::Fr, math::Fr>(); }
BOOST_AUTO_TEST_CASE(fq_matches_reference) { check_field<cuda::Fq, math::Fq>(); }
// The FP64-product multiplication's integer side (columns, biases, quotients, carries), with the
// products split on the host as the device's FMAs split them (field_f64.cuh).
BOOST_AUTO_TEST_CASE(fq_with_f64_products_matches_reference) { check_field<cuda::FqF64, math::Fq>(); }
// The form whose products are calls on the device (the G2 item sums' FqCalled).
BOOST_AUTO_TEST_CASE(fq_with_called_products_matches_reference) {
  check_field<cuda::FqCalled, math::Fq>();
  check_field<cuda::FqF64Called, math::Fq>();
}
// Fr's FP64 form: 52-bit limbs and a last quotient of 48 bits (R = 2^256).
BOOST_AUTO_TEST_CASE(fr_with_f64_products_matches_reference) { check_field<cuda::FrF64, math::Fr>(); }
// A factor given as its FP64 limbs (the NTT's twiddles) multiplies as its words do.
BOOST_AUTO_TEST_CASE(fr_factor_limbs_multiply_as_words) {
  std::mt19937_64 engine(11);
  for (int i = 0; i < 2000; ++i) {
    const auto a = to_device<cuda::FrF64>(random_element<math::Fr>(engine));
    const auto b = to_device<cuda::FrF64>(random_element<math::Fr>(engine));
    double limbs[cuda::FrF64Params::F64::limbs];
    cuda::f64::factor_limbs<cuda::FrF64Params>(b.w, limbs);
    cuda::FrF64 from_words, from_limbs;
    cuda::f64::montgomery_multiply<cuda::FrF64Params>(a.w, b.w, from_words.w);
    cuda::f64::montgomery_multiply_limbs<cuda::FrF64Params>(a.w, limbs, from_limbs.w);
    BOOST_REQUIRE(from_words == from_limbs);
    from_words.reduce_once();
    BOOST_REQUIRE(from_words == a * b);
  }
}

BOOST_AUTO_TEST_CASE(xyzz_formulas_match_reference) {
  const auto generator = math::G1Projective::from_affine(math::G1Curve::generator());
  std::vector<math::G1Affine> points;
  for (std::uint64_t i = 1; i <= 12; ++i)
    points.push_back(generator.multiply(math::Fr::from_uint64(977 * i * i + 3)).to_affine());
  cuda::G1Xyzz sum = cuda::G1Xyzz::infinity();
  math::G1Projective expected = math::G1Projective::identity();
  for (const auto& point : points) {
    sum.add_affine(fq(point.x), fq(point.y));
    expected += point;
    BOOST_REQUIRE(reference_of(sum) == expected);
  }
  cuda::G1Xyzz twice = cuda::G1Xyzz::from_affine(fq(points[0].x), fq(points[0].y));
  twice.add_affine(fq(points[0].x), fq(points[0].y));
  BOOST_TEST((reference_of(twice) == math::G1Projective::from_affine(points[0]).doubled()));
  cuda::G1Xyzz cancelled = cuda::G1Xyzz::from_affine(fq(points[0].x), fq(points[0].y));
  cancelled.add_affine(fq(points[0].x), fq((-points[0]).y));
  BOOST_TEST(cancelled.is_infinity());
  BOOST_TEST((reference_of(sum + sum) == expected.doubled()));
  BOOST_TEST((sum + (-sum)).is_infinity());
  BOOST_TEST((reference_of(sum.doubled()) == expected.doubled()));
  BOOST_TEST((reference_of(sum.times(123457)) == expected.multiply(math::Fr::from_uint64(123457))));
  BOOST_TEST((reference_of(cuda::G1Xyzz::infinity() + sum) == expected));
}

// ---- G2: Fq2 and the XYZZ template (g2.cuh) ----------------------------------------------------

namespace {

cuda::Fq2 fq2(const math::Fq2& value) { return cuda::Fq2{fq(value.c0), fq(value.c1)}; }

bool same2(const cuda::Fq2& d, const math::Fq2& value) { return same(d.c0, value.c0) && same(d.c1, value.c1); }

math::Fq2 random_fq2(std::mt19937_64& engine) {
  const math::Fq c0 = random_element<math::Fq>(engine);
  return math::Fq2{c0, random_element<math::Fq>(engine)};
}

math::Fq fq_of(const cuda::Fq& value) {
  math::Limbs<6> limbs;
  std::memcpy(limbs.data(), value.w, 48);
  // An unreduced word (never produced by correct arithmetic) fails here, not silently.
  return math::Fq::from_montgomery_limbs(limbs).value();
}

math::G2Projective reference_of(const cuda::G2Xyzz& point) {
  const cuda::JacobianPoint<cuda::Fq2> j = point.to_jacobian();
  math::G2Projective p;
  p.x = math::Fq2{fq_of(j.x.c0), fq_of(j.x.c1)};
  p.y = math::Fq2{fq_of(j.y.c0), fq_of(j.y.c1)};
  p.z = math::Fq2{fq_of(j.z.c0), fq_of(j.z.c1)};
  return p;
}

// The 192-byte layout of src/groth16/encoding (x.c0, x.c1, y.c0, y.c1, Montgomery; infinity = 0),
// written byte by byte as encode_g2 does and read back as the device struct.
cuda::G2Affine device_affine(const math::G2Affine& point) {
  std::uint8_t bytes[192] = {};
  if (!point.infinity) {
    const math::Fq* coordinates[4] = {&point.x.c0, &point.x.c1, &point.y.c0, &point.y.c1};
    for (int c = 0; c < 4; ++c) std::memcpy(bytes + 48 * c, coordinates[c]->montgomery_limbs().data(), 48);
  }
  cuda::G2Affine d;
  std::memcpy(&d, bytes, sizeof(d));
  return d;
}

std::vector<math::G2Affine> random_g2_points(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  const auto generator = math::G2Projective::from_affine(math::G2Curve::generator());
  std::vector<math::G2Affine> points;
  for (std::size_t i = 0; i < count; ++i) {
    math::Limbs<4> limbs{engine(), engine(), engine(), engine() >> 2};
    points.push_back(generator.multiply(*math::Fr::from_canonical_limbs(limbs)).to_affine());
  }
  return points;
}

}  // namespace

BOOST_AUTO_TEST_CASE(fq2_matches_reference) {
  std::mt19937_64 engine(11);
  const math::Fq2 u{math::Fq::zero(), math::Fq::one()};
  const math::Fq2 specials[] = {
      math::Fq2::zero(), math::Fq2::one(), -math::Fq2::one(), u, -u, math::Fq2{-math::Fq::one(), -math::Fq::one()}};
  constexpr int kSpecials = 6;
  int inverses = 0;
  for (int i = 0; i < 10000; ++i) {
    const bool special = i < kSpecials * kSpecials;
    const math::Fq2 a = special ? specials[i % kSpecials] : random_fq2(engine);
    const math::Fq2 b = special ? specials[i / kSpecials] : random_fq2(engine);
    const cuda::Fq2 da = fq2(a), db = fq2(b);
    BOOST_REQUIRE(same2(da * db, a * b));
    BOOST_REQUIRE(same2(da.squared(), a.squared()));
    BOOST_REQUIRE(same2(da + db, a + b));
    BOOST_REQUIRE(same2(da - db, a - b));
    BOOST_REQUIRE(same2(-da, -a));
    BOOST_REQUIRE(same2(da.doubled(), a.doubled()));
    BOOST_REQUIRE(same2(da.conjugate(), a.conjugate()));
    BOOST_REQUIRE((da == db) == (a == b));
    BOOST_REQUIRE(da.is_zero() == a.is_zero());
    if (special || i % 50 == 0) {  // Fermat inversions are slow on the host; a few hundred do
      BOOST_REQUIRE(same2(da.inverse(), a.inverse()));
      if (!a.is_zero()) BOOST_REQUIRE(same2(da * da.inverse(), math::Fq2::one()));
      ++inverses;
    }
  }
  BOOST_TEST(inverses > 200);
  BOOST_TEST(same2(cuda::Fq2::one(), math::Fq2::one()));
  BOOST_TEST(same2(cuda::Fq2::zero(), math::Fq2::zero()));
  // u^2 = -1: the defining relation, checked on the device type alone.
  BOOST_TEST(same2(fq2(u).squared(), -math::Fq2::one()));
}

// Fq2 over FqCalled (inline Karatsuba around called Fq products): the same values in the same words.
BOOST_AUTO_TEST_CASE(fq2_over_called_products_matches_reference) {
  std::mt19937_64 engine(12);
  auto called = [](const cuda::Fq2& value) {
    return cuda::Fq2Called{cuda::same_words<cuda::FqCalled>(value.c0), cuda::same_words<cuda::FqCalled>(value.c1)};
  };
  auto plain = [](const cuda::Fq2Called& value) {
    return cuda::Fq2{cuda::same_words<cuda::Fq>(value.c0), cuda::same_words<cuda::Fq>(value.c1)};
  };
  for (int i = 0; i < 2000; ++i) {
    const math::Fq2 a = random_fq2(engine), b = random_fq2(engine);
    const cuda::Fq2Called da = called(fq2(a)), db = called(fq2(b));
    BOOST_REQUIRE(same2(plain(da * db), a * b));
    BOOST_REQUIRE(same2(plain(da.squared()), a.squared()));
    BOOST_REQUIRE(same2(plain(da - db), a - b));
  }
}

BOOST_AUTO_TEST_CASE(g2_affine_layout_matches_encoding) {
  const math::G2Affine g = math::G2Curve::generator();
  const cuda::G2Affine d = device_affine(g);
  BOOST_TEST(same2(d.x, g.x));
  BOOST_TEST(same2(d.y, g.y));
  BOOST_TEST(!d.is_infinity());
  BOOST_TEST(device_affine(math::G2Affine::identity()).is_infinity());
  // All-zero XYZZ memory is the empty accumulator the batch addition relies on.
  cuda::G2Xyzz zeroed;
  std::memset(&zeroed, 0, sizeof(zeroed));
  BOOST_TEST(zeroed.is_infinity());
  BOOST_TEST(reference_of(zeroed).is_identity());
}

BOOST_AUTO_TEST_CASE(g2_xyzz_matches_reference) {
  const auto points = random_g2_points(16, 23);
  cuda::G2Xyzz sum = cuda::G2Xyzz::infinity();
  math::G2Projective expected = math::G2Projective::identity();
  for (const auto& point : points) {
    const cuda::G2Affine d = device_affine(point);
    sum.add_affine(d.x, d.y);  // mixed addition (madd-2008-s)
    expected += point;
    BOOST_REQUIRE(reference_of(sum) == expected);
    BOOST_REQUIRE(reference_of(sum).is_on_curve());
  }
  BOOST_TEST(!expected.is_identity());
  const cuda::G2Affine p0 = device_affine(points[0]);
  const auto p0_projective = math::G2Projective::from_affine(points[0]);
  // P + P through the mixed addition takes the doubling branch.
  cuda::G2Xyzz twice = cuda::G2Xyzz::from_affine(p0.x, p0.y);
  twice.add_affine(p0.x, p0.y);
  BOOST_TEST((reference_of(twice) == p0_projective.doubled()));
  BOOST_TEST((reference_of(cuda::G2Xyzz::double_affine(p0.x, p0.y)) == p0_projective.doubled()));
  // P + (-P) through the mixed addition is infinity.
  const cuda::G2Affine minus_p0 = device_affine(-points[0]);
  cuda::G2Xyzz cancelled = cuda::G2Xyzz::from_affine(p0.x, p0.y);
  cancelled.add_affine(minus_p0.x, minus_p0.y);
  BOOST_TEST(cancelled.is_infinity());
  // A mixed addition into a non-trivial ZZ of a point equal to the accumulator (ZZ != 1).
  cuda::G2Xyzz scaled = cuda::G2Xyzz::from_affine(p0.x, p0.y) + cuda::G2Xyzz::from_affine(p0.x, p0.y) +
                        -cuda::G2Xyzz::from_affine(p0.x, p0.y);  // P in coordinates with ZZ != 1
  BOOST_TEST(!(scaled.zz == cuda::Fq2::one()));
  scaled.add_affine(p0.x, p0.y);
  BOOST_TEST((reference_of(scaled) == p0_projective.doubled()));
  cuda::G2Xyzz scaled_cancel = cuda::G2Xyzz::from_affine(p0.x, p0.y).doubled() + -cuda::G2Xyzz::from_affine(p0.x, p0.y);
  scaled_cancel.add_affine(minus_p0.x, minus_p0.y);
  BOOST_TEST(scaled_cancel.is_infinity());
  // Full additions (add-2008-s): generic, P + P, P + (-P), infinity on either side.
  const cuda::G2Xyzz a = sum;
  cuda::G2Xyzz b = cuda::G2Xyzz::infinity();
  for (int i = 1; i < 5; ++i) b.add_affine(device_affine(points[i]).x, device_affine(points[i]).y);
  math::G2Projective b_expected = math::G2Projective::identity();
  for (int i = 1; i < 5; ++i) b_expected += points[i];
  BOOST_TEST((reference_of(a + b) == expected + b_expected));
  BOOST_TEST((reference_of(b + a) == expected + b_expected));
  BOOST_TEST((reference_of(a + a) == expected.doubled()));
  BOOST_TEST((a + (-a)).is_infinity());
  BOOST_TEST((reference_of(a.doubled()) == expected.doubled()));
  BOOST_TEST((reference_of(cuda::G2Xyzz::infinity() + a) == expected));
  BOOST_TEST((reference_of(a + cuda::G2Xyzz::infinity()) == expected));
  BOOST_TEST((cuda::G2Xyzz::infinity() + cuda::G2Xyzz::infinity()).is_infinity());
  BOOST_TEST(cuda::G2Xyzz::infinity().doubled().is_infinity());
  // A point and an equal one in other coordinates (ZZ differs): the sum doubles, not cancels.
  BOOST_TEST((reference_of(a + scaled) == expected + p0_projective.doubled()));
  BOOST_TEST((reference_of(twice + scaled) == p0_projective.doubled().doubled()));
}

// G1Xyzz is the template over Fq: a second set of points through it, spelled as the template.
BOOST_AUTO_TEST_CASE(xyzz_template_over_fq_matches_g1) {
  const auto generator = math::G1Projective::from_affine(math::G1Curve::generator());
  std::vector<math::G1Affine> points;
  for (std::uint64_t i = 1; i <= 8; ++i)
    points.push_back(generator.multiply(math::Fr::from_uint64(31 * i * i + 5)).to_affine());
  cuda::XyzzPoint<cuda::Fq> sum = cuda::XyzzPoint<cuda::Fq>::infinity();
  math::G1Projective expected = math::G1Projective::identity();
  for (const auto& point : points) {
    sum.add_affine(fq(point.x), fq(point.y));
    expected += point;
    BOOST_REQUIRE(reference_of(sum) == expected);
  }
  BOOST_TEST((reference_of(sum + sum) == expected.doubled()));
  BOOST_TEST((sum + (-sum)).is_infinity());
  cuda::XyzzPoint<cuda::Fq> cancelled = cuda::XyzzPoint<cuda::Fq>::from_affine(fq(points[0].x), fq(points[0].y));
  cancelled.add_affine(fq(points[0].x), fq((-points[0]).y));
  BOOST_TEST(cancelled.is_infinity());
}
