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

// BLS12-381's sizes unless a curve is named (BN254's: 64-byte G1, 128-byte G2 points).
constexpr std::uint64_t fixed_base_point_bytes(FixedBaseGroup group, kernel::Curve curve = kernel::Curve::bls12_381) {
  const kernel::CurveSizes sizes = kernel::curve_sizes(curve);
  return group == FixedBaseGroup::g1 ? sizes.g1_affine : sizes.g2_affine;
}
constexpr std::uint64_t fixed_base_table_bytes(FixedBaseGroup group, kernel::Curve curve = kernel::Curve::bls12_381) {
  return kernel::kFixedBaseTableEntries * fixed_base_point_bytes(group, curve);
}

// Over the curve's group: one source (fixed_base.cuh) instantiated for both curves.
void fixed_base_multiply(FixedBaseGroup group, const void* table, const void* scalars, void* points,
                         std::uint64_t count, cudaStream_t stream, kernel::Curve curve = kernel::Curve::bls12_381);

}  // namespace stagehand::cuda
