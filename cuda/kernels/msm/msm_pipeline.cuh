// The Pippenger pipeline of msm.hpp, written once for both groups of both curves: digits, sort,
// balanced bucket accumulation, one bucket reduction. A group C names its scalars (C::Scalar, the
// curve's Fr), its point types (C::Affine input points, C::Bucket XYZZ accumulators, C::Jacobian
// window sums), the fields its item sums add in (C::Field, C::F64Field, C::CalledField,
// C::CalledF64Field: ItemSum's forms) and the occupancy its kernels are built for. msm.cu defines
// BLS12-381's G1Curve and instantiates the pipeline for it, msm_g2.cu G2Curve, msm_bn254.cu
// BN254's G1: each in its own translation unit, so that a change to one group's arithmetic does
// not rebuild the others' kernels, and each exports its instance (MsmInstance, msm_instances.hpp,
// defined at the end of this file). Everything else is internal to those files (an unnamed namespace).
#pragma once

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "ec/curve.cuh"
#include "ff/field_f64.cuh"
#include "msm/msm.hpp"
#include "msm/msm_digits.cuh"
#include "msm/msm_instances.hpp"
#include "util/common.cuh"

namespace stagehand::cuda {
namespace {

template <class C>
using BucketOf = typename C::Bucket;
template <class C>
using AffineOf = typename C::Affine;
template <class C>
using JacobianOf = typename C::Jacobian;

constexpr unsigned kReduceThreads = 128;  // each reduction block folds 256 inputs into one
constexpr std::uint64_t kAlign = 256;

std::uint64_t align_up(std::uint64_t value) { return (value + kAlign - 1) / kAlign * kAlign; }

unsigned bit_width(std::uint64_t value) {
  unsigned bits = 0;
  while ((std::uint64_t{1} << bits) <= value) ++bits;
  return bits;
}

// Buckets, reduction partials first (their place depends only on the window width), then what
// depends on the point count.
struct ScratchLayout {
  std::uint64_t buckets = 0, partials_a = 0, partials_b = 0;
  std::uint64_t digit_words = 0, keys_in = 0, keys_out = 0, values_in = 0, values_out = 0;
  std::uint64_t bucket_start = 0, bucket_end = 0;
  std::uint64_t chunk_count = 0, chunk_offset = 0, item_first = 0, item_len_in = 0, item_len_out = 0, item_index_in = 0,
                item_index_out = 0, item_sums = 0;
  std::uint64_t sort_temp = 0, sort_temp_bytes = 0, total = 0;
  std::uint64_t pairs = 0, buckets_per_window = 0, buckets_per_group = 0, bucket_windows = 0;
  std::uint64_t segments_per_window = 0, reduce_windows = 0;
  bool split_reduction = false;
  std::uint64_t item_limit = 0;   // upper bound of the work items of one group
  std::uint32_t item_points = 0;  // K: the most points one work item sums
  unsigned end_bit = 0, item_end_bit = 0;
};

template <class C>
ScratchLayout layout_for(const MsmPlan& plan) {
  ScratchLayout s;
  const bool deferred = plan.tuning.deferred_reduction;
  s.pairs = std::uint64_t{plan.windows_per_group} * plan.point_count;
  s.buckets_per_window = std::uint64_t{1} << (plan.window_bits - 1);
  // Precomputed bases: every window's digits go to the one set of buckets.
  s.buckets_per_group = plan.precomputed ? s.buckets_per_window : plan.windows_per_group * s.buckets_per_window;
  s.bucket_windows = plan.precomputed ? 1 : deferred ? plan.window_count : plan.windows_per_group;
  s.reduce_windows = s.bucket_windows;
  // Split only for wide windows: measured on the H200 the split kernels beat one segment kernel
  // at c = 20 and lost to it at c = 16.
  s.split_reduction = plan.tuning.split_reduction && plan.window_bits >= 17;
  // Segment length L: each segment thread makes 2L additions in a chain (then, split, about
  // 1.5·log2(s·L) more), and the chains run side by side up to the threads the GPU holds at
  // once (H200: 132 SMs x 256 threads at segment_kernel's 255 registers, x 384 at the split
  // kernels' 168); more threads than that run in waves. Choose L minimising chain length x
  // waves; the window's segment partials are then folded by reduce_kernel.
  // (Reduced group by group instead: segments of 16 buckets.)
  std::uint64_t segments = 1;
  if (deferred) {
    const double resident = s.split_reduction ? 132.0 * 384 : 132.0 * 256;
    const double scale_ops = 1.5 * (plan.window_bits - 1);
    double best = 0;
    for (std::uint64_t candidate = 1; candidate <= s.buckets_per_window / 2; candidate *= 2) {
      const double length = static_cast<double>(s.buckets_per_window / candidate);
      const double waves = std::max(1.0, static_cast<double>(candidate * s.reduce_windows) / resident);
      const double cost = (2 * length + scale_ops) * waves;
      if (candidate == 1 || cost < best) {
        best = cost;
        segments = candidate;
      }
    }
  } else {
    segments = std::max<std::uint64_t>(1, s.buckets_per_window / 16);
  }
  s.segments_per_window = segments;
  const std::uint64_t sentinel = s.buckets_per_group;
  s.end_bit = bit_width(sentinel);
  // K: about twice the mean bucket size, so that a bucket of random scalars is one item and a
  // heavy bucket (equal scalars, the sparse top window) is cut into several.
  const std::uint64_t mean = (s.pairs + s.buckets_per_group - 1) / s.buckets_per_group;
  std::uint64_t item_points = std::max<std::uint64_t>(8, 2 * mean);
  // Shared buckets of a small precomputed MSM hold many points each (2^16 points at c = 13: 320):
  // items of at most pairs/2^17 points keep about 2^17 threads busy.
  if (plan.precomputed) item_points = std::max<std::uint64_t>(8, std::min(item_points, s.pairs >> 17));
  s.item_points = static_cast<std::uint32_t>(item_points);
  s.item_end_bit = bit_width(s.item_points);
  // Items: Σ ceil(m_b/K) <= buckets + pairs/K, and pairs/K <= buckets/2 since K >= 2n/2^(c-1).
  // The bound used grows with the point count (so a scratch sized for a batch fits every
  // smaller one), whatever K is. Precomputed plans (never batches) take their own K's bound.
  s.item_limit = plan.precomputed
                     ? s.buckets_per_group + s.pairs / s.item_points
                     : std::min(s.buckets_per_group + s.buckets_per_group / 2, s.buckets_per_group + s.pairs / 8);
  std::uint64_t offset = 0;
  auto take = [&](std::uint64_t bytes) {
    const std::uint64_t at = offset;
    offset += align_up(bytes);
    return at;
  };
  s.buckets = take(s.bucket_windows * s.buckets_per_window * sizeof(BucketOf<C>));
  s.partials_a = take(s.reduce_windows * s.segments_per_window * sizeof(BucketOf<C>));
  s.partials_b = take(s.reduce_windows * ((s.segments_per_window + 255) / 256) * sizeof(BucketOf<C>));
  s.digit_words = take(plan.point_count * kFrBytes);
  s.keys_in = take(s.pairs * 4);
  s.keys_out = take(s.pairs * 4);
  s.values_in = take(s.pairs * 4);
  s.values_out = take(s.pairs * 4);
  s.bucket_start = take((sentinel + 1) * 4);
  s.bucket_end = take((sentinel + 1) * 4);
  std::size_t temp_bytes = 0;
  STAGEHAND_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, temp_bytes, static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr),
      static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr),
      static_cast<std::int64_t>(s.pairs), 0, static_cast<int>(s.end_bit)));
  if (plan.tuning.balanced) {
    s.chunk_count = take((sentinel + 2) * 4);  // then the combine lists and their two counts
    s.chunk_offset = take((sentinel + 1) * 4);
    s.item_first = take(s.item_limit * 4);
    s.item_len_in = take(s.item_limit * 4);
    s.item_len_out = take(s.item_limit * 4);
    s.item_index_in = take(s.item_limit * 4);
    s.item_index_out = take(s.item_limit * 4);
    s.item_sums = take(s.item_limit * sizeof(BucketOf<C>));
    std::size_t item_temp = 0;
    STAGEHAND_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(
        nullptr, item_temp, static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr),
        static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr),
        static_cast<std::int64_t>(s.item_limit), 0, 32));  // the most any K needs
    std::size_t scan_temp = 0;
    STAGEHAND_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_temp, static_cast<const std::uint32_t*>(nullptr),
                                                       static_cast<std::uint32_t*>(nullptr),
                                                       static_cast<std::int64_t>(sentinel + 1)));
    temp_bytes = std::max({temp_bytes, item_temp, scan_temp});
  }
  s.sort_temp_bytes = temp_bytes;
  s.sort_temp = take(temp_bytes);
  s.total = offset;
  return s;
}

// t = s + B (msm_digits.cuh), s canonical (converted from Montgomery form when asked), stored
// word-major: word k of scalar i at words[k·count + i], so that a window's digits read only the
// words under it. On the H200 this more than halved the digits' time of a 2^26 MSM at c = 20,
// against reading every scalar whole for every window (bench/journal/2026-11-30.md, "Signed digits
// by one biased addition, read from a word-major copy").
template <class C>
__global__ void digit_words_kernel(const typename C::Scalar* scalars, bool montgomery, std::uint64_t count,
                                   DigitBias bias, std::uint32_t* words) {
  static_assert(C::Scalar::N == 8);
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= count) return;
  typename C::Scalar scalar = load(scalars + i);
  if (montgomery) scalar = scalar.from_montgomery();
  add_digit_bias(scalar.w, bias);
#pragma unroll
  for (int k = 0; k < 8; ++k) words[k * count + i] = scalar.w[k];
}

// One (key, value) pair per scalar and window of the group: key = local window·2^(c-1) + |d|-1,
// or the sentinel for a zero digit; value = point index with the digit's sign in bit 31. With
// shared buckets (precomputed bases) key = |d|-1, the sentinel 2^(c-1), and the point index that
// of copy `window` (window·count + i).
__global__ void digits_kernel(const std::uint32_t* words, std::uint64_t count, unsigned window_bits,
                              unsigned first_window, unsigned group_windows, bool shared_buckets, std::uint32_t* keys,
                              std::uint32_t* values) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const std::uint32_t half = 1u << (window_bits - 1);
  const std::uint32_t sentinel = shared_buckets ? half : group_windows * half;
  for (unsigned local = 0; local < group_windows; ++local) {
    const unsigned window = first_window + local;
    const unsigned bit = window * window_bits;
    const unsigned word = bit / 32;
    const std::uint32_t low = words[word * count + i];
    const std::uint32_t high = word + 1 < 8 && bit % 32 + window_bits > 32 ? words[(word + 1) * count + i] : 0;
    const std::uint32_t digit = signed_digit(window_bits_at(low, high, bit, window_bits), window, window_bits);
    const std::uint32_t magnitude = digit & 0x7fffffffu;
    const std::uint64_t slot = std::uint64_t{local} * count + i;
    keys[slot] = magnitude == 0 ? sentinel : (shared_buckets ? 0 : local * half) + magnitude - 1;
    const std::uint64_t point = shared_buckets ? std::uint64_t{window} * count + i : i;
    values[slot] = static_cast<std::uint32_t>(point) | (digit & 0x80000000u);
  }
}

__global__ void bucket_bounds_kernel(const std::uint32_t* keys, std::uint64_t count, std::uint32_t sentinel,
                                     std::uint32_t* start, std::uint32_t* end) {
  const std::uint64_t p = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (p >= count) return;
  const std::uint32_t key = keys[p];
  if (key == sentinel) return;
  if (p == 0 || keys[p - 1] != key) start[key] = static_cast<std::uint32_t>(p);
  if (p + 1 == count || keys[p + 1] != key) end[key] = static_cast<std::uint32_t>(p + 1);
}

// sum += ±point (the sign in bit 31 of value); F: Fq, or FqF64 (the same words) for the FP64
// products.
template <class C, class F>
__device__ __forceinline__ void add_signed_point(XyzzPoint<F>& sum, const AffineOf<C>* points, std::uint32_t value) {
  const AffineOf<C>* point = points + (value & 0x7fffffffu);
  const F x = load(reinterpret_cast<const F*>(&point->x));
  F y = load(reinterpret_cast<const F*>(&point->y));
  if (x.is_zero() && y.is_zero()) return;
  if (value >> 31) y = -y;
  sum.add_affine(x, y);
}

// The baseline kernel (tuning.balanced off): one thread per bucket.
template <class C>
__global__ void __launch_bounds__(128)
    accumulate_kernel(const AffineOf<C>* points, const std::uint32_t* values, const std::uint32_t* start,
                      const std::uint32_t* end, std::uint32_t bucket_count, BucketOf<C>* buckets) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= bucket_count) return;
  BucketOf<C> sum = BucketOf<C>::infinity();
  const std::uint32_t last = end[b];
  for (std::uint32_t p = start[b]; p < last; ++p) add_signed_point<C>(sum, points, values[p]);
  store(buckets + b, sum);
}

// Items per bucket: ceil(points / K); entry bucket_count is 0 so that the exclusive scan's last
// entry is the number of items.
__global__ void chunk_count_kernel(const std::uint32_t* start, const std::uint32_t* end, std::uint32_t bucket_count,
                                   std::uint32_t item_points, std::uint32_t* chunks) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b > bucket_count) return;
  chunks[b] = b == bucket_count ? 0 : (end[b] - start[b] + item_points - 1) / item_points;
}

// Every possible item slot: length 0 (sorts last, does nothing) and its own index.
__global__ void items_init_kernel(std::uint32_t* lengths, std::uint32_t* indices, std::uint64_t limit) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= limit) return;
  lengths[i] = 0;
  indices[i] = static_cast<std::uint32_t>(i);
}

// Bucket b's items occupy [offset[b], offset[b+1]): K points each, the last one the rest. Each
// item's first point index is tagged: bit 31 if it is its bucket's first item, bit 30 if it is
// the only one (the item sum then writes the bucket itself and the combine pass leaves it).
// Point indices stay below 2^28 (msm_plan caps the pairs of a group).
constexpr std::uint32_t kFirstItem = 0x80000000u, kOnlyItem = 0x40000000u, kItemPointMask = 0x3fffffffu;

// A bucket with more items than this is combined by a block of threads (heavy_combine_kernel),
// not by one thread's chain: scalars of 0 and 1, most of a real circuit's witness, put about half
// of an MSM's points into one bucket of the first window (2^20 points: 9,000 items, whose chain
// of additions made the G1 MSM many times slower, measured on the H200).
constexpr std::uint32_t kHeavyItems = 32;

// A bucket with several items goes on a combine pass's list: the list of combine_count entries
// from the front of combine_list, or, past kHeavyItems items, the heavy list of heavy_count
// entries from the back (capacity entries in all: the two never meet, since together they hold
// at most bucket_count <= capacity buckets). A bucket with no points becomes infinity here when
// the buckets start afresh (clear_empty), since no later pass touches it.
template <class C>
__global__ void items_kernel(const std::uint32_t* start, const std::uint32_t* end, const std::uint32_t* offset,
                             std::uint32_t bucket_count, std::uint32_t item_points, std::uint32_t* first,
                             std::uint32_t* lengths, std::uint32_t* combine_list, std::uint32_t capacity,
                             std::uint32_t* combine_count, std::uint32_t* heavy_count, bool clear_empty,
                             BucketOf<C>* buckets) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= bucket_count) return;
  const std::uint32_t from = start[b], to = end[b];
  if (from == to) {
    if (clear_empty) store(buckets + b, BucketOf<C>::infinity());
    return;
  }
  const std::uint32_t items = (to - from + item_points - 1) / item_points;
  if (items > kHeavyItems) {
    // Its items are written by heavy_items_kernel, many threads to a bucket: one thread writing
    // a bucket of half the points (2^25 at 2^26: 131,072 items) held the GPU for a visible part of
    // the MSM on the H200 (bench/journal/2026-12-03.md).
    combine_list[capacity - 1 - atomicAdd(heavy_count, 1u)] = b;
    return;
  }
  if (items > 1) combine_list[atomicAdd(combine_count, 1u)] = b;
  std::uint32_t item = offset[b];
  for (std::uint32_t p = from; p < to; p += item_points, ++item) {
    first[item] = p | (p == from ? kFirstItem : 0u) | (to - from <= item_points ? kOnlyItem : 0u);
    lengths[item] = min(item_points, to - p);
  }
}

// Thread t sums the t-th longest item's points into sums[item]. When adding to the buckets
// (streamed batches after the first), a bucket's first item starts from what the bucket holds
// (its key, the group-local bucket index, is keys[from]), so no batch pays a separate full
// addition per bucket. F is the field the additions multiply in (FqF64: products on the FP64
// pipe); buckets and sums are read and written as BucketOf<C>, whose words they share.
//
// Prefetch loads the next point while adding this one: with integer products 168 registers, 3
// blocks of 128 threads per SM; without it 128 registers and 4 blocks. Measured on the H200
// at 2^26 with integer products: prefetch was faster, much of the gain from the register
// budget alone (4 blocks held to 3 without prefetch gained part of it; 2 blocks lost much). FP64
// products take about 64 registers per multiplication against 40: 3 blocks without prefetch beat
// 2 blocks with it; at 3 blocks with prefetch, once squares took fewer registers, the MSM was
// barely faster on the device and a little faster streamed (bench/journal/2026-11-30.md).
template <class C, bool Prefetch, bool AddToBuckets, class F>
__global__ void __launch_bounds__(128, C::template item_sum_blocks<Prefetch, F>())
    item_sum_kernel(const AffineOf<C>* points, const std::uint32_t* values, const std::uint32_t* keys,
                    const std::uint32_t* first, const std::uint32_t* lengths, const std::uint32_t* indices,
                    std::uint64_t limit, BucketOf<C>* buckets, BucketOf<C>* sums) {
  using Point = XyzzPoint<F>;
  const std::uint64_t t = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (t >= limit) return;
  const std::uint32_t length = lengths[t];
  if (length == 0) return;
  const std::uint32_t item = indices[t];
  const std::uint32_t tagged = first[item];
  const std::uint32_t from = tagged & kItemPointMask;
  Point sum = Point::infinity();
  if constexpr (AddToBuckets) {
    if ((tagged & kFirstItem) != 0) sum = load(reinterpret_cast<const Point*>(buckets + keys[from]));
  }
  if constexpr (Prefetch) {
    std::uint32_t value = values[from];
    const AffineOf<C>* point = points + (value & 0x7fffffffu);
    F x = load(reinterpret_cast<const F*>(&point->x));
    F y = load(reinterpret_cast<const F*>(&point->y));
    for (std::uint32_t k = 0; k < length; ++k) {
      const F cx = x;
      F cy = y;
      const std::uint32_t sign = value >> 31;
      if (k + 1 < length) {
        value = values[from + k + 1];
        point = points + (value & 0x7fffffffu);
        x = load(reinterpret_cast<const F*>(&point->x));
        y = load(reinterpret_cast<const F*>(&point->y));
      }
      if (cx.is_zero() && cy.is_zero()) continue;
      if (sign) cy = -cy;
      sum.add_affine(cx, cy);
    }
  } else {
    for (std::uint32_t k = 0; k < length; ++k) add_signed_point<C>(sum, points, values[from + k]);
  }
  // A bucket's only item is the bucket: written there, it needs no copy by the combine pass
  // (which, for streamed batches of about 16 points per bucket, had become most of that pass).
  store(reinterpret_cast<Point*>((tagged & kOnlyItem) != 0 ? buckets + keys[from] : sums + item), sum);
}

// The item sum for a tuning, adding into the buckets or starting them afresh. The FP64 forms
// exist where the curve offers them (C::F64Field: both groups; G2 plans take the integer form,
// measured faster for G2).
template <class C>
using ItemSumKernel = void (*)(const AffineOf<C>*, const std::uint32_t*, const std::uint32_t*, const std::uint32_t*,
                               const std::uint32_t*, const std::uint32_t*, std::uint64_t, BucketOf<C>*, BucketOf<C>*);
template <class C, bool Prefetch, class F>
ItemSumKernel<C> item_sum_kernel_for(bool add_to_buckets) {
  return add_to_buckets ? item_sum_kernel<C, Prefetch, true, F> : item_sum_kernel<C, Prefetch, false, F>;
}
template <class C>
ItemSumKernel<C> item_sum_for(ItemSum item_sum, bool add_to_buckets) {
  if constexpr (C::kHasF64Field) {
    if (item_sum == ItemSum::f64_prefetch) return item_sum_kernel_for<C, true, typename C::F64Field>(add_to_buckets);
    if (item_sum == ItemSum::f64) return item_sum_kernel_for<C, false, typename C::F64Field>(add_to_buckets);
  }
  if (item_sum == ItemSum::integer_called)
    return item_sum_kernel_for<C, false, typename C::CalledField>(add_to_buckets);
  if (item_sum == ItemSum::f64_called) return item_sum_kernel_for<C, false, typename C::CalledF64Field>(add_to_buckets);
  if (item_sum == ItemSum::integer_prefetch) return item_sum_kernel_for<C, true, typename C::Field>(add_to_buckets);
  if (item_sum == ItemSum::integer) return item_sum_kernel_for<C, false, typename C::Field>(add_to_buckets);
  throw std::invalid_argument(std::string("msm: no such item sum for ") + C::kName);
}

// Bucket b = Σ of its items (the first of which already holds what the bucket held, when
// adding to the buckets), for the buckets with several items only (items_kernel's list): a
// bucket's only item wrote it, and an empty one was cleared or keeps its value. A fixed grid
// walks the list, whose length only the device knows (any grid size is correct; two blocks per
// SM of the H200, one wave). The pass is latency-bound: one thread adds a bucket's items in a
// chain. Eight lanes per bucket folding by shuffles cut the chain of the sparse top
// window's buckets (about 9 items each) from 8 additions to 4, but needed eight times the
// threads: several waves for the top window and a large grid for every other one. That pass was
// slower than this kernel in the streamed MSM at both 2^24 and 2^26 (measured on the H200).
constexpr unsigned kCombineBlocks = 2 * 132;
template <class C>
__global__ void __launch_bounds__(128)
    bucket_combine_kernel(const BucketOf<C>* sums, const std::uint32_t* offset, const std::uint32_t* combine_list,
                          const std::uint32_t* combine_count, BucketOf<C>* buckets) {
  const std::uint32_t count = *combine_count;
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    const std::uint32_t b = combine_list[i];
    const std::uint32_t from = offset[b], to = offset[b + 1];
    BucketOf<C> sum = load(sums + from);
    for (std::uint32_t item = from + 1; item < to; ++item) sum = sum + load(sums + item);
    store(buckets + b, sum);
  }
}

// The heavy buckets (items_kernel's list from the back of combine_list) in two passes. Each is
// cut into at most kHeavySlices slices of consecutive items, and each slice is a task of a
// block: its threads write the slice's items (heavy_items_kernel, before the item sums) or add
// its item sums (heavy_slices_kernel, after them), the sum landing over the slice's first item
// sum; then heavy_combine_kernel folds a bucket's slice sums, one a thread. One block per bucket,
// as the combine was first built, left the bucket of a witness of bits (half the points, one
// bucket of the first window) to one SM's chains: most of a G1 MSM's time at 2^24 on the H200
// (bench/journal/2026-12-03.md).
constexpr unsigned kHeavyThreads = 128, kHeavyBlocks = 132;
constexpr std::uint32_t kHeavySlices = kHeavyThreads;          // the combine folds one slice sum a thread
constexpr std::uint32_t kHeavySliceItems = 2 * kHeavyThreads;  // the least items a slice holds
constexpr unsigned kHeavyTaskBlocks = 8 * kHeavyBlocks;

// Items of each slice of a heavy bucket of `items` items: at least kHeavySliceItems, so that a
// bucket just past kHeavyItems is one slice (as before), and as many slices as that leaves.
__device__ __forceinline__ std::uint32_t heavy_slice_items(std::uint32_t items) {
  return max(kHeavySliceItems, (items + kHeavySlices - 1) / kHeavySlices);
}

// Calls task(b, first, last) for every (heavy bucket, slice) of this block: items [first, last)
// of bucket b (offset[b] counts from the bucket's first item). The loop and its bounds are the
// same for every thread of the block, so a task may synchronise the block.
template <class Task>
__device__ __forceinline__ void for_heavy_slices(const std::uint32_t* offset, const std::uint32_t* combine_list,
                                                 std::uint32_t capacity, const std::uint32_t* heavy_count, Task task) {
  const std::uint64_t tasks = std::uint64_t{*heavy_count} * kHeavySlices;
  for (std::uint64_t t = blockIdx.x; t < tasks; t += gridDim.x) {
    const std::uint32_t b = combine_list[capacity - 1 - static_cast<std::uint32_t>(t / kHeavySlices)];
    const std::uint32_t slice = static_cast<std::uint32_t>(t % kHeavySlices);
    const std::uint32_t from = offset[b], to = offset[b + 1];
    const std::uint32_t length = heavy_slice_items(to - from);
    const std::uint64_t first = from + std::uint64_t{slice} * length;
    if (first >= to) continue;
    const std::uint64_t last = first + length < to ? first + length : to;
    task(b, static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(last));
  }
}

// items_kernel's work for the heavy buckets: item j of bucket b starts at point start[b] + (j -
// offset[b])·K, tagged as its first when it is the bucket's first (a heavy bucket is never one
// item).
__global__ void __launch_bounds__(kHeavyThreads)
    heavy_items_kernel(const std::uint32_t* start, const std::uint32_t* end, const std::uint32_t* offset,
                       const std::uint32_t* combine_list, std::uint32_t capacity, const std::uint32_t* heavy_count,
                       std::uint32_t item_points, std::uint32_t* first, std::uint32_t* lengths) {
  for_heavy_slices(offset, combine_list, capacity, heavy_count,
                   [&](std::uint32_t b, std::uint32_t begin, std::uint32_t stop) {
                     const std::uint32_t from = start[b], to = end[b];
                     for (std::uint32_t item = begin + threadIdx.x; item < stop; item += kHeavyThreads) {
                       const std::uint32_t p = from + (item - offset[b]) * item_points;
                       first[item] = p | (p == from ? kFirstItem : 0u);
                       lengths[item] = min(item_points, to - p);
                     }
                   });
}

// The block's 128 sums folded by a tree in `shared`; the total is returned to thread 0.
template <class C>
__device__ __forceinline__ BucketOf<C> block_total(BucketOf<C> (&shared)[kHeavyThreads], const BucketOf<C>& sum) {
  shared[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned stride = kHeavyThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) shared[threadIdx.x] = shared[threadIdx.x] + shared[threadIdx.x + stride];
    __syncthreads();
  }
  const BucketOf<C> total = shared[0];
  __syncthreads();  // shared[0] is read before the next task overwrites it
  return total;
}

// Each slice's item sums added, the total written over the slice's first item sum (this task
// alone reads and writes the slice).
template <class C>
__global__ void __launch_bounds__(kHeavyThreads)
    heavy_slices_kernel(BucketOf<C>* sums, const std::uint32_t* offset, const std::uint32_t* combine_list,
                        std::uint32_t capacity, const std::uint32_t* heavy_count) {
  __shared__ BucketOf<C> shared[kHeavyThreads];
  for_heavy_slices(offset, combine_list, capacity, heavy_count,
                   [&](std::uint32_t, std::uint32_t begin, std::uint32_t stop) {
                     BucketOf<C> sum = BucketOf<C>::infinity();
                     for (std::uint32_t item = begin + threadIdx.x; item < stop; item += kHeavyThreads)
                       sum = sum + load(sums + item);
                     const BucketOf<C> total = block_total<C>(shared, sum);
                     if (threadIdx.x == 0) store(sums + begin, total);
                   });
}

// One block per heavy bucket: thread s takes slice s's sum, then the block's tree.
template <class C>
__global__ void __launch_bounds__(kHeavyThreads)
    heavy_combine_kernel(const BucketOf<C>* sums, const std::uint32_t* offset, const std::uint32_t* combine_list,
                         std::uint32_t capacity, const std::uint32_t* heavy_count, BucketOf<C>* buckets) {
  __shared__ BucketOf<C> shared[kHeavyThreads];
  const std::uint32_t count = *heavy_count;
  for (std::uint32_t i = blockIdx.x; i < count; i += gridDim.x) {
    const std::uint32_t b = combine_list[capacity - 1 - i];
    const std::uint32_t from = offset[b], to = offset[b + 1];
    const std::uint64_t slice_first = from + std::uint64_t{threadIdx.x} * heavy_slice_items(to - from);
    const BucketOf<C> sum = slice_first < to ? load(sums + slice_first) : BucketOf<C>::infinity();
    const BucketOf<C> total = block_total<C>(shared, sum);
    if (threadIdx.x == 0) store(buckets + b, total);
  }
}

// Thread (window w, segment s) over buckets [s·L, (s+1)·L): Σ (b+1)·B_b restricted to them,
// written as Σ_local (b - s·L + 1)·B_b + s·L·Σ_local B_b.
template <class C>
__global__ void __launch_bounds__(128)
    segment_kernel(const BucketOf<C>* buckets, std::uint32_t buckets_per_window, std::uint32_t segments_per_window,
                   std::uint32_t windows, BucketOf<C>* partials) {
  const std::uint32_t index = blockIdx.x * blockDim.x + threadIdx.x;
  if (index >= segments_per_window * windows) return;
  const std::uint32_t window = index / segments_per_window;
  const std::uint32_t segment = index % segments_per_window;
  const std::uint32_t length = buckets_per_window / segments_per_window;
  const BucketOf<C>* base = buckets + std::uint64_t{window} * buckets_per_window + std::uint64_t{segment} * length;
  BucketOf<C> running = BucketOf<C>::infinity();
  BucketOf<C> total = BucketOf<C>::infinity();
  for (int b = static_cast<int>(length) - 1; b >= 0; --b) {
    running = running + load(base + b);
    total = total + running;
  }
  const std::uint32_t offset = segment * length;
  if (offset != 0) total = total + running.times(offset);
  store(partials + index, total);
}

// The same sum in lighter kernels (tuning.split_reduction), each holding one running point
// and one loaded point (168 registers, no spills, against segment_kernel's 255 with spills):
// suffix_kernel turns each segment's buckets, in place, into suffix sums S_j = Σ_{k>=j} B_k
// (the buckets are consumed); segment_total_kernel writes U_s = Σ_j S_j = Σ_local (k+1)·B_k;
// segment_scale_kernel adds s·L·T_s with T_s = S_0 = Σ_local B_k (double-and-add). Loading the
// next bucket ahead of each addition was measured slower on the H200 at 2^22 and 2^26
// (bench/journal/2026-11-30.md).
template <class C>
__global__ void __launch_bounds__(128, C::kSplitBlocks)
    suffix_kernel(BucketOf<C>* buckets, std::uint32_t buckets_per_window, std::uint32_t segments_per_window,
                  std::uint32_t windows) {
  const std::uint32_t index = blockIdx.x * blockDim.x + threadIdx.x;
  if (index >= segments_per_window * windows) return;
  const std::uint32_t window = index / segments_per_window;
  const std::uint32_t segment = index % segments_per_window;
  const std::uint32_t length = buckets_per_window / segments_per_window;
  BucketOf<C>* base = buckets + std::uint64_t{window} * buckets_per_window + std::uint64_t{segment} * length;
  BucketOf<C> running = BucketOf<C>::infinity();
  for (int b = static_cast<int>(length) - 1; b >= 0; --b) {
    running = running + load(base + b);
    store(base + b, running);
  }
}

template <class C>
__global__ void __launch_bounds__(128, C::kSplitBlocks)
    segment_total_kernel(const BucketOf<C>* suffixes, std::uint32_t buckets_per_window,
                         std::uint32_t segments_per_window, std::uint32_t windows, BucketOf<C>* weighted) {
  const std::uint32_t index = blockIdx.x * blockDim.x + threadIdx.x;
  if (index >= segments_per_window * windows) return;
  const std::uint32_t window = index / segments_per_window;
  const std::uint32_t segment = index % segments_per_window;
  const std::uint32_t length = buckets_per_window / segments_per_window;
  const BucketOf<C>* base = suffixes + std::uint64_t{window} * buckets_per_window + std::uint64_t{segment} * length;
  BucketOf<C> total = BucketOf<C>::infinity();
  for (std::uint32_t b = 0; b < length; ++b) total = total + load(base + b);
  store(weighted + index, total);
}

template <class C>
__global__ void __launch_bounds__(128)
    segment_scale_kernel(BucketOf<C>* weighted, const BucketOf<C>* suffixes, std::uint32_t buckets_per_window,
                         std::uint32_t segments_per_window, std::uint32_t windows) {
  const std::uint32_t index = blockIdx.x * blockDim.x + threadIdx.x;
  if (index >= segments_per_window * windows) return;
  const std::uint32_t window = index / segments_per_window;
  const std::uint32_t segment = index % segments_per_window;
  const std::uint32_t offset = segment * (buckets_per_window / segments_per_window);
  if (offset == 0) return;
  const BucketOf<C> scaled = load(suffixes + std::uint64_t{window} * buckets_per_window + offset).times(offset);
  store(weighted + index, load(weighted + index) + scaled);
}

// Block (window, chunk): folds up to 256 consecutive partials of one window into one.
template <class C>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_kernel(const BucketOf<C>* in, std::uint32_t per_window, BucketOf<C>* out, std::uint32_t out_per_window) {
  __shared__ BucketOf<C> shared[kReduceThreads];
  const std::uint32_t window = blockIdx.x / out_per_window;
  const std::uint32_t chunk = blockIdx.x % out_per_window;
  const std::uint64_t first = std::uint64_t{window} * per_window + std::uint64_t{chunk} * 2 * kReduceThreads;
  const std::uint32_t limit = std::min<std::uint32_t>(2 * kReduceThreads, per_window - chunk * 2 * kReduceThreads);
  BucketOf<C> sum = BucketOf<C>::infinity();
  if (threadIdx.x < limit) sum = load(in + first + threadIdx.x);
  if (threadIdx.x + kReduceThreads < limit) sum = sum + load(in + first + threadIdx.x + kReduceThreads);
  shared[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned stride = kReduceThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) shared[threadIdx.x] = shared[threadIdx.x] + shared[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = shared[0];
}

template <class C>
__global__ void to_jacobian_kernel(const BucketOf<C>* sums, std::uint32_t count, JacobianOf<C>* out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = sums[i].to_jacobian();
}

void mark(MsmProfile* profile, const char* phase, cudaStream_t stream) {
  if (profile != nullptr) profile->mark(phase, stream);
}

// Σ (b+1)·B_b for `windows` windows of buckets, into out[0..windows). Consumes the buckets
// (split reduction: they become suffix sums).
template <class C>
void reduce_buckets(const ScratchLayout& s, std::uint8_t* scratch, BucketOf<C>* buckets, unsigned windows,
                    JacobianOf<C>* out, cudaStream_t stream, MsmProfile* profile) {
  auto* partials_a = reinterpret_cast<BucketOf<C>*>(scratch + s.partials_a);
  auto* partials_b = reinterpret_cast<BucketOf<C>*>(scratch + s.partials_b);
  std::uint32_t per_window = static_cast<std::uint32_t>(s.segments_per_window);
  const auto buckets_per_window = static_cast<std::uint32_t>(s.buckets_per_window);
  const unsigned segment_blocks = blocks_for(std::uint64_t{per_window} * windows, 128);
  if (s.split_reduction) {
    suffix_kernel<C><<<segment_blocks, 128, 0, stream>>>(buckets, buckets_per_window, per_window, windows);
    STAGEHAND_CUDA_CHECK(cudaGetLastError());
    segment_total_kernel<C>
        <<<segment_blocks, 128, 0, stream>>>(buckets, buckets_per_window, per_window, windows, partials_a);
    STAGEHAND_CUDA_CHECK(cudaGetLastError());
    segment_scale_kernel<C>
        <<<segment_blocks, 128, 0, stream>>>(partials_a, buckets, buckets_per_window, per_window, windows);
    STAGEHAND_CUDA_CHECK(cudaGetLastError());
  } else {
    segment_kernel<C><<<segment_blocks, 128, 0, stream>>>(buckets, buckets_per_window, per_window, windows, partials_a);
    STAGEHAND_CUDA_CHECK(cudaGetLastError());
  }
  BucketOf<C>* from = partials_a;
  BucketOf<C>* to = partials_b;
  while (per_window > 1) {
    const std::uint32_t out_per_window = (per_window + 2 * kReduceThreads - 1) / (2 * kReduceThreads);
    reduce_kernel<C><<<out_per_window * windows, kReduceThreads, 0, stream>>>(from, per_window, to, out_per_window);
    STAGEHAND_CUDA_CHECK(cudaGetLastError());
    per_window = out_per_window;
    std::swap(from, to);
  }
  to_jacobian_kernel<C><<<blocks_for(windows, 64), 64, 0, stream>>>(from, windows, out);
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
  mark(profile, "reduce", stream);
}

// Digits, sort and bucket sums of every group; with deferred reduction the buckets of window w
// end at buckets + w·2^(c-1), otherwise each group is reduced into window_sums at once.
template <class C>
void accumulate_groups(const void* points_pointer, const void* scalars_pointer, bool scalars_montgomery,
                       const MsmPlan& plan, bool add_to_buckets, std::uint8_t* scratch, JacobianOf<C>* window_sums,
                       cudaStream_t stream, MsmProfile* profile) {
  const ScratchLayout s = layout_for<C>(plan);
  const auto* points = static_cast<const AffineOf<C>*>(points_pointer);
  const auto* scalars = static_cast<const typename C::Scalar*>(scalars_pointer);
  const std::uint64_t n = plan.point_count;
  const bool deferred = plan.tuning.deferred_reduction;
  if (plan.precomputed && !deferred) throw std::invalid_argument("msm: precomputed bases need the deferred reduction");
  mark(profile, "start", stream);
  auto* digit_words = reinterpret_cast<std::uint32_t*>(scratch + s.digit_words);
  digit_words_kernel<C><<<blocks_for(n, 256), 256, 0, stream>>>(scalars, scalars_montgomery, n,
                                                                digit_bias(plan.window_bits), digit_words);
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
  mark(profile, "digits", stream);
  auto* keys_in = reinterpret_cast<std::uint32_t*>(scratch + s.keys_in);
  auto* keys_out = reinterpret_cast<std::uint32_t*>(scratch + s.keys_out);
  auto* values_in = reinterpret_cast<std::uint32_t*>(scratch + s.values_in);
  auto* values_out = reinterpret_cast<std::uint32_t*>(scratch + s.values_out);
  auto* bucket_start = reinterpret_cast<std::uint32_t*>(scratch + s.bucket_start);
  auto* bucket_end = reinterpret_cast<std::uint32_t*>(scratch + s.bucket_end);
  auto* buckets = reinterpret_cast<BucketOf<C>*>(scratch + s.buckets);
  const std::uint32_t buckets_per_window = 1u << (plan.window_bits - 1);

  for (unsigned first = 0; first < plan.window_count; first += plan.windows_per_group) {
    const unsigned windows = std::min(plan.windows_per_group, plan.window_count - first);
    const std::uint64_t pairs = std::uint64_t{windows} * n;
    const auto sentinel = static_cast<std::uint32_t>(s.buckets_per_group);
    // The buckets this group adds into: its windows' own, or with precomputed bases the shared
    // set, which every group after the first adds to.
    const std::uint32_t bucket_count = plan.precomputed ? buckets_per_window : windows * buckets_per_window;
    const bool add = add_to_buckets || (plan.precomputed && first > 0);
    digits_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(digit_words, n, plan.window_bits, first, windows,
                                                          plan.precomputed, keys_in, values_in);
    STAGEHAND_CUDA_CHECK(cudaGetLastError());
    mark(profile, "digits", stream);
    // A short last group uses a smaller sentinel; it is still the largest key of that group.
    std::size_t temp_bytes = s.sort_temp_bytes;
    STAGEHAND_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch + s.sort_temp, temp_bytes, keys_in, keys_out,
                                                         values_in, values_out, static_cast<std::int64_t>(pairs), 0,
                                                         static_cast<int>(s.end_bit), stream));
    mark(profile, "sort", stream);
    STAGEHAND_CUDA_CHECK(cudaMemsetAsync(bucket_start, 0, (sentinel + 1) * 4, stream));
    STAGEHAND_CUDA_CHECK(cudaMemsetAsync(bucket_end, 0, (sentinel + 1) * 4, stream));
    bucket_bounds_kernel<<<blocks_for(pairs, 256), 256, 0, stream>>>(keys_out, pairs, bucket_count, bucket_start,
                                                                     bucket_end);
    STAGEHAND_CUDA_CHECK(cudaGetLastError());
    mark(profile, "bounds", stream);
    BucketOf<C>* group_buckets =
        deferred && !plan.precomputed ? buckets + std::uint64_t{first} * buckets_per_window : buckets;
    if (!plan.tuning.balanced) {
      if (add) throw std::logic_error("msm: adding to buckets needs the balanced accumulation");
      accumulate_kernel<C><<<blocks_for(bucket_count, 128), 128, 0, stream>>>(points, values_out, bucket_start,
                                                                              bucket_end, bucket_count, group_buckets);
      STAGEHAND_CUDA_CHECK(cudaGetLastError());
      mark(profile, "accumulate", stream);
    } else {
      auto* chunk_count = reinterpret_cast<std::uint32_t*>(scratch + s.chunk_count);
      auto* chunk_offset = reinterpret_cast<std::uint32_t*>(scratch + s.chunk_offset);
      auto* item_first = reinterpret_cast<std::uint32_t*>(scratch + s.item_first);
      auto* item_len_in = reinterpret_cast<std::uint32_t*>(scratch + s.item_len_in);
      auto* item_len_out = reinterpret_cast<std::uint32_t*>(scratch + s.item_len_out);
      auto* item_index_in = reinterpret_cast<std::uint32_t*>(scratch + s.item_index_in);
      auto* item_index_out = reinterpret_cast<std::uint32_t*>(scratch + s.item_index_out);
      auto* item_sums = reinterpret_cast<BucketOf<C>*>(scratch + s.item_sums);
      const std::uint64_t limit = std::uint64_t{bucket_count} + pairs / s.item_points;
      if (limit > s.item_limit) throw std::logic_error("msm: work items exceed their bound");
      chunk_count_kernel<<<blocks_for(bucket_count + 1, 256), 256, 0, stream>>>(bucket_start, bucket_end, bucket_count,
                                                                                s.item_points, chunk_count);
      STAGEHAND_CUDA_CHECK(cudaGetLastError());
      temp_bytes = s.sort_temp_bytes;
      STAGEHAND_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scratch + s.sort_temp, temp_bytes, chunk_count, chunk_offset,
                                                         static_cast<std::int64_t>(bucket_count + 1), stream));
      items_init_kernel<<<blocks_for(limit, 256), 256, 0, stream>>>(item_len_in, item_index_in, limit);
      STAGEHAND_CUDA_CHECK(cudaGetLastError());
      // The chunk counts are spent once scanned: their array holds the combine passes' lists of
      // buckets (at most bucket_count <= sentinel entries in all) and, at [sentinel] and
      // [sentinel + 1], their lengths.
      std::uint32_t* combine_list = chunk_count;
      std::uint32_t* combine_count = chunk_count + sentinel;
      std::uint32_t* heavy_count = chunk_count + sentinel + 1;
      STAGEHAND_CUDA_CHECK(cudaMemsetAsync(combine_count, 0, 2 * sizeof(std::uint32_t), stream));
      items_kernel<C><<<blocks_for(bucket_count, 256), 256, 0, stream>>>(
          bucket_start, bucket_end, chunk_offset, bucket_count, s.item_points, item_first, item_len_in, combine_list,
          sentinel, combine_count, heavy_count, !add, group_buckets);
      STAGEHAND_CUDA_CHECK(cudaGetLastError());
      heavy_items_kernel<<<kHeavyTaskBlocks, kHeavyThreads, 0, stream>>>(bucket_start, bucket_end, chunk_offset,
                                                                         combine_list, sentinel, heavy_count,
                                                                         s.item_points, item_first, item_len_in);
      STAGEHAND_CUDA_CHECK(cudaGetLastError());
      temp_bytes = s.sort_temp_bytes;
      STAGEHAND_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(
          scratch + s.sort_temp, temp_bytes, item_len_in, item_len_out, item_index_in, item_index_out,
          static_cast<std::int64_t>(limit), 0, static_cast<int>(s.item_end_bit), stream));
      mark(profile, "balance", stream);
      const auto item_sum = item_sum_for<C>(plan.tuning.item_sum, add);
      item_sum<<<blocks_for(limit, 128), 128, 0, stream>>>(points, values_out, keys_out, item_first, item_len_out,
                                                           item_index_out, limit, group_buckets, item_sums);
      STAGEHAND_CUDA_CHECK(cudaGetLastError());
      mark(profile, "accumulate", stream);
      bucket_combine_kernel<C><<<std::min(kCombineBlocks, blocks_for(bucket_count, 128)), 128, 0, stream>>>(
          item_sums, chunk_offset, combine_list, combine_count, group_buckets);
      STAGEHAND_CUDA_CHECK(cudaGetLastError());
      heavy_slices_kernel<C><<<kHeavyTaskBlocks, kHeavyThreads, 0, stream>>>(item_sums, chunk_offset, combine_list,
                                                                             sentinel, heavy_count);
      STAGEHAND_CUDA_CHECK(cudaGetLastError());
      heavy_combine_kernel<C><<<kHeavyBlocks, kHeavyThreads, 0, stream>>>(item_sums, chunk_offset, combine_list,
                                                                          sentinel, heavy_count, group_buckets);
      STAGEHAND_CUDA_CHECK(cudaGetLastError());
      mark(profile, "combine", stream);
    }
    if (!deferred) reduce_buckets<C>(s, scratch, group_buckets, windows, window_sums + first, stream, profile);
  }
}

// Jacobian (X/Z^2, Y/Z^3) as XYZZ: ZZ = Z^2, ZZZ = Z^3 (Z = 0, infinity, gives ZZ = 0).
template <class C>
__device__ BucketOf<C> xyzz_from_jacobian(const JacobianOf<C>& p) {
  BucketOf<C> r;
  r.x = p.x;
  r.y = p.y;
  r.zz = p.z.squared();
  r.zzz = r.zz * p.z;
  return r;
}

// Horner over the window sums, then written as Jacobian (result) or added into an accumulator.
template <class C>
__global__ void combine_windows_kernel(const JacobianOf<C>* window_sums, unsigned window_count, unsigned window_bits,
                                       JacobianOf<C>* result, BucketOf<C>* accumulator, bool start) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  BucketOf<C> sum = BucketOf<C>::infinity();
  for (unsigned w = window_count; w-- > 0;) {
    for (unsigned bit = 0; bit < window_bits; ++bit) sum = sum.doubled();
    sum = sum + xyzz_from_jacobian<C>(window_sums[w]);
  }
  if (result != nullptr) *result = sum.to_jacobian();
  if (accumulator != nullptr) *accumulator = start ? sum : *accumulator + sum;
}

// The most local memory a thread of any of the pipeline's kernels for C uses (cudaFuncAttributes::
// localSizeBytes: stack frames and spills), for msm_kernel_stack_bytes.
template <class C>
std::uint64_t pipeline_stack_bytes() {
  std::uint64_t most = 0;
  auto take = [&](const void* kernel) {
    cudaFuncAttributes attributes{};
    STAGEHAND_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    most = std::max<std::uint64_t>(most, attributes.localSizeBytes);
  };
  using F = typename C::Field;
  for (const void* kernel :
       {reinterpret_cast<const void*>(accumulate_kernel<C>), reinterpret_cast<const void*>(items_kernel<C>),
        reinterpret_cast<const void*>(item_sum_kernel<C, true, false, F>),
        reinterpret_cast<const void*>(item_sum_kernel<C, true, true, F>),
        reinterpret_cast<const void*>(item_sum_kernel<C, false, false, F>),
        reinterpret_cast<const void*>(item_sum_kernel<C, false, true, F>),
        reinterpret_cast<const void*>(bucket_combine_kernel<C>), reinterpret_cast<const void*>(heavy_combine_kernel<C>),
        reinterpret_cast<const void*>(segment_kernel<C>), reinterpret_cast<const void*>(suffix_kernel<C>),
        reinterpret_cast<const void*>(segment_total_kernel<C>), reinterpret_cast<const void*>(segment_scale_kernel<C>),
        reinterpret_cast<const void*>(reduce_kernel<C>), reinterpret_cast<const void*>(to_jacobian_kernel<C>),
        reinterpret_cast<const void*>(combine_windows_kernel<C>),
        reinterpret_cast<const void*>(item_sum_kernel<C, false, false, typename C::CalledField>),
        reinterpret_cast<const void*>(item_sum_kernel<C, false, true, typename C::CalledField>),
        reinterpret_cast<const void*>(item_sum_kernel<C, false, false, typename C::CalledF64Field>),
        reinterpret_cast<const void*>(item_sum_kernel<C, false, true, typename C::CalledF64Field>)}) {
    take(kernel);
  }
  if constexpr (C::kHasF64Field) {
    using F64 = typename C::F64Field;
    take(reinterpret_cast<const void*>(item_sum_kernel<C, true, false, F64>));
    take(reinterpret_cast<const void*>(item_sum_kernel<C, true, true, F64>));
    take(reinterpret_cast<const void*>(item_sum_kernel<C, false, false, F64>));
    take(reinterpret_cast<const void*>(item_sum_kernel<C, false, true, F64>));
  }
  return most;
}

// One batch of an MSM fed in several (msm_g1_accumulate, msm_g2_accumulate): into the buckets
// at the start of the scratch, afresh or adding to what they hold.
template <class C>
void accumulate_batch(const char* caller, const void* points, const void* scalars, bool scalars_montgomery,
                      const MsmPlan& plan, bool add_to_buckets, void* scratch, cudaStream_t stream,
                      MsmProfile* profile) {
  if (!plan.tuning.deferred_reduction || !plan.tuning.balanced) {
    throw std::invalid_argument(std::string(caller) + ": needs the deferred reduction and the balanced accumulation");
  }
  if (plan.precomputed)
    throw std::invalid_argument(std::string(caller) + ": batches of precomputed bases are not offered");
  accumulate_groups<C>(points, scalars, scalars_montgomery, plan, add_to_buckets, static_cast<std::uint8_t*>(scratch),
                       nullptr, stream, profile);
}

// The buckets that accumulate_batch filled into plan.window_count window sums (msm_g1_reduce,
// msm_g2_reduce); the buckets are consumed.
template <class C>
void reduce_batches(const char* caller, const MsmPlan& plan, void* window_sums, void* scratch_pointer,
                    cudaStream_t stream, MsmProfile* profile) {
  if (!plan.tuning.deferred_reduction)
    throw std::invalid_argument(std::string(caller) + ": needs the deferred reduction");
  auto* scratch = static_cast<std::uint8_t*>(scratch_pointer);
  const ScratchLayout s = layout_for<C>(plan);
  mark(profile, "start", stream);
  reduce_buckets<C>(s, scratch, reinterpret_cast<BucketOf<C>*>(scratch + s.buckets),
                    static_cast<unsigned>(s.bucket_windows), static_cast<JacobianOf<C>*>(window_sums), stream, profile);
}

// The whole MSM into plan.window_count window sums (msm_g1_windows, msm_g2_windows).
template <class C>
void msm_windows(const void* points, const void* scalars, bool scalars_montgomery, const MsmPlan& plan,
                 void* window_sums, void* scratch_pointer, cudaStream_t stream, MsmProfile* profile) {
  auto* scratch = static_cast<std::uint8_t*>(scratch_pointer);
  auto* out = static_cast<JacobianOf<C>*>(window_sums);
  accumulate_groups<C>(points, scalars, scalars_montgomery, plan, false, scratch, out, stream, profile);
  if (plan.tuning.deferred_reduction) {
    const ScratchLayout s = layout_for<C>(plan);
    reduce_buckets<C>(s, scratch, reinterpret_cast<BucketOf<C>*>(scratch + s.buckets),
                      static_cast<unsigned>(s.bucket_windows), out, stream, profile);
  }
}

// Precomputed bases (MsmPlan::precomputed): copy j of every point from copy j - 1, 2^c·P by c
// doublings in XYZZ coordinates, then affine. Each thread takes kPrecomputeBatch points (a
// stride apart, so that each load and store of the batch is coalesced) and inverts their
// ZZ·ZZZ products with one inversion (Montgomery's trick): the Fermat inversion costs about 570
// multiplications, against about 9·c for a copy's doublings (four points a thread were measured
// slower on the H200, bench/journal/2026-12-02.md; sixteen leave the inversion a tenth of the work).
// Infinity (zeros) stays zeros.
constexpr unsigned kPrecomputeBatch = 16;
template <class C>
__global__ void __launch_bounds__(128)
    precompute_copy_kernel(const AffineOf<C>* previous, std::uint64_t count, unsigned window_bits, AffineOf<C>* next) {
  using F = typename C::Field;
  using Point = XyzzPoint<F>;
  const std::uint64_t threads = std::uint64_t{gridDim.x} * blockDim.x;
  const std::uint64_t first = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  Point points[kPrecomputeBatch];
  F prefix[kPrecomputeBatch];
  F running = F::one();
  for (unsigned k = 0; k < kPrecomputeBatch; ++k) {
    const std::uint64_t i = first + k * threads;
    points[k] = Point::infinity();
    if (i < count) {
      const F x = load(&previous[i].x);
      const F y = load(&previous[i].y);
      if (!(x.is_zero() && y.is_zero())) {
        points[k] = Point::double_affine(x, y);
        for (unsigned bit = 1; bit < window_bits; ++bit) points[k] = points[k].doubled();
      }
    }
    if (!points[k].is_infinity()) running = running * (points[k].zz * points[k].zzz);
    prefix[k] = running;
  }
  F inverse = running.inverse();  // 1 / Π of the batch's ZZ·ZZZ
  for (unsigned k = kPrecomputeBatch; k-- > 0;) {
    const std::uint64_t i = first + k * threads;
    if (points[k].is_infinity()) {
      if (i < count) {
        AffineOf<C> zero;
        zero.x = F::zero();
        zero.y = F::zero();
        store(next + i, zero);
      }
      continue;
    }
    const F own = k == 0 ? inverse : inverse * prefix[k - 1];  // 1 / (ZZ·ZZZ) of point k
    inverse = inverse * (points[k].zz * points[k].zzz);
    AffineOf<C> affine;
    affine.x = points[k].x * (own * points[k].zzz);  // X / ZZ
    affine.y = points[k].y * (own * points[k].zz);   // Y / ZZZ
    store(next + i, affine);
  }
}

template <class C>
void precompute_bases(const MsmPlan& plan, const void* points, void* copies, cudaStream_t stream) {
  if (!plan.precomputed)
    throw std::invalid_argument(std::string("msm_precompute_bases: not a precomputed plan (") + C::kName + ")");
  const std::uint64_t n = plan.point_count;
  auto* out = static_cast<AffineOf<C>*>(copies);
  if (copies != points) {
    STAGEHAND_CUDA_CHECK(cudaMemcpyAsync(out, points, n * sizeof(AffineOf<C>), cudaMemcpyDeviceToDevice, stream));
  }
  const unsigned blocks = blocks_for((n + kPrecomputeBatch - 1) / kPrecomputeBatch, 128);
  for (unsigned j = 1; j < plan.window_count; ++j) {
    precompute_copy_kernel<C><<<blocks, 128, 0, stream>>>(out + (j - 1) * n, n, plan.window_bits, out + j * n);
    STAGEHAND_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace
}  // namespace stagehand::cuda

// MsmInstance (msm_instances.hpp) as the pipeline over MsmGroupOf<K, G>::type, which the
// translation unit that instantiates an instance specialises before its explicit instantiation.
namespace stagehand::cuda {

template <kernel::Curve K, MsmGroup G>
std::uint64_t MsmInstance<K, G>::scratch_bytes(const MsmPlan& plan) {
  return layout_for<typename MsmGroupOf<K, G>::type>(plan).total;
}

template <kernel::Curve K, MsmGroup G>
std::uint64_t MsmInstance<K, G>::stack_bytes() {
  return pipeline_stack_bytes<typename MsmGroupOf<K, G>::type>();
}

template <kernel::Curve K, MsmGroup G>
void MsmInstance<K, G>::windows(const void* points, const void* scalars, bool scalars_montgomery, const MsmPlan& plan,
                                void* window_sums, void* scratch, cudaStream_t stream, MsmProfile* profile) {
  msm_windows<typename MsmGroupOf<K, G>::type>(points, scalars, scalars_montgomery, plan, window_sums, scratch, stream,
                                               profile);
}

template <kernel::Curve K, MsmGroup G>
void MsmInstance<K, G>::accumulate(const char* caller, const void* points, const void* scalars, bool scalars_montgomery,
                                   const MsmPlan& plan, bool add_to_buckets, void* scratch, cudaStream_t stream,
                                   MsmProfile* profile) {
  accumulate_batch<typename MsmGroupOf<K, G>::type>(caller, points, scalars, scalars_montgomery, plan, add_to_buckets,
                                                    scratch, stream, profile);
}

template <kernel::Curve K, MsmGroup G>
void MsmInstance<K, G>::reduce(const char* caller, const MsmPlan& plan, void* window_sums, void* scratch,
                               cudaStream_t stream, MsmProfile* profile) {
  reduce_batches<typename MsmGroupOf<K, G>::type>(caller, plan, window_sums, scratch, stream, profile);
}

template <kernel::Curve K, MsmGroup G>
void MsmInstance<K, G>::precompute(const MsmPlan& plan, const void* points, void* copies, cudaStream_t stream) {
  precompute_bases<typename MsmGroupOf<K, G>::type>(plan, points, copies, stream);
}

template <kernel::Curve K, MsmGroup G>
void MsmInstance<K, G>::combine_on_device(const void* window_sums, unsigned window_count, unsigned window_bits,
                                          void* result_jacobian, void* accumulator_xyzz, bool start,
                                          cudaStream_t stream) {
  using C = typename MsmGroupOf<K, G>::type;
  combine_windows_kernel<C><<<1, 1, 0, stream>>>(static_cast<const JacobianOf<C>*>(window_sums), window_count,
                                                 window_bits, static_cast<JacobianOf<C>*>(result_jacobian),
                                                 static_cast<BucketOf<C>*>(accumulator_xyzz), start);
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
}

}  // namespace stagehand::cuda
