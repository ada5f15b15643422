// The CUDA error check shared by host-only and device translation units.
#pragma once

#include <cuda_runtime.h>

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
