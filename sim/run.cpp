#include "sim/run.hpp"

#include "device/format.hpp"

#include "device/asio.hpp"
#include "device/completion.hpp"
#include <fmt/format.h>

#include <stdexcept>

namespace stagehand::sim {
namespace {

// The program can never go on (a deadlock, or the time limit): its coroutines are suspended for
// good, each owned by the handler in a Completion that sits in a wait list inside another
// suspended frame, a cycle nothing would free. Abandon every pending Completion and run the
// handlers that destroy the frames; destroying frames may let go of more (a frame's wait list),
// hence the rounds. The coordinator's frames share what they refer to (Run::keepalive), so the
// order in which they go does not matter.
void release_suspended_coroutines(SimSystem& system) {
  for (int round = 0; round < 64; ++round) {
    if (abandon_pending_completions(system.io()) == 0) return;
    system.io().restart();
    system.io().poll();
  }
}

}  // namespace

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
    release_suspended_coroutines(system);
    throw std::runtime_error(
        fmt::format("simulation passed its time limit of {} without finishing", format_duration(time_limit_ns)));
  }
  if (!finished) {
    auto message = fmt::format("deadlock: the program still waits at {} but nothing is left to happen",
                               format_duration(system.now()));
    release_suspended_coroutines(system);
    throw std::runtime_error(message);
  }
}

}  // namespace stagehand::sim
