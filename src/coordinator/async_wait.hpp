#pragma once
// Waiting without blocking a thread: coroutines park a Completion here and are resumed, on their
// own executor, when someone notifies them.

#include "device/completion.hpp"

#include <deque>
#include <exception>
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

// Steps that must not interleave, such as a key's host memory pinned once for every GPU while
// each GPU's set-up asks for it at once: run() waits while another step runs, then runs its own.
// The step's error reaches its caller after the next waiter is let in.
class OneAtATime {
 public:
  template <class Step>
  asio::awaitable<void> run(Step step) {
    while (busy_) co_await done_.wait();
    busy_ = true;
    std::exception_ptr failure;
    try {
      co_await step();
    } catch (...) {
      failure = std::current_exception();
    }
    busy_ = false;
    done_.notify_all();
    if (failure) std::rethrow_exception(failure);
  }

 private:
  bool busy_ = false;
  AsyncWaitList done_;
};

}  // namespace stagehand
