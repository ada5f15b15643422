#include "groth16/setup.hpp"

#include "groth16/fixed_base.hpp"
#include "groth16/prover.hpp"
#include "math/ntt.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <thread>

namespace stagehand::groth16 {
namespace {

using math::Fr;

unsigned resolve_threads(unsigned requested) {
  return requested != 0 ? requested : std::max(1u, std::thread::hardware_concurrency());
}

// Runs body(begin, end) over [0, count) split into contiguous ranges, one per thread.
template <class Body>
void parallel_ranges(std::size_t count, unsigned threads, Body&& body) {
  threads = static_cast<unsigned>(std::clamp<std::size_t>(count / 256, 1, threads));
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < threads; ++t) workers.emplace_back([&, t] { body(count * t / threads, count * (t + 1) / threads); });
  body(0, count / threads);
  for (auto& worker : workers) worker.join();
}

// Montgomery's trick: every nonzero value replaced by its inverse.
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
std::vector<math::AffinePoint<Curve>> multiply_all(const FixedBase<Curve>& base, const std::vector<Fr>& scalars,
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

Fr random_nonzero(ProofRandomness& source, std::optional<std::uint64_t>& seed) {
  for (;;) {
    source = seed ? ProofRandomness::from_seed((*seed)++) : ProofRandomness::from_system();
    if (!source.r.is_zero()) return source.r;
  }
}

}  // namespace

CoefficientList constraint_coefficients(const R1cs& r1cs) {
  // Reserved: at 2^26 the section is gigabytes, and a vector growing by doubling would hold one
  // and a half times that at its last move.
  const std::uint32_t n_public = r1cs.n_public();
  std::size_t entries = std::size_t{n_public} + 1;
  for (const auto& constraint : r1cs.constraints) entries += constraint.a.size() + constraint.b.size();
  CoefficientList coefficients;
  coefficients.reserve(entries);
  const std::size_t constraint_count = r1cs.constraints.size();
  for (std::size_t c = 0; c < constraint_count; ++c) {
    const auto& constraint = r1cs.constraints[c];
    for (const auto& term : constraint.a) coefficients.push_back({0, static_cast<std::uint32_t>(c), term.wire, term.coefficient});
    for (const auto& term : constraint.b) coefficients.push_back({1, static_cast<std::uint32_t>(c), term.wire, term.coefficient});
  }
  // The extra A-only rows binding the public signals (and the constant) to the proof.
  for (std::uint32_t s = 0; s <= n_public; ++s) {
    coefficients.push_back({0, static_cast<std::uint32_t>(constraint_count + s), s, Fr::one()});
  }
  return coefficients;
}

ProvingKey setup_from_r1cs(const R1cs& r1cs, const SetupOptions& options) {
  const unsigned threads = resolve_threads(options.thread_count);
  // The reader checks these; an R1cs built in memory must hold to them too before anything is
  // sized from it (64 bits: the counts are u32 and their sums may not fit).
  const std::uint64_t signals = std::uint64_t{r1cs.n_outputs} + r1cs.n_public_inputs + r1cs.n_private_inputs + 1;
  if (r1cs.n_wires == 0 || signals > r1cs.n_wires) {
    throw std::invalid_argument(fmt::format("setup: {} wires cannot hold {} outputs, {} public and {} private inputs and the constant",
                                            r1cs.n_wires, r1cs.n_outputs, r1cs.n_public_inputs, r1cs.n_private_inputs));
  }
  ProvingKey key;
  key.n_vars = r1cs.n_wires;
  key.n_public = r1cs.n_public();
  key.domain_log2 = domain_log2_for(r1cs.constraints.size(), key.n_public);
  if (key.domain_log2 > kMaxDomainLog2) {
    throw std::runtime_error(fmt::format("the circuit needs a domain of 2^{}: more than 2^{}", key.domain_log2, kMaxDomainLog2));
  }
  key.domain_size = 1u << key.domain_log2;
  const std::size_t n = key.domain_size;
  const std::size_t constraint_count = r1cs.constraints.size();

  // The toxic waste.
  std::optional<std::uint64_t> seed = options.seed;
  ProofRandomness scratch;
  const Fr tau = random_nonzero(scratch, seed);
  const Fr alpha = random_nonzero(scratch, seed);
  const Fr beta = random_nonzero(scratch, seed);
  const Fr gamma = random_nonzero(scratch, seed);
  const Fr delta = random_nonzero(scratch, seed);

  const auto domain = math::Domain::snarkjs(key.domain_log2, threads);
  const auto lagrange = lagrange_at(tau, domain.root(), n, n, threads);

  // u_i(τ), v_i(τ), w_i(τ) and the coefficient section.
  key.coefficients = constraint_coefficients(r1cs);
  std::vector<Fr> u(key.n_vars), v(key.n_vars), w(key.n_vars);
  for (std::size_t c = 0; c < constraint_count; ++c) {
    const auto& constraint = r1cs.constraints[c];
    for (const auto& term : constraint.a) u[term.wire] += term.coefficient * lagrange[c];
    for (const auto& term : constraint.b) v[term.wire] += term.coefficient * lagrange[c];
    for (const auto& term : constraint.c) w[term.wire] += term.coefficient * lagrange[c];
  }
  for (std::uint32_t s = 0; s <= key.n_public; ++s) u[s] += lagrange[constraint_count + s];

  const FixedBase<math::G1Curve> g1(math::G1Curve::generator());
  const FixedBase<math::G2Curve> g2(math::G2Curve::generator());
  key.alpha1 = g1.multiply(alpha).to_affine();
  key.beta1 = g1.multiply(beta).to_affine();
  key.delta1 = g1.multiply(delta).to_affine();
  key.beta2 = g2.multiply(beta).to_affine();
  key.gamma2 = g2.multiply(gamma).to_affine();
  key.delta2 = g2.multiply(delta).to_affine();

  auto multiply_g1 = [&](const std::vector<Fr>& scalars) {
    return options.multiply_g1 ? options.multiply_g1(scalars) : G1Points::encode(multiply_all(g1, scalars, threads), threads);
  };
  auto multiply_g2 = [&](const std::vector<Fr>& scalars) {
    return options.multiply_g2 ? options.multiply_g2(scalars) : G2Points::encode(multiply_all(g2, scalars, threads), threads);
  };
  key.a = multiply_g1(u);
  key.b1 = multiply_g1(v);
  key.b2 = multiply_g2(v);

  const Fr gamma_inverse = gamma.inverse();
  const Fr delta_inverse = delta.inverse();
  std::vector<Fr> ic_scalars(key.n_public + 1), c_scalars(key.n_vars - key.n_public - 1);
  for (std::size_t i = 0; i < key.n_vars; ++i) {
    const Fr combined = beta * u[i] + alpha * v[i] + w[i];
    if (i <= key.n_public) {
      ic_scalars[i] = combined * gamma_inverse;
    } else {
      c_scalars[i - key.n_public - 1] = combined * delta_inverse;
    }
  }
  key.ic = multiply_all(g1, ic_scalars, threads);
  key.c = multiply_g1(c_scalars);

  // H_j = L^{2n}_{2j+1}(τ)/δ: the odd-index Lagrange basis of ⟨ω_2n⟩.
  const Fr root_2n = domain.coset_generator();  // ω_2n
  auto lagrange_2n = lagrange_at(tau, root_2n, 2 * n, 2 * n, threads);
  std::vector<Fr> h_scalars(n);
  for (std::size_t j = 0; j < n; ++j) h_scalars[j] = lagrange_2n[2 * j + 1] * delta_inverse;
  key.h = multiply_g1(h_scalars);
  return key;
}

}  // namespace stagehand::groth16
