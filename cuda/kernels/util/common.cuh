// Shared helpers for the kernels: error checking, vector loads, launch arithmetic.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "ff/field.cuh"
#include "util/common_host.hpp"

namespace stagehand::cuda {

// 16-byte loads and stores: an Fr is two of them, an Fq three, a bucket twelve.
template <class F>
__device__ __forceinline__ F load(const F* pointer) {
  static_assert(sizeof(F) % 16 == 0);
  F value;
  const uint4* source = reinterpret_cast<const uint4*>(pointer);
  uint4* target = reinterpret_cast<uint4*>(&value);
#pragma unroll
  for (int i = 0; i < int(sizeof(F) / 16); ++i) target[i] = source[i];
  return value;
}
template <class F>
__device__ __forceinline__ void store(F* pointer, const F& value) {
  uint4* target = reinterpret_cast<uint4*>(pointer);
  const uint4* source = reinterpret_cast<const uint4*>(&value);
#pragma unroll
  for (int i = 0; i < int(sizeof(F) / 16); ++i) target[i] = source[i];
}

inline unsigned blocks_for(std::uint64_t count, unsigned threads) {
  return static_cast<unsigned>((count + threads - 1) / threads);
}

}  // namespace stagehand::cuda
