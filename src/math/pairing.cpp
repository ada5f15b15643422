#include "math/pairing.hpp"


namespace stagehand::math {
namespace {

// (q - 1)/6: q = 1 mod 6 because G2 is a sextic twist.
constexpr Limbs<6> q_minus_one_over_six() {
  Limbs<6> value = detail::subtract_small(Fq::modulus, 1);
  detail::Uint128 remainder = 0;
  for (std::size_t index = value.size(); index-- > 0;) {
    const detail::Uint128 current = (remainder << 64) | value[index];
    value[index] = static_cast<std::uint64_t>(current / 6);
    remainder = current % 6;
  }
  return value;
}

// γ[i] = ξ^(i·(q - 1)/6) = w^(i·(q - 1)): the Frobenius takes c·w^i to conj(c)·γ[i]·w^i.
struct FrobeniusConstants {
  Fq2 gamma[6];
  FrobeniusConstants() {
    const Fq2 xi{Fq::one(), Fq::one()};
    const Fq2 base = xi.pow(q_minus_one_over_six());
    gamma[0] = Fq2::one();
    for (int index = 1; index < 6; ++index) gamma[index] = gamma[index - 1] * base;
  }
};
const FrobeniusConstants& frobenius_constants() {
  static const FrobeniusConstants constants;
  return constants;
}

Fq12 frobenius_once(const Fq12& a) {
  const auto& gamma = frobenius_constants().gamma;
  return {{a.c0.c0.conjugate(), a.c0.c1.conjugate() * gamma[2], a.c0.c2.conjugate() * gamma[4]},
          {a.c1.c0.conjugate() * gamma[1], a.c1.c1.conjugate() * gamma[3], a.c1.c2.conjugate() * gamma[5]}};
}

// (a + b·s)² in Fq2[s]/(s² - ξ): (a² + ξ·b², 2ab) with three squarings.
std::pair<Fq2, Fq2> fq4_square(const Fq2& a, const Fq2& b) {
  const Fq2 a2 = a.squared();
  const Fq2 b2 = b.squared();
  return {multiply_by_xi(b2) + a2, (a + b).squared() - a2 - b2};
}

// z^|x| in the cyclotomic subgroup.
Fq12 cyclotomic_power_by_x(const Fq12& z) {
  Fq12 result = z;
  for (int bit = 62; bit >= 0; --bit) {
    result = result.cyclotomic_squared();
    if ((kBlsX >> bit) & 1) result *= z;
  }
  return result;
}

}  // namespace

Fq12 Fq12::frobenius(unsigned power) const {
  Fq12 result = *this;
  for (unsigned step = 0; step < power % 12; ++step) result = frobenius_once(result);
  return result;
}

Fq12 Fq12::cyclotomic_squared() const {
  const auto [t3, t4] = fq4_square(c0.c0, c1.c1);
  const auto [t5, t6] = fq4_square(c1.c0, c0.c2);
  const auto [t7, t8] = fq4_square(c0.c1, c1.c2);
  const Fq2 t9 = multiply_by_xi(t8);
  return {{(t3 - c0.c0).doubled() + t3, (t5 - c0.c1).doubled() + t5, (t7 - c0.c2).doubled() + t7},
          {(t9 + c1.c0).doubled() + t9, (t4 + c1.c1).doubled() + t4, (t6 + c1.c2).doubled() + t6}};
}

G2Prepared prepare_g2(const G2Affine& point) {
  G2Prepared prepared;
  if (point.infinity) return prepared;
  prepared.infinity = false;
  prepared.lines.reserve(64 + 6);
  // T in homogeneous projective coordinates (X/Z, Y/Z): no inversion. The formulas are
  // @noble/curves' (Costello-Lange-Naehrig's for a = 0), each line scaled by a factor in Fq2.
  static const Fq2 half{Fq::from_uint64(2).inverse(), Fq::zero()};
  const Fq2 b = G2Curve::b();
  Fq2 x = point.x, y = point.y, z = Fq2::one();
  auto triple = [](const Fq2& value) { return value.doubled() + value; };
  for (int bit = 62; bit >= 0; --bit) {
    {  // Tangent at T, and T = 2T.
      const Fq2 t0 = y.squared();
      const Fq2 t1 = z.squared();
      const Fq2 t2 = triple(t1) * b;
      const Fq2 t3 = triple(t2);
      const Fq2 t4 = (y + z).squared() - t1 - t0;
      prepared.lines.push_back(G2Prepared::Line{t2 - t0, triple(x.squared()), -t4});
      const Fq2 next_x = (t0 - t3) * x * y * half;
      const Fq2 next_y = ((t0 + t3) * half).squared() - triple(t2.squared());
      z = t0 * t4;
      x = next_x;
      y = next_y;
    }
    if ((kBlsX >> bit) & 1) {  // Chord through T and Q, and T = T + Q.
      const Fq2 t0 = y - point.y * z;
      const Fq2 t1 = x - point.x * z;
      prepared.lines.push_back(G2Prepared::Line{t0 * point.x - t1 * point.y, -t0, t1});
      const Fq2 t2 = t1.squared();
      const Fq2 t3 = t2 * t1;
      const Fq2 t4 = t2 * x;
      const Fq2 t5 = t3 - t4.doubled() + t0.squared() * z;
      const Fq2 next_y = (t4 - t5) * t0 - t3 * y;
      x = t1 * t5;
      y = next_y;
      z = z * t3;
    }
  }
  return prepared;
}

Fq12 miller_loop(std::span<const std::pair<G1Affine, const G2Prepared*>> pairs) {
  struct Term {
    Fq x, y;
    const G2Prepared* q;
  };
  std::vector<Term> terms;
  for (const auto& [p, q] : pairs) {
    if (p.infinity || q == nullptr || q->infinity) continue;
    terms.push_back(Term{p.x, p.y, q});
  }
  Fq12 f = Fq12::one();
  std::size_t line = 0;
  auto apply = [&](std::size_t index) {
    for (const auto& term : terms) {
      const auto& line = term.q->lines[index];
      f = f.multiply_by_014(line.c0, line.c1 * term.x, line.c2 * term.y);
    }
  };
  for (int bit = 62; bit >= 0; --bit) {
    if (bit != 62) f = f.squared();  // f starts at 1: its first squaring is free
    apply(line++);
    if ((kBlsX >> bit) & 1) apply(line++);
  }
  return f.conjugate();
}

Fq12 final_exponentiation(const Fq12& f) {
  // Easy part: t1 = f^((q^6 - 1)(q^2 + 1)), in the cyclotomic subgroup from here on.
  const Fq12 t0 = f.conjugate() * f.inverse();
  const Fq12 t1 = t0.frobenius(2) * t0;
  // Hard part, as @noble/curves (and zkcrypto's bls12_381) chain it; z^x = conj(z^|x|).
  auto power_by_x = [](const Fq12& z) { return cyclotomic_power_by_x(z).conjugate(); };
  const Fq12 t2 = power_by_x(t1);
  const Fq12 t3 = t1.cyclotomic_squared().conjugate() * t2;
  const Fq12 t4 = power_by_x(t3);
  const Fq12 t5 = power_by_x(t4);
  const Fq12 t6 = power_by_x(t5) * t2.cyclotomic_squared();
  const Fq12 t7 = power_by_x(t6);
  return (t2 * t5).frobenius(2) * (t4 * t1).frobenius(3) * (t6 * t1.conjugate()).frobenius(1) * (t7 * t3.conjugate() * t1);
}

Fq12 multi_pairing(std::span<const std::pair<G1Affine, const G2Prepared*>> pairs) {
  return final_exponentiation(miller_loop(pairs));
}

Fq12 pairing(const G1Affine& p, const G2Affine& q) {
  const G2Prepared prepared = prepare_g2(q);
  const std::pair<G1Affine, const G2Prepared*> pair{p, &prepared};
  return multi_pairing(std::span(&pair, 1));
}

}  // namespace stagehand::math
