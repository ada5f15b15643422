// Reading a KernelLaunch in a launcher: its buffers and arguments, checked, with errors that name
// the kernel (std::invalid_argument, which CudaDevice::launch reports as an invalid value).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "device/kernel_abi.hpp"
#include "device/types.hpp"

namespace stagehand::cuda {

[[noreturn]] inline void reject(const KernelLaunch& launch, const std::string& why) {
  throw std::invalid_argument("kernel " + launch.name + ": " + why);
}

// A launcher of one curve's instance refuses a launch over another: the launch's bytes are laid
// out for that curve (CudaDevice looks launchers up by (name, curve), so only a direct call can).
inline void need_curve(const KernelLaunch& launch, kernel::Curve curve) {
  if (launch.curve != curve) {
    reject(launch, "a launch over " + std::string(kernel::curve_name(launch.curve)) + " given to " +
                       std::string(kernel::curve_name(curve)) + "'s launcher");
  }
}

inline void need(const KernelLaunch& launch, std::size_t arguments, std::size_t reads, std::size_t writes) {
  if (launch.arguments.size() < arguments || launch.reads.size() < reads || launch.writes.size() < writes) {
    reject(launch, "expects at least " + std::to_string(arguments) + " arguments, " + std::to_string(reads) +
                       " reads and " + std::to_string(writes) + " writes");
  }
}

// The device address of a buffer that must hold at least `bytes`.
inline void* address(const KernelLaunch& launch, const BufferUse& use, std::uint64_t bytes) {
  if (!use.pointer) reject(launch, "null buffer");
  if (use.bytes < bytes) {
    reject(launch, "buffer of " + std::to_string(use.bytes) + " bytes, needs " + std::to_string(bytes));
  }
  return reinterpret_cast<void*>(use.pointer.address);
}

}  // namespace stagehand::cuda
