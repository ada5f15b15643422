#pragma once
// The functional simulator's kernels, registered in one place: the Groth16 program's
// (groth16_kernels.hpp) and the test-only setup's (setup_kernels.hpp). Every other kernel of
// src/device/kernel_abi.hpp is timed only, by the device model's [kernels.NAME] cost.
// tests/sim/kernel_registry_test.cpp holds the names to kernel::kAll.

#include "sim/sim_system.hpp"

namespace stagehand::sim {

void register_functional_kernels(SimSystem& system);

}  // namespace stagehand::sim
