// The kernels' field and curve arithmetic (cuda/kernels/field.cuh, curve.cuh), compiled for the
// host through their carry-flag emulation, against the CPU reference. Needs no GPU (label unit):
// a wrong carry chain or constant shows up here before any device time is spent.
#define BOOST_TEST_MODULE kernel_field_host
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <random>

#include "curve.cuh"
#include "math/fq.hpp"
#include "math/fr.hpp"
#include "math/g1.hpp"

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

BOOST_AUTO_TEST_CASE(xyzz_formulas_match_reference) {
  const auto generator = math::G1Projective::from_affine(math::G1Curve::generator());
  std::vector<math::G1Affine> points;
  for (std::uint64_t i = 1; i <= 12; ++i) points.push_back(generator.multiply(math::Fr::from_uint64(977 * i * i + 3)).to_affine());
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
