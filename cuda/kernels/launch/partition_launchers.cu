// The partition program's kernels on the GPU (partition_launchers.hpp): the NTTs of ntt.cu, and
// the streamed H MSM and the tail MSM on msm.cu's accumulate/reduce halves.
#include <bit>
#include <string>
#include <utility>

#include "device/kernel_abi.hpp"
#include "launch/launch_args.hpp"
#include "launch/partition_launchers.hpp"
#include "msm/msm.hpp"
#include "ntt/ntt.hpp"
#include "util/common.cuh"

namespace stagehand::cuda {
namespace {

constexpr std::uint64_t kTailItemBytes = kG1AffineBytes + kFrBytes;

unsigned log_size_argument(const KernelLaunch& launch) {
  const std::uint64_t log_size = launch.arguments[0];
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
  need(launch, 1, 0, 1);
  const unsigned log_size = log_size_argument(launch);
  FrWords root, coset;
  snarkjs_domain_roots(log_size, root, coset);
  ntt_domain_init(address(launch, launch.writes[0], ntt_domain_bytes(log_size)), log_size, root, coset, stream);
}

void launch_partition_ntt(const KernelLaunch& launch, cudaStream_t stream) {
  need(launch, 2, 2, 1);
  const unsigned log_size = log_size_argument(launch);
  if (launch.arguments[1] > 3) reject(launch, "kind must be 0..3");
  const auto kind = static_cast<NttKind>(launch.arguments[1]);
  void* values = address(launch, launch.writes[0], kFrBytes << log_size);
  if (address(launch, launch.reads[0], kFrBytes << log_size) != values) reject(launch, "reads[0] must be the values");
  ntt(values, address(launch, launch.reads[1], ntt_domain_bytes(log_size)), log_size, kind, stream);
}

void launch_msm_batch(const KernelLaunch& launch, cudaStream_t stream) {
  need(launch, 3, 2, 2);
  const std::uint64_t first = launch.arguments[0];
  const std::uint64_t capacity = launch.arguments[1];
  const bool start = launch.arguments[2] != 0;
  const std::uint64_t n = launch.work_units;
  if (n == 0) reject(launch, "no points");
  const MsmPlan plan = batch_plan(launch, n, capacity);
  const void* points = address(launch, launch.reads[0], n * kG1AffineBytes);
  const auto* scalars = static_cast<const std::uint8_t*>(address(launch, launch.reads[1], (first + n) * kFrBytes));
  void* scratch = address(launch, launch.writes.back(), msm_scratch_bytes(plan));
  msm_g1_accumulate(points, scalars + first * kFrBytes, /*scalars_montgomery=*/true, plan, !start, scratch, stream);
}

void launch_msm_reduce(const KernelLaunch& launch, cudaStream_t stream) {
  need(launch, 1, 0, 2);
  const std::uint64_t capacity = launch.arguments[0];
  if (capacity == 0) reject(launch, "capacity must be positive");
  const MsmPlan plan = msm_plan(capacity);
  msm_g1_reduce(plan, address(launch, launch.writes[0], msm_result_bytes(plan)),
                address(launch, launch.writes.back(), msm_scratch_bytes(plan)), stream);
}

void launch_tail_msm(const KernelLaunch& launch, cudaStream_t stream) {
  need(launch, 2, 1, 1);
  const bool start = launch.arguments[0] != 0;
  const std::uint64_t capacity = launch.arguments[1];
  const std::uint64_t n = launch.work_units;
  if (capacity == 0) reject(launch, "capacity must be positive");
  const TailLayout layout = tail_layout(msm_plan(capacity));
  auto* scratch = static_cast<std::uint8_t*>(address(launch, launch.writes.back(), layout.total));
  if (n == 0) {
    // Zeroed buckets are empty ones (ZZ = 0): the tail's sum is then infinity.
    if (start) STAGEHAND_CUDA_CHECK(cudaMemsetAsync(scratch + layout.msm, 0, layout.total - layout.msm, stream));
    return;
  }
  const MsmPlan plan = batch_plan(launch, n, capacity);
  const auto* items = static_cast<const std::uint8_t*>(address(launch, launch.reads[0], n * kTailItemBytes));
  split_items_kernel<<<blocks_for(n * 8, 256), 256, 0, stream>>>(
      items, n, reinterpret_cast<uint4*>(scratch + layout.points), reinterpret_cast<uint4*>(scratch + layout.scalars));
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
  msm_g1_accumulate(scratch + layout.points, scratch + layout.scalars, /*scalars_montgomery=*/false, plan, !start,
                    scratch + layout.msm, stream);
}

void launch_tail_reduce(const KernelLaunch& launch, cudaStream_t stream) {
  need(launch, 2, 0, 2);
  const std::uint64_t offset = launch.arguments[0];
  const std::uint64_t capacity = launch.arguments[1];
  if (offset % 16 != 0) reject(launch, "offset must be a multiple of 16");
  if (capacity == 0) reject(launch, "capacity must be positive");
  const MsmPlan plan = msm_plan(capacity);
  const TailLayout layout = tail_layout(plan);
  auto* accumulator =
      static_cast<std::uint8_t*>(address(launch, launch.writes[0], offset + 2 * kG1AffineBytes)) + offset;
  auto* scratch = static_cast<std::uint8_t*>(address(launch, launch.writes.back(), layout.total));
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
