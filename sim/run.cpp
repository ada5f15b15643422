#include "sim/run.hpp"

#include "device/format.hpp"

#include "device/asio.hpp"
#include <fmt/format.h>

#include <stdexcept>

namespace stagehand::sim {

void run_to_completion(SimSystem& system, boost::asio::awaitable<void> program, Nanoseconds time_limit_ns) {
  bool finished = false;
  std::exception_ptr failure;
  boost::asio::co_spawn(system.io(), std::move(program), [&](std::exception_ptr error) {
    finished = true;
    failure = error;
  });
  bool quiet = system.run(time_limit_ns);
  if (failure) std::rethrow_exception(failure);
  if (!quiet) {
    throw std::runtime_error(fmt::format("simulation passed its time limit of {} without finishing", format_duration(time_limit_ns)));
  }
  if (!finished) {
    throw std::runtime_error(fmt::format("deadlock: the program still waits at {} but nothing is left to happen",
                                         format_duration(system.now())));
  }
}

}  // namespace stagehand::sim
