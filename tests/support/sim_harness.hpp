#pragma once
// A simulated machine for tests: a SimSystem with one device of a named model, and a way to run
// a coroutine against it to its end.

#include "sim/device_model.hpp"
#include "sim/run.hpp"
#include "sim/sim_device.hpp"
#include "sim/sim_system.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

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

using LaunchesOver = std::function<std::vector<KernelLaunch>(const std::vector<DevicePointer>&)>;

// Each buffer goes up to the harness's device, the launches `launches` makes over their device
// pointers run in order on one stream, every buffer comes back and the device memory is freed.
// The caller checks the race checker's verdict (harness.device.check()).
inline void run_over_buffers(SimHarness& harness, const std::vector<std::vector<std::byte>*>& buffers,
                             const LaunchesOver& launches) {
  const auto range = [](std::vector<std::byte>& bytes) {
    return HostRange{reinterpret_cast<std::uintptr_t>(bytes.data()), bytes.size()};
  };
  harness.run([&](SimHarness& h) -> boost::asio::awaitable<void> {
    auto& device = h.device;
    auto stream = device.create_stream();
    std::vector<DevicePointer> pointers;
    for (auto* buffer : buffers) {
      pointers.push_back(co_await device.allocate(buffer->size()));
      co_await device.copy_to_device(pointers.back(), range(*buffer), stream);
    }
    for (const auto& launch : launches(pointers)) device.launch(launch, stream);
    for (std::size_t i = 0; i < buffers.size(); ++i)
      co_await device.copy_to_host(range(*buffers[i]), pointers[i], stream);
    co_await device.synchronize_stream(stream);
    for (auto pointer : pointers) co_await device.free(pointer);
    device.destroy_stream(stream);
  });
}

}  // namespace stagehand::testing
