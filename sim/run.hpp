#pragma once
// Runs a coroutine on a SimSystem to its end in virtual time.

#include "sim/sim_system.hpp"

#include "device/asio.hpp"

namespace stagehand::sim {

// Spawns `program` on the system's io_context and runs the system until nothing is left to do.
// Rethrows the program's exception. Throws std::runtime_error when the system went quiet while
// the program still waited for something that can never happen (a deadlock), or when it passed
// `time_limit_ns` of device time.
void run_to_completion(SimSystem& system, boost::asio::awaitable<void> program,
                       Nanoseconds time_limit_ns = std::numeric_limits<Nanoseconds>::max());

}  // namespace stagehand::sim
