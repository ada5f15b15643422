#pragma once
// The stand-in kernel every backend provides: it spins for `duration` (work_units nanoseconds).
// The Device contract tests and scripted scenarios use it where any kernel of known length will do.

#include "device/types.hpp"
#include "device/kernel_abi.hpp"

namespace stagehand {

inline KernelLaunch busy_wait(Nanoseconds duration) {
  KernelLaunch launch;
  launch.name = kernel::busy_wait;
  launch.work_units = static_cast<std::uint64_t>(duration);
  return launch;
}

// The same kernel faulting at its end, as a kernel that touches memory it must not does: a failed
// kernel on every backend (the GPU's trap, the simulator's injected fault).
inline KernelLaunch faulting_busy_wait(Nanoseconds duration) {
  auto launch = busy_wait(duration);
  launch.arguments = {1};
  return launch;
}

}  // namespace stagehand
