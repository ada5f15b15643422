// The partition program's kernels on the GPU (partition_launchers.hpp): the NTTs of ntt.cu, and
// the streamed H MSM and the tail MSM on msm.cu's accumulate/reduce halves.
#include <bit>
#include <string>
#include <utility>

#include "device/kernel_abi.hpp"
#include "device/partition_launches.hpp"
#include "launch/launch_args.hpp"
#include "launch/partition_launchers.hpp"
#include "msm/msm.hpp"
#include "ntt/ntt.hpp"
#include "util/common.cuh"

namespace stagehand::cuda {
namespace {

constexpr std::uint64_t kTailItemBytes = kernel::TailMsmLaunch::kTailItemBytes;
static_assert(kTailItemBytes == kG1AffineBytes + kFrBytes);

unsigned log_size_argument(const KernelLaunch& launch, std::uint64_t log_size) {
  if (log_size < kNttMinLogSize || log_size > kNttMaxLogSize) reject(launch, "log_size outside 1..27");
  return static_cast<unsigned>(log_size);
}

std::uint64_t round_up(std::uint64_t bytes) { return (bytes + 255) / 256 * 256; }

// One window width for every batch of an MSM: the planner's choice for its largest batch.
MsmPlan batch_plan(const KernelLaunch& launch, std::uint64_t count, std::uint64_t capacity) {
  if (capacity == 0 || count > capacity) reject(launch, "point count above the planned capacity");
  return msm_plan(count, msm_plan(capacity).window_bits);
}

// The tail MSM's scratch for `plan`: its items split into points and scalars, the window sums,
// then the MSM's own scratch.
struct TailLayout {
  std::uint64_t points = 0, scalars = 0, sums = 0, msm = 0, total = 0;
};
TailLayout tail_layout(const MsmPlan& plan) {
  TailLayout layout;
  layout.scalars = round_up(plan.point_count * kG1AffineBytes);
  layout.sums = layout.scalars + round_up(plan.point_count * kFrBytes);
  layout.msm = layout.sums + round_up(msm_result_bytes(plan));
  layout.total = layout.msm + msm_scratch_bytes(plan);
  return layout;
}

__global__ void split_items_kernel(const std::uint8_t* items, std::uint64_t count, uint4* points, uint4* scalars) {
  // 8 16-byte words per item: 6 of the point, 2 of the scalar.
  const std::uint64_t word = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (word >= count * 8) return;
  const std::uint64_t item = word / 8;
  const unsigned part = static_cast<unsigned>(word % 8);
  const uint4 value = reinterpret_cast<const uint4*>(items)[word];
  if (part < 6) {
    points[item * 6 + part] = value;
  } else {
    scalars[item * 2 + (part - 6)] = value;
  }
}

void launch_ntt_twiddles(const KernelLaunch& launch, cudaStream_t stream) {
  const auto typed = kernel::NttTwiddlesLaunch::from_launch(launch);
  const unsigned log_size = log_size_argument(launch, typed.log_size);
  FrWords root, coset;
  snarkjs_domain_roots(log_size, root, coset);
  ntt_domain_init(address(launch, typed.twiddles, ntt_domain_bytes(log_size)), log_size, root, coset, stream);
}

void launch_partition_ntt(const KernelLaunch& launch, cudaStream_t stream) {
  const auto typed = kernel::NttLaunch::from_launch(launch);  // the kind in range, values read in place
  const unsigned log_size = log_size_argument(launch, typed.log_size);
  // NttKind (ntt.hpp) has kernel::NttKind's order.
  const auto kind = static_cast<NttKind>(kernel::argument(typed.kind));
  void* values = address(launch, typed.values, kFrBytes << log_size);
  ntt(values, address(launch, typed.twiddles, ntt_domain_bytes(log_size)), log_size, kind, stream);
}

void launch_msm_batch(const KernelLaunch& launch, cudaStream_t stream) {
  const auto typed = kernel::PartitionMsmBatchLaunch::from_launch(launch);
  if (!typed.scratch) reject(launch, "writes [results, scratch]");
  const std::uint64_t n = typed.points;
  if (n == 0) reject(launch, "no points");
  const MsmPlan plan = batch_plan(launch, n, typed.capacity);
  const void* points = address(launch, typed.bases, n * kG1AffineBytes);
  const auto* scalars = static_cast<const std::uint8_t*>(address(launch, typed.scalars, (typed.first + n) * kFrBytes));
  void* scratch = address(launch, *typed.scratch, msm_scratch_bytes(plan));
  msm_g1_accumulate(points, scalars + typed.first * kFrBytes, /*scalars_montgomery=*/true, plan, !typed.start, scratch,
                    stream);
}

void launch_msm_reduce(const KernelLaunch& launch, cudaStream_t stream) {
  const auto typed = kernel::PartitionMsmReduceLaunch::from_launch(launch);
  if (!typed.scratch) reject(launch, "writes [results, scratch]");
  if (typed.capacity == 0) reject(launch, "capacity must be positive");
  const MsmPlan plan = msm_plan(typed.capacity);
  msm_g1_reduce(plan, address(launch, typed.results, msm_result_bytes(plan)),
                address(launch, *typed.scratch, msm_scratch_bytes(plan)), stream);
}

void launch_tail_msm(const KernelLaunch& launch, cudaStream_t stream) {
  const auto typed = kernel::TailMsmLaunch::from_launch(launch);
  if (!typed.scratch) reject(launch, "writes [scratch]");
  const std::uint64_t capacity = typed.capacity;
  const std::uint64_t n = typed.item_count;
  if (capacity == 0) reject(launch, "capacity must be positive");
  const TailLayout layout = tail_layout(msm_plan(capacity));
  auto* scratch = static_cast<std::uint8_t*>(address(launch, *typed.scratch, layout.total));
  if (n == 0) {
    // Zeroed buckets are empty ones (ZZ = 0): the tail's sum is then infinity.
    if (typed.start) STAGEHAND_CUDA_CHECK(cudaMemsetAsync(scratch + layout.msm, 0, layout.total - layout.msm, stream));
    return;
  }
  const MsmPlan plan = batch_plan(launch, n, capacity);
  const auto* items = static_cast<const std::uint8_t*>(address(launch, typed.items, n * kTailItemBytes));
  split_items_kernel<<<blocks_for(n * 8, 256), 256, 0, stream>>>(
      items, n, reinterpret_cast<uint4*>(scratch + layout.points), reinterpret_cast<uint4*>(scratch + layout.scalars));
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
  msm_g1_accumulate(scratch + layout.points, scratch + layout.scalars, /*scalars_montgomery=*/false, plan, !typed.start,
                    scratch + layout.msm, stream);
}

void launch_tail_reduce(const KernelLaunch& launch, cudaStream_t stream) {
  const auto typed = kernel::TailReduceLaunch::from_launch(launch);
  if (!typed.scratch) reject(launch, "writes [sums, scratch]");
  const std::uint64_t offset = typed.offset;
  if (offset % 16 != 0) reject(launch, "offset must be a multiple of 16");
  if (typed.capacity == 0) reject(launch, "capacity must be positive");
  const MsmPlan plan = msm_plan(typed.capacity);
  const TailLayout layout = tail_layout(plan);
  auto* accumulator = static_cast<std::uint8_t*>(address(launch, typed.sums, offset + 2 * kG1AffineBytes)) + offset;
  auto* scratch = static_cast<std::uint8_t*>(address(launch, *typed.scratch, layout.total));
  msm_g1_reduce(plan, scratch + layout.sums, scratch + layout.msm, stream);
  msm_fold_windows_into(scratch + layout.sums, plan.window_count, plan.window_bits, accumulator, /*start=*/true,
                        stream);
}

constexpr LauncherEntry kPartitionLaunchers[] = {
    {kernel::ntt_twiddles, &launch_ntt_twiddles}, {kernel::ntt, &launch_partition_ntt},
    {kernel::msm_batch, &launch_msm_batch},       {kernel::msm_reduce, &launch_msm_reduce},
    {kernel::tail_msm, &launch_tail_msm},         {kernel::tail_reduce, &launch_tail_reduce},
};

}  // namespace

std::span<const LauncherEntry> partition_launchers() { return kPartitionLaunchers; }

std::uint64_t partition_kernel_scratch_bytes(std::string_view name, std::uint64_t capacity) {
  if (capacity == 0) return 0;
  if (name == kernel::ntt_twiddles) {  // capacity: the transform's 2^log_size elements
    const auto log_size = static_cast<unsigned>(std::countr_zero(capacity));
    const bool valid = std::has_single_bit(capacity) && log_size >= kNttMinLogSize && log_size <= kNttMaxLogSize;
    return valid ? ntt_domain_bytes(log_size) : 0;
  }
  if (name == kernel::msm_batch || name == kernel::msm_reduce) return msm_scratch_bytes(msm_plan(capacity));
  if (name == kernel::tail_msm || name == kernel::tail_reduce) return tail_layout(msm_plan(capacity)).total;
  return 0;
}

}  // namespace stagehand::cuda
