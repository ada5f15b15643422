// The kernels' curve descriptions (cuda/kernels/ec/curves.cuh) for BLS12-381 and BN254, compiled
// for the host through field.cuh's carry-flag emulation, against the CPU reference (src/math): each
// field's arithmetic, Fq2, every constant (b of both groups, both generators) and the XYZZ
// formulas of G1 and G2. Needs no GPU and no nvcc (label unit).
#define BOOST_TEST_MODULE kernel_curves_host
#include <boost/test/unit_test.hpp>

#include <boost/mpl/list.hpp>

#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "ec/curves.cuh"
#include "math/bn254.hpp"
#include "math/ntt.hpp"
#include "ntt/ntt_roots.cuh"
#include "math/curve_description.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"

using namespace stagehand;

namespace {

// A device curve and the reference's description of the same curve.
template <class Device, class Reference>
struct CurvePair {
  using D = Device;
  using R = Reference;
};
using Curves =
    boost::mpl::list<CurvePair<cuda::Bls12_381Curve, math::Bls12_381>, CurvePair<cuda::Bn254Curve, math::Bn254>>;

template <class Device, class Reference>
Device device_of(const Reference& value) {
  static_assert(sizeof(Device::w) == sizeof(value.montgomery_limbs()), "the same words");
  Device d;
  std::memcpy(d.w, value.montgomery_limbs().data(), sizeof(d.w));
  return d;
}

// An unreduced word (never produced by correct arithmetic) fails here, not silently.
template <class Reference, class Device>
Reference reference_of(const Device& d) {
  typename Reference::LimbArray limbs;
  static_assert(sizeof(limbs) == sizeof(d.w), "the same words");
  std::memcpy(limbs.data(), d.w, sizeof(d.w));
  return Reference::from_montgomery_limbs(limbs).value();
}

template <class Reference2, class Device2>
Reference2 reference2_of(const Device2& d) {
  using Base = decltype(Reference2{}.c0);
  return Reference2{reference_of<Base>(d.c0), reference_of<Base>(d.c1)};
}

template <class Device2, class Reference2>
Device2 device2_of(const Reference2& value) {
  return Device2{device_of<decltype(Device2{}.c0)>(value.c0), device_of<decltype(Device2{}.c1)>(value.c1)};
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
void check_field(std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  const Reference specials[] = {Reference::zero(), Reference::one(), -Reference::one(), Reference::from_uint64(2)};
  for (int i = 0; i < 5000; ++i) {
    const Reference a = i < 16 ? specials[i % 4] : random_element<Reference>(engine);
    const Reference b = i < 16 ? specials[i / 4] : random_element<Reference>(engine);
    const Device da = device_of<Device>(a), db = device_of<Device>(b);
    BOOST_REQUIRE(reference_of<Reference>(da * db) == a * b);
    BOOST_REQUIRE(reference_of<Reference>(da.squared()) == a * a);
    BOOST_REQUIRE(reference_of<Reference>(Device::multiply_narrow(da, db)) == a * b);
    BOOST_REQUIRE(reference_of<Reference>(da + db) == a + b);
    BOOST_REQUIRE(reference_of<Reference>(da - db) == a - b);
    BOOST_REQUIRE(reference_of<Reference>(-da) == -a);
    BOOST_REQUIRE(reference_of<Reference>(da.doubled()) == a + a);
    BOOST_REQUIRE((da == db) == (a == b));
    BOOST_REQUIRE(da.is_zero() == a.is_zero());
    if (i < 16 || i % 100 == 0) BOOST_REQUIRE(reference_of<Reference>(da.inverse()) == a.inverse());
  }
  BOOST_TEST((reference_of<Reference>(Device::one()) == Reference::one()));
  BOOST_TEST((reference_of<Reference>(Device::zero()) == Reference::zero()));
  // Canonical words out of Montgomery form: 2 is {2, 0, ...}.
  const Device two = device_of<Device>(Reference::from_uint64(2)).from_montgomery();
  BOOST_TEST((two.w[0] == 2 && Device::zero().w[1] == 0 && two.w[Device::N - 1] == 0));
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(fr_matches_reference, Pair, Curves) {
  check_field<typename Pair::D::Fr, typename Pair::R::Fr>(5);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(fq_matches_reference, Pair, Curves) {
  check_field<typename Pair::D::Fq, typename Pair::R::Fq>(7);
}

// The forms the kernels pick for speed (CurveForms: FP64 products, products as calls) give the
// base forms' values, and the NTT's twiddles cut into FP64 limbs multiply as their words do.
BOOST_AUTO_TEST_CASE_TEMPLATE(faster_forms_match_reference, Pair, Curves) {
  using D = typename Pair::D;
  using R = typename Pair::R;
  check_field<typename D::FrF64, typename R::Fr>(21);
  check_field<typename D::FqF64, typename R::Fq>(23);
  check_field<typename D::FqCalled, typename R::Fq>(25);
  check_field<typename D::FqF64Called, typename R::Fq>(27);
  using FrF64Params = typename D::FrF64::Params;
  std::mt19937_64 engine(29);
  for (int i = 0; i < 2000; ++i) {
    const auto a = random_element<typename R::Fr>(engine), b = random_element<typename R::Fr>(engine);
    const auto da = device_of<typename D::FrF64>(a), db = device_of<typename D::FrF64>(b);
    double limbs[FrF64Params::F64::limbs];
    cuda::f64::factor_limbs<FrF64Params>(db.w, limbs);
    typename D::FrF64 from_limbs;
    cuda::f64::montgomery_multiply_limbs<FrF64Params>(da.w, limbs, from_limbs.w);
    from_limbs.reduce_once();
    BOOST_REQUIRE(reference_of<typename R::Fr>(from_limbs) == a * b);
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(fq2_matches_reference, Pair, Curves) {
  using D2 = typename Pair::D::Fq2;
  using R2 = typename Pair::R::Fq2;
  using RFq = typename Pair::R::Fq;
  std::mt19937_64 engine(11);
  const R2 u{RFq::zero(), RFq::one()};
  const R2 specials[] = {R2::zero(), R2::one(), -R2::one(), u};
  for (int i = 0; i < 3000; ++i) {
    const R2 a = i < 16 ? specials[i % 4] : R2{random_element<RFq>(engine), random_element<RFq>(engine)};
    const R2 b = i < 16 ? specials[i / 4] : R2{random_element<RFq>(engine), random_element<RFq>(engine)};
    const D2 da = device2_of<D2>(a), db = device2_of<D2>(b);
    BOOST_REQUIRE(reference2_of<R2>(da * db) == a * b);
    BOOST_REQUIRE(reference2_of<R2>(da.squared()) == a.squared());
    BOOST_REQUIRE(reference2_of<R2>(da + db) == a + b);
    BOOST_REQUIRE(reference2_of<R2>(da - db) == a - b);
    BOOST_REQUIRE(reference2_of<R2>(-da) == -a);
    if (i < 16 || i % 100 == 0) BOOST_REQUIRE(reference2_of<R2>(da.inverse()) == a.inverse());
  }
  // u^2 = -1 on both curves: the relation the one Fq2 template relies on.
  BOOST_TEST((reference2_of<R2>(device2_of<D2>(u).squared()) == -R2::one()));
}

// Every constant of the description is the reference's, and the generators lie on their curves.
BOOST_AUTO_TEST_CASE_TEMPLATE(constants_match_reference, Pair, Curves) {
  using D = typename Pair::D;
  using R = typename Pair::R;
  BOOST_TEST((reference_of<typename R::Fq>(D::g1_b()) == R::G1::b()));
  BOOST_TEST((reference2_of<typename R::Fq2>(D::g2_b()) == R::G2::b()));
  const auto g1 = D::g1_generator();
  const auto g2 = D::g2_generator();
  BOOST_TEST((reference_of<typename R::Fq>(g1.x) == R::G1::generator().x));
  BOOST_TEST((reference_of<typename R::Fq>(g1.y) == R::G1::generator().y));
  BOOST_TEST((reference2_of<typename R::Fq2>(g2.x) == R::G2::generator().x));
  BOOST_TEST((reference2_of<typename R::Fq2>(g2.y) == R::G2::generator().y));
  BOOST_TEST(g1.is_on_curve(D::g1_b()));
  BOOST_TEST(g2.is_on_curve(D::g2_b()));
  // The check can fail: the generator with y doubled, and G2's generator against G1's kind of b.
  BOOST_TEST(!(typename D::G1Affine{g1.x, g1.y.doubled()}).is_on_curve(D::g1_b()));
  BOOST_TEST(!g2.is_on_curve(typename D::Fq2{D::g1_b(), D::Fq::zero()}));
  BOOST_TEST((typename D::G1Affine{D::Fq::zero(), D::Fq::zero()}).is_infinity());
}

namespace {

// The XYZZ formulas over one group against the reference's projective arithmetic, through the
// device's Jacobian conversion.
template <class DeviceCoordinate, class ReferenceGroup, class Convert, class Back>
void check_xyzz(Convert to_device, Back to_reference, std::uint64_t seed) {
  using Xyzz = cuda::XyzzPoint<DeviceCoordinate>;
  using Projective = math::ProjectivePoint<ReferenceGroup>;
  using Fr = typename ReferenceGroup::ScalarField;
  auto reference_point = [&](const Xyzz& point) {
    const auto j = point.to_jacobian();
    Projective p;
    p.x = to_reference(j.x);
    p.y = to_reference(j.y);
    p.z = to_reference(j.z);
    return p;
  };
  std::mt19937_64 engine(seed);
  const auto generator = Projective::from_affine(ReferenceGroup::generator());
  std::vector<math::AffinePoint<ReferenceGroup>> points;
  for (int i = 0; i < 10; ++i) points.push_back(generator.multiply(Fr::from_uint64(engine() >> 8)).to_affine());
  Xyzz sum = Xyzz::infinity();
  Projective expected = Projective::identity();
  for (const auto& point : points) {
    sum.add_affine(to_device(point.x), to_device(point.y));
    expected += point;
    BOOST_REQUIRE(reference_point(sum) == expected);
  }
  const auto& first = points[0];
  Xyzz twice = Xyzz::from_affine(to_device(first.x), to_device(first.y));
  twice.add_affine(to_device(first.x), to_device(first.y));
  BOOST_TEST((reference_point(twice) == Projective::from_affine(first).doubled()));
  Xyzz cancelled = Xyzz::from_affine(to_device(first.x), to_device(first.y));
  cancelled.add_affine(to_device(first.x), to_device((-first).y));
  BOOST_TEST(cancelled.is_infinity());
  BOOST_TEST((reference_point(sum + sum) == expected.doubled()));
  BOOST_TEST((reference_point(sum.doubled()) == expected.doubled()));
  BOOST_TEST((sum + (-sum)).is_infinity());
  BOOST_TEST((reference_point(sum.times(123457)) == expected.multiply(Fr::from_uint64(123457))));
  BOOST_TEST((reference_point(Xyzz::infinity() + sum) == expected));
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(g1_xyzz_matches_reference, Pair, Curves) {
  using DFq = typename Pair::D::Fq;
  using RFq = typename Pair::R::Fq;
  check_xyzz<DFq, typename Pair::R::G1>([](const RFq& v) { return device_of<DFq>(v); },
                                        [](const DFq& v) { return reference_of<RFq>(v); }, 13);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(g2_xyzz_matches_reference, Pair, Curves) {
  using D2 = typename Pair::D::Fq2;
  using R2 = typename Pair::R::Fq2;
  check_xyzz<D2, typename Pair::R::G2>([](const R2& v) { return device2_of<D2>(v); },
                                       [](const D2& v) { return reference2_of<R2>(v); }, 17);
}

// The NTT's snarkjs roots (ntt/ntt_roots.cuh) are the reference domain's up to 2^16, and at every
// size the curve allows a primitive root of the right order whose coset generator squares to it;
// the size past the 2-adicity is refused.
BOOST_AUTO_TEST_CASE_TEMPLATE(ntt_snarkjs_roots_match_reference, Pair, Curves) {
  using D = typename Pair::D;
  using R = typename Pair::R;
  using Fr = typename D::Fr;
  for (unsigned k = 1; k < D::two_adicity; ++k) {
    Fr root, coset;
    cuda::snarkjs_roots<D>(k, root, coset);
    if (k <= 16) {
      const auto domain = math::BasicDomain<typename R::Fr>::snarkjs(k, 1);
      BOOST_REQUIRE(reference_of<typename R::Fr>(root) == domain.root());
      BOOST_REQUIRE(reference_of<typename R::Fr>(coset) == domain.coset_generator());
    }
    BOOST_REQUIRE(coset * coset == root);
    Fr power = root;
    for (unsigned i = 1; i < k; ++i) power = power * power;  // root^(2^(k-1))
    BOOST_REQUIRE(power == -Fr::one());
    BOOST_REQUIRE(power * power == Fr::one());
  }
  Fr root, coset;
  BOOST_CHECK_THROW(cuda::snarkjs_roots<D>(D::two_adicity, root, coset), std::invalid_argument);
  BOOST_CHECK_THROW(cuda::snarkjs_roots<D>(0, root, coset), std::invalid_argument);
}
