// DeviceBuffer: the one owner of a cudaMalloc'd block outside the Device interface, for the kernel
// benchmark and the GPU checks (the device backend owns its memory through CudaDevice).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "device/types.hpp"
#include "util/cuda_check.hpp"

namespace stagehand::cuda {

class DeviceBuffer {
 public:
  // The byte a fresh buffer holds everywhere: 0xff is no canonical field element and no encoded
  // point, so a byte a kernel should have written and did not fails every comparison.
  static constexpr int kPoison = 0xff;

  // At least 16 bytes are allocated, so that an empty buffer still has a distinct, aligned address.
  // The poison is in place before the constructor returns, ordered before work on any stream.
  explicit DeviceBuffer(std::uint64_t size) : pointer(allocate(size)), bytes(size) {
    try {
      fill(kPoison);
    } catch (...) {
      cudaFree(pointer);
      throw;
    }
  }
  ~DeviceBuffer() { cudaFree(pointer); }  // a destructor must not throw; a sticky error shows at the next call
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  std::uint8_t* at(std::uint64_t offset) const { return static_cast<std::uint8_t*>(pointer) + offset; }
  // The range [offset, offset + size) as a launch's buffer.
  BufferUse use(std::uint64_t offset, std::uint64_t size) const {
    return BufferUse{DevicePointer{reinterpret_cast<std::uint64_t>(pointer) + offset}, size};
  }

  // Synchronised: cudaMemset may return before the device is done, and timed launches run on
  // non-blocking streams that do not order after it.
  void fill(int byte) {
    STAGEHAND_CUDA_CHECK(cudaMemset(pointer, byte, bytes));
    STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
  }

  template <class T>
  void upload(const std::vector<T>& values, std::uint64_t offset = 0) {
    STAGEHAND_CUDA_CHECK(cudaMemcpy(at(offset), values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  // The first `count` values, after the device has finished everything queued.
  template <class T>
  std::vector<T> download(std::uint64_t count) const {
    STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> values(count);
    STAGEHAND_CUDA_CHECK(cudaMemcpy(values.data(), pointer, count * sizeof(T), cudaMemcpyDeviceToHost));
    return values;
  }
  std::vector<std::uint8_t> download() const { return download<std::uint8_t>(bytes); }

  // Constant after construction, so that the owner never loses its block.
  void* const pointer;
  const std::uint64_t bytes;

 private:
  static void* allocate(std::uint64_t size) {
    void* block = nullptr;
    STAGEHAND_CUDA_CHECK(cudaMalloc(&block, std::max<std::uint64_t>(size, 16)));
    return block;
  }
};

}  // namespace stagehand::cuda
