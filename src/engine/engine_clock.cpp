#include "engine/engine_clock.hpp"

namespace stagehand::engine {

namespace {
class SteadyClock final : public EngineClock {
 public:
  time_point now() const override { return std::chrono::steady_clock::now(); }
  bool wait_until(std::condition_variable& changed, std::unique_lock<std::mutex>& lock, time_point until,
                  const std::function<bool()>& ready) override {
    return changed.wait_until(lock, until, ready);
  }
};
}  // namespace

std::shared_ptr<EngineClock> steady_engine_clock() { return std::make_shared<SteadyClock>(); }

}  // namespace stagehand::engine
