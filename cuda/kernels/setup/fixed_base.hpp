// The test-only setup's point multiplications on the device: points[i] = scalars[i]·G for a
// fixed generator G of G1 or G2, from a table of its multiples (src/groth16/fixed_base.hpp:
// entry 256·w + d = d·2^(8w)·G, 32 windows), one thread per point (the method is in
// fixed_base.cuh).
//
// Layouts (src/groth16/encoding.hpp): table entries and output points affine, x‖y in Montgomery
// form, G1 96 bytes, G2 192 bytes (x.c0‖x.c1‖y.c0‖y.c1), the point at infinity all zeros (the
// output of a zero scalar); scalars 32-byte Montgomery Fr, reduced (below r). Every buffer
// 16-byte aligned. Asynchronous on `stream`; no scratch, nothing allocated. Throws
// std::invalid_argument for buffers that do not fit, std::runtime_error for CUDA errors.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "device/kernel_abi.hpp"

namespace stagehand::cuda {

enum class FixedBaseGroup { g1, g2 };

constexpr std::uint64_t fixed_base_point_bytes(FixedBaseGroup group) {
  return group == FixedBaseGroup::g1 ? kernel::kG1AffineBytes : kernel::kG2AffineBytes;
}
constexpr std::uint64_t fixed_base_table_bytes(FixedBaseGroup group) {
  return kernel::kFixedBaseTableEntries * fixed_base_point_bytes(group);
}

void fixed_base_multiply(FixedBaseGroup group, const void* table, const void* scalars, void* points,
                         std::uint64_t count, cudaStream_t stream);

}  // namespace stagehand::cuda
