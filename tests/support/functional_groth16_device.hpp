#pragma once
// A functional simulated H200 with the Groth16 program's kernels registered as host functions (for
// the tests that link stagehand_sim_kernels): its SimSystem and its one device, for run_functional.

#include "sim/device_model.hpp"
#include "sim/kernels/functional_kernels.hpp"
#include "sim/sim_device.hpp"
#include "sim/sim_system.hpp"

namespace stagehand::testing {

struct FunctionalGroth16Device {
  static sim::SimOptions options() {
    sim::SimOptions options;
    options.functional = true;
    options.keep_trace_events = false;
    return options;
  }
  sim::SimSystem system{options()};
  sim::SimDevice& device{system.add_device(sim::load_device_model(sim::find_device_model("h200")))};
  FunctionalGroth16Device() { sim::register_functional_kernels(system); }
};

}  // namespace stagehand::testing
