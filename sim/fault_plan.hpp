#pragma once
// Faults the simulator injects on demand, so failure paths run in tests as often as good ones.

#include "device/types.hpp"

#include <cstdint>
#include <string>

namespace stagehand::sim {

struct FaultPlan {
  // The GPU (its index in the run, from 0) these faults are injected into. -1: every GPU.
  int device = -1;
  // The Nth device allocation (synchronous and stream-ordered counted together, from 1) fails
  // with out-of-memory. 0: never.
  std::uint64_t fail_allocation_number = 0;
  // The Nth host pinning (register_host or allocate_pinned_host, from 1) fails. 0: never.
  std::uint64_t fail_host_pin_number = 0;
  // The Nth launch of the kernel named here (from 1) fails when it runs, and loses the device with
  // it, as a faulting kernel loses a CUDA context. Empty name: never.
  std::string fail_kernel_name;
  std::uint64_t fail_kernel_occurrence = 1;
  // The device is lost at this time: in-flight work is dropped and every call fails. <0: never.
  Nanoseconds lose_device_at_ns = -1;
  // From this time on the PCIe link runs this many times slower. 1: never.
  double pcie_slowdown_factor = 1.0;
  Nanoseconds pcie_slowdown_from_ns = 0;

  bool applies_to(int index) const { return device < 0 || device == index; }
  bool any() const {
    return fail_allocation_number != 0 || fail_host_pin_number != 0 || !fail_kernel_name.empty() ||
           lose_device_at_ns >= 0 || pcie_slowdown_factor != 1.0;
  }
};

}  // namespace stagehand::sim
