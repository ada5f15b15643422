#include "math/h_polynomial.hpp"

#include <stdexcept>

#include "math/parallel.hpp"

namespace stagehand::math {
namespace {

// Each a template over the field; intt, coset_ntt and coset_intt are found by argument-dependent
// lookup in the field's namespace (stagehand::math or stagehand::math::bn254).
template <class Fr, class Domain>
void check_sizes(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, const Domain& domain) {
  if (a.size() != domain.size() || b.size() != domain.size() || c.size() != domain.size()) {
    throw std::invalid_argument("h polynomial: a, b and c must each have the domain's size");
  }
}

// Moves a, b and c from evaluations on the domain to evaluations on the coset.
template <class Fr, class Domain>
void evaluate_on_coset(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, const Domain& domain, unsigned thread_count) {
  for (const std::span<Fr> values : {a, b, c}) {
    intt(values, domain, thread_count);
    coset_ntt(values, domain, thread_count);
  }
}

// a[j] = (a[j]·b[j] - c[j])·factor.
template <class Fr>
void combine(std::span<Fr> a, std::span<const Fr> b, std::span<const Fr> c, const Fr& factor, unsigned thread_count) {
  detail::run_ranges(a.size(), thread_count, std::size_t{1} << 13, [&](std::size_t begin, std::size_t end) {
    for (std::size_t index = begin; index < end; ++index) a[index] = (a[index] * b[index] - c[index]) * factor;
  });
}

template <class Fr, class Domain>
void h_evaluations_snarkjs_of(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, const Domain& domain,
                              unsigned thread_count) {
  check_sizes(a, b, c, domain);
  if (domain.coset_generator().squared() != domain.root()) {
    throw std::invalid_argument(
        "h_evaluations_snarkjs: the coset generator must be a square root of the domain's root (ω_2n); use "
        "Domain::snarkjs");
  }
  evaluate_on_coset(a, b, c, domain, thread_count);
  combine<Fr>(a, b, c, Fr::one(), thread_count);
}

template <class Fr, class Domain>
void h_coefficients_classic_of(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, const Domain& domain,
                               unsigned thread_count) {
  check_sizes(a, b, c, domain);
  evaluate_on_coset(a, b, c, domain, thread_count);
  // Z(g·ω^j) = g^n·ω^(jn) - 1 = g^n - 1 for every j; the domain guarantees g^n != 1.
  const Fr vanishing_inverse = (domain.coset_generator().pow(domain.size()) - Fr::one()).inverse();
  combine<Fr>(a, b, c, vanishing_inverse, thread_count);
  coset_intt(a, domain, thread_count);
}

}  // namespace

void h_evaluations_snarkjs(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, const Domain& domain,
                           unsigned thread_count) {
  h_evaluations_snarkjs_of(a, b, c, domain, thread_count);
}

void h_coefficients_classic(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, const Domain& domain,
                            unsigned thread_count) {
  h_coefficients_classic_of(a, b, c, domain, thread_count);
}

namespace bn254 {

void h_evaluations_snarkjs(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, const Domain& domain,
                           unsigned thread_count) {
  h_evaluations_snarkjs_of(a, b, c, domain, thread_count);
}

void h_coefficients_classic(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, const Domain& domain,
                            unsigned thread_count) {
  h_coefficients_classic_of(a, b, c, domain, thread_count);
}

}  // namespace bn254

}  // namespace stagehand::math
