// The MSM pipeline's instances, one per (curve, group): msm_pipeline.cuh instantiated in its own
// translation unit, which names the group's description (MsmGroupOf) and instantiates the
// instance explicitly (template struct MsmInstance<K, G>). msm.hpp's
// functions (msm_dispatch.cpp) pick the instance of a plan's curve and group; nothing else calls
// these. Each function is the msm.hpp function of the same role, without the checks of the plan's
// group and curve that those make.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "msm/msm.hpp"

namespace stagehand::cuda {

// The pipeline's description of the group (msm_pipeline.cuh): specialised only where instantiated.
template <kernel::Curve K, MsmGroup G>
struct MsmGroupOf;

template <kernel::Curve K, MsmGroup G>
struct MsmInstance {
  static std::uint64_t scratch_bytes(const MsmPlan& plan);
  static std::uint64_t stack_bytes();
  static void windows(const void* points, const void* scalars, bool scalars_montgomery, const MsmPlan& plan,
                      void* window_sums, void* scratch, cudaStream_t stream, MsmProfile* profile);
  static void accumulate(const char* caller, const void* points, const void* scalars, bool scalars_montgomery,
                         const MsmPlan& plan, bool add_to_buckets, void* scratch, cudaStream_t stream,
                         MsmProfile* profile);
  static void reduce(const char* caller, const MsmPlan& plan, void* window_sums, void* scratch, cudaStream_t stream,
                     MsmProfile* profile);
  static void precompute(const MsmPlan& plan, const void* points, void* copies, cudaStream_t stream);
  // Σ_w 2^(c·w)·S_w into a Jacobian result and/or folded into an XYZZ accumulator (nullptr: not
  // written), one thread on the device.
  static void combine_on_device(const void* window_sums, unsigned window_count, unsigned window_bits,
                                void* result_jacobian, void* accumulator_xyzz, bool start, cudaStream_t stream);
};

}  // namespace stagehand::cuda
