#pragma once
// The Groth16 program's kernels (kernel::groth16_h_evaluate, kernel::groth16_msm_g1, ...) as host
// functions for the functional simulator, over the CPU reference of src/math: written once over
// CurveMath (curve_math.hpp) and registered for BLS12-381 and BN254, each launch running its
// KernelLaunch::curve's. Their conventions are those of src/device/kernel_abi.hpp (BLS12-381's
// sizes below; BN254's are kernel::curve_sizes(Curve::bn254)'s):
//   groth16_h_evaluate  arguments [log_size, threads], writes [values, ...]: a polynomial on the
//                   domain in, on the coset x_j = ω_2n^(2j+1) out; groth16_h_combine, reads [b, c],
//                   writes [a]: a_j·b_j − c_j (snarkjs's form of the H step, with the three first).
//   groth16_msm_g1  arguments [threads], reads [points, scalars], writes [result, ...]: points
//                   are 96-byte affine Montgomery G1 (zeros: infinity), scalars 32-byte Montgomery
//                   Fr; the result is the 144-byte Jacobian sum X‖Y‖Z (Montgomery Fq).
//   groth16_msm_g1_batch / _g2_batch, groth16_msm_g1_reduce / _g2_reduce: a streamed set's MSM
//                   in batches; the running sum lives at the start of the scratch (the last write),
//                   which these kernels ask for (SimSystem::register_kernel's scratch).
// A scratch buffer after the named writes is otherwise ignored. Kept apart from the simulator itself
// (library stagehand_sim_kernels) so that the timing-only simulator does not need the math.

#include "sim/sim_system.hpp"

namespace stagehand::sim {

void register_groth16_kernels(SimSystem& system);

}  // namespace stagehand::sim
