#include "sim/benchmark.hpp"

#include "device/asio.hpp"
#include "device/kernel_abi.hpp"
#include "sim/run.hpp"
#include "sim/sim_device.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <chrono>
#include <ostream>

namespace stagehand::sim {
namespace {

// One worker: its own stream, uploads and kernels in rounds of eight operations, with the host
// waiting on an event after every round (as a GPU program waits for an MSM batch's buckets),
// and every other round made to follow a neighbour's stream through an event.
asio::awaitable<void> worker(SimDevice& device, HostRange host, std::uint64_t rounds,
                             std::vector<EventHandle>& round_done, int index) {
  auto stream = device.create_stream();
  auto buffer = co_await device.allocate(host.bytes);
  auto done = round_done[static_cast<std::size_t>(index)];
  auto& neighbour = round_done[static_cast<std::size_t>(index + 1) % round_done.size()];
  KernelLaunch kernel{kernel::busy_wait, 20'000, {}, {{buffer, host.bytes}}, {{buffer, host.bytes}}};
  for (std::uint64_t round = 0; round < rounds; ++round) {
    co_await device.copy_to_device(buffer, host, stream);
    device.launch(kernel, stream);
    device.memset_async(buffer, 0, host.bytes, stream);
    device.launch(kernel, stream);
    if (round % 2 == 1) device.stream_wait_event(stream, neighbour);
    device.launch(kernel, stream);
    co_await device.copy_to_host(host, buffer, stream);
    device.record_event(done, stream);
    co_await device.wait_event(done);
  }
  co_await device.free(buffer);
  device.destroy_stream(stream);
}

struct Measured {
  std::uint64_t operations;
  double seconds;
  Nanoseconds simulated_ns;
};

Measured measure(const SimulatorBenchmarkOptions& options, bool keep_trace_events) {
  SimOptions sim_options;
  sim_options.keep_trace_events = keep_trace_events;
  sim_options.duration_jitter = 0.1;
  SimSystem system(sim_options);
  auto& device = system.add_device(load_device_model(find_device_model("h200")));
  constexpr std::uint64_t kOperationsPerRound = 8;
  auto rounds = options.operations / kOperationsPerRound / static_cast<std::uint64_t>(options.workers);
  auto start = std::chrono::steady_clock::now();
  run_to_completion(system, [&]() -> asio::awaitable<void> {
    auto host = co_await device.allocate_pinned_host(1 * kMiB);
    std::vector<EventHandle> round_done;
    for (int i = 0; i < options.workers; ++i) round_done.push_back(device.create_event());
    int finished = 0;
    for (int i = 0; i < options.workers; ++i) {
      asio::co_spawn(system.io(), worker(device, host, rounds, round_done, i), [&](std::exception_ptr error) {
        if (error) std::rethrow_exception(error);
        ++finished;
      });
    }
    while (finished < options.workers) co_await device.sleep_for(kMillisecond);
    for (auto event : round_done) device.destroy_event(event);
    co_await device.free_pinned_host(host);
  }());
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return Measured{device.stats().operations, elapsed.count(), system.now()};
}

}  // namespace

int run_simulator_benchmark(std::ostream& out, const SimulatorBenchmarkOptions& options) {
  fmt::print(out, "Simulator speed, timing mode, H200 model, {} workers each on its own stream\n", options.workers);
  fmt::print(out, "{:<34} {:>12} {:>10} {:>16} {:>14}\n", "configuration", "operations", "wall s", "operations/s",
             "simulated s");
  for (bool keep : {false, true}) {
    auto result = measure(options, keep);
    fmt::print(out, "{:<34} {:>12} {:>10.3f} {:>16.0f} {:>14.3f}\n",
               keep ? "trace kept for export" : "trace hashed only", result.operations, result.seconds,
               static_cast<double>(result.operations) / result.seconds, static_cast<double>(result.simulated_ns) / 1e9);
  }
  return 0;
}

}  // namespace stagehand::sim
