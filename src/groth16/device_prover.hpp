#pragma once
// The GPU phase of a Groth16 proof as a program on the Device interface: the H step and the four
// G1 MSMs run as kernels on the device; the a/b/c step (host, as in the production engine), the
// G2 MSM (a host thread, concurrent with the device) and the assembly run on the host.
//
// The program's kernels (names and conventions below) run in the simulator's functional mode as
// host functions on the CPU reference (register_sim_kernels), and on a GPU through CudaDevice's
// launchers of the same names (cuda/kernels/groth16_launchers.cu: the NTT H step and the
// Pippenger MSM, window sums combined on the device). `threads` is ignored on the GPU.
//
// name             work_units    arguments                  reads               writes
// groth16_h        2^log_size    [log_size, threads]        -                   [a, b, c]
//   a, b, c: 32·2^log_size bytes of Fr (Montgomery, R = 2^256); in: A, B, C on the domain; out: a
//   holds P_j = A(x_j)·B(x_j) − C(x_j) at x_j = ω_2n^(2j+1) (math::h_evaluations_snarkjs).
// groth16_msm_g1   point_count   [threads]                  [points, scalars]   [result]
//   points: 96-byte affine G1 (snarkjs layout: Montgomery Fq, infinity = zeros); scalars:
//   32-byte Montgomery Fr; result: 144 bytes, the Jacobian sum X‖Y‖Z (Montgomery Fq).

#include "device/device.hpp"
#include "groth16/prover.hpp"
#include "groth16/zkey.hpp"

#include <future>
#include <span>
#include <vector>

namespace stagehand::sim {
class SimSystem;
}

namespace stagehand::groth16 {

inline constexpr const char* kHKernel = "groth16_h";
inline constexpr const char* kMsmG1Kernel = "groth16_msm_g1";

// Registers the program's kernels on a functional SimSystem.
void register_sim_kernels(sim::SimSystem& system);

class DeviceProver {
 public:
  // thread_count: host threads for the host kernels and the G2 MSM (0 = all).
  DeviceProver(Device& device, const ProvingKey& key, unsigned thread_count = 0);

  // Uploads the key's G1 point sets (A, B1, C, H) once for every proof that follows.
  asio::awaitable<void> upload_key();
  // One proof: a/b/c on the host, H and the G1 MSMs on the device, B2 on a host thread.
  asio::awaitable<Proof> prove(std::span<const math::Fr> witness, ProofRandomness randomness);
  // Frees the key's device memory.
  asio::awaitable<void> release_key();

 private:
  Device& device_;
  const ProvingKey& key_;
  unsigned thread_count_;
  StreamHandle stream_{};
  DevicePointer a_points_{}, b1_points_{}, c_points_{}, h_points_{};
};

}  // namespace stagehand::groth16
