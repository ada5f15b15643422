// The core launchers: KernelLaunch -> kernel calls, with the conventions of launchers.hpp.
#include <stdexcept>
#include <string>

#include "device/kernel_abi.hpp"
#include "ec/curves.cuh"
#include "launch/core_launches.hpp"
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

unsigned log_size_of(const KernelLaunch& launch, std::uint64_t log_size) {
  if (log_size < kNttMinLogSize || log_size > kNttMaxLogSize) reject(launch, "log_size outside 1..27");
  return static_cast<unsigned>(log_size);
}

void copy_words(FrWords& target, const FrArgument& words) {
  for (int i = 0; i < 4; ++i) target[i] = words[i];
}

void launch_busy_wait(const KernelLaunch& launch, cudaStream_t stream) {
  if (launch.arguments.size() > 1) reject(launch, "takes [] or [fault]");
  busy_wait(launch.work_units, stream, !launch.arguments.empty() && launch.arguments[0] != 0);
}

// The NTT and MSM launchers below are one source per kernel, instantiated for each curve (Curve, a
// description of ec/curves.cuh; K, its kernel::Curve): the byte sizes they check are K's.
template <class Curve, kernel::Curve K>
void launch_domain_init(const KernelLaunch& launch, cudaStream_t stream) {
  need_curve(launch, K);
  const auto typed = DomainInitLaunch::from_launch(launch);
  const unsigned log_size = log_size_of(launch, typed.log_size);
  FrWords root, coset;
  copy_words(root, typed.root);
  copy_words(coset, typed.coset_generator);
  ntt_domain_init<Curve>(address(launch, typed.domain, ntt_domain_bytes(log_size)), log_size, root, coset, stream);
}

template <class Curve, kernel::Curve K, NttKind Kind>
void launch_ntt(const KernelLaunch& launch, cudaStream_t stream) {
  need_curve(launch, K);
  const auto typed = NttLaunch::from_launch(launch);
  const unsigned log_size = log_size_of(launch, typed.log_size);
  const void* domain = address(launch, typed.domain, ntt_domain_bytes(log_size));
  ntt<Curve>(address(launch, typed.values, kernel::curve_sizes(K).fr << log_size), domain, log_size, Kind, stream);
}

template <class Curve, kernel::Curve K>
void launch_h_pointwise(const KernelLaunch& launch, cudaStream_t stream) {
  need_curve(launch, K);
  const auto typed = HPointwiseLaunch::from_launch(launch);
  const std::uint64_t bytes = typed.count * kernel::curve_sizes(K).fr;
  FrWords factor;
  if (typed.factor) copy_words(factor, *typed.factor);
  h_pointwise<Curve>(address(launch, typed.a, bytes), address(launch, typed.b, bytes), address(launch, typed.c, bytes),
                     typed.count, typed.factor ? &factor : nullptr, stream);
}

template <class Curve, kernel::Curve K, HForm Form>
void launch_h_polynomial(const KernelLaunch& launch, cudaStream_t stream) {
  need_curve(launch, K);
  const auto typed = HPolynomialLaunch::from_launch(launch);
  const unsigned log_size = log_size_of(launch, typed.log_size);
  const std::uint64_t bytes = kernel::curve_sizes(K).fr << log_size;
  h_polynomial<Curve>(address(launch, typed.a, bytes), address(launch, typed.b, bytes), address(launch, typed.c, bytes),
                      address(launch, typed.domain, ntt_domain_bytes(log_size)), log_size, Form, stream);
}

// h_classic_product or h_classic_finish (`Finish`) over writes [a, b] or [a, c].
template <class Curve, kernel::Curve K, bool Finish>
void launch_h_classic_half(const KernelLaunch& launch, cudaStream_t stream) {
  need_curve(launch, K);
  const auto typed = HClassicHalfLaunch::from_launch(launch);
  const unsigned log_size = log_size_of(launch, typed.log_size);
  const std::uint64_t bytes = kernel::curve_sizes(K).fr << log_size;
  void* a = address(launch, typed.a, bytes);
  void* other = address(launch, typed.other, bytes);
  const void* domain = address(launch, typed.domain, ntt_domain_bytes(log_size));
  if constexpr (Finish) {
    h_classic_finish<Curve>(a, other, domain, log_size, stream);
  } else {
    h_classic_product<Curve>(a, other, domain, log_size, stream);
  }
}

template <kernel::Curve K>
void launch_msm_g1(const KernelLaunch& launch, cudaStream_t stream) {
  need_curve(launch, K);
  const auto typed = MsmG1Launch::from_launch(launch);
  const MsmPlan plan = msm_plan(typed.points, static_cast<unsigned>(typed.window_bits), MsmGroup::g1, K);
  const std::uint64_t n = plan.point_count;
  const kernel::CurveSizes sizes = kernel::curve_sizes(K);
  msm_g1_windows(address(launch, typed.bases, n * sizes.g1_affine), address(launch, typed.scalars, n * sizes.fr),
                 typed.scalars_montgomery, plan, address(launch, typed.window_sums, msm_result_bytes(plan)),
                 address(launch, typed.scratch, msm_scratch_bytes(plan)), stream);
}

// A curve's entries for the kernels above but busy_wait, which computes over none.
template <class Curve, kernel::Curve K>
constexpr std::array<LauncherEntry, 11> curve_launchers() {
  return {{{kernel::ntt_domain_init, &launch_domain_init<Curve, K>, K},
           {kernel::ntt_forward, &launch_ntt<Curve, K, NttKind::forward>, K},
           {kernel::ntt_inverse, &launch_ntt<Curve, K, NttKind::inverse>, K},
           {kernel::coset_ntt, &launch_ntt<Curve, K, NttKind::coset_forward>, K},
           {kernel::coset_intt, &launch_ntt<Curve, K, NttKind::coset_inverse>, K},
           {kernel::h_pointwise, &launch_h_pointwise<Curve, K>, K},
           {kernel::h_polynomial_snarkjs, &launch_h_polynomial<Curve, K, HForm::snarkjs>, K},
           {kernel::h_polynomial_classic, &launch_h_polynomial<Curve, K, HForm::classic>, K},
           {kernel::h_classic_product, &launch_h_classic_half<Curve, K, false>, K},
           {kernel::h_classic_finish, &launch_h_classic_half<Curve, K, true>, K},
           {kernel::msm_g1, &launch_msm_g1<K>, K}}};
}

constexpr auto kLaunchers = joined(std::array<LauncherEntry, 1>{{{kernel::busy_wait, &launch_busy_wait}}},
                                   curve_launchers<Bls12_381Curve, kernel::Curve::bls12_381>(),
                                   curve_launchers<Bn254Curve, kernel::Curve::bn254>());

}  // namespace

void busy_wait(std::uint64_t nanoseconds, cudaStream_t stream, bool fault) {
  busy_wait_kernel<<<1, 1, 0, stream>>>(nanoseconds, fault);
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
}

std::span<const LauncherEntry> core_launchers() { return kLaunchers; }

}  // namespace stagehand::cuda
