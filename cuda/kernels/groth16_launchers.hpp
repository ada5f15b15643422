// Launchers for the Groth16 device program's kernels (src/groth16/device_prover.hpp), built on
// the NTT and MSM kernels. launchers.cu's find_launcher consults find_groth16_launcher.
//
// name             work_units    arguments                  reads               writes
// groth16_h        2^log_size    [log_size, threads]        -                   [a, b, c, scratch?]
//   a, b, c: 32·2^log_size bytes of Montgomery Fr (A, B, C on the domain); out: a holds the
//   snarkjs H evaluations (h_polynomial_snarkjs on the snarkjs domain: ω = 5^((r-1)/n), g = ω_2n);
//   b and c are overwritten.
// groth16_msm_g1   point_count   [threads]                  [points, scalars]   [result, scratch?]
//   points: 96-byte affine G1 (Montgomery, infinity = zeros); scalars: 32-byte Montgomery Fr;
//   result: 144 bytes, the Jacobian sum X‖Y‖Z (Montgomery Fq), combined on the device.
// `threads` (host threads in the simulator's version) is ignored here.
//
// scratch: groth16_kernel_scratch_bytes(name, work_units) bytes that the caller allocated (the
// coordinator's budget reserves them): groth16_h builds its NTT domain there at every launch (a
// few small kernels), groth16_msm_g1 keeps its window sums and sort buffers there.
//
// Without the scratch buffer these two own long-lived device memory instead (allocated on first
// use and never on the steady-state path):
//   - groth16_h caches one snarkjs NTT domain per (GPU, log_size) (ntt_domain_bytes, under 5 MiB
//     at 2^27). It is built on the launching stream, which is then synchronised once so that
//     every stream may read it.
//   - groth16_msm_g1 keeps one grow-only scratch + window-sum buffer per (GPU, stream) (CUDA stream
//     id, unique for the process), sized by msm_scratch_bytes/msm_result_bytes of the largest
//     launch so far; growing synchronises that stream before freeing the smaller buffer. Work on
//     one stream is ordered, so reuse is safe; distinct streams never share a buffer.
// Both caches live until the process exits (release_groth16_buffers frees them earlier).
#pragma once

#include <string_view>
#include <vector>

#include "launchers.hpp"

namespace stagehand::cuda {

// nullptr for names other than groth16_h and groth16_msm_g1.
const KernelLauncher* find_groth16_launcher(std::string_view name);
std::vector<std::string_view> groth16_launcher_names();

// The scratch a launch takes as its last write buffer (0 for other kernels).
std::uint64_t groth16_kernel_scratch_bytes(std::string_view name, std::uint64_t work_units);

// Frees the cached domains and MSM buffers (after a device synchronise); for tests and shutdown.
void release_groth16_buffers();

}  // namespace stagehand::cuda
