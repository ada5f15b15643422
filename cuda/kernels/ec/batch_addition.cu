// batch_addition_g1 and batch_addition_g2: see batch_addition.hpp for the method and the memory.
#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "device/kernel_abi.hpp"
#include "device/partition_launches.hpp"
#include "ec/batch_addition.hpp"
#include "ec/curve.cuh"
#include "ec/g2.cuh"
#include "launch/launch_args.hpp"
#include "util/common.cuh"

namespace stagehand::cuda {
namespace {

// An affine point read as coordinates of the field form F (the forms of Fq share their bytes, so
// the same buffer serves either).
template <class F>
struct AffineAs {
  F x;
  F y;
  SH_HD bool is_infinity() const { return x.is_zero() && y.is_zero(); }
};

// F: the coordinates' field, with Fq's products on the integer pipe or the FP64 one. Threads per
// block: the shared-memory tree holds one XYZZ point per thread, 24 KiB either way; fewer G2
// threads because a G2 point is twice the size and the arithmetic twice the registers. G1's
// partial sums are compiled for 3 blocks per SM (168 registers), which the integer form needs
// anyway and the FP64 form fits with 104 bytes of spills (left free: 255 registers, 2 blocks).
template <class F, unsigned Threads, unsigned MinBlocks>
struct BatchTraits {
  using Affine = AffineAs<F>;
  using Point = XyzzPoint<F>;
  static constexpr unsigned kThreads = Threads;
  static constexpr unsigned kMinBlocks = MinBlocks;
};
using G1Integer = BatchTraits<Fq, 128, 3>;
using G1F64 = BatchTraits<FqF64, 128, 3>;
using G2Integer = BatchTraits<Fq2, 64, 1>;
using G2F64 = BatchTraits<Fq2F64, 64, 1>;
static_assert(sizeof(G1Xyzz) * kBatchAdditionMaxBlocks <= kBatchAdditionScratchBytes);
static_assert(sizeof(G2Xyzz) * kBatchAdditionMaxBlocks <= kBatchAdditionScratchBytes);
static_assert(sizeof(G1Affine) == kBatchG1PointBytes && sizeof(G2Affine) == kBatchG2PointBytes);
static_assert(sizeof(G1F64::Affine) == kBatchG1PointBytes && sizeof(G2F64::Affine) == kBatchG2PointBytes);
static_assert(sizeof(G1F64::Point) == sizeof(G1Xyzz) && sizeof(G2F64::Point) == sizeof(G2Xyzz));
static_assert(sizeof(G1Xyzz) == 2 * kBatchG1PointBytes && sizeof(G2Xyzz) == 2 * kBatchG2PointBytes);

// The tree's additions as a call: inlined, the general XYZZ addition raised the registers of the
// whole kernel, and the FP64 form's hot loop then spilled. (The integer G2 kernel too is faster in
// the partition program with the call than with it inlined; bench/journal/2026-11-30.md.)
template <class Point>
__device__ __noinline__ Point add_points(Point a, Point b) {
  return a + b;
}

// The sum of every thread's `sum`, returned in thread 0 (other threads get partial sums). Every
// thread of the block must call it. A binary tree: at each level the lower half adds the upper
// half's points; thread t only writes slot t and reads slot t + half, which no thread writes at
// that level, so one barrier per level suffices.
template <class T>
__device__ typename T::Point block_sum(typename T::Point sum) {
  __shared__ typename T::Point tree[T::kThreads];
  const unsigned t = threadIdx.x;
  tree[t] = sum;
  __syncthreads();
#pragma unroll 1
  for (unsigned half = T::kThreads / 2; half > 0; half /= 2) {
    if (t < half) {
      sum = add_points(sum, tree[t + half]);
      tree[t] = sum;
    }
    __syncthreads();
  }
  return sum;
}

// Block b's partial sum of points b·T + t + k·(grid·T) into partials[b]. Consecutive threads read
// consecutive points, so the loads coalesce.
template <class T>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    batch_partials_kernel(const typename T::Affine* points, std::uint64_t count, typename T::Point* partials) {
  using Point = typename T::Point;
  Point sum = Point::infinity();
  const std::uint64_t stride = std::uint64_t{gridDim.x} * T::kThreads;
#pragma unroll 1
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * T::kThreads + threadIdx.x; i < count; i += stride) {
    const typename T::Affine point = load(points + i);
    if (!point.is_infinity()) sum.add_affine(point.x, point.y);
  }
  sum = block_sum<T>(sum);
  if (threadIdx.x == 0) store(partials + blockIdx.x, sum);
}

// One block: accumulator := (start ? ∞ : accumulator) + Σ partials.
template <class T>
__global__ void __launch_bounds__(T::kThreads)
    batch_fold_kernel(const typename T::Point* partials, unsigned partial_count, typename T::Point* accumulator,
                      bool start) {
  using Point = typename T::Point;
  Point sum = Point::infinity();
#pragma unroll 1
  for (unsigned i = threadIdx.x; i < partial_count; i += T::kThreads) sum = sum + load(partials + i);
  sum = block_sum<T>(sum);
  if (threadIdx.x == 0) store(accumulator, start ? sum : load(accumulator) + sum);
}

template <class T>
unsigned blocks_for_count(std::uint64_t count) {
  const std::uint64_t needed = (count + T::kThreads - 1) / T::kThreads;
  const std::uint64_t resident = resident_blocks<batch_partials_kernel<T>>(T::kThreads);
  return static_cast<unsigned>(std::min<std::uint64_t>({needed, resident, kBatchAdditionMaxBlocks}));
}

bool aligned16(const void* pointer) { return (reinterpret_cast<std::uintptr_t>(pointer) & 15) == 0; }

template <class T>
void run(const void* points, std::uint64_t count, void* write, std::uint64_t write_bytes, std::uint64_t offset,
         bool start, cudaStream_t stream) {
  using Point = typename T::Point;
  auto* base = static_cast<std::uint8_t*>(write);
  // The scratch is the last kBatchAdditionScratchBytes of the buffer, its start rounded down to 16.
  const std::uint64_t scratch_offset = (write_bytes - kBatchAdditionScratchBytes) & ~std::uint64_t{15};
  auto* partials = reinterpret_cast<Point*>(base + scratch_offset);
  auto* accumulator = reinterpret_cast<Point*>(base + offset);
  unsigned blocks = 0;
  if (count != 0) {
    blocks = blocks_for_count<T>(count);
    batch_partials_kernel<T>
        <<<blocks, T::kThreads, 0, stream>>>(static_cast<const typename T::Affine*>(points), count, partials);
    STAGEHAND_CUDA_CHECK(cudaGetLastError());
  }
  batch_fold_kernel<T><<<1, T::kThreads, 0, stream>>>(partials, blocks, accumulator, start);
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
}

// The launch's fields as kernel::BatchAdditionLaunch reads them (partition_launches.hpp).
template <BatchGroup Group>
void launch_batch_addition(const KernelLaunch& launch, cudaStream_t stream) {
  const auto typed = kernel::BatchAdditionLaunch::from_launch(launch);
  const BufferUse& read = typed.points;
  const BufferUse& write = typed.write;
  const std::uint64_t point_bytes = typed.point_count * batch_point_bytes(Group);
  if (typed.point_count != 0 && !read.pointer) reject(launch, "null points buffer");
  if (read.bytes < point_bytes) {
    reject(launch, "points buffer of " + std::to_string(read.bytes) + " bytes, needs " + std::to_string(point_bytes));
  }
  if (!write.pointer) reject(launch, "null write buffer");
  try {
    batch_addition(Group, reinterpret_cast<const void*>(read.pointer.address), typed.point_count,
                   reinterpret_cast<void*>(write.pointer.address), write.bytes, typed.offset, typed.start, stream);
  } catch (const std::invalid_argument& error) {
    reject(launch, error.what());
  }
}

constexpr LauncherEntry kBatchLaunchers[] = {
    {kernel::batch_addition_g1, &launch_batch_addition<BatchGroup::g1>},
    {kernel::batch_addition_g2, &launch_batch_addition<BatchGroup::g2>},
};

}  // namespace

void batch_addition(BatchGroup group, const void* points, std::uint64_t count, void* write, std::uint64_t write_bytes,
                    std::uint64_t offset, bool start, cudaStream_t stream, std::optional<BatchArithmetic> arithmetic) {
  const char* name = group == BatchGroup::g1 ? kernel::batch_addition_g1 : kernel::batch_addition_g2;
  auto fail = [&](const std::string& why) { throw std::invalid_argument(std::string(name) + ": " + why); };
  if (count != 0 && (points == nullptr || !aligned16(points))) fail("points must be non-null and 16-byte aligned");
  if (write == nullptr || !aligned16(write)) fail("write buffer must be non-null and 16-byte aligned");
  if (offset % 16 != 0) fail("accumulator offset " + std::to_string(offset) + " is not a multiple of 16");
  // The accumulator must end at or before the scratch region at the end of the buffer (whose start
  // is rounded down to 16 bytes). offset <= write_bytes first, so that the sum cannot wrap.
  if (offset > write_bytes || write_bytes < batch_write_bytes(group, offset) ||
      offset + batch_accumulator_bytes(group) > ((write_bytes - kBatchAdditionScratchBytes) & ~std::uint64_t{15})) {
    fail("write buffer of " + std::to_string(write_bytes) + " bytes is too small for an accumulator at offset " +
         std::to_string(offset) + " and " + std::to_string(kBatchAdditionScratchBytes) +
         " bytes of scratch at its end");
  }
  const bool f64 = arithmetic.value_or(default_batch_arithmetic(group)) == BatchArithmetic::f64;
  if (group == BatchGroup::g1) {
    (f64 ? run<G1F64> : run<G1Integer>)(points, count, write, write_bytes, offset, start, stream);
  } else {
    (f64 ? run<G2F64> : run<G2Integer>)(points, count, write, write_bytes, offset, start, stream);
  }
}

unsigned batch_addition_blocks(BatchGroup group, std::uint64_t count, std::optional<BatchArithmetic> arithmetic) {
  if (count == 0) return 0;
  const bool f64 = arithmetic.value_or(default_batch_arithmetic(group)) == BatchArithmetic::f64;
  if (group == BatchGroup::g1) return f64 ? blocks_for_count<G1F64>(count) : blocks_for_count<G1Integer>(count);
  return f64 ? blocks_for_count<G2F64>(count) : blocks_for_count<G2Integer>(count);
}

std::span<const LauncherEntry> batch_addition_launchers() { return kBatchLaunchers; }

}  // namespace stagehand::cuda
