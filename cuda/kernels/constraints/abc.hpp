// The Groth16 a/b/c step on the device: A·w and B·w over the key's constraint matrix
// (device/kernel_abi.hpp, ConstraintMatrixLayout), C = A∘B.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "device/kernel_abi.hpp"

namespace stagehand::cuda {

struct Bls12_381Curve;  // ec/curves.cuh
struct Bn254Curve;

// Over Curve's Fr (instantiated for both descriptions of ec/curves.cuh). a, b, c: layout.rows
// Montgomery Fr each (device); witness: Montgomery Fr (device); matrix:
// layout.total_bytes() (device), or a chunk of a matrix's rows whose offsets count from entries
// first_a and first_b (kernel_abi.hpp, groth16_abc). Asynchronous on `stream`.
template <class Curve = Bls12_381Curve>
void evaluate_constraints_on_device(const kernel::ConstraintMatrixLayout& layout, const void* matrix,
                                    const void* witness, void* a, void* b, void* c, cudaStream_t stream,
                                    std::uint64_t first_a = 0, std::uint64_t first_b = 0);

}  // namespace stagehand::cuda
