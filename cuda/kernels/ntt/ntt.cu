// Decimation-in-time NTT in passes of up to 10 stages, each pass one kernel whose block holds its
// tile in shared memory, after an in-place bit reversal. Why this shape: at 2^26 the transform is
// bound by Montgomery multiplications, not memory, so the work per element must stay near
// log2(n)/2 products; three passes over device memory (plus the bit reversal) keep the memory
// traffic well under the arithmetic time. A pass over stages [s0, s0+t) is, per group of
// 2^(s0+t) elements, a twiddle multiplication by ω_M^(low·rev_t(i)) followed by 2^s0 independent
// DFTs of size 2^t (the four-step identity), so the in-block stages only need the 2^t-th roots.
// The twiddle of a later pass comes from an exact table of ω's powers where the pass ends at
// stage 22 or below (every later pass up to 2^22, the middle one above); otherwise (the last pass
// from 2^23, whose table would need one entry per element) it is a product of a low and a high power.
//
// The default pass (NttVariant::radix4_f64_lazy, bench/journal/2026-11-30.md "The NTT in radix-4
// with Fr's products on the FP64 pipe") takes two stages per step with four elements per thread,
// its first step straight from device memory and its last straight to it; multiplies on the FP64
// pipe (FrF64); and keeps values below 2r between its steps. It was chosen because it ran the
// forward 2^26 transform on the H200 well ahead of the radix-2 integer kernel (radix2_integer,
// kept as the baseline); bench/RESULTS.md, "Kernels against the peer library", has the figure.
#include <initializer_list>
#include <stdexcept>
#include <type_traits>
#include <string>

#include "ec/curves.cuh"
#include "ntt/ntt.hpp"
#include "ntt/ntt_roots.cuh"
#include "util/common.cuh"

namespace stagehand::cuda {
namespace {

constexpr unsigned kTileLog = 10;            // elements per block tile: 2^10 (32 KiB of shared memory)
constexpr unsigned kLaterPassMaxStages = 8;  // later passes keep >= 4 consecutive elements per run
// The exact twiddle table holds at most 2^22 entries (128 MiB, one polynomial's bytes at 2^22).
constexpr unsigned kMidTableMaxLog = 22;

// The passes of a transform of 2^k: the first takes up to 10 stages, the rest share the remainder
// evenly in passes of at most 8 (so that each block reads runs of at least 4 elements). k <= 27
// gives at most 1 + 3 passes.
struct NttPasses {
  unsigned count = 0;
  unsigned stages[4] = {};
  __host__ __device__ explicit NttPasses(unsigned k) {
    const unsigned first = k < kTileLog ? k : kTileLog;
    const unsigned remaining = k - first;
    const unsigned later = (remaining + kLaterPassMaxStages - 1) / kLaterPassMaxStages;
    stages[count++] = first;
    for (unsigned pass = 1; pass <= later; ++pass) {
      stages[count++] = remaining / later + (pass <= remaining % later ? 1 : 0);
    }
    // At 2^24 the halves 7 and 7 become 6 and 8: an odd pass goes through shared memory once more,
    // and on the H200 6 and 8 was the fastest split of the forward 2^24 transform, ahead of 7 and 7
    // and of 8 and 6. At 2^20, 4 and 6 lose to 5 and 5, so only halves of 7 change
    // (bench/journal/2026-12-02.md).
    if (later == 2 && stages[1] == 7 && stages[2] == 7) {
      stages[1] -= 1;
      stages[2] += 1;
    }
  }
};

// Where each table lives inside the domain buffer, in elements. The exact ("mid") table holds
// ω^(e·2^(k-M)) for e < 2^M, M the last stage of the latest pass after the first that ends at
// kMidTableMaxLog or below; ω^-1's powers are its entries read backwards. A pass ending at or below
// M takes each element's twiddle with one load instead of a product of two: a multiplication fewer
// per element (the last pass too up to 2^22, where it made the forward 2^20 and 2^22 transforms
// faster on the H200; bench/journal/2026-12-02.md). 0 where there is none.
struct DomainLayout {
  unsigned log_size = 0;
  unsigned low_log = 0;    // L: low table has 2^L entries
  unsigned small_log = 0;  // T: the small table holds the 2^T-th roots
  unsigned mid_log = 0;    // M
  std::uint64_t table = 0;
  __host__ __device__ explicit DomainLayout(unsigned k)
      : log_size(k), low_log((k + 1) / 2), small_log(k < kTileLog ? k : kTileLog) {
    table = (std::uint64_t{1} << low_log) + (std::uint64_t{1} << (k - low_log));
    const NttPasses passes(k);
    unsigned end = passes.stages[0];
    for (unsigned pass = 1; pass < passes.count; ++pass) {
      end += passes.stages[pass];
      if (end <= kMidTableMaxLog) mid_log = end;
    }
  }
  __host__ __device__ std::uint64_t power_table(unsigned which) const {
    return which * table;
  }  // 0 ω, 1 ω^-1, 2 g, 3 g^-1
  __host__ __device__ std::uint64_t small_table(unsigned which) const {
    return 4 * table + which * (std::uint64_t{1} << (small_log - 1));
  }
  __host__ __device__ std::uint64_t constants() const { return 4 * table + (std::uint64_t{1} << small_log); }
  __host__ __device__ std::uint64_t mid_entries() const { return mid_log == 0 ? 0 : std::uint64_t{1} << mid_log; }
  __host__ __device__ std::uint64_t mid_table() const { return constants() + 8; }  // ω's powers; ω^-1's by index
  __host__ __device__ std::uint64_t element_count() const { return constants() + 8 + mid_entries(); }
};

// Constant slots.
enum : unsigned { kSizeInverse = 0, kCosetGenerator, kCosetGeneratorInverse, kRoot, kRootInverse, kVanishingInverse };

// Every kernel below is a template over the curve's Fr (Curve::Fr, ec/curves.cuh): one source for
// each curve, the same code for BLS12-381 as before.

// x·y with the products of M: Fr's integer ones, or FrF64's on the FP64 pipe (the same words).
template <class M, class Fr>
__device__ __forceinline__ Fr multiply(const Fr& x, const Fr& y) {
  return same_words<Fr>(same_words<M>(x) * same_words<M>(y));
}

template <class M, class Fr>
__device__ __forceinline__ Fr table_power(const Fr* table, unsigned low_log, std::uint32_t exponent) {
  const Fr low = load(table + (exponent & ((1u << low_log) - 1)));
  const std::uint32_t high_index = exponent >> low_log;
  if (high_index == 0) return low;
  return multiply<M>(low, load(table + (std::uint64_t{1} << low_log) + high_index));
}

template <class Fr>
__global__ void domain_constants_kernel(Fr* domain, DomainLayout layout, Fr root, Fr coset_generator) {
  const unsigned log_size = layout.log_size;
  Fr* constants = domain + layout.constants();
  Fr n = Fr::one();
  for (unsigned i = 0; i < log_size; ++i) n = n + n;
  constants[kSizeInverse] = n.inverse();
  constants[kCosetGenerator] = coset_generator;
  constants[kCosetGeneratorInverse] = coset_generator.inverse();
  constants[kRoot] = root;
  constants[kRootInverse] = root.inverse();
  Fr g_to_n = coset_generator;
  for (unsigned i = 0; i < log_size; ++i) g_to_n = g_to_n.squared();
  constants[kVanishingInverse] = (g_to_n - Fr::one()).inverse();
  constants[6] = Fr::zero();
  constants[7] = Fr::zero();
}

template <class Fr>
__global__ void domain_tables_kernel(Fr* domain, DomainLayout layout) {
  const unsigned log_size = layout.log_size;
  const Fr* constants = domain + layout.constants();
  const std::uint64_t index = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::uint64_t low_count = std::uint64_t{1} << layout.low_log;
  const std::uint64_t small_count = std::uint64_t{1} << (layout.small_log - 1);
  if (index < 4 * layout.table) {
    const unsigned which = static_cast<unsigned>(index / layout.table);
    const std::uint64_t entry = index % layout.table;
    const unsigned base_slot[4] = {kRoot, kRootInverse, kCosetGenerator, kCosetGeneratorInverse};
    const Fr base = load(constants + base_slot[which]);
    const std::uint64_t exponent = entry < low_count ? entry : (entry - low_count) << layout.low_log;
    store(domain + index, base.pow(exponent));
  } else if (index < 4 * layout.table + 2 * small_count) {
    const std::uint64_t offset = index - 4 * layout.table;
    const unsigned which = static_cast<unsigned>(offset / small_count);
    const std::uint64_t entry = offset % small_count;
    const Fr base = load(constants + (which == 0 ? kRoot : kRootInverse));
    store(domain + index, base.pow(entry << (log_size - layout.small_log)));
  }
}

// After domain_tables_kernel: entry e of the exact table = ω^(e·2^(k-M)). ω^-1's powers are the
// same entries read backwards: ω^(-e·2^(k-M)) is entry (2^M - e) mod 2^M (exact_twiddle).
template <class Fr>
__global__ void domain_mid_tables_kernel(Fr* domain, DomainLayout layout) {
  const std::uint64_t entry = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (entry >= layout.mid_entries()) return;
  const auto exponent = static_cast<std::uint32_t>(entry << (layout.log_size - layout.mid_log));
  store(domain + layout.mid_table() + entry, table_power<Fr>(domain + layout.power_table(0), layout.low_log, exponent));
}

// Entry `index` of the exact table for the forward direction, or ω^-1's for the inverse.
template <class Fr>
__device__ __forceinline__ Fr exact_twiddle(const Fr* mid_table, unsigned mid_log, std::uint32_t index,
                                            unsigned inverse) {
  if (inverse) index = (0u - index) & ((1u << mid_log) - 1);
  return load(mid_table + index);
}

__device__ __forceinline__ std::uint32_t bit_reverse(std::uint32_t value, unsigned bits) {
  return bits == 0 ? 0 : __brev(value) >> (32 - bits);
}

// Scale modes for the first kernel of a transform.
enum ScaleMode : int { kNoScale = 0, kScaleConstant = 1, kScalePowers = 2 };

// In-place bit reversal, optionally scaling each element (by its natural index) on the way:
// constant (n^-1 for the inverse) or powers of a base (g^i for the coset transform).
template <class Fr>
__global__ void bit_reverse_kernel(Fr* values, unsigned log_size, int mode, const Fr* constant, const Fr* power_table,
                                   unsigned low_log) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >> log_size) return;
  const std::uint32_t j = bit_reverse(i, log_size);
  if (j < i) return;
  Fr x = load(values + i);
  Fr y = load(values + j);
  if (mode == kScaleConstant) {
    const Fr factor = load(constant);
    x *= factor;
    if (j != i) y *= factor;
  } else if (mode == kScalePowers) {
    x *= table_power<Fr>(power_table, low_log, i);
    if (j != i) y *= table_power<Fr>(power_table, low_log, j);
  }
  store(values + j, x);
  if (j != i) store(values + i, y);
}

// The same, for log_size >= 2·kReverseTileLog, in tiles that keep both the reads and the writes in
// runs of 2^a consecutive elements (a = kReverseTileLog); the element-wise kernel above reads or
// writes one element per 32-byte sector at scattered places, and at 2^26 took a sizeable share of
// the transform (measured on the H200). With i = (h, m, l) for its top a, middle and low a bits,
// rev(i) = (rev l, rev m, rev h): block m loads the tiles of m and of its mirror rev(m) (rows h,
// runs of l), and writes each to the other's place transposed and reversed. Blocks whose mirror
// is below them do nothing. Shared slot of tile element (r, c): r·2^a + (c ^ rev(r)), so that
// neither the row-wise stores nor the reversed column-wise loads of a warp fall into the same banks.
//
// The kernel moves memory and is bound by the loads it has in flight, so it is built twice: without
// the scaling's multiplications (Scaled false: 28 registers, eight blocks an SM) for the forward
// transform, and with them held to four blocks an SM (63 registers). Left alone the compiler gave
// every form 66 registers and the SM three blocks: the forward reversal at 2^22 on the H200 ran
// at a third of the occupancy and slower than it does now (bench/journal/2026-12-04.md).
constexpr unsigned kReverseTileLog = 4;

template <class Fr, class M, bool Scaled>
__global__ void __launch_bounds__(256, Scaled ? 4 : 8)
    bit_reverse_tiles_kernel(Fr* values, unsigned log_size, int mode, const Fr* constant, const Fr* power_table,
                             unsigned low_log) {
  constexpr unsigned a = kReverseTileLog, side = 1u << a;
  __shared__ uint4 shared_words[2 * side * side * 2];
  Fr* tiles = reinterpret_cast<Fr*>(shared_words);
  const unsigned middle_bits = log_size - 2 * a;
  const std::uint32_t middles[2] = {blockIdx.x, bit_reverse(blockIdx.x, middle_bits)};
  if (middles[1] < middles[0]) return;
  const unsigned tile_count = middles[1] == middles[0] ? 1 : 2;
  const unsigned high_shift = log_size - a;
  for (unsigned k = 0; k < tile_count; ++k) {
    for (unsigned e = threadIdx.x; e < side * side; e += blockDim.x) {
      const unsigned h = e >> a, l = e & (side - 1);
      const std::uint32_t i = (h << high_shift) | (middles[k] << a) | l;
      Fr x = load(values + i);
      if constexpr (Scaled) {
        if (mode == kScaleConstant) x = multiply<M>(x, load(constant));
        if (mode == kScalePowers) x = multiply<M>(x, table_power<M>(power_table, low_log, i));
      }
      store(tiles + k * side * side + h * side + (l ^ bit_reverse(h, a)), x);
    }
  }
  __syncthreads();
  for (unsigned k = 0; k < tile_count; ++k) {
    for (unsigned e = threadIdx.x; e < side * side; e += blockDim.x) {
      const unsigned h = e >> a, l = e & (side - 1);                // of the destination
      const unsigned r = bit_reverse(l, a), c = bit_reverse(h, a);  // of the source tile
      const std::uint32_t i = (h << high_shift) | (middles[tile_count - 1 - k] << a) | l;
      store(values + i, load(tiles + k * side * side + r * side + (c ^ l)));
    }
  }
}

template <class Fr>
__global__ void scale_powers_kernel(Fr* values, std::uint64_t count, const Fr* power_table, unsigned low_log) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= count) return;
  store(values + i, load(values + i) * table_power<Fr>(power_table, low_log, static_cast<std::uint32_t>(i)));
}

// Stages [s0, s0 + t) of the DIT transform on bit-reversed input, 2^c consecutive low indices
// per block (c <= s0), 2^(t+c-1) threads, 2^(t+c) elements of shared memory, radix-2 with Fr's
// integer products: the kernel of NttVariant::radix2_integer, and of every variant's passes of one
// stage. Three blocks per SM: left to itself the compiler gives the wide-product multiplication 52
// registers and the SM two blocks; held to 40 it spills nothing.
template <class Fr>
__global__ void __launch_bounds__(512, 3)
    ntt_pass_kernel(Fr* values, const Fr* power_table, const Fr* small_roots, const Fr* mid_table, unsigned log_size,
                    unsigned low_log, unsigned small_log, unsigned mid_log, unsigned s0, unsigned t, unsigned c,
                    unsigned /*canonical_output: always*/, unsigned inverse) {
  extern __shared__ uint4 shared_words[];
  Fr* tile = reinterpret_cast<Fr*>(shared_words);
  const unsigned tile_log = t + c;
  const unsigned half_tile = 1u << (tile_log - 1);
  const std::uint32_t low_chunks_log = s0 - c;
  const std::uint32_t low_chunk = blockIdx.x & ((1u << low_chunks_log) - 1);
  const std::uint32_t group = blockIdx.x >> low_chunks_log;
  const std::uint64_t base = (std::uint64_t{group} << (s0 + t)) | (std::uint64_t{low_chunk} << c);
  const unsigned low_mask = (1u << c) - 1;

#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const unsigned e = threadIdx.x + half * half_tile;
    const unsigned l = e & low_mask;
    const unsigned i = e >> c;
    Fr x = load(values + base + l + (std::uint64_t{i} << s0));
    if (s0 > 0) {
      const std::uint32_t low = (low_chunk << c) + l;
      const std::uint32_t product = low * bit_reverse(i, t);  // below 2^(s0+t)
      if (product != 0) {
        x *= s0 + t <= mid_log ? exact_twiddle(mid_table, mid_log, product << (mid_log - s0 - t), inverse)
                               : table_power<Fr>(power_table, low_log, product << (log_size - s0 - t));
      }
    }
    store(tile + e, x);
  }
  __syncthreads();

  const unsigned l = threadIdx.x & low_mask;
  const unsigned q = threadIdx.x >> c;
  for (unsigned u = 0; u < t; ++u) {
    const unsigned half = 1u << u;
    const unsigned j = q & (half - 1);
    const unsigned i0 = ((q >> u) << (u + 1)) | j;
    const unsigned i1 = i0 + half;
    const Fr a = load(tile + ((i0 << c) | l));
    Fr b = load(tile + ((i1 << c) | l));
    if (j != 0) b *= load(small_roots + (j << (small_log - u - 1)));
    store(tile + ((i0 << c) | l), a + b);
    store(tile + ((i1 << c) | l), a - b);
    __syncthreads();
  }

#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const unsigned e = threadIdx.x + half * half_tile;
    const unsigned l2 = e & low_mask;
    const unsigned i = e >> c;
    store(values + base + l2 + (std::uint64_t{i} << s0), load(tile + e));
  }
}

// Values in [0, 2r) for the lazy radix-4 kernel (2r < 2^256): the FP64 multiplication's result
// is below 2r before its final subtraction when one factor is below 2r and the other (a twiddle)
// below r ((2r·r + 2^256·r)/2^256 < 1.91r), so the twiddle multiplications skip it and the
// butterflies add and subtract modulo 2r at the cost of the plain ones.
namespace lazy {

template <class P>
struct TwiceModulus {
  std::uint32_t w[8] = {};
  constexpr TwiceModulus() {
    std::uint64_t carry = 0;
    for (int i = 0; i < 8; ++i) {
      const std::uint64_t v = 2 * std::uint64_t{P::modulus(i)} + carry;
      w[i] = static_cast<std::uint32_t>(v);
      carry = v >> 32;
    }
  }
};

// a + b, less 2r when that is at least 2r; a, b < 2r.
template <class Fr>
__device__ __forceinline__ Fr add(const Fr& a, const Fr& b) {
  constexpr TwiceModulus<typename Fr::Params> twice;
  Fr sum, less;
  sum.w[0] = carry::add_cc(a.w[0], b.w[0]);
#pragma unroll
  for (int i = 1; i < 8; ++i) sum.w[i] = carry::addc_cc(a.w[i], b.w[i]);
  const std::uint32_t top = carry::addc(0, 0);
  less.w[0] = carry::sub_cc(sum.w[0], twice.w[0]);
#pragma unroll
  for (int i = 1; i < 8; ++i) less.w[i] = carry::subc_cc(sum.w[i], twice.w[i]);
  const std::uint32_t below = carry::subc(top, 0);  // all ones when the sum is below 2r
#pragma unroll
  for (int i = 0; i < 8; ++i) sum.w[i] = below ? sum.w[i] : less.w[i];
  return sum;
}

// a - b, plus 2r when that is negative; a, b < 2r.
template <class Fr>
__device__ __forceinline__ Fr subtract(const Fr& a, const Fr& b) {
  constexpr TwiceModulus<typename Fr::Params> twice;
  Fr r;
  r.w[0] = carry::sub_cc(a.w[0], b.w[0]);
#pragma unroll
  for (int i = 1; i < 8; ++i) r.w[i] = carry::subc_cc(a.w[i], b.w[i]);
  const std::uint32_t borrow = carry::subc(0, 0);
  r.w[0] = carry::add_cc(r.w[0], twice.w[0] & borrow);
#pragma unroll
  for (int i = 1; i < 8; ++i) r.w[i] = carry::addc_cc(r.w[i], twice.w[i] & borrow);
  return r;
}

// x·w below 2r, for x < 2r and w < r; w given as its words or as its FP64 limbs. P: the
// parameters of Fr's FP64 form (Curve::FrF64).
template <class P, class Fr>
__device__ __forceinline__ Fr multiply(const Fr& x, const Fr& w) {
  Fr r;
  f64::montgomery_multiply<P>(x.w, w.w, r.w);
  return r;
}
template <class P, class Fr>
__device__ __forceinline__ Fr multiply(const Fr& x, const double (&w)[P::F64::limbs]) {
  Fr r;
  f64::montgomery_multiply_limbs<P>(x.w, w, r.w);
  return r;
}

}  // namespace lazy

// The same pass in radix-4 steps: each thread holds four elements of a column through two stages,
// which halves the shared-memory traffic and the barriers of radix-2 and gives each thread two
// independent multiplications at a time; 2^(t+c-2) threads, t >= 2. An odd t begins with a
// radix-2 stage 0, whose twiddles are all 1.
//
// Stages u and u+1 on i0, i0+h, i0+2h, i0+3h (h = 2^u, j = i0 mod h): stage u pairs (i0, i0+h)
// and (i0+2h, i0+3h), both with ω_2h^j; stage u+1 pairs (i0, i0+2h) with ω_4h^j and (i0+h,
// i0+3h) with ω_4h^(j+h). The small table holds ω_(2^T)^k for k < 2^(T-1), so ω_4h^x is entry
// x·2^(T-u-2).
//
// Lazy (FP64 products only): values stay in [0, 2r) (namespace lazy) from the load to the store,
// which reduces them below r only where `canonical_output` asks (the transform's last pass, or a
// pass that a radix-2 pass follows); and the pass's 2^(t-1) in-block twiddles are cut into FP64
// limbs once per block, into shared memory after the tile (5 arrays of doubles), so that their
// multiplications skip that step.
// The FP64 limbs of a twiddle in M's form (1 for the integer forms, which hold none).
template <class M>
constexpr int twiddle_limb_count() {
  if constexpr (M::Params::f64_products) {
    return M::Params::F64::limbs;
  } else {
    return 1;
  }
}

template <class Fr, class M, bool Lazy>
__global__ void __launch_bounds__(256, 3)
    ntt_radix4_pass_kernel(Fr* values, const Fr* power_table, const Fr* small_roots, const Fr* mid_table,
                           unsigned log_size, unsigned low_log, unsigned small_log, unsigned mid_log, unsigned s0,
                           unsigned t, unsigned c, unsigned canonical_output, unsigned inverse) {
  static_assert(!Lazy || M::Params::f64_products);
  constexpr int kLimbs = twiddle_limb_count<M>();
  extern __shared__ uint4 shared_words[];
  Fr* tile = reinterpret_cast<Fr*>(shared_words);
  const unsigned quarter_tile = 1u << (t + c - 2);
  const unsigned twiddle_count = 1u << (t - 1);
  double* twiddle_limbs = reinterpret_cast<double*>(tile + (std::size_t{1} << (t + c)));
  const std::uint32_t low_chunks_log = s0 - c;
  const std::uint32_t low_chunk = blockIdx.x & ((1u << low_chunks_log) - 1);
  const std::uint32_t group = blockIdx.x >> low_chunks_log;
  const std::uint64_t base = (std::uint64_t{group} << (s0 + t)) | (std::uint64_t{low_chunk} << c);
  const unsigned low_mask = (1u << c) - 1;

  if constexpr (Lazy) {
    // Compact entry e holds ω_(2^t)^e: the stages below read only every 2^(T-t)-th small root.
    for (unsigned e = threadIdx.x; e < twiddle_count; e += blockDim.x) {
      const Fr w = load(small_roots + (e << (small_log - t)));
      double limbs[kLimbs];
      f64::factor_limbs<typename M::Params>(w.w, limbs);
#pragma unroll
      for (int k = 0; k < kLimbs; ++k) twiddle_limbs[k * twiddle_count + e] = limbs[k];
    }
  }
  // (a, b) -> (a + b, a - b), modulo 2r when lazy.
  const auto butterfly = [](Fr& a, Fr& b) {
    if constexpr (Lazy) {
      const Fr sum = lazy::add(a, b);
      b = lazy::subtract(a, b);
      a = sum;
    } else {
      const Fr sum = a + b;
      b = a - b;
      a = sum;
    }
  };
  // x·w for a twiddle w given as words: below 2r when lazy.
  const auto times = [](const Fr& x, const Fr& w) {
    if constexpr (Lazy)
      return lazy::multiply<typename M::Params>(x, w);
    else
      return multiply<M>(x, w);
  };

  // x·ω_(2^(u+1))^j for the stage u (j < 2^u); as in the radix-2 kernel, or from the limbs.
  const auto twiddle_multiply = [&](const Fr& x, unsigned j, unsigned u) {
    if constexpr (Lazy) {
      const unsigned e = j << (t - u - 1);
      double limbs[kLimbs];
#pragma unroll
      for (int k = 0; k < kLimbs; ++k) limbs[k] = twiddle_limbs[k * twiddle_count + e];
      return lazy::multiply<typename M::Params>(x, limbs);
    } else {
      return times(x, load(small_roots + (j << (small_log - u - 1))));
    }
  };

  const unsigned l = threadIdx.x & low_mask;
  const unsigned q = threadIdx.x >> c;  // below 2^(t-2)
  // Row i of this thread's column, in device memory and in the tile.
  const auto global_row = [&](unsigned i) { return values + base + l + (std::uint64_t{i} << s0); };
  const auto tile_row = [&](unsigned i) { return tile + ((i << c) | l); };
  // Row i as loaded: times the four-step twiddle ω_(2^(s0+t))^(low·rev_t(i)) after the first pass.
  const auto load_row = [&](unsigned i) {
    Fr x = load(global_row(i));
    if (s0 > 0) {
      const std::uint32_t product = ((low_chunk << c) + l) * bit_reverse(i, t);  // below 2^(s0+t)
      if (product != 0) {
        const Fr w = s0 + t <= mid_log ? exact_twiddle(mid_table, mid_log, product << (mid_log - s0 - t), inverse)
                                       : table_power<M>(power_table, low_log, product << (log_size - s0 - t));
        x = times(x, w);
      }
    }
    return x;
  };
  const auto store_row = [&](unsigned i, Fr x) {
    if (Lazy && canonical_output) x.reduce_once();
    store(global_row(i), x);
  };
  // Stages u and u+1 on x[k] = row i0 + k·2^u (j = i0 mod 2^u), in place. The stage u+1 twiddle
  // of x[3] for j = 0 is ω_4, which the first step takes from the words (the limbs may not be
  // in shared memory yet).
  const auto radix4 = [&](Fr(&x)[4], unsigned j, unsigned u) {
    const unsigned h = 1u << u;
    if (j != 0) {
      x[1] = twiddle_multiply(x[1], j, u);
      x[3] = twiddle_multiply(x[3], j, u);
    }
    butterfly(x[0], x[1]);
    butterfly(x[2], x[3]);
    if (j != 0) x[2] = twiddle_multiply(x[2], j, u + 1);
    x[3] = u == 0 ? times(x[3], load(small_roots + (std::size_t{1} << (small_log - 2))))
                  : twiddle_multiply(x[3], j + h, u + 1);
    butterfly(x[0], x[2]);
    butterfly(x[1], x[3]);
  };
  // The step at stage u reads and writes the tile (or, for the last, device memory): rows
  // i0 + k·h with i0 = (q >> u)·4h + j.
  const auto tile_step = [&](unsigned u, bool last) {
    const unsigned h = 1u << u;
    const unsigned j = q & (h - 1);
    const unsigned i0 = ((q >> u) << (u + 2)) | j;
    Fr x[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) x[k] = load(tile_row(i0 + k * h));
    radix4(x, j, u);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if (last)
        store_row(i0 + k * h, x[k]);
      else
        store(tile_row(i0 + k * h), x[k]);
    }
  };

  unsigned u;
  if ((t & 1) == 0) {
    // Stages 0 and 1 straight from device memory: rows 4q .. 4q+3, whose twiddles are ω_4 or 1.
    Fr x[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) x[k] = load_row(4 * q + k);
    radix4(x, 0, 0);
    if (t == 2) {
#pragma unroll
      for (int k = 0; k < 4; ++k) store_row(4 * q + k, x[k]);
      return;
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) store(tile_row(4 * q + k), x[k]);
    u = 2;
  } else {
    // An odd t: the rows through the tile, then the radix-2 stage 0 (twiddles 1).
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const unsigned e = threadIdx.x + k * quarter_tile;  // row e >> c of column e & low_mask
      store(tile + e, load_row(e >> c));
    }
    __syncthreads();
#pragma unroll
    for (unsigned k = 0; k < 2; ++k) {
      const unsigned i0 = 2 * (q + (k << (t - 2)));
      Fr a = load(tile_row(i0));
      Fr b = load(tile_row(i0 + 1));
      butterfly(a, b);
      store(tile_row(i0), a);
      store(tile_row(i0 + 1), b);
    }
    u = 1;
  }
  __syncthreads();
  for (; u + 2 < t; u += 2) {
    tile_step(u, false);
    __syncthreads();
  }
  // The last step (u = t - 2: i0 = q, rows q + k·2^(t-2)) writes device memory in the order the
  // loads of an odd t read it: consecutive threads, consecutive rows (or columns).
  tile_step(u, true);
}

// A null b stands for ones and a null c for zeros (the halves of the classic form): a branch uniform
// over the launch, in a kernel bound by its memory traffic.
template <class Fr>
__global__ void h_pointwise_kernel(Fr* a, const Fr* b, const Fr* c, std::uint64_t count, int mode, Fr factor,
                                   const Fr* factor_pointer) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= count) return;
  Fr value = load(a + i);
  if (b != nullptr) value = value * load(b + i);
  if (c != nullptr) value = value - load(c + i);
  if (mode == 1) value *= factor;
  if (mode == 2) value *= load(factor_pointer);
  store(a + i, value);
}

template <class Fr>
Fr fr_from_words(const FrWords& words) {
  Fr value;
  for (int i = 0; i < 4; ++i) {
    value.w[2 * i] = static_cast<std::uint32_t>(words[i]);
    value.w[2 * i + 1] = static_cast<std::uint32_t>(words[i] >> 32);
  }
  return value;
}

void check_log_size(unsigned log_size) {
  if (log_size < kNttMinLogSize || log_size > kNttMaxLogSize) {
    throw std::invalid_argument("ntt: log_size " + std::to_string(log_size) + " outside 1..27");
  }
}

template <class Fr>
void to_words(FrWords& target, const Fr& value) {
  for (int i = 0; i < 4; ++i) target[i] = std::uint64_t{value.w[2 * i]} | (std::uint64_t{value.w[2 * i + 1]} << 32);
}

template <class Fr>
using PassKernel = void (*)(Fr*, const Fr*, const Fr*, const Fr*, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, unsigned, unsigned, unsigned);
template <class Fr>
struct PassForm {
  PassKernel<Fr> kernel;
  unsigned elements_per_thread;  // 2: radix-2, 4: radix-4
  bool twiddle_limbs;            // the lazy kernel's FP64 limbs of the in-block twiddles in shared memory
};
template <class Curve>
PassForm<typename Curve::Fr> pass_form(NttVariant variant) {
  using Fr = typename Curve::Fr;
  using FrF64 = typename Curve::FrF64;
  switch (variant) {
    case NttVariant::radix2_integer: return {ntt_pass_kernel<Fr>, 2, false};
    case NttVariant::radix4_integer: return {ntt_radix4_pass_kernel<Fr, Fr, false>, 4, false};
    case NttVariant::radix4_f64: return {ntt_radix4_pass_kernel<Fr, FrF64, false>, 4, false};
    case NttVariant::radix4_f64_lazy: return {ntt_radix4_pass_kernel<Fr, FrF64, true>, 4, true};
  }
  throw std::invalid_argument("ntt: unknown NttVariant");
}

bool variant_uses_f64(NttVariant variant) {
  return variant != NttVariant::radix2_integer && variant != NttVariant::radix4_integer;
}

// The lazy kernel's shared memory passes the 48 KiB that a kernel gets without asking (tile of
// 2^10 elements and 2^9 twiddles' limbs: 52 KiB). The setting belongs to the current device, so
// it is made before each transform: a host-side call of microseconds against milliseconds.
template <class Curve>
void allow_large_shared_memory() {
  using Fr = typename Curve::Fr;
  using FrF64 = typename Curve::FrF64;
  STAGEHAND_CUDA_CHECK(cudaFuncSetAttribute(
      ntt_radix4_pass_kernel<Fr, FrF64, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
      (sizeof(Fr) << kTileLog) + sizeof(double) * FrF64::Params::F64::limbs * (std::size_t{1} << (kTileLog - 1))));
}

}  // namespace

const char* ntt_variant_name(NttVariant variant) {
  switch (variant) {
    case NttVariant::radix2_integer: return "radix-2 integer";
    case NttVariant::radix4_integer: return "radix-4 integer";
    case NttVariant::radix4_f64: return "radix-4 f64";
    case NttVariant::radix4_f64_lazy: return "radix-4 f64 lazy";
  }
  return "?";
}

template <class Curve>
void snarkjs_domain_roots(unsigned log_size, FrWords& root, FrWords& coset_generator) {
  check_log_size(log_size);
  typename Curve::Fr g, omega;
  snarkjs_roots<Curve>(log_size, omega, g);
  to_words(coset_generator, g);
  to_words(root, omega);
}

std::uint64_t ntt_domain_bytes(unsigned log_size) {
  check_log_size(log_size);
  return DomainLayout(log_size).element_count() * sizeof(Fr);
}

template <class Curve>
void ntt_domain_init(void* domain, unsigned log_size, const FrWords& root, const FrWords& coset_generator,
                     cudaStream_t stream) {
  using Fr = typename Curve::Fr;
  check_log_size(log_size);
  const DomainLayout layout(log_size);
  Fr* table = static_cast<Fr*>(domain);
  domain_constants_kernel<Fr>
      <<<1, 1, 0, stream>>>(table, layout, fr_from_words<Fr>(root), fr_from_words<Fr>(coset_generator));
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
  const std::uint64_t entries = 4 * layout.table + (std::uint64_t{1} << layout.small_log);
  domain_tables_kernel<Fr><<<blocks_for(entries, 256), 256, 0, stream>>>(table, layout);
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
  if (layout.mid_log != 0) {
    domain_mid_tables_kernel<Fr><<<blocks_for(layout.mid_entries(), 256), 256, 0, stream>>>(table, layout);
    STAGEHAND_CUDA_CHECK(cudaGetLastError());
  }
}

template <class Curve>
void ntt(void* values_pointer, const void* domain_pointer, unsigned log_size, NttKind kind, cudaStream_t stream,
         NttVariant variant) {
  using Fr = typename Curve::Fr;
  using FrF64 = typename Curve::FrF64;
  check_log_size(log_size);
  Fr* values = static_cast<Fr*>(values_pointer);
  const Fr* domain = static_cast<const Fr*>(domain_pointer);
  const DomainLayout layout(log_size);
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const bool inverse = kind == NttKind::inverse || kind == NttKind::coset_inverse;
  const Fr* constants = domain + layout.constants();

  int mode = kNoScale;
  if (inverse) mode = kScaleConstant;
  if (kind == NttKind::coset_forward) mode = kScalePowers;
  if (log_size >= 2 * kReverseTileLog) {
    const unsigned blocks = 1u << (log_size - 2 * kReverseTileLog);
    const auto kernel = mode == kNoScale            ? bit_reverse_tiles_kernel<Fr, Fr, false>
                        : variant_uses_f64(variant) ? bit_reverse_tiles_kernel<Fr, FrF64, true>
                                                    : bit_reverse_tiles_kernel<Fr, Fr, true>;
    kernel<<<blocks, 256, 0, stream>>>(values, log_size, mode, constants + kSizeInverse, domain + layout.power_table(2),
                                       layout.low_log);
  } else {
    bit_reverse_kernel<Fr><<<blocks_for(n, 256), 256, 0, stream>>>(values, log_size, mode, constants + kSizeInverse,
                                                                   domain + layout.power_table(2), layout.low_log);
  }
  STAGEHAND_CUDA_CHECK(cudaGetLastError());

  const Fr* power_table = domain + layout.power_table(inverse ? 1 : 0);
  const Fr* small_roots = domain + layout.small_table(inverse ? 1 : 0);
  const Fr* mid_table = domain + layout.mid_table();
  const NttPasses passes(log_size);
  const PassForm<Fr> chosen = pass_form<Curve>(variant);
  if (chosen.twiddle_limbs) allow_large_shared_memory<Curve>();
  // Radix-4 takes two stages at a time: a pass of one stage runs the radix-2 kernel.
  const auto form_of = [&](unsigned pass) {
    return passes.stages[pass] < 2 ? PassForm<Fr>{ntt_pass_kernel<Fr>, 2, false} : chosen;
  };
  unsigned s0 = 0;
  for (unsigned pass = 0; pass < passes.count; ++pass) {
    const unsigned t = passes.stages[pass];
    unsigned c = kTileLog - t;
    if (c > s0) c = s0;
    const unsigned tile_log = t + c;
    const PassForm<Fr> form = form_of(pass);
    // A lazy pass leaves values below 2r unless it is the last or a radix-2 pass follows.
    const bool canonical_output = pass + 1 == passes.count || form_of(pass + 1).elements_per_thread == 2;
    const unsigned threads = (1u << tile_log) / form.elements_per_thread;
    const unsigned blocks = static_cast<unsigned>(n >> tile_log);
    std::size_t shared = sizeof(Fr) << tile_log;
    if (form.twiddle_limbs) shared += sizeof(double) * FrF64::Params::F64::limbs * (std::size_t{1} << (t - 1));
    form.kernel<<<blocks, threads, shared, stream>>>(values, power_table, small_roots, mid_table, log_size,
                                                     layout.low_log, layout.small_log, layout.mid_log, s0, t, c,
                                                     canonical_output ? 1 : 0, inverse ? 1 : 0);
    STAGEHAND_CUDA_CHECK(cudaGetLastError());
    s0 += t;
  }

  if (kind == NttKind::coset_inverse) {
    scale_powers_kernel<Fr>
        <<<blocks_for(n, 256), 256, 0, stream>>>(values, n, domain + layout.power_table(3), layout.low_log);
    STAGEHAND_CUDA_CHECK(cudaGetLastError());
  }
}

template <class Curve>
void h_pointwise(void* a, const void* b, const void* c, std::uint64_t count, const FrWords* factor,
                 cudaStream_t stream) {
  using Fr = typename Curve::Fr;
  if (count == 0) return;
  h_pointwise_kernel<Fr><<<blocks_for(count, 256), 256, 0, stream>>>(
      static_cast<Fr*>(a), static_cast<const Fr*>(b), static_cast<const Fr*>(c), count, factor ? 1 : 0,
      factor ? fr_from_words<Fr>(*factor) : Fr::one(), nullptr);
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
}

namespace {

// The H steps' buffers are never null: h_combine reads a null b or c as ones or zeros.
void check_buffers(const char* name, std::initializer_list<const void*> buffers) {
  for (const void* buffer : buffers) {
    if (buffer == nullptr) throw std::invalid_argument(std::string(name) + ": a null buffer");
  }
}

// values: evaluations on the domain -> evaluations on the coset.
template <class Curve>
void evaluate_on_coset(void* values, const void* domain, unsigned log_size, cudaStream_t stream, NttVariant variant) {
  ntt<Curve>(values, domain, log_size, NttKind::inverse, stream, variant);
  ntt<Curve>(values, domain, log_size, NttKind::coset_forward, stream, variant);
}

// a[i] = (a[i]·b[i] − c[i])·factor over the domain's 2^log_size elements (b null: 1, c null: 0); the
// factor is the domain's Z⁻¹ = 1/(g^n − 1) on the coset when `vanishing`, 1 otherwise.
template <class Curve>
void h_combine(void* a, const void* b, const void* c, const void* domain_pointer, unsigned log_size, bool vanishing,
               cudaStream_t stream) {
  using Fr = typename Curve::Fr;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const Fr* vanishing_inverse =
      static_cast<const Fr*>(domain_pointer) + DomainLayout(log_size).constants() + kVanishingInverse;
  h_pointwise_kernel<Fr><<<blocks_for(n, 256), 256, 0, stream>>>(static_cast<Fr*>(a), static_cast<const Fr*>(b),
                                                                 static_cast<const Fr*>(c), n, vanishing ? 2 : 0,
                                                                 Fr::one(), vanishing_inverse);
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

template <class Curve>
void h_polynomial(void* a, void* b, void* c, const void* domain, unsigned log_size, HForm form, cudaStream_t stream,
                  NttVariant variant) {
  check_log_size(log_size);
  check_buffers("h_polynomial", {a, b, c, domain});
  for (void* values : {a, b, c}) evaluate_on_coset<Curve>(values, domain, log_size, stream, variant);
  h_combine<Curve>(a, b, c, domain, log_size, form == HForm::classic, stream);
  if (form == HForm::classic) ntt<Curve>(a, domain, log_size, NttKind::coset_inverse, stream, variant);
}

template <class Curve>
void h_classic_product(void* a, void* b, const void* domain, unsigned log_size, cudaStream_t stream,
                       NttVariant variant) {
  check_log_size(log_size);
  check_buffers("h_classic_product", {a, b, domain});
  for (void* values : {a, b}) evaluate_on_coset<Curve>(values, domain, log_size, stream, variant);
  h_combine<Curve>(a, b, nullptr, domain, log_size, false, stream);
}

template <class Curve>
void h_classic_finish(void* a, void* c, const void* domain, unsigned log_size, cudaStream_t stream,
                      NttVariant variant) {
  check_log_size(log_size);
  check_buffers("h_classic_finish", {a, c, domain});
  evaluate_on_coset<Curve>(c, domain, log_size, stream, variant);
  h_combine<Curve>(a, nullptr, c, domain, log_size, true, stream);
  ntt<Curve>(a, domain, log_size, NttKind::coset_inverse, stream, variant);
}

// Each curve's instantiations (ntt.hpp declares them; BLS12-381's are the default).
#define STAGEHAND_NTT_INSTANTIATE(Curve)                                                                          \
  template void snarkjs_domain_roots<Curve>(unsigned, FrWords&, FrWords&);                                        \
  template void ntt_domain_init<Curve>(void*, unsigned, const FrWords&, const FrWords&, cudaStream_t);            \
  template void ntt<Curve>(void*, const void*, unsigned, NttKind, cudaStream_t, NttVariant);                      \
  template void h_pointwise<Curve>(void*, const void*, const void*, std::uint64_t, const FrWords*, cudaStream_t); \
  template void h_polynomial<Curve>(void*, void*, void*, const void*, unsigned, HForm, cudaStream_t, NttVariant); \
  template void h_classic_product<Curve>(void*, void*, const void*, unsigned, cudaStream_t, NttVariant);          \
  template void h_classic_finish<Curve>(void*, void*, const void*, unsigned, cudaStream_t, NttVariant);
STAGEHAND_NTT_INSTANTIATE(Bls12_381Curve)
STAGEHAND_NTT_INSTANTIATE(Bn254Curve)
#undef STAGEHAND_NTT_INSTANTIATE

}  // namespace stagehand::cuda
