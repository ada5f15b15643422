// Synthetic proving-key data on the device: see synthetic.hpp for the contract and synthetic.cuh
// for the arithmetic (shared with the host test).
#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "synthetic/synthetic.cuh"
#include "synthetic/synthetic.hpp"
#include "util/common_host.hpp"

namespace stagehand::cuda {
namespace {

// Threads per block: the point kernels are register-bound (G1 ~ a hundred and more registers per
// thread, G2 more), so small blocks leave the scheduler room to fill each SM.
constexpr unsigned kG1Threads = 128;
constexpr unsigned kG2Threads = 64;
constexpr unsigned kScalarThreads = 256;

template <class F, unsigned Threads>
__global__ void __launch_bounds__(Threads) points_kernel(std::uint8_t* out, std::uint64_t stride, std::uint64_t count,
                                                         std::uint64_t first_index, std::uint64_t chunk) {
  const std::uint64_t t = std::uint64_t{blockIdx.x} * Threads + threadIdx.x;
  synthetic::generate_chunk<F>(out, stride, count, first_index, chunk, t);
}

// One scalar per thread-step, grid-stride: scalar i at out + i·stride + offset.
__global__ void __launch_bounds__(kScalarThreads)
    scalars_kernel(std::uint8_t* out, std::uint64_t stride, std::uint64_t offset, std::uint64_t count,
                   std::uint64_t seed, std::uint64_t first_index, bool montgomery) {
  const std::uint64_t step = std::uint64_t{gridDim.x} * kScalarThreads;
#pragma unroll 1
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * kScalarThreads + threadIdx.x; i < count; i += step) {
    Fr value = synthetic::random_scalar(seed, first_index + i);
    if (montgomery) value = synthetic::to_montgomery(value);
    synthetic::store_element(out + i * stride + offset, value);
  }
}

bool aligned16(const void* pointer) { return (reinterpret_cast<std::uintptr_t>(pointer) & 15) == 0; }

[[noreturn]] void fail(const char* name, const std::string& why) {
  throw std::invalid_argument(std::string(name) + ": " + why);
}

void check_buffer(const char* name, const void* out, std::uint64_t count, std::uint64_t stride,
                  std::uint64_t element_bytes) {
  if (count == 0) return;
  if (out == nullptr || !aligned16(out)) fail(name, "output must be non-null and 16-byte aligned");
  if (stride < element_bytes || stride % 16 != 0) {
    fail(name, "stride " + std::to_string(stride) + " is not a multiple of 16 of at least " +
                   std::to_string(element_bytes) + " bytes");
  }
  if (count > ~std::uint64_t{0} / stride) fail(name, "count " + std::to_string(count) + " overflows the buffer size");
}

// Threads of points_kernel<F, Threads> resident at once on the current GPU.
template <class F, unsigned Threads>
std::uint64_t resident_threads() {
  return std::uint64_t{resident_blocks<points_kernel<F, Threads>>(Threads)} * Threads;
}

template <class F, unsigned Threads>
void launch_points(std::uint8_t* out, std::uint64_t stride, std::uint64_t count, std::uint64_t first_index,
                   std::uint64_t chunk, cudaStream_t stream) {
  if (chunk == 0) chunk = synthetic::plan_chunk(count, resident_threads<F, Threads>());
  const std::uint64_t chunks = synthetic::chunk_count(count, chunk);
  const std::uint64_t blocks = (chunks + Threads - 1) / Threads;
  if (blocks > 0x7fffffffull)
    fail("generate_points", "chunk " + std::to_string(chunk) + " is too small for this count");
  points_kernel<F, Threads>
      <<<static_cast<unsigned>(blocks), Threads, 0, stream>>>(out, stride, count, first_index, chunk);
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
}

void launch_scalars(std::uint8_t* out, std::uint64_t stride, std::uint64_t offset, std::uint64_t count,
                    std::uint64_t seed, std::uint64_t first_index, bool montgomery, cudaStream_t stream) {
  if (count == 0) return;
  // Enough blocks to fill any GPU; the grid-stride loop does the rest.
  const std::uint64_t blocks = std::min<std::uint64_t>((count + kScalarThreads - 1) / kScalarThreads, 1u << 16);
  scalars_kernel<<<static_cast<unsigned>(blocks), kScalarThreads, 0, stream>>>(out, stride, offset, count, seed,
                                                                               first_index, montgomery);
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

std::uint64_t synthetic_default_chunk(SyntheticGroup group, std::uint64_t count) {
  return synthetic::plan_chunk(
      count, group == SyntheticGroup::g1 ? resident_threads<Fq, kG1Threads>() : resident_threads<Fq2, kG2Threads>());
}

void generate_points(SyntheticGroup group, void* out, std::uint64_t stride, std::uint64_t count,
                     std::uint64_t first_index, std::uint64_t chunk, cudaStream_t stream) {
  const bool g1 = group == SyntheticGroup::g1;
  const char* name = g1 ? "generate_g1_points" : "generate_g2_points";
  check_buffer(name, out, count, stride, g1 ? kSyntheticG1Bytes : kSyntheticG2Bytes);
  if (!synthetic::index_range_fits(count, first_index)) {
    fail(name, "first_index " + std::to_string(first_index) + " + count " + std::to_string(count) +
                   " does not fit in 64 bits");
  }
  if (count == 0) return;
  auto* bytes = static_cast<std::uint8_t*>(out);
  if (g1) {
    launch_points<Fq, kG1Threads>(bytes, stride, count, first_index, chunk, stream);
  } else {
    launch_points<Fq2, kG2Threads>(bytes, stride, count, first_index, chunk, stream);
  }
}

void generate_g1_points(void* points, std::uint64_t count, std::uint64_t first_index, cudaStream_t stream) {
  generate_points(SyntheticGroup::g1, points, kSyntheticG1Bytes, count, first_index, 0, stream);
}

void generate_g2_points(void* points, std::uint64_t count, std::uint64_t first_index, cudaStream_t stream) {
  generate_points(SyntheticGroup::g2, points, kSyntheticG2Bytes, count, first_index, 0, stream);
}

void generate_scalars(void* scalars, std::uint64_t count, std::uint64_t seed, bool montgomery, cudaStream_t stream,
                      std::uint64_t first_index) {
  check_buffer("generate_scalars", scalars, count, kSyntheticScalarBytes, kSyntheticScalarBytes);
  launch_scalars(static_cast<std::uint8_t*>(scalars), kSyntheticScalarBytes, 0, count, seed, first_index, montgomery,
                 stream);
}

void generate_tail_items(void* items, std::uint64_t count, std::uint64_t first_index, std::uint64_t seed,
                         cudaStream_t stream) {
  check_buffer("generate_tail_items", items, count, kSyntheticTailItemBytes, kSyntheticTailItemBytes);
  if (!synthetic::index_range_fits(count, first_index)) {
    fail("generate_tail_items", "first_index " + std::to_string(first_index) + " + count " + std::to_string(count) +
                                    " does not fit in 64 bits");
  }
  if (count == 0) return;
  // The points first (their passes use only the first 96 bytes of each item), then the scalars
  // into bytes 96..127; one stream orders the two.
  auto* bytes = static_cast<std::uint8_t*>(items);
  launch_points<Fq, kG1Threads>(bytes, kSyntheticTailItemBytes, count, first_index, 0, stream);
  launch_scalars(bytes, kSyntheticTailItemBytes, kSyntheticG1Bytes, count, seed, first_index, false, stream);
}

}  // namespace stagehand::cuda
