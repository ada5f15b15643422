#include "math/benchmark.hpp"

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "math/bn254.hpp"
#include "math/fq.hpp"
#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/msm.hpp"
#include "math/ntt.hpp"
#include "math/parallel.hpp"

namespace stagehand::math {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

template <class Field>
Field random_element(std::mt19937_64& generator) {
  typename Field::LimbArray limbs{};
  for (auto& limb : limbs) limb = generator();
  // Clearing the top bits of the top limb below the modulus's leaves a value below 2^(bits-1) < p.
  limbs.back() &= (std::uint64_t{1} << ((Field::modulus_bit_count - 1) % 64)) - 1;
  return *Field::from_canonical_limbs(limbs);
}

// Multiplications per second on one thread: four independent chains, so the figure is the
// throughput of the multiplier rather than the latency of one dependent chain.
template <class Field>
double multiplications_per_second(std::uint64_t multiplication_count, std::mt19937_64& generator) {
  Field chains[4] = {random_element<Field>(generator), random_element<Field>(generator),
                     random_element<Field>(generator), random_element<Field>(generator)};
  const Field factor = random_element<Field>(generator);
  const auto start = Clock::now();
  for (std::uint64_t step = 0; step < multiplication_count / 4; ++step) {
    for (auto& chain : chains) chain *= factor;
  }
  const double elapsed_seconds = seconds_since(start);
  // Keep the result alive so that the loop is not optimised away.
  volatile bool sink = (chains[0] + chains[1] + chains[2] + chains[3]).is_zero();
  (void)sink;
  return static_cast<double>(multiplication_count) / elapsed_seconds;
}

std::vector<G1Affine> random_g1_points(std::size_t count, std::mt19937_64& generator) {
  // Consecutive multiples P0 + i·Q: one addition per point instead of one scalar
  // multiplication, and all distinct because Q has prime order r > count.
  const G1Projective step = G1Projective::from_affine(G1Curve::generator()).multiply(random_element<Fr>(generator));
  std::vector<G1Projective> projective(count);
  G1Projective current = step.multiply(random_element<Fr>(generator));
  for (auto& point : projective) {
    point = current;
    current += step;
  }
  std::vector<G1Affine> affine(count);
  batch_to_affine<G1Curve>(projective, affine);
  return affine;
}

}  // namespace

int run_benchmark(std::ostream& out, const BenchmarkOptions& options) {
  const unsigned thread_count = detail::resolve_thread_count(options.threads);
  std::mt19937_64 generator(20261129);
  out << fmt::format("Stagehand CPU reference (src/math), {} thread{} of {} hardware thread{}{}\n", thread_count,
                     thread_count == 1 ? "" : "s", std::thread::hardware_concurrency(),
                     std::thread::hardware_concurrency() == 1 ? "" : "s", options.quick ? ", quick sizes" : "");
  out << fmt::format("{:<34} {:>14} {:>16}\n", "operation", "time", "rate");

  const std::uint64_t multiplication_count = options.quick ? 2'000'000 : 20'000'000;
  const double fr_rate = multiplications_per_second<Fr>(multiplication_count, generator);
  out << fmt::format("{:<34} {:>14} {:>12.1f} M/s\n", "Fr multiplication (1 thread)", "", fr_rate / 1e6);
  const double fq_rate = multiplications_per_second<Fq>(multiplication_count, generator);
  out << fmt::format("{:<34} {:>14} {:>12.1f} M/s\n", "Fq multiplication (1 thread)", "", fq_rate / 1e6);
  const double bn254_fq_rate = multiplications_per_second<bn254::Fq>(multiplication_count, generator);
  out << fmt::format("{:<34} {:>14} {:>12.1f} M/s\n", "BN254 Fq multiplication (1 thread)", "", bn254_fq_rate / 1e6);

  const std::vector<unsigned> ntt_log_sizes =
      options.quick ? std::vector<unsigned>{12, 14} : std::vector<unsigned>{16, 20};
  for (const unsigned log_size : ntt_log_sizes) {
    const Domain domain = Domain::snarkjs(log_size, thread_count);
    std::vector<Fr> values(domain.size());
    for (auto& value : values) value = random_element<Fr>(generator);
    const auto start = Clock::now();
    ntt(values, domain, thread_count);
    const double elapsed_seconds = seconds_since(start);
    out << fmt::format("{:<34} {:>11.1f} ms {:>12.2f} M/s\n", fmt::format("NTT 2^{} (forward)", log_size),
                       elapsed_seconds * 1e3, static_cast<double>(domain.size()) / elapsed_seconds / 1e6);
  }

  const std::vector<unsigned> msm_log_sizes =
      options.quick ? std::vector<unsigned>{12, 14} : std::vector<unsigned>{16, 20};
  for (const unsigned log_size : msm_log_sizes) {
    const std::size_t count = std::size_t{1} << log_size;
    const std::vector<G1Affine> points = random_g1_points(count, generator);
    std::vector<Fr> scalars(count);
    for (auto& scalar : scalars) scalar = random_element<Fr>(generator);
    const MsmPlan plan = plan_msm(count, thread_count);
    const auto start = Clock::now();
    const G1Projective result = msm(points, scalars, thread_count);
    const double elapsed_seconds = seconds_since(start);
    if (!result.is_on_curve()) {
      out << "error: the MSM result is not on the curve\n";
      return 1;
    }
    out << fmt::format("{:<34} {:>11.1f} ms {:>12.3f} M/s\n",
                       fmt::format("G1 MSM 2^{} (window {} bits)", log_size, plan.window_bits), elapsed_seconds * 1e3,
                       static_cast<double>(count) / elapsed_seconds / 1e6);
  }
  return 0;
}

}  // namespace stagehand::math
