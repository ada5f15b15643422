// The H-polynomial step of Groth16 in the two forms in use.
//
// Both take a, b, c: the evaluations of the constraint polynomials A, B, C on the domain ⟨ω⟩
// (a[j] = A(ω^j), the per-constraint sums of the witness against the A, B, C matrices, zero
// padded), and overwrite all three. The result is left in a.
#pragma once

#include <span>

#include "math/fr.hpp"
#include "math/ntt.hpp"

namespace stagehand::math {

// snarkjs: each of A, B, C is interpolated (intt) and evaluated on the coset g·⟨ω⟩ with g^2 = ω,
// i.e. at x_j = ω_2n^(2j+1); then a[j] = A(x_j)·B(x_j) - C(x_j). There is no division by Z:
// the .zkey's H points are the odd-index Lagrange basis of size 2n (docs/snarkjs-formats.md, step 3).
// The domain's coset generator must square to its root (Domain::snarkjs is built that way);
// std::invalid_argument otherwise.
void h_evaluations_snarkjs(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, const Domain& domain,
                           unsigned thread_count = 0);

// The classic form (bellman and the production prover): evaluate A, B, C on the coset g·⟨ω⟩
// with g the domain's coset generator (7 for Domain::classic), divide A·B - C by Z(x) = x^n - 1,
// which is the constant g^n - 1 on the coset, and interpolate back (coset_intt). a then holds
// the n coefficients of h = (A·B - C)/Z. When the witness satisfies the constraints, h has
// degree at most n - 2, so a[n-1] is zero; otherwise the result is not a quotient at all.
void h_coefficients_classic(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, const Domain& domain,
                            unsigned thread_count = 0);

// The classic form in two halves, so that a caller short of memory holds only two of a, b, c at once;
// h_classic_product then h_classic_finish leave in a exactly what h_coefficients_classic does.
//   h_classic_product: a := A·B on the coset g·⟨ω⟩; b is left holding B on the coset.
//   h_classic_finish:  a := the coefficients of (a − C)/Z, a being h_classic_product's result; c is
//                      left holding C on the coset.
// Each takes evaluations on the domain ⟨ω⟩ as h_coefficients_classic does; std::invalid_argument
// where a span is not of the domain's size.
void h_classic_product(std::span<Fr> a, std::span<Fr> b, const Domain& domain, unsigned thread_count = 0);
void h_classic_finish(std::span<Fr> a, std::span<Fr> c, const Domain& domain, unsigned thread_count = 0);

namespace bn254 {
// The same for BN254's Fr (the snarkjs form of its keys).
void h_evaluations_snarkjs(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, const Domain& domain,
                           unsigned thread_count = 0);
void h_coefficients_classic(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, const Domain& domain,
                            unsigned thread_count = 0);
void h_classic_product(std::span<Fr> a, std::span<Fr> b, const Domain& domain, unsigned thread_count = 0);
void h_classic_finish(std::span<Fr> a, std::span<Fr> c, const Domain& domain, unsigned thread_count = 0);
}  // namespace bn254

}  // namespace stagehand::math
