#pragma once
// The time the engine's queue goes by: deadlines, promotion with age and a run's linger. It is
// the steady clock unless the engine's owner gives another (EngineHooks::clock): a test gives
// one it advances, so that a deadline or the linger passes when the test says and not when the
// machine has got that far. A proof's timings, the status's uptime and the traces always use
// the steady clock.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>

namespace stagehand::engine {

class EngineClock {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  virtual ~EngineClock() = default;
  virtual time_point now() const = 0;
  // Waits on `changed` (its mutex held by `lock`) until `ready()` or until this clock reaches
  // `until`; returns ready(). Whoever makes `ready()` true notifies `changed` under the lock.
  virtual bool wait_until(std::condition_variable& changed, std::unique_lock<std::mutex>& lock, time_point until,
                          const std::function<bool()>& ready) = 0;
};

// The steady clock's EngineClock (the default).
std::shared_ptr<EngineClock> steady_engine_clock();

}  // namespace stagehand::engine
