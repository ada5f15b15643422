#include "workloads/porep/partition_shape.hpp"

#include <algorithm>

namespace stagehand {

Bytes PartitionShape::upload_bytes() const {
  return input_bytes() + h_points() * kG1AffineBytes + (l_points() + a_points() + b_g1_points()) * kG1AffineBytes +
         b_g2_points() * kG2AffineBytes + tail_points() * kTailBytesPerPoint;
}

Bytes PartitionShape::peak_after_a_bytes() const {
  return ntt_scratch_bytes() + 2 * stream_buffer_bytes() + 2 * kBucketResultBytes;
}

Bytes PartitionShape::peak_after_b_and_c_bytes() const { return polynomial_bytes() + peak_after_a_bytes(); }

Bytes PartitionShape::peak_bytes() const {
  return std::max(input_bytes() + ntt_scratch_bytes(), peak_after_b_and_c_bytes());
}

}  // namespace stagehand
