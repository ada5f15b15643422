// msm.hpp's entry points: each checks the plan's group and runs the pipeline's instance of the
// plan's curve (msm_instances.hpp; the instances live in msm.cu, msm_g2.cu, msm_bn254.cu and
// msm_g2_bn254.cu).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "msm/msm.hpp"
#include "msm/msm_instances.hpp"

namespace stagehand::cuda {
namespace {

using kernel::Curve;

// call(instance) for the instance of `curve` over the group G.
template <MsmGroup G, class Call>
decltype(auto) on_curve(const char* caller, Curve curve, Call&& call) {
  switch (curve) {
    case Curve::bls12_381: return call(MsmInstance<Curve::bls12_381, G>{});
    case Curve::bn254: return call(MsmInstance<Curve::bn254, G>{});
  }
  throw std::invalid_argument(std::string(caller) + ": unknown curve " + std::to_string(static_cast<unsigned>(curve)));
}

// The same for a plan, which must be over G.
template <MsmGroup G, class Call>
decltype(auto) on_plan(const char* caller, const MsmPlan& plan, Call&& call) {
  if (plan.group != G) {
    throw std::invalid_argument(std::string(caller) + ": a plan for " + (G == MsmGroup::g1 ? "G2" : "G1"));
  }
  return on_curve<G>(caller, plan.curve, std::forward<Call>(call));
}

}  // namespace

void msm_precompute_bases(const MsmPlan& plan, const void* points, void* copies, cudaStream_t stream) {
  if (plan.group == MsmGroup::g2) {
    msm_g2_precompute_bases(plan, points, copies, stream);
    return;
  }
  on_plan<MsmGroup::g1>("msm_precompute_bases", plan,
                        [&](auto instance) { instance.precompute(plan, points, copies, stream); });
}

void msm_g2_precompute_bases(const MsmPlan& plan, const void* points, void* copies, cudaStream_t stream) {
  on_plan<MsmGroup::g2>("msm_g2_precompute_bases", plan,
                        [&](auto instance) { instance.precompute(plan, points, copies, stream); });
}

std::uint64_t msm_scratch_bytes(const MsmPlan& plan) {
  if (plan.group == MsmGroup::g2) return msm_g2_scratch_bytes(plan);
  return on_plan<MsmGroup::g1>("msm_scratch_bytes", plan, [&](auto instance) { return instance.scratch_bytes(plan); });
}

std::uint64_t msm_g2_scratch_bytes(const MsmPlan& plan) {
  return on_plan<MsmGroup::g2>("msm_g2_scratch_bytes", plan,
                               [&](auto instance) { return instance.scratch_bytes(plan); });
}

std::uint64_t msm_kernel_stack_bytes() {
  return std::max({MsmInstance<Curve::bls12_381, MsmGroup::g1>::stack_bytes(),
                   MsmInstance<Curve::bn254, MsmGroup::g1>::stack_bytes(), msm_g2_kernel_stack_bytes()});
}

std::uint64_t msm_g2_kernel_stack_bytes() {
  return std::max(MsmInstance<Curve::bls12_381, MsmGroup::g2>::stack_bytes(),
                  MsmInstance<Curve::bn254, MsmGroup::g2>::stack_bytes());
}

void msm_g1_windows(const void* points, const void* scalars, bool scalars_montgomery, const MsmPlan& plan,
                    void* window_sums, void* scratch, cudaStream_t stream, MsmProfile* profile) {
  on_plan<MsmGroup::g1>("msm_g1_windows", plan, [&](auto instance) {
    instance.windows(points, scalars, scalars_montgomery, plan, window_sums, scratch, stream, profile);
  });
}

void msm_g2_windows(const void* points, const void* scalars, bool scalars_montgomery, const MsmPlan& plan,
                    void* window_sums, void* scratch, cudaStream_t stream, MsmProfile* profile) {
  on_plan<MsmGroup::g2>("msm_g2_windows", plan, [&](auto instance) {
    instance.windows(points, scalars, scalars_montgomery, plan, window_sums, scratch, stream, profile);
  });
}

void msm_g1_accumulate(const void* points, const void* scalars, bool scalars_montgomery, const MsmPlan& plan,
                       bool add_to_buckets, void* scratch, cudaStream_t stream, MsmProfile* profile) {
  on_plan<MsmGroup::g1>("msm_g1_accumulate", plan, [&](auto instance) {
    instance.accumulate("msm_g1_accumulate", points, scalars, scalars_montgomery, plan, add_to_buckets, scratch, stream,
                        profile);
  });
}

void msm_g2_accumulate(const void* points, const void* scalars, bool scalars_montgomery, const MsmPlan& plan,
                       bool add_to_buckets, void* scratch, cudaStream_t stream, MsmProfile* profile) {
  on_plan<MsmGroup::g2>("msm_g2_accumulate", plan, [&](auto instance) {
    instance.accumulate("msm_g2_accumulate", points, scalars, scalars_montgomery, plan, add_to_buckets, scratch, stream,
                        profile);
  });
}

void msm_g1_reduce(const MsmPlan& plan, void* window_sums, void* scratch, cudaStream_t stream, MsmProfile* profile) {
  on_plan<MsmGroup::g1>("msm_g1_reduce", plan, [&](auto instance) {
    instance.reduce("msm_g1_reduce", plan, window_sums, scratch, stream, profile);
  });
}

void msm_g2_reduce(const MsmPlan& plan, void* window_sums, void* scratch, cudaStream_t stream, MsmProfile* profile) {
  on_plan<MsmGroup::g2>("msm_g2_reduce", plan, [&](auto instance) {
    instance.reduce("msm_g2_reduce", plan, window_sums, scratch, stream, profile);
  });
}

void msm_combine_windows_on_device(const void* window_sums, unsigned window_count, unsigned window_bits,
                                   void* result_jacobian, cudaStream_t stream, Curve curve) {
  on_curve<MsmGroup::g1>("msm_combine_windows_on_device", curve, [&](auto instance) {
    instance.combine_on_device(window_sums, window_count, window_bits, result_jacobian, nullptr, false, stream);
  });
}

void msm_fold_windows_into(const void* window_sums, unsigned window_count, unsigned window_bits, void* accumulator_xyzz,
                           bool start, cudaStream_t stream, Curve curve) {
  on_curve<MsmGroup::g1>("msm_fold_windows_into", curve, [&](auto instance) {
    instance.combine_on_device(window_sums, window_count, window_bits, nullptr, accumulator_xyzz, start, stream);
  });
}

void msm_g2_combine_windows_on_device(const void* window_sums, unsigned window_count, unsigned window_bits,
                                      void* result_jacobian, cudaStream_t stream, Curve curve) {
  on_curve<MsmGroup::g2>("msm_g2_combine_windows_on_device", curve, [&](auto instance) {
    instance.combine_on_device(window_sums, window_count, window_bits, result_jacobian, nullptr, false, stream);
  });
}

}  // namespace stagehand::cuda
