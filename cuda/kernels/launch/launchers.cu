// The core launchers: KernelLaunch -> kernel calls, with the conventions of launchers.hpp.
#include <stdexcept>
#include <string>

#include "device/kernel_abi.hpp"
#include "launch/launch_args.hpp"
#include "launch/launchers.hpp"
#include "msm/msm.hpp"
#include "ntt/ntt.hpp"
#include "util/common.cuh"

namespace stagehand::cuda {
namespace {

__global__ void busy_wait_kernel(std::uint64_t nanoseconds, bool fault) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  std::uint64_t start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (;;) {
    std::uint64_t now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start >= nanoseconds) break;
  }
  if (fault) __trap();
}

unsigned log_size_of(const KernelLaunch& launch) {
  const std::uint64_t log_size = launch.arguments[0];
  if (log_size < kNttMinLogSize || log_size > kNttMaxLogSize) reject(launch, "log_size outside 1..27");
  return static_cast<unsigned>(log_size);
}

void copy_words(FrWords& target, const std::vector<std::uint64_t>& arguments, std::size_t first) {
  for (int i = 0; i < 4; ++i) target[i] = arguments[first + i];
}

void launch_busy_wait(const KernelLaunch& launch, cudaStream_t stream) {
  if (launch.arguments.size() > 1) reject(launch, "takes [] or [fault]");
  busy_wait(launch.work_units, stream, !launch.arguments.empty() && launch.arguments[0] != 0);
}

void launch_domain_init(const KernelLaunch& launch, cudaStream_t stream) {
  need(launch, 9, 0, 1);
  const unsigned log_size = log_size_of(launch);
  FrWords root, coset;
  copy_words(root, launch.arguments, 1);
  copy_words(coset, launch.arguments, 5);
  ntt_domain_init(address(launch, launch.writes[0], ntt_domain_bytes(log_size)), log_size, root, coset, stream);
}

template <NttKind Kind>
void launch_ntt(const KernelLaunch& launch, cudaStream_t stream) {
  need(launch, 1, 1, 1);
  const unsigned log_size = log_size_of(launch);
  const void* domain = address(launch, launch.reads[0], ntt_domain_bytes(log_size));
  ntt(address(launch, launch.writes[0], kFrBytes << log_size), domain, log_size, Kind, stream);
}

void launch_h_pointwise(const KernelLaunch& launch, cudaStream_t stream) {
  need(launch, 0, 2, 1);
  const std::uint64_t bytes = launch.work_units * kFrBytes;
  FrWords factor;
  const bool has_factor = launch.arguments.size() >= 4;
  if (has_factor) copy_words(factor, launch.arguments, 0);
  h_pointwise(address(launch, launch.writes[0], bytes), address(launch, launch.reads[0], bytes),
              address(launch, launch.reads[1], bytes), launch.work_units, has_factor ? &factor : nullptr, stream);
}

template <HForm Form>
void launch_h_polynomial(const KernelLaunch& launch, cudaStream_t stream) {
  need(launch, 1, 1, 3);
  const unsigned log_size = log_size_of(launch);
  const std::uint64_t bytes = kFrBytes << log_size;
  h_polynomial(address(launch, launch.writes[0], bytes), address(launch, launch.writes[1], bytes),
               address(launch, launch.writes[2], bytes), address(launch, launch.reads[0], ntt_domain_bytes(log_size)),
               log_size, Form, stream);
}

void launch_msm_g1(const KernelLaunch& launch, cudaStream_t stream) {
  need(launch, 2, 2, 2);
  const MsmPlan plan = msm_plan(launch.work_units, static_cast<unsigned>(launch.arguments[1]));
  const std::uint64_t n = plan.point_count;
  msm_g1_windows(address(launch, launch.reads[0], n * kG1AffineBytes), address(launch, launch.reads[1], n * kFrBytes),
                 launch.arguments[0] != 0, plan, address(launch, launch.writes[0], msm_result_bytes(plan)),
                 address(launch, launch.writes[1], msm_scratch_bytes(plan)), stream);
}

constexpr LauncherEntry kLaunchers[] = {
    {kernel::busy_wait, &launch_busy_wait},
    {kernel::ntt_domain_init, &launch_domain_init},
    {kernel::ntt_forward, &launch_ntt<NttKind::forward>},
    {kernel::ntt_inverse, &launch_ntt<NttKind::inverse>},
    {kernel::coset_ntt, &launch_ntt<NttKind::coset_forward>},
    {kernel::coset_intt, &launch_ntt<NttKind::coset_inverse>},
    {kernel::h_pointwise, &launch_h_pointwise},
    {kernel::h_polynomial_snarkjs, &launch_h_polynomial<HForm::snarkjs>},
    {kernel::h_polynomial_classic, &launch_h_polynomial<HForm::classic>},
    {kernel::msm_g1, &launch_msm_g1},
};

}  // namespace

void busy_wait(std::uint64_t nanoseconds, cudaStream_t stream, bool fault) {
  busy_wait_kernel<<<1, 1, 0, stream>>>(nanoseconds, fault);
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
}

std::span<const LauncherEntry> core_launchers() { return kLaunchers; }

}  // namespace stagehand::cuda
