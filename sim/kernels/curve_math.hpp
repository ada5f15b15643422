#pragma once
// The CPU reference of each curve a kernel is instantiated for (kernel::Curve), under one set of
// names, so that the functional simulator's host functions are written once as templates over
// CurveMath<curve> and registered for each curve (SimSystem::register_kernel). BLS12-381's math
// is in stagehand::math, BN254's in stagehand::math::bn254; the device layouts of both are
// kernel::curve_sizes(curve)'s, the points' and sums' encodings groth16/encoding.hpp's.

#include "device/kernel_abi.hpp"
#include "groth16/constraint_matrix.hpp"
#include "groth16/encoding.hpp"
#include "math/bn254.hpp"
#include "math/msm.hpp"
#include "math/ntt.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace stagehand::sim {

template <class Description, kernel::Curve Curve>
struct CurveTypes {
  static constexpr kernel::Curve curve = Curve;
  static constexpr kernel::CurveSizes sizes = kernel::curve_sizes(Curve);
  using Fr = typename Description::Fr;
  using G1Affine = math::AffinePoint<typename Description::G1>;
  using G1Projective = math::ProjectivePoint<typename Description::G1>;
  using G2Affine = math::AffinePoint<typename Description::G2>;
  using G2Projective = math::ProjectivePoint<typename Description::G2>;
  using Domain = math::BasicDomain<Fr>;
  static_assert(sizeof(Fr) == kernel::kFrBytes,
                "Fr must be its four Montgomery limbs, so that Fr arrays are device bytes");
  static_assert(groth16::affine_bytes<G1Affine> == sizes.g1_affine &&
                groth16::affine_bytes<G2Affine> == sizes.g2_affine);
  static_assert(groth16::jacobian_bytes<G1Projective> == sizes.g1_jacobian &&
                groth16::jacobian_bytes<G2Projective> == sizes.g2_jacobian);

  // The device bytes of one point, without a curve check (a key's points were checked when read).
  template <class Affine>
  static Affine device_point(const std::byte* data) {
    using Base = typename Affine::Field;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(data);
    constexpr std::size_t size = groth16::affine_bytes<Affine>;
    if (std::all_of(bytes, bytes + size, [](std::uint8_t b) { return b == 0; })) return Affine::identity();
    auto coordinate = [&](std::size_t at) {
      if constexpr (std::is_same_v<Base, typename Description::Fq>) {
        return field(bytes + at * Base::byte_count);
      } else {
        constexpr std::size_t fq = Description::Fq::byte_count;
        return Base{field(bytes + 2 * at * fq), field(bytes + (2 * at + 1) * fq)};
      }
    };
    return Affine::from_coordinates(coordinate(0), coordinate(1));
  }

 private:
  static typename Description::Fq field(const std::uint8_t* bytes) {
    using Fq = typename Description::Fq;
    const auto value = Fq::from_montgomery_bytes(std::span<const std::uint8_t, Fq::byte_count>(bytes, Fq::byte_count));
    if (!value) throw std::invalid_argument("a device point's coordinate is not reduced");
    return *value;
  }
};

template <kernel::Curve Curve>
struct CurveMath;

template <>
struct CurveMath<kernel::Curve::bls12_381> : CurveTypes<math::Bls12_381, kernel::Curve::bls12_381> {
  template <class... Arguments>
  static auto msm(Arguments&&... arguments) {
    return math::msm(std::forward<Arguments>(arguments)...);
  }
  static void intt(std::span<Fr> values, const Domain& domain, unsigned threads) {
    math::intt(values, domain, threads);
  }
  static void coset_ntt(std::span<Fr> values, const Domain& domain, unsigned threads) {
    math::coset_ntt(values, domain, threads);
  }
};

template <>
struct CurveMath<kernel::Curve::bn254> : CurveTypes<math::Bn254, kernel::Curve::bn254> {
  template <class... Arguments>
  static auto msm(Arguments&&... arguments) {
    return math::bn254::msm(std::forward<Arguments>(arguments)...);
  }
  static void intt(std::span<Fr> values, const Domain& domain, unsigned threads) {
    math::bn254::intt(values, domain, threads);
  }
  static void coset_ntt(std::span<Fr> values, const Domain& domain, unsigned threads) {
    math::bn254::coset_ntt(values, domain, threads);
  }
};

}  // namespace stagehand::sim
