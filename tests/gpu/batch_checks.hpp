// GPU checks of batch_addition_g1/g2 (cuda/kernels/batch_addition.hpp) against the CPU reference
// (src/math), and their timing. Shared by the Boost.Test suite (batch_addition_test, label gpu) and
// the one-call driver (stagehand_batch_check, scripts/gpu/batch.sh). Depends on src/math and
// batch_addition.cu only, so that the driver links none of the NTT and MSM kernels.
//
// Every check launches through the launcher (a KernelLaunch as the partition program makes it),
// into an 8 MiB write buffer poisoned with 0xff bytes first (never a reduced coordinate, so an
// unwritten accumulator cannot decode to a point), compares the accumulator with the CPU sum of
// the same points, and checks that the bytes outside the accumulator and the scratch region still
// hold the poison.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "check_support.hpp"

#include "ec/batch_addition.hpp"

namespace stagehand::cuda::batch_checks {

using check_support::gpu_present;
using check_support::Result;

// Sizes 1, 2, 1000 and 2^max_log (points at infinity among them), edge-case sets (all equal
// points, P/-P pairs, all at infinity), accumulation over two and three batches, start = 1 over a
// previous sum, zeroed accumulators, accumulator offsets, and rejected arguments; with Fq's
// products on the integer pipe and on the FP64 pipe (BatchArithmetic), each against the CPU.
Result check_batch_addition(std::ostream& out, BatchGroup group, unsigned max_log, std::uint64_t seed);

// Median of `repetitions` CUDA-event-timed launches over 2^log_size points already on the device
// (a 2^20-point walk repeated), with the result checked against 2^(log_size-20) times its sum;
// both arithmetic forms, in two alternating rounds.
Result bench_batch_addition(std::ostream& out, BatchGroup group, unsigned log_size, int repetitions,
                            std::uint64_t seed);

}  // namespace stagehand::cuda::batch_checks
