#pragma once
// FaultPlan: the one vocabulary of injected faults, read from a configuration's or a fixture's
// [faults] table (config/faults_table.hpp) and injected on either backend, so that failure paths
// run as often as good ones.
//
// Two injectors honour it. The simulator's SimDevice models some faults inside the device (a
// kernel that faults loses the device when it ends, a loss at a time drops the work in flight, a
// slower link stretches every copy); FaultyDevice (device/faulty_device.hpp) wraps any device,
// CudaDevice included, and injects the rest at the Device interface. On the simulator each field
// goes to the injector that models it (simulated_part, adaptor_part); on a GPU FaultyDevice injects
// every field but the simulator-only ones, which the GPU backend refuses (simulator_only).

#include "device/types.hpp"

#include <cstdint>
#include <string>

namespace stagehand {

struct FaultPlan {
  // The GPU (its index in the run, from 0) these faults are injected into. -1: every GPU.
  int device = -1;

  // Any backend, either injector. The Nth device allocation (plain and stream-ordered counted
  // together, from 1) fails with out-of-memory, and nothing is allocated for it. 0: never.
  std::uint64_t fail_allocation_number = 0;
  // Any backend, either injector. The Nth host pinning (register_host or allocate_pinned_host,
  // from 1) fails. 0: never.
  std::uint64_t fail_host_pin_number = 0;
  // Any backend, either injector. The Nth launch (from 1) of the kernel named here faults and the
  // device is lost with it, as a faulting kernel loses a CUDA context. Empty name: never.
  std::string fail_kernel_name;
  std::uint64_t fail_kernel_occurrence = 1;
  // Any backend, either injector. The device is lost at this time of its clock: every later call
  // that does work fails with device_lost. <0: never.
  Nanoseconds lose_device_at_ns = -1;

  // Any backend, FaultyDevice only. The device is lost at its Nth kernel launch (from 1), which
  // fails: a point in the work that does not move with how long set-up took. 0: never.
  std::uint64_t lose_device_at_launch = 0;
  // Any backend, FaultyDevice only. Each stream-ordered allocation (a job's working memory, never
  // the long-lived plain ones) fails with this probability, drawn from `seed`.
  double allocation_failure_probability = 0.0;
  // Any backend, FaultyDevice only. A kernel error that fails one job while its device goes on (no
  // GPU fails so; it is there for the paths that must handle a job's own failure): the Nth launch
  // of the kernel named here, or each launch with `kernel_error_probability` (drawn from `seed`),
  // fails every wait on its stream's work until the stream is synchronised. Empty name, 0: never.
  std::string kernel_error_name;
  std::uint64_t kernel_error_occurrence = 1;
  double kernel_error_probability = 0.0;
  std::uint64_t seed = 1;
  // Any backend, FaultyDevice only. Each copy issued at or after copy_delay_from_ns waits this
  // long on the host before it is issued (a slow link as the host sees it). 0: never.
  Nanoseconds copy_delay_ns = 0;
  Nanoseconds copy_delay_from_ns = 0;

  // The simulator only: from this time on its PCIe link runs this many times slower. A GPU's link
  // cannot be slowed, so the GPU backend refuses it (copy_delay_ns is the fault any backend has).
  // 1: never.
  double pcie_slowdown_factor = 1.0;
  Nanoseconds pcie_slowdown_from_ns = 0;

  bool operator==(const FaultPlan&) const = default;
  bool applies_to(int index) const { return device < 0 || device == index; }
  // Whether any fault is set (`device` and `seed` only say where and how).
  bool any() const;
  // Whether a field only the simulator can inject is set.
  bool simulator_only() const { return pcie_slowdown_factor != 1.0; }

  // The fields SimDevice injects on the simulator, and those FaultyDevice injects around it there;
  // `device` is kept in both.
  FaultPlan simulated_part() const;
  FaultPlan adaptor_part() const;
};

}  // namespace stagehand
