// Number-theoretic transforms over Fr on the device, and the H-polynomial step built on them.
//
// Each function is one source instantiated for each curve (template <class Curve>, a description of
// ec/curves.cuh; BLS12-381's when none is named): the curve's Fr is the field.
//
// Values are Fr elements in Montgomery form (R = 2^256), 32 bytes each, little-endian words: the
// layout of stagehand::math::Fr and of snarkjs. Every transform is in place on natural-order data
// and matches the CPU reference (src/math/ntt.hpp):
//   forward:        coefficients c_i        -> evaluations Σ c_i ω^(ij)
//   inverse:        evaluations at ω^j      -> coefficients
//   coset_forward:  coefficients            -> evaluations at g·ω^j
//   coset_inverse:  evaluations at g·ω^j    -> coefficients
//
// A domain is a device table built once per (size, ω, g) by ntt_domain_init: powers of ω,
// ω^-1, g and g^-1 split into a low and a high table (x^e = low[e mod 2^L]·high[e >> L]), the
// 2^T-th roots for the in-block stages, the exact twiddles of the later passes (up to 2^22 powers of
// ω, read backwards for ω^-1) and a few constants. It takes ntt_domain_bytes(log_size) bytes: one
// polynomial's 32 bytes per element up to 2^22 (where the last pass reads its twiddles from the
// table), 10 MiB at 2^26; so any primitive root works (snarkjs: ω = 5^((r-1)/n), g = ω_2n; classic:
// ω = 7^((r-1)/n), g = 7), and the transforms need no other scratch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "device/kernel_abi.hpp"

namespace stagehand::cuda {

struct Bls12_381Curve;  // ec/curves.cuh
struct Bn254Curve;

inline constexpr unsigned kNttMinLogSize = 1;
inline constexpr unsigned kNttMaxLogSize = 27;

enum class NttKind { forward, inverse, coset_forward, coset_inverse };
// The `ntt` kernel's kind argument is an NttKind: the same order as kernel::NttKind.
static_assert(static_cast<std::uint64_t>(NttKind::forward) == kernel::argument(kernel::NttKind::forward) &&
                  static_cast<std::uint64_t>(NttKind::inverse) == kernel::argument(kernel::NttKind::inverse) &&
                  static_cast<std::uint64_t>(NttKind::coset_forward) ==
                      kernel::argument(kernel::NttKind::coset_forward) &&
                  static_cast<std::uint64_t>(NttKind::coset_inverse) ==
                      kernel::argument(kernel::NttKind::coset_inverse),
              "cuda::NttKind and kernel::NttKind must list the kinds in the same order");

// An Fr in Montgomery form as four little-endian 64-bit words (math::Fr::montgomery_limbs()).
using FrWords = std::uint64_t[4];

std::uint64_t ntt_domain_bytes(unsigned log_size);

// Fills `domain` (ntt_domain_bytes(log_size) bytes of device memory) on `stream`. `root` must be
// a primitive 2^log_size-th root of unity and `coset_generator` must not lie in ⟨root⟩; neither is
// checked here (the CPU reference's Domain checks them).
template <class Curve = Bls12_381Curve>
void ntt_domain_init(void* domain, unsigned log_size, const FrWords& root, const FrWords& coset_generator,
                     cudaStream_t stream);

// snarkjs's domain of size 2^log_size (math::Domain::snarkjs): g = ω_2n = 5^((r-1)/2n), ω = g^2.
// Computed on the host (a few hundred multiplications; ntt/ntt_roots.cuh).
template <class Curve = Bls12_381Curve>
void snarkjs_domain_roots(unsigned log_size, FrWords& root, FrWords& coset_generator);

// How the pass kernels work: radix-2 or radix-4 steps in shared memory, with the twiddle
// multiplications on Fr's integer products or FrF64's on the FP64 pipe (field_f64.cuh); lazy
// keeps values below 2r between steps. The default is the fastest measured on the H200 (forward
// 2^26: each variant in the order listed below faster than the one before it;
// bench/journal/2026-11-30.md); the others stay as baselines, and the benchmark (--ntt-variants)
// and the checks run each.
enum class NttVariant { radix2_integer, radix4_integer, radix4_f64, radix4_f64_lazy };
inline constexpr NttVariant kNttVariants[] = {NttVariant::radix2_integer, NttVariant::radix4_integer,
                                              NttVariant::radix4_f64, NttVariant::radix4_f64_lazy};
inline constexpr NttVariant kDefaultNttVariant = NttVariant::radix4_f64_lazy;
const char* ntt_variant_name(NttVariant variant);

// In place on 2^log_size elements; `domain` was initialised for the same log_size.
template <class Curve = Bls12_381Curve>
void ntt(void* values, const void* domain, unsigned log_size, NttKind kind, cudaStream_t stream,
         NttVariant variant = kDefaultNttVariant);

// a[i] = (a[i]·b[i] − c[i])·factor for i < count. factor: nullptr means 1.
template <class Curve = Bls12_381Curve>
void h_pointwise(void* a, const void* b, const void* c, std::uint64_t count, const FrWords* factor,
                 cudaStream_t stream);

// The two forms of the CPU reference (src/math/h_polynomial.hpp), on a, b, c in place (result in a):
//   snarkjs:  a[j] = A(x_j)·B(x_j) − C(x_j) on the coset (the domain's g must square to ω);
//   classic:  coefficients of (A·B − C)/Z, Z = x^n − 1 (the constant g^n − 1 on the coset).
enum class HForm { snarkjs, classic };
template <class Curve = Bls12_381Curve>
void h_polynomial(void* a, void* b, void* c, const void* domain, unsigned log_size, HForm form, cudaStream_t stream,
                  NttVariant variant = kDefaultNttVariant);

// The classic form in two halves (math::h_classic_product, math::h_classic_finish), so that only two
// of a, b, c need be on the device at once; the product then the finish leave in a exactly the
// classic h_polynomial's result.
//   h_classic_product: a := A·B on the coset (b left on the coset);
//   h_classic_finish:  a := the coefficients of (a − C)/Z, a being the product (c left on the coset).
template <class Curve = Bls12_381Curve>
void h_classic_product(void* a, void* b, const void* domain, unsigned log_size, cudaStream_t stream,
                       NttVariant variant = kDefaultNttVariant);
template <class Curve = Bls12_381Curve>
void h_classic_finish(void* a, void* c, const void* domain, unsigned log_size, cudaStream_t stream,
                      NttVariant variant = kDefaultNttVariant);

}  // namespace stagehand::cuda
