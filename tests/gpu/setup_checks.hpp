// GPU checks of the test-only setup's kernels (setup_fixed_base_g1/_g2, cuda/kernels/setup/) against
// the CPU reference (src/math), and their timing. Shared by stagehand_kernel_check (--setup-log,
// --setup-only), the gpu test (gpu_kernels_test) and the one-call driver of
// scripts/gpu/setup.sh (stagehand_setup_check). Depends on src/math, setup/fixed_base.cu and
// launch/setup_launchers.cpp only, so that the driver links none of the other kernels.
//
// Every launch goes through the launcher, as CudaDevice makes it; every output buffer is poisoned
// first (0xff bytes: never a reduced Montgomery Fq, so an unwritten point cannot pass) and has
// guard slots after the output that must keep the poison.
#pragma once

#include <cstdint>
#include <iosfwd>

#include "check_support.hpp"

#include "setup/fixed_base.hpp"

namespace stagehand::cuda::setup_checks {

using check_support::gpu_present;
using check_support::Result;

// 2^log random scalars plus edge cases (0, 1, r − 1, r − 2, 2^(8w) for every window, every digit
// 255, the top window alone): every point byte for byte equal to the encoding of scalar·G by
// src/math's double-and-add (no table); the guard untouched; a launch of no points writes
// nothing; buffers that do not fit are refused.
Result check_fixed_base(std::ostream& out, FixedBaseGroup group, unsigned log, std::uint64_t seed);

// The kernel alone at 2^log points (scalars on the device), median of `repetitions` runs timed
// with CUDA events: milliseconds and points per second; a sample of the points (the last
// included) checked against src/math. Sets `points_per_second` (0 when the check failed).
Result time_fixed_base(std::ostream& out, FixedBaseGroup group, unsigned log, int repetitions,
                       double& points_per_second);

// The timings at the given sizes (0 skips one), then the kernels' time for a 2^26 setup (about
// 2^28 G1 and 2^26 G2 multiplications) at the rates of the largest size of each group.
Result bench(std::ostream& out, unsigned g1_small, unsigned g1_large, unsigned g2_small, unsigned g2_large,
             int repetitions);

}  // namespace stagehand::cuda::setup_checks
