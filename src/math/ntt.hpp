// Radix-2 number-theoretic transforms over the scalar field Fr of BLS12-381 (Domain, ntt, ...
// in stagehand::math) or of BN254 (the same names in stagehand::math::bn254) on domains of size
// n = 2^k: one template over the field, BasicDomain<Field>.
//
// A Domain fixes the primitive n-th root of unity ω and a coset generator g. Two conventions are
// in use and both are built in:
//   - snarkjs: ω = 5^((r-1)/n) and g = ω_2n = 5^((r-1)/2n), so the coset g·⟨ω⟩ is the odd powers
//     of ω_2n (docs/snarkjs-formats.md, "What the prover computes", step 2);
//   - classic (bellman, the production prover): ω = 7^((r-1)/n) and g = 7, the multiplicative
//     generator of Fr*.
// Any other primitive root works through Domain::from_root. 5 and 7 are non-residues modulo
// either curve's r, so both conventions exist for both (n up to 2^32 for BLS12-381, 2^28 for BN254).
//
// Transforms work in place on natural-order values:
//   ntt:        coefficients c_i          -> evaluations  Σ c_i ω^(ij)
//   intt:       evaluations at ω^j        -> coefficients
//   coset_ntt:  coefficients              -> evaluations at g·ω^j
//   coset_intt: evaluations at g·ω^j      -> coefficients
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "math/bn254.hpp"
#include "math/fr.hpp"

namespace stagehand::math {

template <class Field>
class BasicDomain {
 public:
  using Fr = Field;

  // ω = group_generator^((r-1)/n). The generator must be a quadratic non-residue (5 and 7 are),
  // so that ω has order exactly n; the constructor checks that it does.
  static BasicDomain from_group_generator(unsigned log_size, const Fr& group_generator, const Fr& coset_generator,
                                          unsigned thread_count = 0);
  // Any primitive n-th root of unity; its order is checked.
  static BasicDomain from_root(unsigned log_size, const Fr& root, const Fr& coset_generator, unsigned thread_count = 0);
  // Roots from 5, coset generator ω_2n (needs log_size below the two-adicity: 32, or 28 for BN254).
  static BasicDomain snarkjs(unsigned log_size, unsigned thread_count = 0);
  // Roots from 7, coset generator 7.
  static BasicDomain classic(unsigned log_size, unsigned thread_count = 0);

  unsigned log_size() const { return log_size_; }
  std::size_t size() const { return std::size_t{1} << log_size_; }
  const Fr& root() const { return root_; }
  const Fr& inverse_root() const { return inverse_root_; }
  const Fr& coset_generator() const { return coset_generator_; }
  const Fr& inverse_coset_generator() const { return inverse_coset_generator_; }
  const Fr& size_inverse() const { return size_inverse_; }
  // ω^j for j < n/2, the twiddle factors of every butterfly stage. It takes n/2 elements
  // (16·n bytes): 2 GiB at n = 2^27, built once and shared by every transform on the domain.
  std::span<const Fr> twiddles() const { return twiddles_; }

 private:
  BasicDomain(unsigned log_size, const Fr& root, const Fr& coset_generator, unsigned thread_count);

  unsigned log_size_ = 0;
  Fr root_;
  Fr inverse_root_;
  Fr coset_generator_;
  Fr inverse_coset_generator_;
  Fr size_inverse_;
  std::vector<Fr> twiddles_;
};

extern template class BasicDomain<Fr>;
extern template class BasicDomain<bn254::Fr>;

using Domain = BasicDomain<Fr>;

// thread_count 0 uses every hardware thread. values.size() must equal domain.size().
void ntt(std::span<Fr> values, const Domain& domain, unsigned thread_count = 0);
void intt(std::span<Fr> values, const Domain& domain, unsigned thread_count = 0);
void coset_ntt(std::span<Fr> values, const Domain& domain, unsigned thread_count = 0);
void coset_intt(std::span<Fr> values, const Domain& domain, unsigned thread_count = 0);

// values[i] *= first · ratio^i, in parallel. The coset transforms are this plus a plain one.
void multiply_by_powers(std::span<Fr> values, const Fr& first, const Fr& ratio, unsigned thread_count = 0);

namespace bn254 {

using Domain = BasicDomain<Fr>;

void ntt(std::span<Fr> values, const Domain& domain, unsigned thread_count = 0);
void intt(std::span<Fr> values, const Domain& domain, unsigned thread_count = 0);
void coset_ntt(std::span<Fr> values, const Domain& domain, unsigned thread_count = 0);
void coset_intt(std::span<Fr> values, const Domain& domain, unsigned thread_count = 0);
void multiply_by_powers(std::span<Fr> values, const Fr& first, const Fr& ratio, unsigned thread_count = 0);

}  // namespace bn254

}  // namespace stagehand::math
