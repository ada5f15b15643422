// The one CUDA error check, for the device backend, the kernels' host code, the tests and the
// benchmarks: STAGEHAND_CUDA_CHECK(call) throws a DeviceError that names the call, CUDA's words for
// the error, the file and the line. A caller that needs another behaviour (a destructor that must
// not throw, a program that ends with a message) calls cuda_error() or catches, rather than
// checking in a second way.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <exception>

#include "device/types.hpp"

namespace stagehand::cuda {

// The DeviceError for a failed call: its kind (device_lost where the error spends the context),
// the call, CUDA's words for the error, and where it was made.
DeviceError cuda_error(cudaError_t status, const char* call, const char* file, int line);

// Throws cuda_error(...) for a failed CUDA call, after clearing a non-sticky error so that the
// next call does not see it again.
void check(cudaError_t status, const char* call, const char* file, int line);

// For a standalone program that a CUDA error ends: runs `body`, and where it throws prints the
// error (file, line and call included) and returns 1 as the program's exit status.
template <class Body>
int exit_status_of(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
}

}  // namespace stagehand::cuda

#define STAGEHAND_CUDA_CHECK(call) ::stagehand::cuda::check((call), #call, __FILE__, __LINE__)
