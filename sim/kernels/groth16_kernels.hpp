#pragma once
// The Groth16 program's kernels (kernel::groth16_h, kernel::groth16_msm_g1) as host functions for
// the functional simulator, over the CPU reference of src/math. Their conventions are those of
// src/device/kernel_abi.hpp:
//   groth16_h       arguments [log_size, threads], writes [a, b, c, ...]: A, B, C on the domain in,
//                   a holds P_j = A(x_j)·B(x_j) − C(x_j) at x_j = ω_2n^(2j+1) out (snarkjs's form).
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
