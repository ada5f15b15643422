// GPU kernel checks against the CPU reference (src/math), shared by the Boost.Test suite
// (kernels_test) and the one-call script driver (stagehand_kernel_check). Each check draws fresh
// random inputs, poisons every buffer the kernel writes (0xff bytes: never a reduced field
// element) before the run, compares every output element, and prints one line.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "check_support.hpp"

namespace stagehand::cuda::checks {

using check_support::gpu_present;
using check_support::Result;

// All four transforms, snarkjs and classic domains, sizes 2^log_size.
Result check_ntt(std::ostream& out, unsigned log_size, std::uint64_t seed);
// h_pointwise and both H forms.
Result check_h(std::ostream& out, unsigned log_size, std::uint64_t seed);
// MSM with canonical and Montgomery scalars (reference: math::msm for log_size <= 22 or when
// `full_reference`, else the discrete-log identity of the sample points).
Result check_msm(std::ostream& out, unsigned log_size, std::uint64_t seed, bool full_reference);
// Zero scalars, points at infinity, repeated and opposite points, r-1, forced window widths.
Result check_msm_edge_cases(std::ostream& out, std::uint64_t seed);
// MSMs over precomputed bases (msm_precompute_bases, then a precomputed plan): the edge cases at
// widths 2..24, Montgomery scalars, groups of windows adding into the shared buckets, and G2 over
// the sample walk, against math::msm and the walk's discrete logs.
Result check_msm_precomputed(std::ostream& out, std::uint64_t seed);
// Every MsmTuning combination at window widths 8, 20 and the plan's, on random scalars and on
// heavy buckets (half the scalars equal), against math::msm.
Result check_msm_tunings(std::ostream& out, unsigned log_size, std::uint64_t seed);
// Points streamed from pinned memory in batches equal the reference (also: c = 20, Montgomery
// scalars, heavy buckets, a batch size that does not divide the count, one object run twice).
Result check_msm_streamed(std::ostream& out, unsigned log_size, unsigned batch_log, std::uint64_t seed);
// Every launcher name resolves; a launch through the table equals the direct call; busy_wait
// waits at least as long as asked.
Result check_launchers(std::ostream& out, std::uint64_t seed);
// The partition program's kernels through the launcher table, as gpu_program.cpp launches them:
// ntt_twiddles + the four ntt kinds at 2^log_size; the H MSM streamed as msm_batch launches of
// 2^(log_size-2) points (scalars from an offset, the last batch short) then msm_reduce; a second
// MSM started afresh on the same scratch; tail_msm over interleaved items in two launches, then
// tail_reduce into an accumulator at an offset, nothing else of the buffer written; restarted on
// the same scratch; over no items. All against src/math.
Result check_partition_launchers(std::ostream& out, unsigned log_size, std::uint64_t seed);

// groth16_msm_g2 through its launcher at 2^1..2^max_log (against math::msm up to
// 2^reference_max_log, then the discrete-log identity of the G2 sample walk), the empty sum,
// points at infinity and zero scalars.
Result check_msm_g2(std::ostream& out, unsigned max_log, unsigned reference_max_log, std::uint64_t seed);
// A streamed set's MSM through groth16_msm_g1/_g2_batch and _reduce, as the Groth16 program
// launches them (uneven batches, one batch, many; one scratch reused), against the walks'
// discrete logs.
Result check_streamed_groth16_msms(std::ostream& out, std::uint64_t seed);
// groth16_precompute_g1/_g2 then groth16_msm_g1/_g2_precomputed through their launchers, as the
// Groth16 program runs a precomputed set (in place, the program's width, 0, 1 and 1,500 points).
Result check_precomputed_groth16_msms(std::ostream& out, std::uint64_t seed);
// groth16_abc through its launcher over a random matrix of `rows` rows (empty rows among them)
// against the rows summed on the CPU; every output element and its guard.
Result check_abc(std::ostream& out, std::uint64_t rows, std::uint64_t seed);
// The H step as the Groth16 program launches it: groth16_h_evaluate on each of a, b, c (one
// scratch reused), then groth16_h_combine, against math::h_evaluations_snarkjs.
Result check_groth16_h(std::ostream& out, unsigned log_size, std::uint64_t seed);

}  // namespace stagehand::cuda::checks
