#pragma once
// How fast the simulator runs: simulated device operations per wall-clock second, timing mode.

#include <cstdint>
#include <iosfwd>

namespace stagehand::sim {

struct SimulatorBenchmarkOptions {
  std::uint64_t operations = 2'000'000;  // device operations to simulate per configuration
  int workers = 4;                       // coroutines, each with its own stream
};

// Prints a table; returns 0.
int run_simulator_benchmark(std::ostream& out, const SimulatorBenchmarkOptions& options);

}  // namespace stagehand::sim
