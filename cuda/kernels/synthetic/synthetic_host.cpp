// Synthetic data made on the device and copied into host memory: see synthetic_host.hpp.
#include "synthetic/synthetic_host.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "synthetic/synthetic.hpp"
#include "util/common_host.hpp"

namespace stagehand::cuda {
namespace {

constexpr std::uint64_t kChunkBytes = std::uint64_t{512} << 20;

// Fills `target` with `count` items of `item_bytes` made on the device in chunks:
// generate(device, items, first) writes items first..first + items - 1 of the call.
template <class Generate>
void fill_from_device(const char* name, HostRange target, std::uint64_t count, std::uint64_t item_bytes,
                      Generate generate) {
  if (count > target.bytes / item_bytes) {
    throw std::invalid_argument(std::string(name) + ": " + std::to_string(count) + " items of " +
                                std::to_string(item_bytes) + " bytes do not fit in " + std::to_string(target.bytes) +
                                " bytes");
  }
  const std::uint64_t chunk_items = std::max<std::uint64_t>(1, kChunkBytes / item_bytes);
  void* device = nullptr;
  STAGEHAND_CUDA_CHECK(cudaMalloc(&device, std::min(count, chunk_items) * item_bytes));
  try {
    for (std::uint64_t first = 0; first < count; first += chunk_items) {
      const std::uint64_t items = std::min(chunk_items, count - first);
      generate(device, items, first);
      STAGEHAND_CUDA_CHECK(
          cudaMemcpy(target.data() + first * item_bytes, device, items * item_bytes, cudaMemcpyDeviceToHost));
    }
  } catch (...) {
    cudaFree(device);
    throw;
  }
  STAGEHAND_CUDA_CHECK(cudaFree(device));
}

}  // namespace

void fill_g1_points(HostRange target, std::uint64_t count, std::uint64_t first_index) {
  fill_from_device("fill_g1_points", target, count, kSyntheticG1Bytes,
                   [&](void* out, std::uint64_t items, std::uint64_t first) {
                     generate_g1_points(out, items, first_index + first, nullptr);
                   });
}

void fill_g2_points(HostRange target, std::uint64_t count, std::uint64_t first_index) {
  fill_from_device("fill_g2_points", target, count, kSyntheticG2Bytes,
                   [&](void* out, std::uint64_t items, std::uint64_t first) {
                     generate_g2_points(out, items, first_index + first, nullptr);
                   });
}

void fill_tail_items(HostRange target, std::uint64_t count, std::uint64_t first_index, std::uint64_t seed) {
  fill_from_device("fill_tail_items", target, count, kSyntheticTailItemBytes,
                   [&](void* out, std::uint64_t items, std::uint64_t first) {
                     generate_tail_items(out, items, first_index + first, seed, nullptr);
                   });
}

void fill_scalars(HostRange target, std::uint64_t count, std::uint64_t seed, bool montgomery,
                  std::uint64_t first_index) {
  fill_from_device("fill_scalars", target, count, kSyntheticScalarBytes,
                   [&](void* out, std::uint64_t items, std::uint64_t first) {
                     generate_scalars(out, items, seed, montgomery, nullptr, first_index + first);
                   });
}

}  // namespace stagehand::cuda
