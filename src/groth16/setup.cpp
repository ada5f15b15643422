#include "groth16/setup.hpp"

#include "groth16/fixed_base.hpp"
#include "groth16/prover.hpp"
#include "math/ntt.hpp"

#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <iterator>
#include <thread>
#include <type_traits>

namespace stagehand::groth16 {
namespace {

unsigned resolve_threads(unsigned requested) {
  return requested != 0 ? requested : std::max(1u, std::thread::hardware_concurrency());
}

// Runs body(begin, end) over [0, count) split into contiguous ranges, one per thread.
template <class Body>
void parallel_ranges(std::size_t count, unsigned threads, Body&& body) {
  threads = static_cast<unsigned>(std::clamp<std::size_t>(count / 256, 1, threads));
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < threads; ++t)
    workers.emplace_back([&, t] { body(count * t / threads, count * (t + 1) / threads); });
  body(0, count / threads);
  for (auto& worker : workers) worker.join();
}

// Montgomery's trick: every nonzero value replaced by its inverse.
template <class Fr>
void batch_invert(std::vector<Fr>& values) {
  std::vector<Fr> prefix(values.size());
  Fr running = Fr::one();
  for (std::size_t i = 0; i < values.size(); ++i) {
    prefix[i] = running;
    if (!values[i].is_zero()) running *= values[i];
  }
  Fr inverse = running.inverse();
  for (std::size_t i = values.size(); i-- > 0;) {
    if (values[i].is_zero()) continue;
    const Fr value = values[i];
    values[i] = inverse * prefix[i];
    inverse *= value;
  }
}

// L_i(τ) for the Lagrange basis of ⟨root⟩ of size n, i < count: (τ^n − 1)/n · root^i / (τ − root^i).
// In ranges, one per thread, each with its own batch inversion: at 2^27 (the H section of a 2^26
// key) one thread took tens of seconds.
template <class Fr>
std::vector<Fr> lagrange_at(const Fr& tau, const Fr& root, std::size_t n, std::size_t count, unsigned threads) {
  std::vector<Fr> values(count);
  const Fr scale = (tau.pow(static_cast<std::uint64_t>(n)) - Fr::one()) * Fr::from_uint64(n).inverse();
  parallel_ranges(count, threads, [&](std::size_t begin, std::size_t end) {
    std::vector<Fr> powers(end - begin), denominators(end - begin);
    Fr power = root.pow(static_cast<std::uint64_t>(begin));
    for (std::size_t i = begin; i < end; ++i) {
      powers[i - begin] = power;
      denominators[i - begin] = tau - power;
      power *= root;
    }
    batch_invert(denominators);
    for (std::size_t i = begin; i < end; ++i) values[i] = scale * powers[i - begin] * denominators[i - begin];
  });
  return values;
}

// scalars[i]·G for every i, to affine, in parallel.
template <class Curve>
std::vector<math::AffinePoint<Curve>> multiply_all(const FixedBase<Curve>& base,
                                                   const std::vector<typename Curve::ScalarField>& scalars,
                                                   unsigned threads) {
  using Affine = math::AffinePoint<Curve>;
  using Projective = math::ProjectivePoint<Curve>;
  std::vector<Affine> out(scalars.size());
  parallel_ranges(scalars.size(), threads, [&](std::size_t begin, std::size_t end) {
    constexpr std::size_t kChunk = 4096;
    std::vector<Projective> chunk;
    for (std::size_t start = begin; start < end; start += kChunk) {
      const std::size_t stop = std::min(end, start + kChunk);
      chunk.resize(stop - start);
      for (std::size_t i = start; i < stop; ++i) chunk[i - start] = base.multiply(scalars[i]);
      math::batch_to_affine<Curve>(chunk, std::span<Affine>(out.data() + start, stop - start));
    }
  });
  return out;
}

template <class Randomness>
auto random_nonzero(Randomness& source, std::optional<std::uint64_t>& seed) {
  for (;;) {
    source = seed ? Randomness::from_seed((*seed)++) : Randomness::from_system();
    if (!source.r.is_zero()) return source.r;
  }
}

// The secrets, drawn in this order from the seed where there is one: the same seed gives both
// forms of key the same α, β, γ, δ and τ. Randomness: the curve's ProofRandomness.
template <class Fr>
struct ToxicWaste {
  Fr tau, alpha, beta, gamma, delta;
};

template <class Randomness>
auto draw_toxic_waste(std::optional<std::uint64_t> seed) {
  Randomness scratch;
  ToxicWaste<decltype(scratch.r)> waste;
  waste.tau = random_nonzero(scratch, seed);
  waste.alpha = random_nonzero(scratch, seed);
  waste.beta = random_nonzero(scratch, seed);
  waste.gamma = random_nonzero(scratch, seed);
  waste.delta = random_nonzero(scratch, seed);
  return waste;
}

// The reader checks these; an R1cs built in memory must hold to them too before anything is
// sized from it (64 bits: the counts are u32 and their sums may not fit).
template <class R1csType>
void check_wires(const R1csType& r1cs) {
  const std::uint64_t signals = std::uint64_t{r1cs.n_outputs} + r1cs.n_public_inputs + r1cs.n_private_inputs + 1;
  if (r1cs.n_wires == 0 || signals > r1cs.n_wires) {
    throw std::invalid_argument(
        fmt::format("setup: {} wires cannot hold {} outputs, {} public and {} private inputs and the constant",
                    r1cs.n_wires, r1cs.n_outputs, r1cs.n_public_inputs, r1cs.n_private_inputs));
  }
}

// u_i(τ), v_i(τ), w_i(τ) for every wire from the Lagrange basis at τ of the constraint rows, the
// A-only rows of the public signals and the constant after the circuit's (both forms have them).
template <class Fr>
struct Columns {
  std::vector<Fr> u, v, w;
};

template <class Fr>
Columns<Fr> evaluate_columns(const BasicR1cs<Fr>& r1cs, std::span<const Fr> lagrange) {
  Columns<Fr> columns{std::vector<Fr>(r1cs.n_wires), std::vector<Fr>(r1cs.n_wires), std::vector<Fr>(r1cs.n_wires)};
  const std::size_t constraint_count = r1cs.constraints.size();
  for (std::size_t c = 0; c < constraint_count; ++c) {
    const auto& constraint = r1cs.constraints[c];
    for (const auto& term : constraint.a) columns.u[term.wire] += term.coefficient * lagrange[c];
    for (const auto& term : constraint.b) columns.v[term.wire] += term.coefficient * lagrange[c];
    for (const auto& term : constraint.c) columns.w[term.wire] += term.coefficient * lagrange[c];
  }
  for (std::uint32_t s = 0; s <= r1cs.n_public(); ++s) columns.u[s] += lagrange[constraint_count + s];
  return columns;
}

// α·G1, β·G1, β·G2, γ·G2, δ·G1, δ·G2 (the verifying key less its ic) into `out`, a key or a
// verifying key of Description's curve.
template <class Description, class Target>
void set_fixed_points(Target& out, const ToxicWaste<typename Description::Fr>& waste) {
  const FixedBase<typename Description::G1> g1(Description::G1::generator());
  const FixedBase<typename Description::G2> g2(Description::G2::generator());
  out.alpha1 = g1.multiply(waste.alpha).to_affine();
  out.beta1 = g1.multiply(waste.beta).to_affine();
  out.delta1 = g1.multiply(waste.delta).to_affine();
  out.beta2 = g2.multiply(waste.beta).to_affine();
  out.gamma2 = g2.multiply(waste.gamma).to_affine();
  out.delta2 = g2.multiply(waste.delta).to_affine();
}

// scalars[i]·G for G1's or G2's generator of Description's curve, encoded as a key's sets (g1,
// g2): with the options' functions where set (a device), else with the CPU's fixed-base tables;
// or as affine points (g1_points, the few ic points), on the CPU.
template <class Description>
class SetMultiplier {
 public:
  using Fr = typename Description::Fr;
  using Options = BasicSetupOptions<Description>;
  SetMultiplier(const Options& options, unsigned threads)
      : options_(options), threads_(threads), g1_(Description::G1::generator()), g2_(Description::G2::generator()) {}
  auto g1_points(const std::vector<Fr>& scalars) const { return multiply_all(g1_, scalars, threads_); }
  typename Options::G1Set g1(const std::vector<Fr>& scalars) const {
    if (options_.multiply_g1) return checked(options_.multiply_g1(scalars), scalars.size(), "G1");
    return Options::G1Set::encode(g1_points(scalars), threads_);
  }
  typename Options::G2Set g2(const std::vector<Fr>& scalars) const {
    if (options_.multiply_g2) return checked(options_.multiply_g2(scalars), scalars.size(), "G2");
    return Options::G2Set::encode(multiply_all(g2_, scalars, threads_), threads_);
  }

 private:
  // The other end of the hand-off to a device: one point a scalar.
  template <class Set>
  static Set checked(Set points, std::size_t count, const char* group) {
    STAGEHAND_ASSERT(points.size() == count, "setup: {} {} points for {} scalars", points.size(), group, count);
    return points;
  }

  const Options& options_;
  unsigned threads_;
  FixedBase<typename Description::G1> g1_;
  FixedBase<typename Description::G2> g2_;
};

// (β·u_i + α·v_i + w_i)/γ for the first `inputs` wires (ic), the same over δ for the rest (a
// .zkey's C, a .params key's L).
template <class Fr>
struct CombinedColumns {
  std::vector<Fr> ic, rest;
};

template <class Fr>
CombinedColumns<Fr> combine_columns(const Columns<Fr>& columns, const ToxicWaste<Fr>& waste, std::size_t inputs) {
  const std::size_t wires = columns.u.size();
  STAGEHAND_ASSERT(inputs <= wires, "setup: {} inputs of {} wires", inputs, wires);
  const Fr gamma_inverse = waste.gamma.inverse();
  const Fr delta_inverse = waste.delta.inverse();
  CombinedColumns<Fr> out{std::vector<Fr>(inputs), std::vector<Fr>(wires - inputs)};
  for (std::size_t i = 0; i < wires; ++i) {
    const Fr combined = waste.beta * columns.u[i] + waste.alpha * columns.v[i] + columns.w[i];
    if (i < inputs) {
      out.ic[i] = combined * gamma_inverse;
    } else {
      out.rest[i - inputs] = combined * delta_inverse;
    }
  }
  return out;
}

// bellperson's A and B queries leave out the variables whose column is zero at τ.
std::vector<math::Fr> nonzero(const std::vector<math::Fr>& values) {
  std::vector<math::Fr> kept;
  std::copy_if(values.begin(), values.end(), std::back_inserter(kept),
               [](const math::Fr& value) { return !value.is_zero(); });
  return kept;
}

// bellperson's H scalars: τ^i·Z(τ)/δ for i < m − 1, Z(τ) = τ^m − 1.
std::vector<math::Fr> power_h_scalars(const ToxicWaste<math::Fr>& waste, std::size_t m, unsigned threads) {
  using math::Fr;
  const Fr z = waste.tau.pow(static_cast<std::uint64_t>(m)) - Fr::one();
  if (z.is_zero()) throw std::runtime_error("setup: tau lies in the domain (Z(tau) = 0): use another seed");
  const Fr first = z * waste.delta.inverse();
  std::vector<Fr> scalars(m - 1);
  parallel_ranges(scalars.size(), threads, [&](std::size_t begin, std::size_t end) {
    Fr value = first * waste.tau.pow(static_cast<std::uint64_t>(begin));
    for (std::size_t i = begin; i < end; ++i, value *= waste.tau) scalars[i] = value;
  });
  return scalars;
}

template <class Fr>
BasicCoefficientList<Fr> coefficients_of(const BasicR1cs<Fr>& r1cs) {
  // Reserved: at 2^26 the section is gigabytes, and a vector growing by doubling would hold one
  // and a half times that at its last move.
  const std::uint32_t n_public = r1cs.n_public();
  std::size_t entries = std::size_t{n_public} + 1;
  for (const auto& constraint : r1cs.constraints) entries += constraint.a.size() + constraint.b.size();
  BasicCoefficientList<Fr> coefficients;
  coefficients.reserve(entries);
  const std::size_t constraint_count = r1cs.constraints.size();
  for (std::size_t c = 0; c < constraint_count; ++c) {
    const auto& constraint = r1cs.constraints[c];
    for (const auto& term : constraint.a)
      coefficients.push_back({0, static_cast<std::uint32_t>(c), term.wire, term.coefficient});
    for (const auto& term : constraint.b)
      coefficients.push_back({1, static_cast<std::uint32_t>(c), term.wire, term.coefficient});
  }
  // The extra A-only rows binding the public signals (and the constant) to the proof.
  for (std::uint32_t s = 0; s <= n_public; ++s) {
    coefficients.push_back({0, static_cast<std::uint32_t>(constraint_count + s), s, Fr::one()});
  }
  return coefficients;
}

// The key's sizes from the circuit; std::runtime_error where its domain is larger than supported
// or than the curve's roots of unity allow (the H section needs the 2n-th roots).
template <class Key>
void size_key(Key& key, std::uint32_t n_wires, std::uint32_t n_public, std::size_t constraint_count) {
  using Fr = typename Key::Description::Fr;
  key.n_vars = n_wires;
  key.n_public = n_public;
  key.domain_log2 = domain_log2_for(constraint_count, key.n_public);
  const unsigned largest = std::min(kMaxDomainLog2, Fr::two_adicity - 1);
  if (key.domain_log2 > largest) {
    throw std::runtime_error(fmt::format("the circuit needs a domain of 2^{}: more than the 2^{} of a {} key",
                                         key.domain_log2, largest, curve_name(Key::curve)));
  }
  key.domain_size = 1u << key.domain_log2;
}

template <class Key>
using RandomnessOf = std::conditional_t<Key::curve == Curve::bn254, bn254::ProofRandomness, ProofRandomness>;

template <class Key, class R1csType>
Key setup_key(const R1csType& r1cs, const BasicSetupOptions<typename Key::Description>& options) {
  using Fr = typename Key::Description::Fr;
  static_assert(std::is_same_v<Fr, typename R1csType::Fr>, "the circuit's field is the key's");
  const unsigned threads = resolve_threads(options.thread_count);
  check_wires(r1cs);
  Key key;
  size_key(key, r1cs.n_wires, r1cs.n_public(), r1cs.constraints.size());
  const std::size_t n = key.domain_size;
  const auto waste = draw_toxic_waste<RandomnessOf<Key>>(options.seed);
  const auto domain = math::BasicDomain<Fr>::snarkjs(key.domain_log2, threads);
  const auto columns = evaluate_columns<Fr>(r1cs, lagrange_at(waste.tau, domain.root(), n, n, threads));
  key.coefficients = coefficients_of(r1cs);
  set_fixed_points<typename Key::Description>(key, waste);
  const SetMultiplier<typename Key::Description> multiply(options, threads);
  key.a = multiply.g1(columns.u);
  key.b1 = multiply.g1(columns.v);
  key.b2 = multiply.g2(columns.v);
  const auto combined = combine_columns(columns, waste, key.n_public + 1);
  key.ic = multiply.g1_points(combined.ic);
  key.c = multiply.g1(combined.rest);

  // H_j = L^{2n}_{2j+1}(τ)/δ: the odd-index Lagrange basis of ⟨ω_2n⟩.
  const Fr root_2n = domain.coset_generator();  // ω_2n
  const auto lagrange_2n = lagrange_at(waste.tau, root_2n, 2 * n, 2 * n, threads);
  const Fr delta_inverse = waste.delta.inverse();
  std::vector<Fr> h_scalars(n);
  for (std::size_t j = 0; j < n; ++j) h_scalars[j] = lagrange_2n[2 * j + 1] * delta_inverse;
  key.h = multiply.g1(h_scalars);
  STAGEHAND_ASSERT(key.h.size() == n && key.ic.size() == key.n_public + 1u,
                   "setup: {} H points for a domain of {}, {} IC for {} public", key.h.size(), n, key.ic.size(),
                   key.n_public);
  return key;
}

}  // namespace

CoefficientList constraint_coefficients(const R1cs& r1cs) { return coefficients_of(r1cs); }

ProvingKey setup_from_r1cs(const R1cs& r1cs, const SetupOptions& options) {
  return setup_key<ProvingKey>(r1cs, options);
}

namespace bn254 {
ProvingKey setup_from_r1cs(const R1cs& r1cs, const bn254::SetupOptions& options) {
  return setup_key<ProvingKey>(r1cs, options);
}
}  // namespace bn254

unsigned params_domain_log2_for(std::uint64_t constraint_count, std::uint64_t public_count) {
  // bellperson: the constraints, one more a public input and the constant, rounded up to a power of two.
  const std::uint64_t rows = constraint_count + public_count + 1;
  return static_cast<unsigned>(std::bit_width(rows - 1));
}

ParamsKey setup_params_from_r1cs(const R1cs& r1cs, const SetupOptions& options) {
  const unsigned threads = resolve_threads(options.thread_count);
  check_wires(r1cs);
  const std::size_t inputs = std::size_t{r1cs.n_public()} + 1;
  const std::size_t rows = r1cs.constraints.size() + inputs;
  const unsigned log_size = params_domain_log2_for(r1cs.constraints.size(), r1cs.n_public());
  if (log_size > kMaxDomainLog2) {
    throw std::runtime_error(
        fmt::format("the circuit needs a domain of 2^{}: more than 2^{}", log_size, kMaxDomainLog2));
  }
  const std::size_t m = std::size_t{1} << log_size;
  const auto waste = draw_toxic_waste<ProofRandomness>(options.seed);
  // bellperson's domain: roots of unity from 7, which its prover's transforms use.
  const auto domain = math::Domain::classic(log_size, threads);
  const auto columns = evaluate_columns<math::Fr>(r1cs, lagrange_at(waste.tau, domain.root(), m, rows, threads));

  ParamsKey key;
  set_fixed_points<math::Bls12_381>(key.vk, waste);
  const auto combined = combine_columns(columns, waste, inputs);
  // bellperson refuses an unconstrained aux variable: its L point would be the identity.
  const auto unconstrained =
      std::find_if(combined.rest.begin(), combined.rest.end(), [](const math::Fr& value) { return value.is_zero(); });
  if (unconstrained != combined.rest.end()) {
    throw std::invalid_argument(
        fmt::format("setup: wire {} is in no constraint, and a .params key has an L point (never the "
                    "identity) for every private wire",
                    inputs + static_cast<std::size_t>(unconstrained - combined.rest.begin())));
  }
  const SetMultiplier<math::Bls12_381> multiply(options, threads);
  key.vk.ic = multiply.g1_points(combined.ic);
  key.l = multiply.g1(combined.rest);
  key.a = multiply.g1(nonzero(columns.u));
  const auto b_scalars = nonzero(columns.v);
  key.b_g1 = multiply.g1(b_scalars);
  key.b_g2 = multiply.g2(b_scalars);
  key.h = multiply.g1(power_h_scalars(waste, m, threads));
  return key;
}

}  // namespace stagehand::groth16
