// Pippenger MSM over G1: digits, sort, bucket accumulation, bucket reduction (see msm.hpp).
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common.cuh"
#include "curve.cuh"
#include "msm.hpp"

namespace stagehand::cuda {
namespace {

constexpr unsigned kSegmentBuckets = 16;   // buckets per thread in the first reduction step
constexpr unsigned kReduceThreads = 128;   // each reduction block folds 256 inputs into one
constexpr std::uint64_t kAlign = 256;

std::uint64_t align_up(std::uint64_t value) { return (value + kAlign - 1) / kAlign * kAlign; }

struct ScratchLayout {
  std::uint64_t canonical_scalars = 0, keys_in = 0, keys_out = 0, values_in = 0, values_out = 0;
  std::uint64_t bucket_start = 0, bucket_end = 0, buckets = 0, partials_a = 0, partials_b = 0, sort_temp = 0;
  std::uint64_t sort_temp_bytes = 0, total = 0;
  std::uint64_t pairs = 0, buckets_per_group = 0, segments_per_window = 0;
  unsigned end_bit = 0;
};

ScratchLayout layout_for(const MsmPlan& plan) {
  ScratchLayout s;
  s.pairs = std::uint64_t{plan.windows_per_group} * plan.point_count;
  const std::uint64_t buckets_per_window = std::uint64_t{1} << (plan.window_bits - 1);
  s.buckets_per_group = plan.windows_per_group * buckets_per_window;
  s.segments_per_window = std::max<std::uint64_t>(1, buckets_per_window / kSegmentBuckets);
  const std::uint64_t sentinel = s.buckets_per_group;
  s.end_bit = 1;
  while ((std::uint64_t{1} << s.end_bit) <= sentinel) ++s.end_bit;
  std::uint64_t offset = 0;
  auto take = [&](std::uint64_t bytes) {
    const std::uint64_t at = offset;
    offset += align_up(bytes);
    return at;
  };
  s.canonical_scalars = take(plan.point_count * kFrBytes);
  s.keys_in = take(s.pairs * 4);
  s.keys_out = take(s.pairs * 4);
  s.values_in = take(s.pairs * 4);
  s.values_out = take(s.pairs * 4);
  s.bucket_start = take((sentinel + 1) * 4);
  s.bucket_end = take((sentinel + 1) * 4);
  s.buckets = take(s.buckets_per_group * sizeof(G1Xyzz));
  s.partials_a = take(plan.windows_per_group * s.segments_per_window * sizeof(G1Xyzz));
  s.partials_b = take(plan.windows_per_group * ((s.segments_per_window + 255) / 256) * sizeof(G1Xyzz));
  std::size_t temp_bytes = 0;
  SH_CUDA_OK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, static_cast<const std::uint32_t*>(nullptr),
                                             static_cast<std::uint32_t*>(nullptr),
                                             static_cast<const std::uint32_t*>(nullptr),
                                             static_cast<std::uint32_t*>(nullptr), static_cast<std::int64_t>(s.pairs),
                                             0, static_cast<int>(s.end_bit)));
  s.sort_temp_bytes = temp_bytes;
  s.sort_temp = take(temp_bytes);
  s.total = offset;
  return s;
}

__global__ void to_canonical_kernel(Fr* out, const Fr* in, std::uint64_t count) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < count) store(out + i, load(in + i).from_montgomery());
}

// One (key, value) pair per scalar and window of the group: key = local window·2^(c-1) + |d|-1,
// or the sentinel for a zero digit; value = point index with the digit's sign in bit 31.
__global__ void digits_kernel(const Fr* scalars, std::uint64_t count, unsigned window_bits, unsigned first_window,
                              unsigned group_windows, std::uint32_t* keys, std::uint32_t* values) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const Fr scalar = load(scalars + i);
  const std::uint32_t half = 1u << (window_bits - 1);
  const std::uint32_t mask = (1u << window_bits) - 1;
  const std::uint32_t sentinel = group_windows * half;
  std::uint32_t carry = 0;
  for (unsigned w = 0; w < first_window + group_windows; ++w) {
    const unsigned bit = w * window_bits;
    const unsigned word = bit / 32;
    const unsigned shift = bit % 32;
    std::uint64_t bits = word < 8 ? scalar.w[word] : 0;
    if (word + 1 < 8) bits |= std::uint64_t{scalar.w[word + 1]} << 32;
    const std::uint32_t raw = static_cast<std::uint32_t>(bits >> shift) & mask;
    std::uint32_t digit = raw + carry;
    bool negative = false;
    if (digit > half) {
      digit = (1u << window_bits) - digit;
      negative = true;
      carry = 1;
    } else {
      carry = 0;
    }
    if (w >= first_window) {
      const std::uint64_t slot = std::uint64_t{w - first_window} * count + i;
      keys[slot] = digit == 0 ? sentinel : (w - first_window) * half + digit - 1;
      values[slot] = static_cast<std::uint32_t>(i) | (negative ? 0x80000000u : 0u);
    }
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

__global__ void __launch_bounds__(128) accumulate_kernel(const G1Affine* points, const std::uint32_t* values,
                                                         const std::uint32_t* start, const std::uint32_t* end,
                                                         std::uint32_t bucket_count, G1Xyzz* buckets) {
  const std::uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= bucket_count) return;
  G1Xyzz sum = G1Xyzz::infinity();
  const std::uint32_t last = end[b];
  for (std::uint32_t p = start[b]; p < last; ++p) {
    const std::uint32_t value = values[p];
    const G1Affine* point = points + (value & 0x7fffffffu);
    const Fq x = load(&point->x);
    Fq y = load(&point->y);
    if (x.is_zero() && y.is_zero()) continue;
    if (value >> 31) y = -y;
    sum.add_affine(x, y);
  }
  store(buckets + b, sum);
}

// Thread (window w, segment s) over buckets [s·L, (s+1)·L): Σ (b+1)·B_b restricted to them,
// written as Σ_local (b - s·L + 1)·B_b + s·L·Σ_local B_b.
__global__ void __launch_bounds__(128) segment_kernel(const G1Xyzz* buckets, std::uint32_t buckets_per_window,
                                                      std::uint32_t segments_per_window, std::uint32_t windows,
                                                      G1Xyzz* partials) {
  const std::uint32_t index = blockIdx.x * blockDim.x + threadIdx.x;
  if (index >= segments_per_window * windows) return;
  const std::uint32_t window = index / segments_per_window;
  const std::uint32_t segment = index % segments_per_window;
  const std::uint32_t length = buckets_per_window / segments_per_window;
  const G1Xyzz* base = buckets + std::uint64_t{window} * buckets_per_window + std::uint64_t{segment} * length;
  G1Xyzz running = G1Xyzz::infinity();
  G1Xyzz total = G1Xyzz::infinity();
  for (int b = static_cast<int>(length) - 1; b >= 0; --b) {
    running = running + load(base + b);
    total = total + running;
  }
  const std::uint32_t offset = segment * length;
  if (offset != 0) total = total + running.times(offset);
  store(partials + index, total);
}

// Block (window, chunk): folds up to 256 consecutive partials of one window into one.
__global__ void __launch_bounds__(kReduceThreads) reduce_kernel(const G1Xyzz* in, std::uint32_t per_window,
                                                                G1Xyzz* out, std::uint32_t out_per_window) {
  __shared__ G1Xyzz shared[kReduceThreads];
  const std::uint32_t window = blockIdx.x / out_per_window;
  const std::uint32_t chunk = blockIdx.x % out_per_window;
  const std::uint64_t first = std::uint64_t{window} * per_window + std::uint64_t{chunk} * 2 * kReduceThreads;
  const std::uint32_t limit = std::min<std::uint32_t>(2 * kReduceThreads, per_window - chunk * 2 * kReduceThreads);
  G1Xyzz sum = G1Xyzz::infinity();
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

__global__ void to_jacobian_kernel(const G1Xyzz* sums, std::uint32_t count, G1Jacobian* out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = sums[i].to_jacobian();
}

}  // namespace

MsmPlan msm_plan(std::uint64_t point_count, unsigned window_bits) {
  if (point_count == 0 || point_count >= (std::uint64_t{1} << 31)) {
    throw std::invalid_argument("msm_plan: point count must be in 1..2^31-1");
  }
  MsmPlan plan;
  plan.point_count = point_count;
  if (window_bits == 0) {
    // Cost in field multiplications: every window adds each point into a bucket (8M + 2S, plus
    // about one more for its share of the sort) and folds its 2^(c-1) buckets twice (12M + 2S).
    // Only widths whose top window keeps most of its bits are candidates: the top window holds
    // bits (W-1)·c..254, and with few of them (c = 18 leaves 3: 8 buckets) its buckets each get
    // n/2^bits points, which one thread per bucket sums serially (measured on the H200: 20.8 s
    // instead of tens of ms at 2^22). 8, 16 and 20 leave 7, 15 and 15 bits.
    double best_cost = 0;
    for (unsigned bits : {8u, 16u, 20u}) {
      const double windows = (256 + bits - 1) / bits;
      const double cost = windows * (11.0 * static_cast<double>(point_count) + 28.0 * std::ldexp(1.0, bits - 1));
      if (window_bits == 0 || cost < best_cost) {
        window_bits = bits;
        best_cost = cost;
      }
    }
  }
  if (window_bits < 2 || window_bits > 22) throw std::invalid_argument("msm_plan: window_bits outside 2..22");
  plan.window_bits = window_bits;
  plan.window_count = (256 + window_bits - 1) / window_bits;
  // Enough buckets in flight to fill the GPU (2^18 threads), and at most 2^28 sort pairs.
  const std::uint64_t buckets_per_window = std::uint64_t{1} << (window_bits - 1);
  std::uint64_t group = std::max<std::uint64_t>(1, (std::uint64_t{1} << 18) / buckets_per_window);
  group = std::min<std::uint64_t>(group, std::max<std::uint64_t>(1, (std::uint64_t{1} << 28) / point_count));
  group = std::min<std::uint64_t>(group, plan.window_count);
  plan.windows_per_group = static_cast<unsigned>(group);
  return plan;
}

std::uint64_t msm_scratch_bytes(const MsmPlan& plan) { return layout_for(plan).total; }

void msm_g1_windows(const void* points_pointer, const void* scalars_pointer, bool scalars_montgomery,
                    const MsmPlan& plan, void* window_sums, void* scratch_pointer, cudaStream_t stream) {
  const ScratchLayout s = layout_for(plan);
  auto* scratch = static_cast<std::uint8_t*>(scratch_pointer);
  const auto* points = static_cast<const G1Affine*>(points_pointer);
  const Fr* scalars = static_cast<const Fr*>(scalars_pointer);
  const std::uint64_t n = plan.point_count;
  if (scalars_montgomery) {
    Fr* canonical = reinterpret_cast<Fr*>(scratch + s.canonical_scalars);
    to_canonical_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(canonical, scalars, n);
    SH_CUDA_LAUNCHED();
    scalars = canonical;
  }
  auto* keys_in = reinterpret_cast<std::uint32_t*>(scratch + s.keys_in);
  auto* keys_out = reinterpret_cast<std::uint32_t*>(scratch + s.keys_out);
  auto* values_in = reinterpret_cast<std::uint32_t*>(scratch + s.values_in);
  auto* values_out = reinterpret_cast<std::uint32_t*>(scratch + s.values_out);
  auto* bucket_start = reinterpret_cast<std::uint32_t*>(scratch + s.bucket_start);
  auto* bucket_end = reinterpret_cast<std::uint32_t*>(scratch + s.bucket_end);
  auto* buckets = reinterpret_cast<G1Xyzz*>(scratch + s.buckets);
  auto* partials_a = reinterpret_cast<G1Xyzz*>(scratch + s.partials_a);
  auto* partials_b = reinterpret_cast<G1Xyzz*>(scratch + s.partials_b);
  auto* out = static_cast<G1Jacobian*>(window_sums);
  const std::uint32_t buckets_per_window = 1u << (plan.window_bits - 1);

  for (unsigned first = 0; first < plan.window_count; first += plan.windows_per_group) {
    const unsigned windows = std::min(plan.windows_per_group, plan.window_count - first);
    const std::uint64_t pairs = std::uint64_t{windows} * n;
    const std::uint32_t sentinel = plan.windows_per_group * buckets_per_window;
    digits_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(scalars, n, plan.window_bits, first, windows, keys_in,
                                                          values_in);
    SH_CUDA_LAUNCHED();
    // A short last group uses a smaller sentinel; it is still the largest key of that group.
    std::size_t temp_bytes = s.sort_temp_bytes;
    SH_CUDA_OK(cub::DeviceRadixSort::SortPairs(scratch + s.sort_temp, temp_bytes, keys_in, keys_out, values_in,
                                               values_out, static_cast<std::int64_t>(pairs), 0,
                                               static_cast<int>(s.end_bit), stream));
    SH_CUDA_OK(cudaMemsetAsync(bucket_start, 0, (sentinel + 1) * 4, stream));
    SH_CUDA_OK(cudaMemsetAsync(bucket_end, 0, (sentinel + 1) * 4, stream));
    const std::uint32_t group_sentinel = windows * buckets_per_window;
    bucket_bounds_kernel<<<blocks_for(pairs, 256), 256, 0, stream>>>(keys_out, pairs, group_sentinel, bucket_start,
                                                                      bucket_end);
    SH_CUDA_LAUNCHED();
    const std::uint32_t bucket_count = windows * buckets_per_window;
    accumulate_kernel<<<blocks_for(bucket_count, 128), 128, 0, stream>>>(points, values_out, bucket_start,
                                                                          bucket_end, bucket_count, buckets);
    SH_CUDA_LAUNCHED();
    std::uint32_t per_window = static_cast<std::uint32_t>(s.segments_per_window);
    segment_kernel<<<blocks_for(std::uint64_t{per_window} * windows, 128), 128, 0, stream>>>(
        buckets, buckets_per_window, per_window, windows, partials_a);
    SH_CUDA_LAUNCHED();
    G1Xyzz* from = partials_a;
    G1Xyzz* to = partials_b;
    while (per_window > 1) {
      const std::uint32_t out_per_window = (per_window + 2 * kReduceThreads - 1) / (2 * kReduceThreads);
      reduce_kernel<<<out_per_window * windows, kReduceThreads, 0, stream>>>(from, per_window, to, out_per_window);
      SH_CUDA_LAUNCHED();
      per_window = out_per_window;
      std::swap(from, to);
    }
    to_jacobian_kernel<<<blocks_for(windows, 64), 64, 0, stream>>>(from, windows, out + first);
    SH_CUDA_LAUNCHED();
  }
}

}  // namespace stagehand::cuda
