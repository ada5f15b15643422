#include "coordinator/partition.hpp"

#include <algorithm>

namespace stagehand {

Bytes PartitionShape::upload_bytes() const {
  return input_bytes() + h_points() * kG1AffineBytes + (l_points() + a_points() + b_g1_points()) * kG1AffineBytes +
         b_g2_points() * kG2AffineBytes + tail_points() * kTailBytesPerPoint;
}

Bytes PartitionShape::peak_bytes() const {
  Bytes ntt_phase = input_bytes() + ntt_scratch_bytes();
  Bytes msm_phase = polynomial_bytes() + ntt_scratch_bytes() + 2 * stream_buffer_bytes() + 2 * kBucketResultBytes;
  return std::max(ntt_phase, msm_phase);
}

}  // namespace stagehand
