#include "math/ntt.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "math/parallel.hpp"

namespace stagehand::math {
namespace {

// Stages whose butterflies stay inside blocks of 2^12 elements (128 KiB) run block by block, so
// the block stays in the core's L2 cache across those stages; only the last log n - 12 stages
// sweep the whole array.
constexpr unsigned block_log_size = 12;
// Below these sizes a loop is cheaper than starting threads.
constexpr std::size_t minimum_elements_per_thread = std::size_t{1} << 13;

std::size_t reverse_bits(std::size_t value, unsigned bit_count) {
  std::size_t result = 0;
  for (unsigned bit = 0; bit < bit_count; ++bit) {
    result = (result << 1) | (value & 1);
    value >>= 1;
  }
  return result;
}

template <class Fr>
void check_size(std::span<Fr> values, const BasicDomain<Fr>& domain, const char* operation) {
  if (values.size() != domain.size()) {
    throw std::invalid_argument(std::string(operation) + ": " + std::to_string(values.size()) +
                                " values for a domain of size " + std::to_string(domain.size()));
  }
}

template <class Fr>
inline void butterfly(Fr& low, Fr& high, const Fr& twiddle) {
  const Fr product = high * twiddle;
  high = low - product;
  low += product;
}

template <class Fr>
void bit_reverse_permutation(std::span<Fr> values, unsigned log_size, unsigned thread_count) {
  detail::run_ranges(values.size(), thread_count, minimum_elements_per_thread, [&](std::size_t begin, std::size_t end) {
    // Each pair is swapped by the range that holds its smaller index only.
    for (std::size_t index = begin; index < end; ++index) {
      const std::size_t partner = reverse_bits(index, log_size);
      if (index < partner) std::swap(values[index], values[partner]);
    }
  });
}

// Natural order in, natural order out: Σ_i values[i]·ω^(ij) into values[j]. Decimation in time
// after a bit-reversal permutation.
template <class Fr>
void forward_transform(std::span<Fr> values, const BasicDomain<Fr>& domain, unsigned thread_count) {
  const std::size_t size = values.size();
  if (size <= 1) return;
  const unsigned log_size = domain.log_size();
  const std::span<const Fr> twiddles = domain.twiddles();
  bit_reverse_permutation(values, log_size, thread_count);

  // Stage-major twiddles for the in-block stages: local[half + j] = ω_(2·half)^j, gathered once
  // so that blocks read them contiguously instead of striding over the domain's table.
  const unsigned local_log_size = std::min(log_size, block_log_size);
  const std::size_t block_size = std::size_t{1} << local_log_size;
  std::vector<Fr> local_twiddles(block_size);
  for (std::size_t half = 1; half < block_size; half <<= 1) {
    const std::size_t stride = size / (2 * half);
    for (std::size_t j = 0; j < half; ++j) local_twiddles[half + j] = twiddles[j * stride];
  }
  const std::size_t block_count = size / block_size;
  const std::size_t blocks_per_task = std::max<std::size_t>(1, minimum_elements_per_thread / block_size);
  const std::size_t task_count = (block_count + blocks_per_task - 1) / blocks_per_task;
  detail::run_tasks(task_count, thread_count, [&](std::size_t task) {
    const std::size_t first_block = task * blocks_per_task;
    const std::size_t last_block = std::min(block_count, first_block + blocks_per_task);
    for (std::size_t block = first_block; block < last_block; ++block) {
      Fr* const base = values.data() + block * block_size;
      for (std::size_t half = 1; half < block_size; half <<= 1) {
        const Fr* const stage_twiddles = local_twiddles.data() + half;
        for (std::size_t start = 0; start < block_size; start += 2 * half) {
          for (std::size_t j = 0; j < half; ++j) butterfly(base[start + j], base[start + j + half], stage_twiddles[j]);
        }
      }
    }
  });

  // The remaining stages: butterfly number b of a stage pairs positions (b / half)·2·half + b % half
  // and that plus half; threads take contiguous runs of butterflies.
  for (unsigned half_log = local_log_size; half_log < log_size; ++half_log) {
    const std::size_t half = std::size_t{1} << half_log;
    const std::size_t stride = size / (2 * half);
    detail::run_ranges(size / 2, thread_count, minimum_elements_per_thread / 2,
                       [&](std::size_t begin, std::size_t end) {
                         std::size_t butterfly_index = begin;
                         while (butterfly_index < end) {
                           const std::size_t group = butterfly_index >> half_log;
                           const std::size_t j_begin = butterfly_index & (half - 1);
                           const std::size_t j_end = std::min(half, j_begin + (end - butterfly_index));
                           Fr* const base = values.data() + group * 2 * half;
                           for (std::size_t j = j_begin; j < j_end; ++j) {
                             butterfly(base[j], base[j + half], twiddles[j * stride]);
                           }
                           butterfly_index += j_end - j_begin;
                         }
                       });
  }
}

// The forward transform with ω^-1 equals the forward transform with ω read at index -j mod n,
// so the inverse is the forward one, a reversal of positions 1..n-1 and the 1/n scaling (which
// the callers fold into their own pass).
template <class Fr>
void inverse_transform_unscaled(std::span<Fr> values, const BasicDomain<Fr>& domain, unsigned thread_count) {
  forward_transform(values, domain, thread_count);
  if (values.size() > 2) std::reverse(values.begin() + 1, values.end());
}

template <class Fr>
void multiply_by_constant(std::span<Fr> values, const Fr& factor, unsigned thread_count) {
  detail::run_ranges(values.size(), thread_count, minimum_elements_per_thread, [&](std::size_t begin, std::size_t end) {
    for (std::size_t index = begin; index < end; ++index) values[index] *= factor;
  });
}

template <class Fr>
void multiply_by_powers_of(std::span<Fr> values, const Fr& first, const Fr& ratio, unsigned thread_count) {
  detail::run_ranges(values.size(), thread_count, minimum_elements_per_thread, [&](std::size_t begin, std::size_t end) {
    Fr factor = first * ratio.pow(begin);
    for (std::size_t index = begin; index < end; ++index) {
      values[index] *= factor;
      factor *= ratio;
    }
  });
}

template <class Fr>
void ntt_of(std::span<Fr> values, const BasicDomain<Fr>& domain, unsigned thread_count) {
  check_size(values, domain, "math::ntt");
  forward_transform(values, domain, thread_count);
}

template <class Fr>
void intt_of(std::span<Fr> values, const BasicDomain<Fr>& domain, unsigned thread_count) {
  check_size(values, domain, "math::intt");
  inverse_transform_unscaled(values, domain, thread_count);
  multiply_by_constant(values, domain.size_inverse(), thread_count);
}

template <class Fr>
void coset_ntt_of(std::span<Fr> values, const BasicDomain<Fr>& domain, unsigned thread_count) {
  check_size(values, domain, "math::coset_ntt");
  // p(g·x) has coefficients c_i·g^i, so evaluating it on the domain evaluates p on the coset.
  multiply_by_powers_of(values, Fr::one(), domain.coset_generator(), thread_count);
  forward_transform(values, domain, thread_count);
}

template <class Fr>
void coset_intt_of(std::span<Fr> values, const BasicDomain<Fr>& domain, unsigned thread_count) {
  check_size(values, domain, "math::coset_intt");
  inverse_transform_unscaled(values, domain, thread_count);
  multiply_by_powers_of(values, domain.size_inverse(), domain.inverse_coset_generator(), thread_count);
}

}  // namespace

template <class Fr>
BasicDomain<Fr>::BasicDomain(unsigned log_size, const Fr& root, const Fr& coset_generator, unsigned thread_count)
    : log_size_(log_size), root_(root), coset_generator_(coset_generator) {
  if (log_size > Fr::two_adicity) {
    throw std::invalid_argument("Domain: log size " + std::to_string(log_size) + " exceeds the two-adicity of r - 1 (" +
                                std::to_string(Fr::two_adicity) + ")");
  }
  // ω must have order exactly n: ω^n = 1 and, for n > 1, ω^(n/2) = -1.
  const std::size_t size = std::size_t{1} << log_size;
  if (!root.pow(size).is_one() || (size > 1 && root.pow(size / 2) != -Fr::one())) {
    throw std::invalid_argument("Domain: the root is not a primitive root of unity of order 2^" +
                                std::to_string(log_size));
  }
  // The coset must not meet the domain: g^n != 1, which also makes Z(x) = x^n - 1 invertible on it.
  if (coset_generator.is_zero() || coset_generator.pow(size).is_one()) {
    throw std::invalid_argument("Domain: the coset generator lies in the domain (g^n = 1) or is zero");
  }
  inverse_root_ = root.inverse();
  inverse_coset_generator_ = coset_generator.inverse();
  size_inverse_ = Fr::from_uint64(size).inverse();

  twiddles_.resize(size / 2);
  detail::run_ranges(twiddles_.size(), thread_count, minimum_elements_per_thread,
                     [&](std::size_t begin, std::size_t end) {
                       Fr power = root.pow(begin);
                       for (std::size_t index = begin; index < end; ++index) {
                         twiddles_[index] = power;
                         power *= root;
                       }
                     });
}

template <class Fr>
BasicDomain<Fr> BasicDomain<Fr>::from_group_generator(unsigned log_size, const Fr& group_generator,
                                                      const Fr& coset_generator, unsigned thread_count) {
  if (log_size > Fr::two_adicity) {
    throw std::invalid_argument("Domain: log size " + std::to_string(log_size) + " exceeds the two-adicity of r - 1");
  }
  const auto exponent = detail::shift_right(detail::subtract_small(Fr::modulus, 1), log_size);
  return BasicDomain(log_size, group_generator.pow(exponent), coset_generator, thread_count);
}

template <class Fr>
BasicDomain<Fr> BasicDomain<Fr>::from_root(unsigned log_size, const Fr& root, const Fr& coset_generator,
                                           unsigned thread_count) {
  return BasicDomain(log_size, root, coset_generator, thread_count);
}

template <class Fr>
BasicDomain<Fr> BasicDomain<Fr>::snarkjs(unsigned log_size, unsigned thread_count) {
  if (log_size >= Fr::two_adicity) {
    throw std::invalid_argument("Domain::snarkjs: log size must be below " + std::to_string(Fr::two_adicity) +
                                " so that the root of the doubled domain exists");
  }
  const Fr five = Fr::from_uint64(5);
  const auto double_root_exponent = detail::shift_right(detail::subtract_small(Fr::modulus, 1), log_size + 1);
  return from_group_generator(log_size, five, five.pow(double_root_exponent), thread_count);
}

template <class Fr>
BasicDomain<Fr> BasicDomain<Fr>::classic(unsigned log_size, unsigned thread_count) {
  const Fr seven = Fr::from_uint64(7);
  return from_group_generator(log_size, seven, seven, thread_count);
}

template class BasicDomain<Fr>;
template class BasicDomain<bn254::Fr>;

void multiply_by_powers(std::span<Fr> values, const Fr& first, const Fr& ratio, unsigned thread_count) {
  multiply_by_powers_of(values, first, ratio, thread_count);
}
void ntt(std::span<Fr> values, const Domain& domain, unsigned thread_count) { ntt_of(values, domain, thread_count); }
void intt(std::span<Fr> values, const Domain& domain, unsigned thread_count) { intt_of(values, domain, thread_count); }
void coset_ntt(std::span<Fr> values, const Domain& domain, unsigned thread_count) {
  coset_ntt_of(values, domain, thread_count);
}
void coset_intt(std::span<Fr> values, const Domain& domain, unsigned thread_count) {
  coset_intt_of(values, domain, thread_count);
}

void bn254::multiply_by_powers(std::span<Fr> values, const Fr& first, const Fr& ratio, unsigned thread_count) {
  multiply_by_powers_of(values, first, ratio, thread_count);
}
void bn254::ntt(std::span<Fr> values, const Domain& domain, unsigned thread_count) {
  ntt_of(values, domain, thread_count);
}
void bn254::intt(std::span<Fr> values, const Domain& domain, unsigned thread_count) {
  intt_of(values, domain, thread_count);
}
void bn254::coset_ntt(std::span<Fr> values, const Domain& domain, unsigned thread_count) {
  coset_ntt_of(values, domain, thread_count);
}
void bn254::coset_intt(std::span<Fr> values, const Domain& domain, unsigned thread_count) {
  coset_intt_of(values, domain, thread_count);
}

}  // namespace stagehand::math
