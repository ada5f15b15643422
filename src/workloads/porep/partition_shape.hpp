#pragma once
// The PoRep-32G-shaped partition: what one Groth16 partition moves and computes, derived from its
// domain size. Sizes scale linearly from the 2^26 figures in docs/device-facts.md, so any domain from
// 2^10 to 2^27 is one setting away.

#include "device/types.hpp"

#include <cstdint>
#include <string>

namespace stagehand {

enum class MsmCollect { deferred, synchronize };

struct PartitionShape {
  int domain_log2 = 26;
  // Host phases, in host nanoseconds per domain element (modelled on the simulator): preparing
  // a/b/c before the GPU, and the G2 MSM plus proof assembly after it.
  double host_prepare_ns_per_element = 7.5;
  double host_finish_ns_per_element = 3.0;
  // Host time to fold one MSM batch's bucket results.
  Nanoseconds msm_batch_collect_ns = 2 * kMillisecond;
  int h_msm_batches = 8;

  static constexpr Bytes kScalarBytes = 32;
  static constexpr Bytes kG1AffineBytes = 96;
  static constexpr Bytes kG2AffineBytes = 192;
  // Points per domain element of the batch-addition sets (L, A, B_G1 in G1; B_G2 in G2) and bytes
  // per element of the tail MSMs' bases and scalars: 2.19, 2.30, 1.07, 2.14 and 3.9 GiB at 2^26.
  static constexpr double kLPointsPerElement = 2.19 * 1024 * 1024 * 1024 / 96 / (1 << 26);
  static constexpr double kAPointsPerElement = 2.30 * 1024 * 1024 * 1024 / 96 / (1 << 26);
  static constexpr double kBG1PointsPerElement = 1.07 * 1024 * 1024 * 1024 / 96 / (1 << 26);
  static constexpr double kBG2PointsPerElement = 2.14 * 1024 * 1024 * 1024 / 192 / (1 << 26);
  static constexpr double kTailBytesPerElement = 3.9 * 1024 * 1024 * 1024 / (1 << 26);
  static constexpr Bytes kTailBytesPerPoint = kG1AffineBytes + kScalarBytes;
  static constexpr Bytes kBucketResultBytes = 8 * kMiB;

  std::uint64_t domain() const { return std::uint64_t{1} << domain_log2; }
  Bytes polynomial_bytes() const { return domain() * kScalarBytes; }
  Bytes input_bytes() const { return 3 * polynomial_bytes(); }
  // The NTTs' twiddle tables.
  Bytes ntt_scratch_bytes() const { return domain() * 16; }
  std::uint64_t h_points() const { return domain(); }
  std::uint64_t h_batch_points() const {
    return (h_points() + static_cast<std::uint64_t>(h_msm_batches) - 1) / static_cast<std::uint64_t>(h_msm_batches);
  }
  // One half of the double buffer that streams points (H, then the batch-addition sets, then the
  // tail MSMs' bases) from pinned host memory.
  Bytes stream_buffer_bytes() const { return h_batch_points() * kG1AffineBytes; }
  std::uint64_t l_points() const { return scaled(kLPointsPerElement); }
  std::uint64_t a_points() const { return scaled(kAPointsPerElement); }
  std::uint64_t b_g1_points() const { return scaled(kBG1PointsPerElement); }
  std::uint64_t b_g2_points() const { return scaled(kBG2PointsPerElement); }
  std::uint64_t tail_points() const { return scaled(kTailBytesPerElement / static_cast<double>(kTailBytesPerPoint)); }
  // Host-to-device bytes of one partition, all phases.
  Bytes upload_bytes() const;
  // The proving-key points streamed from pinned host memory (H, L, A, B_G1, B_G2, tail).
  Bytes key_bytes() const { return upload_bytes() - input_bytes(); }
  // The most device memory the partition holds at once (inputs and twiddles during the NTTs).
  Bytes peak_bytes() const;
  // The most it holds once b and c are freed (a, twiddles, the streaming buffers), and once a is.
  Bytes peak_after_b_and_c_bytes() const;
  Bytes peak_after_a_bytes() const;
  Nanoseconds host_prepare_ns() const {
    return static_cast<Nanoseconds>(host_prepare_ns_per_element * static_cast<double>(domain()));
  }
  Nanoseconds host_finish_ns() const {
    return static_cast<Nanoseconds>(host_finish_ns_per_element * static_cast<double>(domain()));
  }

 private:
  std::uint64_t scaled(double per_element) const {
    return static_cast<std::uint64_t>(per_element * static_cast<double>(domain()));
  }
};

}  // namespace stagehand
