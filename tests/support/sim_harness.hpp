#pragma once
// A simulated machine for tests: a SimSystem with one device of a named model, and a way to run
// a coroutine against it to its end.

#include "sim/device_model.hpp"
#include "sim/run.hpp"
#include "sim/sim_device.hpp"
#include "sim/sim_system.hpp"

#include <functional>
#include <string>

namespace stagehand::testing {

struct SimHarness {
  explicit SimHarness(const std::string& model, sim::SimOptions options = {}, FaultPlan faults = {})
      : system(options),
        device(system.add_device(sim::load_device_model(sim::find_device_model(model)), std::move(faults))) {}

  void run(const std::function<boost::asio::awaitable<void>(SimHarness&)>& program) {
    sim::run_to_completion(system, program(*this));
  }

  sim::SimSystem system;
  sim::SimDevice& device;
};

}  // namespace stagehand::testing
