// One thread per constraint row: rows of a circuit hold a few entries (a 2^20 synthetic circuit
// about 1.5 per matrix), so the step is bound by reading the matrix and gathering witness values,
// not by the products; a row with many entries (a wide linear combination) only lengthens its own
// thread. One source for both curves (the kernel is a template over the curve's Fr).
#include "constraints/abc.hpp"
#include "ec/curves.cuh"
#include "util/common.cuh"

namespace stagehand::cuda {
namespace {

// Entry k of the row is at k - first in the chunk's arrays.
template <class Fr>
__device__ __forceinline__ Fr row_sum(const std::uint64_t* offsets, std::uint64_t first, const std::uint32_t* signals,
                                      const Fr* values, const Fr* witness, std::uint64_t row) {
  Fr sum = Fr::zero();
  const std::uint64_t end = offsets[row + 1] - first;
  for (std::uint64_t k = offsets[row] - first; k < end; ++k) sum = sum + load(values + k) * load(witness + signals[k]);
  return sum;
}

template <class Fr>
__global__ void abc_kernel(const std::uint64_t* offsets_a, const std::uint32_t* signals_a, const Fr* values_a,
                           const std::uint64_t* offsets_b, const std::uint32_t* signals_b, const Fr* values_b,
                           std::uint64_t first_a, std::uint64_t first_b, const Fr* witness, std::uint64_t rows, Fr* a,
                           Fr* b, Fr* c) {
  const std::uint64_t row = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const Fr sum_a = row_sum(offsets_a, first_a, signals_a, values_a, witness, row);
  const Fr sum_b = row_sum(offsets_b, first_b, signals_b, values_b, witness, row);
  store(a + row, sum_a);
  store(b + row, sum_b);
  store(c + row, sum_a * sum_b);
}

}  // namespace

template <class Curve>
void evaluate_constraints_on_device(const kernel::ConstraintMatrixLayout& layout, const void* matrix,
                                    const void* witness, void* a, void* b, void* c, cudaStream_t stream,
                                    std::uint64_t first_a, std::uint64_t first_b) {
  using Fr = typename Curve::Fr;
  if (layout.rows == 0) return;
  const auto* bytes = static_cast<const std::uint8_t*>(matrix);
  auto part = [&](std::uint64_t offset) { return bytes + offset; };
  abc_kernel<Fr><<<blocks_for(layout.rows, 256), 256, 0, stream>>>(
      reinterpret_cast<const std::uint64_t*>(part(layout.offsets_a())),
      reinterpret_cast<const std::uint32_t*>(part(layout.signals_a())),
      reinterpret_cast<const Fr*>(part(layout.values_a())),
      reinterpret_cast<const std::uint64_t*>(part(layout.offsets_b())),
      reinterpret_cast<const std::uint32_t*>(part(layout.signals_b())),
      reinterpret_cast<const Fr*>(part(layout.values_b())), first_a, first_b, static_cast<const Fr*>(witness),
      layout.rows, static_cast<Fr*>(a), static_cast<Fr*>(b), static_cast<Fr*>(c));
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
}

template void evaluate_constraints_on_device<Bls12_381Curve>(const kernel::ConstraintMatrixLayout&, const void*,
                                                             const void*, void*, void*, void*, cudaStream_t,
                                                             std::uint64_t, std::uint64_t);
template void evaluate_constraints_on_device<Bn254Curve>(const kernel::ConstraintMatrixLayout&, const void*,
                                                         const void*, void*, void*, void*, cudaStream_t, std::uint64_t,
                                                         std::uint64_t);

}  // namespace stagehand::cuda
