// Short Weierstrass curves y^2 = x^3 + b (a = 0) in affine and Jacobian coordinates, shared by
// G1 (over Fq) and G2 (over Fq2).
//
// Jacobian (X, Y, Z) stands for the affine point (X/Z^2, Y/Z^3); Z = 0 is the point at infinity.
// The formulas are the a = 0 ones of the Explicit-Formulas Database: dbl-2009-l, add-2007-bl
// and madd-2007-bl. Unlike the database's formulas these functions handle every special case
// (either input at infinity, P + P, P + (-P)), because an MSM meets all of them.
#pragma once

#include <cstddef>
#include <span>
#include <stdexcept>
#include <vector>

#include "math/fr.hpp"

namespace stagehand::math {

// Curve parameters provide: `using BaseField`, `using ScalarField` (Fr, of order r),
// `static BaseField b()`, `static AffinePoint<Curve> generator()` and `static constexpr bool
// cofactor_is_one` (every point on the curve is in the subgroup, as on BN254's G1).
template <class Curve>
struct AffinePoint {
  using Field = typename Curve::BaseField;

  Field x{};
  Field y{};
  bool infinity = true;

  static constexpr AffinePoint identity() { return AffinePoint{}; }
  static constexpr AffinePoint from_coordinates(const Field& x, const Field& y) { return AffinePoint{x, y, false}; }

  constexpr bool is_identity() const { return infinity; }

  bool is_on_curve() const { return infinity || y.squared() == x.squared() * x + Curve::b(); }

  // On the curve and of order dividing r. Unless the cofactor is one, the check multiplies by r,
  // which is slow (one scalar multiplication) but needs no endomorphism constants that could
  // themselves be wrong.
  bool is_in_subgroup() const;

  constexpr AffinePoint operator-() const {
    if (infinity) return *this;
    return AffinePoint{x, -y, false};
  }

  friend constexpr bool operator==(const AffinePoint& a, const AffinePoint& b) {
    if (a.infinity || b.infinity) return a.infinity == b.infinity;
    return a.x == b.x && a.y == b.y;
  }
};

template <class Curve>
struct ProjectivePoint {
  using Field = typename Curve::BaseField;
  using Scalar = typename Curve::ScalarField;
  using Affine = AffinePoint<Curve>;

  Field x = Field::one();
  Field y = Field::one();
  Field z = Field::zero();

  static constexpr ProjectivePoint identity() { return ProjectivePoint{}; }
  static constexpr ProjectivePoint from_affine(const Affine& point) {
    if (point.infinity) return identity();
    return ProjectivePoint{point.x, point.y, Field::one()};
  }

  constexpr bool is_identity() const { return z.is_zero(); }

  bool is_on_curve() const {
    if (is_identity()) return true;
    const Field z_squared = z.squared();
    const Field z_sixth = (z_squared * z_squared) * z_squared;
    return y.squared() == x.squared() * x + Curve::b() * z_sixth;
  }

  // One inversion; use batch_to_affine for many points.
  Affine to_affine() const {
    if (is_identity()) return Affine::identity();
    const Field z_inverse = z.inverse();
    const Field z_inverse_squared = z_inverse.squared();
    return Affine::from_coordinates(x * z_inverse_squared, y * z_inverse_squared * z_inverse);
  }

  constexpr ProjectivePoint operator-() const { return ProjectivePoint{x, -y, z}; }

  // dbl-2009-l: 2M + 5S.
  ProjectivePoint doubled() const {
    if (is_identity()) return *this;
    const Field a = x.squared();
    const Field b = y.squared();
    const Field c = b.squared();
    const Field d = ((x + b).squared() - a - c).doubled();
    const Field e = a.doubled() + a;
    const Field f = e.squared();
    ProjectivePoint result;
    result.x = f - d.doubled();
    result.y = e * (d - result.x) - c.doubled().doubled().doubled();
    result.z = (y * z).doubled();
    return result;
  }

  // add-2007-bl: 11M + 5S.
  friend ProjectivePoint operator+(const ProjectivePoint& p, const ProjectivePoint& q) {
    if (p.is_identity()) return q;
    if (q.is_identity()) return p;
    const Field z1_squared = p.z.squared();
    const Field z2_squared = q.z.squared();
    const Field u1 = p.x * z2_squared;
    const Field u2 = q.x * z1_squared;
    const Field s1 = p.y * q.z * z2_squared;
    const Field s2 = q.y * p.z * z1_squared;
    const Field h = u2 - u1;
    const Field r = (s2 - s1).doubled();
    if (h.is_zero()) {
      // Same x: either the same point (double it) or opposite points (their sum is infinity).
      return r.is_zero() ? p.doubled() : identity();
    }
    const Field i = h.doubled().squared();
    const Field j = h * i;
    const Field v = u1 * i;
    ProjectivePoint result;
    result.x = r.squared() - j - v.doubled();
    result.y = r * (v - result.x) - (s1 * j).doubled();
    result.z = ((p.z + q.z).squared() - z1_squared - z2_squared) * h;
    return result;
  }

  // madd-2007-bl, the mixed addition with an affine point: 7M + 4S.
  friend ProjectivePoint operator+(const ProjectivePoint& p, const Affine& q) {
    if (q.infinity) return p;
    if (p.is_identity()) return from_affine(q);
    const Field z1_squared = p.z.squared();
    const Field u2 = q.x * z1_squared;
    const Field s2 = q.y * p.z * z1_squared;
    const Field h = u2 - p.x;
    const Field r = (s2 - p.y).doubled();
    if (h.is_zero()) return r.is_zero() ? p.doubled() : identity();
    const Field h_squared = h.squared();
    const Field i = h_squared.doubled().doubled();
    const Field j = h * i;
    const Field v = p.x * i;
    ProjectivePoint result;
    result.x = r.squared() - j - v.doubled();
    result.y = r * (v - result.x) - (p.y * j).doubled();
    result.z = (p.z + h).squared() - z1_squared - h_squared;
    return result;
  }

  friend ProjectivePoint operator-(const ProjectivePoint& p, const ProjectivePoint& q) { return p + (-q); }
  ProjectivePoint& operator+=(const ProjectivePoint& other) { return *this = *this + other; }
  ProjectivePoint& operator+=(const Affine& other) { return *this = *this + other; }

  // Equality of the represented points, not of the coordinates.
  friend bool operator==(const ProjectivePoint& p, const ProjectivePoint& q) {
    if (p.is_identity() || q.is_identity()) return p.is_identity() == q.is_identity();
    const Field z1_squared = p.z.squared();
    const Field z2_squared = q.z.squared();
    return p.x * z2_squared == q.x * z1_squared && p.y * z2_squared * q.z == q.y * z1_squared * p.z;
  }

  // Scalar multiplication by a non-negative integer of any width, four bits at a time. Not
  // constant-time.
  template <std::size_t LimbCount>
  ProjectivePoint multiply_by_limbs(const Limbs<LimbCount>& scalar) const {
    ProjectivePoint table[16];
    table[0] = identity();
    for (int index = 1; index < 16; ++index) table[index] = table[index - 1] + *this;
    ProjectivePoint result = identity();
    const std::size_t window_count = (detail::bit_length(scalar) + 3) / 4;
    for (std::size_t window = window_count; window-- > 0;) {
      for (int step = 0; step < 4; ++step) result = result.doubled();
      const auto digit = static_cast<unsigned>((scalar[window / 16] >> (4 * (window % 16))) & 0xf);
      if (digit != 0) result += table[digit];
    }
    return result;
  }
  ProjectivePoint multiply(const Scalar& scalar) const { return multiply_by_limbs(scalar.to_canonical_limbs()); }
};

template <class Curve>
bool AffinePoint<Curve>::is_in_subgroup() const {
  if (!is_on_curve()) return false;
  if constexpr (Curve::cofactor_is_one) return true;
  return ProjectivePoint<Curve>::from_affine(*this).multiply_by_limbs(Curve::ScalarField::modulus).is_identity();
}

// Converts many points with one field inversion (Montgomery's trick): 3(n-1) multiplications
// plus one inversion instead of n inversions. Points at infinity pass through.
template <class Curve>
void batch_to_affine(std::span<const ProjectivePoint<Curve>> points, std::span<AffinePoint<Curve>> affine) {
  using Field = typename Curve::BaseField;
  if (points.size() != affine.size()) throw std::invalid_argument("batch_to_affine: size mismatch");
  // prefix[i] is the product of the non-zero z of points[0..i).
  std::vector<Field> prefix(points.size());
  Field running = Field::one();
  for (std::size_t index = 0; index < points.size(); ++index) {
    prefix[index] = running;
    if (!points[index].is_identity()) running *= points[index].z;
  }
  Field inverse = running.inverse();
  for (std::size_t index = points.size(); index-- > 0;) {
    const auto& point = points[index];
    if (point.is_identity()) {
      affine[index] = AffinePoint<Curve>::identity();
      continue;
    }
    const Field z_inverse = inverse * prefix[index];
    inverse *= point.z;
    const Field z_inverse_squared = z_inverse.squared();
    affine[index] =
        AffinePoint<Curve>::from_coordinates(point.x * z_inverse_squared, point.y * z_inverse_squared * z_inverse);
  }
}

}  // namespace stagehand::math
