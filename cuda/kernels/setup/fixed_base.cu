// The fixed-base multiplication kernels: see fixed_base.hpp for the contract and fixed_base.cuh
// for the arithmetic (shared with the host test).
#include <stdexcept>
#include <string>

#include "setup/fixed_base.cuh"
#include "setup/fixed_base.hpp"
#include "util/common_host.hpp"

namespace stagehand::cuda {
namespace {

// Threads per block: register-bound kernels (an XYZZ accumulator is 48 words in G1 and 96 in G2,
// and G2's Fq2 products are calls, g2.cuh), so small blocks, as the synthetic generator's.
template <class C>
constexpr unsigned kThreads = C::kG2 ? 64 : 128;

template <class C>
__global__ void __launch_bounds__(kThreads<C>) fixed_base_kernel(const std::uint8_t* table, const std::uint8_t* scalars,
                                                                 std::uint8_t* points, std::uint64_t count) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * kThreads<C> + threadIdx.x;
  if (i >= count) return;
  fixed_base::multiply_point<C>(table, scalars + 32 * i, points + C::kPointBytes * i);
}
static_assert(fixed_base::G1::kPointBytes == kernel::kG1AffineBytes &&
              fixed_base::G2::kPointBytes == kernel::kG2AffineBytes &&
              fixed_base::Group<Bn254Curve, false>::kPointBytes ==
                  kernel::curve_sizes(kernel::Curve::bn254).g1_affine &&
              fixed_base::Group<Bn254Curve, true>::kPointBytes == kernel::curve_sizes(kernel::Curve::bn254).g2_affine);
static_assert(fixed_base::kWindows * fixed_base::kDigits == kernel::kFixedBaseTableEntries);

bool aligned16(const void* pointer) { return (reinterpret_cast<std::uintptr_t>(pointer) & 15) == 0; }

template <class Curve, bool IsG2>
void launch(const void* table, const void* scalars, void* points, std::uint64_t count, cudaStream_t stream) {
  using C = fixed_base::Group<Curve, IsG2>;
  const std::uint64_t blocks = (count + kThreads<C> - 1) / kThreads<C>;
  if (blocks > 0x7fffffffull)
    throw std::invalid_argument("fixed_base_multiply: " + std::to_string(count) + " points is too many");
  fixed_base_kernel<C><<<static_cast<unsigned>(blocks), kThreads<C>, 0, stream>>>(
      static_cast<const std::uint8_t*>(table), static_cast<const std::uint8_t*>(scalars),
      static_cast<std::uint8_t*>(points), count);
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void fixed_base_multiply(FixedBaseGroup group, const void* table, const void* scalars, void* points,
                         std::uint64_t count, cudaStream_t stream, kernel::Curve curve) {
  if (count == 0) return;
  if (table == nullptr || scalars == nullptr || points == nullptr || !aligned16(table) || !aligned16(scalars) ||
      !aligned16(points)) {
    throw std::invalid_argument("fixed_base_multiply: every buffer must be non-null and 16-byte aligned");
  }
  const bool g2 = group == FixedBaseGroup::g2;
  if (curve == kernel::Curve::bn254) {
    (g2 ? launch<Bn254Curve, true> : launch<Bn254Curve, false>)(table, scalars, points, count, stream);
  } else {
    (g2 ? launch<Bls12_381Curve, true> : launch<Bls12_381Curve, false>)(table, scalars, points, count, stream);
  }
}

}  // namespace stagehand::cuda
