// Host-side helpers shared by the kernels' translation units.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "util/cuda_check.hpp"

namespace stagehand::cuda {

// Blocks of `Kernel` with `threads` threads each that the current GPU holds at once (one wave),
// asked once per GPU and kernel.
template <auto Kernel>
unsigned resident_blocks(unsigned threads) {
  static std::mutex mutex;
  static std::map<int, unsigned> per_device;
  int device = 0;
  STAGEHAND_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard lock(mutex);
  auto found = per_device.find(device);
  if (found != per_device.end()) return found->second;
  int per_sm = 0, sms = 0;
  STAGEHAND_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, static_cast<int>(threads), 0));
  STAGEHAND_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const unsigned blocks = static_cast<unsigned>(std::max(1, per_sm) * std::max(1, sms));
  per_device.emplace(device, blocks);
  return blocks;
}

}  // namespace stagehand::cuda
