#include "math/pairing.hpp"

#include <array>
#include <bit>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace stagehand::math {
namespace {

// The digits of the ate loop count from the top, its leading one left out: the plain bits, or
// the non-adjacent form (digits -1, 0, 1, no two non-zero side by side), built from the bottom
// the way @noble/curves builds it.
template <class Curve>
constexpr std::size_t ate_digit_count() {
  std::size_t count = 0;
  for (detail::Uint128 n = Curve::ate_loop_count; n > 1; n >>= 1) {
    if (Curve::ate_loop_naf && (n & 3) == 3) n += 1;
    ++count;
  }
  return count;
}

template <class Curve>
constexpr std::array<signed char, ate_digit_count<Curve>()> ate_digits() {
  std::array<signed char, ate_digit_count<Curve>()> digits{};
  std::size_t position = digits.size();
  for (detail::Uint128 n = Curve::ate_loop_count; n > 1; n >>= 1) {
    signed char digit = (n & 1) != 0 ? 1 : 0;
    if (Curve::ate_loop_naf && (n & 3) == 3) {
      digit = -1;
      n += 1;
    }
    digits[--position] = digit;
  }
  return digits;
}

// T in homogeneous projective coordinates (X/Z, Y/Z) while the lines are computed: no inversion.
// The formulas are @noble/curves' (Costello-Lange-Naehrig's for a = 0), each line scaled by a
// factor in Fq2.
template <class Curve>
struct LineWalker {
  using Fq2 = typename Curve::Fq2;
  using Line = typename BasicG2Prepared<Curve>::Line;
  Fq2 x, y, z;

  static Fq2 triple(const Fq2& value) { return value.doubled() + value; }

  // The tangent at T, and T = 2T.
  Line double_step() {
    static const Fq2 half{Curve::Fq::from_uint64(2).inverse(), Curve::Fq::zero()};
    const Fq2 t0 = y.squared();
    const Fq2 t1 = z.squared();
    const Fq2 t2 = triple(t1) * Curve::G2::b();
    const Fq2 t3 = triple(t2);
    const Fq2 t4 = (y + z).squared() - t1 - t0;
    const Line line{t2 - t0, triple(x.squared()), -t4};
    const Fq2 next_x = (t0 - t3) * x * y * half;
    const Fq2 next_y = ((t0 + t3) * half).squared() - triple(t2.squared());
    z = t0 * t4;
    x = next_x;
    y = next_y;
    return line;
  }

  // The chord through T and Q = (qx, qy), and T = T + Q.
  Line add_step(const Fq2& qx, const Fq2& qy) {
    const Fq2 t0 = y - qy * z;
    const Fq2 t1 = x - qx * z;
    const Line line{t0 * qx - t1 * qy, -t0, t1};
    const Fq2 t2 = t1.squared();
    const Fq2 t3 = t2 * t1;
    const Fq2 t4 = t2 * x;
    const Fq2 t5 = t3 - t4.doubled() + t0.squared() * z;
    const Fq2 next_y = (t4 - t5) * t0 - t3 * y;
    x = t1 * t5;
    y = next_y;
    z = z * t3;
    return line;
  }
};

// What a curve's Miller loop does after its digits: extra lines (applied without a squaring
// before them) and the cyclotomic hard part of the final exponentiation.
template <class Curve>
struct CurveSpecific;

// z^|x| in the cyclotomic subgroup.
template <class Curve>
BasicFq12<Curve> cyclotomic_power_by_x(const BasicFq12<Curve>& z) {
  BasicFq12<Curve> result = z;
  for (int bit = std::bit_width(Curve::x) - 2; bit >= 0; --bit) {
    result = result.cyclotomic_squared();
    if ((Curve::x >> bit) & 1) result *= z;
  }
  return result;
}

template <>
struct CurveSpecific<Bls12_381> {
  using Fq12 = math::Fq12;
  static constexpr std::size_t final_line_count = 0;
  static void append_final_lines(LineWalker<Bls12_381>&, const G2Affine&, std::vector<G2Prepared::Line>&) {}

  // Hayashida-Hayasaka-Teruya's chain, as @noble/curves (and zkcrypto's bls12_381) write it;
  // z^x = conj(z^|x|) because x < 0.
  static Fq12 hard_part(const Fq12& t1) {
    auto power_by_x = [](const Fq12& z) { return cyclotomic_power_by_x(z).conjugate(); };
    const Fq12 t2 = power_by_x(t1);
    const Fq12 t3 = t1.cyclotomic_squared().conjugate() * t2;
    const Fq12 t4 = power_by_x(t3);
    const Fq12 t5 = power_by_x(t4);
    const Fq12 t6 = power_by_x(t5) * t2.cyclotomic_squared();
    const Fq12 t7 = power_by_x(t6);
    return (t2 * t5).frobenius(2) * (t4 * t1).frobenius(3) * (t6 * t1.conjugate()).frobenius(1) *
           (t7 * t3.conjugate() * t1);
  }
};

template <>
struct CurveSpecific<Bn254> {
  using Fq = bn254::Fq;
  using Fq2 = bn254::Fq2;
  using Fq12 = bn254::Fq12;
  static constexpr std::size_t final_line_count = 2;

  // π(x, y) = (conj(x)·ξ^((q-1)/3), conj(y)·ξ^((q-1)/2)): the q-power Frobenius carried through
  // the twist, which maps G2 to itself.
  static std::pair<Fq2, Fq2> frobenius_on_twist(const Fq2& x, const Fq2& y) {
    static const Fq2 xi = Bn254::multiply_by_xi(Fq2::one());
    static const Fq2 x_factor = xi.pow(detail::divide_small(detail::subtract_small(Fq::modulus, 1), 3));
    static const Fq2 y_factor = xi.pow(detail::divide_small(detail::subtract_small(Fq::modulus, 1), 2));
    return {x.conjugate() * x_factor, y.conjugate() * y_factor};
  }

  // The lines through T and π(Q), then through T + π(Q) and -π²(Q).
  static void append_final_lines(LineWalker<Bn254>& walker, const bn254::G2Affine& q,
                                 std::vector<bn254::G2Prepared::Line>& lines) {
    const auto [x1, y1] = frobenius_on_twist(q.x, q.y);
    lines.push_back(walker.add_step(x1, y1));
    const auto [x2, y2] = frobenius_on_twist(x1, y1);
    lines.push_back(walker.add_step(x2, -y2));
  }

  // The chain of @noble/curves' bn254 (Fuentes-Castañeda, Knapp, Rodríguez-Henríquez), with
  // z^(-x) = conj(z^x) in the cyclotomic subgroup.
  static Fq12 hard_part(const Fq12& r) {
    auto power_by_minus_x = [](const Fq12& z) { return cyclotomic_power_by_x(z).conjugate(); };
    const Fq12 y1 = power_by_minus_x(r).cyclotomic_squared();
    const Fq12 y2 = y1.cyclotomic_squared() * y1;
    const Fq12 y4 = power_by_minus_x(y2);
    const Fq12 y6 = power_by_minus_x(y4.cyclotomic_squared());
    const Fq12 y8 = y6.conjugate() * y4 * y2.conjugate();
    const Fq12 y9 = y8 * y1;
    return (r.conjugate() * y9).frobenius(3) * y8.frobenius(2) * y9.frobenius(1) * (y8 * y4 * r);
  }
};

// Lines per prepared point: one per digit, one per non-zero digit, and the curve's final ones.
template <class Curve>
constexpr std::size_t prepared_line_count() {
  std::size_t count = CurveSpecific<Curve>::final_line_count;
  for (const signed char digit : ate_digits<Curve>()) count += digit != 0 ? 2 : 1;
  return count;
}

}  // namespace

template <class Curve>
typename Pairing<Curve>::Prepared Pairing<Curve>::prepare_g2(const G2Affine& point) {
  Prepared prepared;
  if (point.infinity) return prepared;
  prepared.infinity = false;
  constexpr auto digits = ate_digits<Curve>();
  prepared.lines.reserve(prepared_line_count<Curve>());
  LineWalker<Curve> walker{point.x, point.y, Curve::Fq2::one()};
  const auto negative_y = -point.y;
  for (const signed char digit : digits) {
    prepared.lines.push_back(walker.double_step());
    if (digit != 0) prepared.lines.push_back(walker.add_step(point.x, digit > 0 ? point.y : negative_y));
  }
  CurveSpecific<Curve>::append_final_lines(walker, point, prepared.lines);
  return prepared;
}

template <class Curve>
typename Pairing<Curve>::Fq12 Pairing<Curve>::miller_loop(std::span<const Pair> pairs) {
  struct Term {
    typename Curve::Fq x, y;
    const Prepared* q;
  };
  std::vector<Term> terms;
  for (const auto& [p, q] : pairs) {
    if (p.infinity || q == nullptr || q->infinity) continue;
    if (q->lines.size() != prepared_line_count<Curve>()) {
      throw std::invalid_argument("miller_loop: a prepared G2 point with " + std::to_string(q->lines.size()) +
                                  " lines, expected " + std::to_string(prepared_line_count<Curve>()));
    }
    terms.push_back(Term{p.x, p.y, q});
  }
  Fq12 f = Fq12::one();
  std::size_t line = 0;
  auto apply = [&](std::size_t index) {
    for (const auto& term : terms) {
      const auto& coefficients = term.q->lines[index];
      if constexpr (Curve::twist == Twist::multiplicative) {
        f = f.multiply_by_014(coefficients.c0, coefficients.c1 * term.x, coefficients.c2 * term.y);
      } else {
        f = f.multiply_by_034(coefficients.c2 * term.y, coefficients.c1 * term.x, coefficients.c0);
      }
    }
  };
  constexpr auto digits = ate_digits<Curve>();
  for (std::size_t position = 0; position < digits.size(); ++position) {
    if (position != 0) f = f.squared();  // f starts at 1: its first squaring is free
    apply(line++);
    if (digits[position] != 0) apply(line++);
  }
  for (std::size_t extra = 0; extra < CurveSpecific<Curve>::final_line_count; ++extra) apply(line++);
  return Curve::x_negative ? f.conjugate() : f;
}

template <class Curve>
typename Pairing<Curve>::Fq12 Pairing<Curve>::final_exponentiation(const Fq12& f) {
  // Easy part: f^((q^6 - 1)(q^2 + 1)), in the cyclotomic subgroup from here on.
  const Fq12 t0 = f.conjugate() * f.inverse();
  const Fq12 t1 = t0.frobenius(2) * t0;
  return CurveSpecific<Curve>::hard_part(t1);
}

template struct Pairing<Bls12_381>;
template struct Pairing<Bn254>;

}  // namespace stagehand::math
