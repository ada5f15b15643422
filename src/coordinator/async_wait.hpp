#pragma once
// Waiting without blocking a thread: coroutines park a Completion here and are resumed, on their
// own executor, when someone notifies them.

#include "device/completion.hpp"

#include <deque>
#include <memory>

namespace stagehand {

// A list of parked coroutines. Each `wait()` returns once a later `notify_all()` (or the
// `notify_one()` that picks it) has run.
class AsyncWaitList {
 public:
  asio::awaitable<void> wait() {
    co_await await_completion([this](Completion completion) { waiters_.push_back(std::move(completion)); });
  }
  void notify_all() {
    auto waiters = std::move(waiters_);
    waiters_.clear();
    for (auto& waiter : waiters) waiter.complete();
  }
  bool empty() const { return waiters_.empty(); }
  std::size_t size() const { return waiters_.size(); }

 private:
  std::deque<Completion> waiters_;
};

}  // namespace stagehand
