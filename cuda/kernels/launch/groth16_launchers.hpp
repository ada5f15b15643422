// Launchers for the Groth16 device program's kernels (src/groth16/groth16_workload.hpp), built on
// the NTT and MSM kernels. They register with the
// launcher registry (launch/registry.cpp) through groth16_launchers() (launchers.hpp).
//
// name             work_units    arguments                  reads               writes
// groth16_h_evaluate  2^log_size  [log_size, threads]       -                   [values, scratch]
//   values: 32·2^log_size bytes of Montgomery Fr (one of A, B, C on the domain), out on the coset
//   (the inverse NTT, then the coset NTT, on the snarkjs domain: ω = 5^((r-1)/n), g = ω_2n).
// groth16_h_combine   2^log_size  [log_size, threads]       [b, c]              [a]
//   a = a·b − c pointwise: after groth16_h_evaluate of all three, a holds the snarkjs H
//   evaluations (h_polynomial with HForm::snarkjs). No scratch.
// groth16_msm_g1   point_count   [threads]                  [points, scalars]   [result, scratch]
//   points: 96-byte affine G1 (Montgomery, infinity = zeros); scalars: 32-byte Montgomery Fr;
//   result: 144 bytes, the Jacobian sum X‖Y‖Z (Montgomery Fq), combined on the device.
// groth16_msm_g2   point_count   [threads]                  [points, scalars]   [result, scratch]
//   the same over G2: 192-byte points, a 288-byte Jacobian result (Montgomery Fq2).
// groth16_msm_g1_batch  point_count  [threads, capacity, add]  [points, scalars]  [scratch]
//   one batch of an MSM fed in batches (a streamed key set): Σ scalars[i]·points[i] added into
//   the buckets in scratch (add 0: they start afresh). Every batch of one MSM and its reduction
//   take the same capacity (the largest batch's point count), which fixes the window width.
// groth16_msm_g1_reduce 1            [capacity]                -                   [result, scratch]
//   the buckets the batches filled into the MSM's sum, result as groth16_msm_g1's; the buckets
//   are consumed. groth16_msm_g2_batch and groth16_msm_g2_reduce: the same over G2.
// groth16_precompute_g1  point_count  [window_bits]       [points]            [copies]
//   a set's precomputed bases (msm_precompute_bases): kernel::precomputed_copies(window_bits)
//   copies of the points, copy j = 2^(c·j)·P; `points` may be copy 0 of `copies`. No scratch.
// groth16_msm_g1_precomputed  point_count  [threads, window_bits]  [copies, scalars]  [result, scratch]
//   groth16_msm_g1's result from the copies, one set of buckets for every window.
//   groth16_precompute_g2 and groth16_msm_g2_precomputed: the same over G2.
// groth16_abc      rows          [entries_a, entries_b, threads]  [witness, matrix]  [a, b, c]
//   the a/b/c step over the key's constraint matrix (device/kernel_abi.hpp's layout), one thread
//   per row; no scratch.
// `threads` (host threads in the simulator's version) is ignored here. The sizes above are
// BLS12-381's; every kernel here has a BN254 launcher too, which takes kernel::curve_sizes(bn254)'s
// (64-byte G1 and 128-byte G2 points, 96- and 192-byte results).
//
// scratch: groth16_kernel_scratch_bytes(name, work_units) bytes that the caller allocated (the
// coordinator's budget reserves them): groth16_h_evaluate builds its NTT domain there at every launch (a
// few small kernels), groth16_msm_g1 keeps its window sums and sort buffers there, the batch
// kernels their buckets as well (work_units = the capacity), the precomputed MSMs theirs at the
// width kernel::precomputed_window_bits gives (BLS12-381's figure, which a BN254 launch's needs never
// pass). The launchers allocate nothing.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "launch/launchers.hpp"

namespace stagehand::cuda {

// The scratch a launch takes as its last write buffer (0 for other kernels).
std::uint64_t groth16_kernel_scratch_bytes(std::string_view name, std::uint64_t work_units);

}  // namespace stagehand::cuda
