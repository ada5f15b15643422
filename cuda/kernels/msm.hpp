// Pippenger multi-scalar multiplication over G1 on the device.
//
// Inputs: `point_count` affine points (96 bytes each: x then y, Montgomery Fq, infinity = all
// zero bytes) and as many scalars (32 bytes, little-endian, reduced mod r), either canonical
// (snarkjs witness values) or in Montgomery form (values an NTT left on the device).
//
// Algorithm: signed c-bit window digits (bucket b of a window holds the points whose digit is
// ±(b+1), so each window has 2^(c-1) buckets), a radix sort of (bucket, point) pairs per group
// of windows, one thread per bucket summing its points in XYZZ coordinates, then a parallel
// reduction of Σ (b+1)·B_b per window. The device produces one sum per window (Jacobian, 144
// bytes, Montgomery Fq); the host combines them (msm_combine_windows, a few hundred doublings).
// Batches of points combine the same way, which is what the streamed variant relies on.
//
// Limitation, stated plainly: one thread per bucket means that inputs with very many equal
// scalars (e.g. half the witness equal to 1) put most points into one bucket and serialise it.
// The result stays correct; only the time suffers. For the same reason the planner uses only
// window widths whose top window keeps most of its bits (8, 16, 20; see msm_plan).
// Not done yet: the GLV endomorphism.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace stagehand::cuda {

inline constexpr std::uint64_t kG1AffineBytes = 96;
inline constexpr std::uint64_t kG1JacobianBytes = 144;
inline constexpr std::uint64_t kFrBytes = 32;

struct MsmPlan {
  std::uint64_t point_count = 0;
  unsigned window_bits = 0;        // c
  unsigned window_count = 0;       // ceil(256 / c): signed digits never carry out of the top window
  unsigned windows_per_group = 0;  // windows sorted and accumulated together
};

// window_bits 0 picks the width from the size (8, 16 or 20); 2..22 forces one (tests, tuning).
MsmPlan msm_plan(std::uint64_t point_count, unsigned window_bits = 0);

// Device scratch that msm_g1_windows needs (taken as a write buffer, never allocated inside).
std::uint64_t msm_scratch_bytes(const MsmPlan& plan);
// The window sums it writes: plan.window_count Jacobian points.
inline std::uint64_t msm_result_bytes(const MsmPlan& plan) { return plan.window_count * kG1JacobianBytes; }

// Writes the plan.window_count window sums to `window_sums` (device). All pointers are device
// pointers; `scratch` holds msm_scratch_bytes(plan) bytes. Asynchronous on `stream`.
void msm_g1_windows(const void* points, const void* scalars, bool scalars_montgomery, const MsmPlan& plan,
                    void* window_sums, void* scratch, cudaStream_t stream);

// Host side: Σ_w 2^(c·w)·S_w over one or more batches' window sums (host memory, each batch
// msm_result_bytes(plan) bytes, all batches planned with the same window_bits). Result as
// Jacobian (X, Y, Z) in Montgomery form, the layout of stagehand::math::G1Projective.
struct G1JacobianBytes {
  std::uint8_t bytes[kG1JacobianBytes];
};
G1JacobianBytes msm_combine_windows(const std::vector<const void*>& batch_window_sums, unsigned window_count,
                                    unsigned window_bits);

// MSM with the points streamed from pinned host memory in batches: while batch i computes on
// `compute`, batch i+1 copies on `copy` into the other of two device point buffers, and batch
// i-1's window sums come back into one of two pinned host buffers that the host combines only
// once the next batch has been queued (a deferred synchronise), so the GPU never waits for
// the host. Allocates its buffers once at construction (not on the hot path).
class StreamedMsm {
 public:
  StreamedMsm(std::uint64_t batch_points, unsigned window_bits = 0);
  ~StreamedMsm();
  StreamedMsm(const StreamedMsm&) = delete;
  StreamedMsm& operator=(const StreamedMsm&) = delete;

  // host_points: pinned (cudaHostAlloc / cudaHostRegister) point_count·96 bytes;
  // device_scalars: point_count scalars on the device. Blocks until the result is known.
  G1JacobianBytes run(const void* host_points, const void* device_scalars, std::uint64_t point_count,
                      bool scalars_montgomery, cudaStream_t compute, cudaStream_t copy);

  std::uint64_t device_bytes() const { return device_bytes_; }

 private:
  std::uint64_t batch_points_;
  MsmPlan plan_;
  void* device_points_[2] = {nullptr, nullptr};
  void* device_sums_[2] = {nullptr, nullptr};
  void* host_sums_[2] = {nullptr, nullptr};
  void* scratch_ = nullptr;
  cudaEvent_t copied_[2] = {nullptr, nullptr};
  cudaEvent_t consumed_[2] = {nullptr, nullptr};
  cudaEvent_t sums_ready_[2] = {nullptr, nullptr};
  std::uint64_t device_bytes_ = 0;
};

}  // namespace stagehand::cuda
