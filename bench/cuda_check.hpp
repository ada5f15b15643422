// CHECK(call) for the standalone GPU benchmarks in bench/ (built with nvcc alone): a CUDA error
// prints the file, line and call, and ends the program.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                                  \
  do {                                                                                               \
    cudaError_t error_ = (call);                                                                     \
    if (error_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(error_)); \
      std::exit(1);                                                                                  \
    }                                                                                                \
  } while (0)
