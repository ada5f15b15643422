// What every GPU check driver shares: whether a GPU is there to check on, and the tally of
// passed and failed checks. Header-only, so that the nvcc-only scripts build any one set of
// checks without the others.
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace stagehand::cuda::check_support {

// cudaGetDeviceCount fails or returns 0: the caller skips (exit 77 for ctest).
inline bool gpu_present(std::string& why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    why = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(status);
    return false;
  }
  if (count == 0) {
    why = "no CUDA device";
    return false;
  }
  return true;
}

struct Result {
  int passed = 0;
  int failed = 0;
  void add(bool ok) { ok ? ++passed : ++failed; }
  void add(const Result& other) {
    passed += other.passed;
    failed += other.failed;
  }
};

}  // namespace stagehand::cuda::check_support
