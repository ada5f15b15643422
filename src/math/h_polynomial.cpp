#include "math/h_polynomial.hpp"

#include <initializer_list>
#include <stdexcept>
#include <string>

#include "math/parallel.hpp"

namespace stagehand::math {
namespace {

// Each a template over the field; intt, coset_ntt and coset_intt are found by argument-dependent
// lookup in the field's namespace (stagehand::math or stagehand::math::bn254).
template <class Fr, class Domain>
void check_sizes(std::initializer_list<std::span<Fr>> spans, const Domain& domain, const char* what) {
  for (const std::span<Fr> values : spans) {
    if (values.size() != domain.size()) {
      throw std::invalid_argument(std::string(what) + " must each have the domain's size");
    }
  }
}

// Moves each of `spans` from evaluations on the domain to evaluations on the coset.
template <class Fr, class Domain>
void evaluate_on_coset(std::initializer_list<std::span<Fr>> spans, const Domain& domain, unsigned thread_count) {
  for (const std::span<Fr> values : spans) {
    intt(values, domain, thread_count);
    coset_ntt(values, domain, thread_count);
  }
}

// An elementwise step over a's ranges: a[j] = step(a[j], j).
template <class Fr, class Step>
void update(std::span<Fr> a, unsigned thread_count, const Step& step) {
  detail::run_ranges(a.size(), thread_count, std::size_t{1} << 13, [&](std::size_t begin, std::size_t end) {
    for (std::size_t index = begin; index < end; ++index) a[index] = step(a[index], index);
  });
}

// Z(g·ω^j) = g^n·ω^(jn) - 1 = g^n - 1 for every j; the domain guarantees g^n != 1.
template <class Fr, class Domain>
Fr vanishing_inverse(const Domain& domain) {
  return (domain.coset_generator().pow(domain.size()) - Fr::one()).inverse();
}

template <class Fr, class Domain>
void h_evaluations_snarkjs_of(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, const Domain& domain,
                              unsigned thread_count) {
  check_sizes({a, b, c}, domain, "h polynomial: a, b and c");
  if (domain.coset_generator().squared() != domain.root()) {
    throw std::invalid_argument(
        "h_evaluations_snarkjs: the coset generator must be a square root of the domain's root (ω_2n); use "
        "Domain::snarkjs");
  }
  evaluate_on_coset({a, b, c}, domain, thread_count);
  update(a, thread_count, [&](const Fr& value, std::size_t index) { return value * b[index] - c[index]; });
}

template <class Fr, class Domain>
void h_classic_product_of(std::span<Fr> a, std::span<Fr> b, const Domain& domain, unsigned thread_count) {
  check_sizes({a, b}, domain, "h_classic_product: a and b");
  evaluate_on_coset({a, b}, domain, thread_count);
  update(a, thread_count, [&](const Fr& value, std::size_t index) { return value * b[index]; });
}

template <class Fr, class Domain>
void h_classic_finish_of(std::span<Fr> a, std::span<Fr> c, const Domain& domain, unsigned thread_count) {
  check_sizes({a, c}, domain, "h_classic_finish: a and c");
  evaluate_on_coset({c}, domain, thread_count);
  const Fr factor = vanishing_inverse<Fr>(domain);
  update(a, thread_count, [&](const Fr& value, std::size_t index) { return (value - c[index]) * factor; });
  coset_intt(a, domain, thread_count);
}

template <class Fr, class Domain>
void h_coefficients_classic_of(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, const Domain& domain,
                               unsigned thread_count) {
  // All three sizes first, so that a bad c is refused before a and b are overwritten.
  check_sizes({a, b, c}, domain, "h polynomial: a, b and c");
  h_classic_product_of(a, b, domain, thread_count);
  h_classic_finish_of(a, c, domain, thread_count);
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

void h_classic_product(std::span<Fr> a, std::span<Fr> b, const Domain& domain, unsigned thread_count) {
  h_classic_product_of(a, b, domain, thread_count);
}

void h_classic_finish(std::span<Fr> a, std::span<Fr> c, const Domain& domain, unsigned thread_count) {
  h_classic_finish_of(a, c, domain, thread_count);
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

void h_classic_product(std::span<Fr> a, std::span<Fr> b, const Domain& domain, unsigned thread_count) {
  h_classic_product_of(a, b, domain, thread_count);
}

void h_classic_finish(std::span<Fr> a, std::span<Fr> c, const Domain& domain, unsigned thread_count) {
  h_classic_finish_of(a, c, domain, thread_count);
}

}  // namespace bn254

}  // namespace stagehand::math
