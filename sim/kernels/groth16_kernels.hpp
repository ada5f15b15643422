#pragma once
// The Groth16 program's kernels as host functions on the CPU reference, for the simulator's
// functional mode (device/kernel_abi.hpp gives their conventions).

namespace stagehand::sim {

class SimSystem;

void register_groth16_kernels(SimSystem& system);

}  // namespace stagehand::sim
