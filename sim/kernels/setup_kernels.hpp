#pragma once
// The test-only setup's kernels (kernel::setup_fixed_base_g1, kernel::setup_fixed_base_g2) as
// host functions for the functional simulator, over the CPU reference of src/math, so that
// groth16/device_setup.hpp runs the same code path without a GPU. Their convention is that of
// src/device/kernel_abi.hpp: arguments [] or [threads] (host threads; absent or 0: every hardware
// thread), reads [table, scalars], writes [points]; points[i] = Σ_w table[256·w + byte_w(s_i)] for
// the canonical bytes of scalars[i], affine in the device encoding (zeros for infinity). A table
// entry that is not a point of the curve (or zeros) is an error.

#include "sim/sim_system.hpp"

namespace stagehand::sim {

void register_setup_kernels(SimSystem& system);

}  // namespace stagehand::sim
