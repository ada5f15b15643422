#pragma once
// The test-only setup's launches as a typed value (the pattern of groth16_launches.hpp):
// to_launch() for the setup (src/groth16/device_setup.cpp), from_launch() for the CUDA launchers
// (cuda/kernels/launch/setup_launchers.cpp) and the simulator's host functions
// (sim/kernels/setup_kernels.cpp): the one place that knows the positions of kernel_abi.hpp's
// setup_fixed_base_g1/_g2 row.

#include <cstdint>
#include <string>

#include "device/types.hpp"

namespace stagehand::kernel {

// setup_fixed_base_g1/_g2: points[i] = scalars[i]·G for `points_count` scalars, by the table of
// G's multiples; threads, host threads for the simulator (0: every one).
struct FixedBaseLaunch {
  std::string kernel;
  std::uint64_t point_count = 0;
  std::uint64_t threads = 0;
  BufferUse table, scalars, points;
  Curve curve = Curve::bls12_381;  // whose instantiation runs (KernelLaunch::curve)

  KernelLaunch to_launch() const;
  // std::invalid_argument naming the kernel where the launch has fewer reads or writes than it takes.
  static FixedBaseLaunch from_launch(const KernelLaunch& launch);
};

}  // namespace stagehand::kernel
