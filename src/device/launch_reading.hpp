#pragma once
// Reading a KernelLaunch back into a typed launch (groth16_, partition_ and setup_launches.cpp): the refusal of a
// launch short of what its kernel takes, naming the kernel and the layout it expects, and the
// optional scratch, an extra last write (kernel_abi.hpp).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "device/types.hpp"

namespace stagehand::kernel::detail {

inline void require(const KernelLaunch& launch, std::size_t arguments, std::size_t reads, std::size_t writes,
                    const char* layout) {
  if (launch.arguments.size() < arguments || launch.reads.size() < reads || launch.writes.size() < writes) {
    throw std::invalid_argument("kernel " + launch.name + ": expects " + layout + "; got " +
                                std::to_string(launch.arguments.size()) + " arguments, " +
                                std::to_string(launch.reads.size()) + " reads and " +
                                std::to_string(launch.writes.size()) + " writes");
  }
}

inline std::uint64_t argument_or_zero(const KernelLaunch& launch, std::size_t index) {
  return index < launch.arguments.size() ? launch.arguments[index] : 0;
}

// The scratch: an extra last write after the kernel's `named` writes.
inline std::optional<BufferUse> scratch_after(const KernelLaunch& launch, std::size_t named) {
  if (launch.writes.size() <= named) return std::nullopt;
  return launch.writes.back();
}

inline void add_scratch(KernelLaunch& launch, const std::optional<BufferUse>& scratch) {
  if (scratch) launch.writes.push_back(*scratch);
}

}  // namespace stagehand::kernel::detail
