// The CUDA error check shared by host-only and device translation units.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

// Keeps the failing expression and the line, as sppark's CUDA_OK does.
#define SH_CUDA_OK(expression)                                                                         \
  do {                                                                                                 \
    const cudaError_t sh_cuda_status = (expression);                                                   \
    if (sh_cuda_status != cudaSuccess) {                                                               \
      throw std::runtime_error(std::string(#expression) + " failed at " __FILE__ ":" +                \
                               std::to_string(__LINE__) + ": " + cudaGetErrorString(sh_cuda_status)); \
    }                                                                                                  \
  } while (0)

// After a launch: configuration errors show up here, faults only at the next synchronising call.
#define SH_CUDA_LAUNCHED() SH_CUDA_OK(cudaGetLastError())

namespace stagehand::cuda {

// Blocks of `Kernel` with `threads` threads each that the current GPU holds at once (one wave),
// asked once per GPU and kernel.
template <auto Kernel>
unsigned resident_blocks(unsigned threads) {
  static std::mutex mutex;
  static std::map<int, unsigned> per_device;
  int device = 0;
  SH_CUDA_OK(cudaGetDevice(&device));
  const std::lock_guard lock(mutex);
  auto found = per_device.find(device);
  if (found != per_device.end()) return found->second;
  int per_sm = 0, sms = 0;
  SH_CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, static_cast<int>(threads), 0));
  SH_CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const unsigned blocks = static_cast<unsigned>(std::max(1, per_sm) * std::max(1, sms));
  per_device.emplace(device, blocks);
  return blocks;
}

}  // namespace stagehand::cuda
