// Pippenger MSM over G2: msm_pipeline.cuh instantiated for G2Curve (see msm.hpp). Its own
// translation unit: the G2 kernels take the longest to compile, and G1 changes leave them alone.
#include <stdexcept>

#include "msm/msm_pipeline.cuh"

namespace stagehand::cuda {

void msm_g2_windows(const void* points, const void* scalars, bool scalars_montgomery, const MsmPlan& plan,
                    void* window_sums, void* scratch, cudaStream_t stream, MsmProfile* profile) {
  if (plan.group != MsmGroup::g2) throw std::invalid_argument("msm_g2_windows: a plan for G1");
  msm_windows<G2Curve>(points, scalars, scalars_montgomery, plan, window_sums, scratch, stream, profile);
}

std::uint64_t msm_g2_kernel_stack_bytes() { return pipeline_stack_bytes<G2Curve>(); }

void msm_g2_combine_windows_on_device(const void* window_sums, unsigned window_count, unsigned window_bits,
                                      void* result_jacobian, cudaStream_t stream) {
  combine_windows_kernel<G2Curve><<<1, 1, 0, stream>>>(static_cast<const G2Curve::Jacobian*>(window_sums), window_count,
                                                       window_bits, static_cast<G2Curve::Jacobian*>(result_jacobian),
                                                       nullptr, false);
  SH_CUDA_LAUNCHED();
}

}  // namespace stagehand::cuda
