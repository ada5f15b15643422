#pragma once
// Completion: a move-only, type-erased Asio completion handler with signature
// void(std::exception_ptr). A backend stores one while a device operation is in flight and calls
// complete() when it has finished (from the simulator's event loop or a CUDA callback thread);
// the waiting coroutine resumes on its own executor and rethrows the error, if any.

#include "device/asio.hpp"

#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_set>
#include <utility>

namespace stagehand {

namespace detail {
struct CompletionState {
  virtual ~CompletionState() = default;
  virtual void post(std::exception_ptr error) = 0;
  // Destroys the handler without calling it; a later post() does nothing.
  virtual void abandon() = 0;
};

// The Completions of one execution context (the io_context) that are alive and have not fired.
// A program that deadlocks leaves coroutines suspended for good, each owned by the handler in
// its Completion, and those Completions sit in wait lists inside the suspended frames: a cycle
// that nothing frees. abandon_pending_completions() breaks it.
class PendingCompletions : public asio::execution_context::service {
 public:
  static inline asio::execution_context::id id;
  explicit PendingCompletions(asio::execution_context& context) : asio::execution_context::service(context) {}

  void add(CompletionState* state) {
    std::lock_guard lock(mutex_);
    pending_.insert(state);
  }
  void remove(CompletionState* state) {
    std::lock_guard lock(mutex_);
    pending_.erase(state);
  }
  // One at a time: a handler's destruction may destroy other Completions (which then leave the
  // set). Destroying a coroutine's handler posts the destruction of its frames to its executor
  // (Asio unwinds coroutine stacks through the executor); no coroutine runs here.
  std::size_t abandon_all() {
    std::size_t count = 0;
    for (;;) {
      CompletionState* state = nullptr;
      {
        std::lock_guard lock(mutex_);
        if (pending_.empty()) return count;
        state = *pending_.begin();
        pending_.erase(pending_.begin());
      }
      state->abandon();
      ++count;
    }
  }

 private:
  void shutdown() override {}
  std::mutex mutex_;
  std::unordered_set<CompletionState*> pending_;
};
}  // namespace detail

// Destroys, without calling them, the handlers of every Completion of `context` that has not
// fired: the coroutines waiting on them never resume, and their frames are destroyed by the
// handlers that this posts (run the context's ready handlers afterwards, e.g. io_context::poll).
// Frames destroyed that way may destroy further Completions; those are abandoned too. Only for a
// program that can never go on (a deadlock, a simulation past its time limit). Returns how many
// were abandoned.
inline std::size_t abandon_pending_completions(asio::execution_context& context) {
  if (!asio::has_service<detail::PendingCompletions>(context)) return 0;
  return asio::use_service<detail::PendingCompletions>(context).abandon_all();
}

class Completion {
 public:
  Completion() = default;
  template <class Handler>
  explicit Completion(Handler&& handler)
      : impl_(std::make_unique<Holder<std::decay_t<Handler>>>(std::forward<Handler>(handler))) {}

  explicit operator bool() const { return impl_ != nullptr; }

  // Posts the handler to its executor; a Completion completes once. One whose handler was
  // abandoned (abandon_pending_completions) completes into nothing.
  void complete(std::exception_ptr error = nullptr) {
    auto impl = std::move(impl_);
    impl->post(std::move(error));
  }

 private:
  template <class Handler>
  struct Holder final : detail::CompletionState {
    explicit Holder(Handler&& h)
        : handler(std::move(h)),
          pending(&asio::use_service<detail::PendingCompletions>(
              asio::query(asio::get_associated_executor(*handler), asio::execution::context))) {
      pending->add(this);
    }
    ~Holder() override {
      if (handler) pending->remove(this);
    }
    void post(std::exception_ptr error) override {
      if (!handler) return;
      pending->remove(this);
      auto executor = asio::get_associated_executor(*handler);
      asio::post(executor, [h = std::move(*handler), error]() mutable { h(error); });
      handler.reset();
    }
    void abandon() override { handler.reset(); }
    std::optional<Handler> handler;
    detail::PendingCompletions* pending;
  };
  std::unique_ptr<detail::CompletionState> impl_;
};

// Suspends the calling coroutine until the Completion handed to `register_completion` completes.
template <class Register>
asio::awaitable<void> await_completion(Register&& register_completion) {
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(std::exception_ptr)>(
      [reg = std::forward<Register>(register_completion)](auto handler) mutable {
        reg(Completion(std::move(handler)));
      },
      asio::use_awaitable);
}

}  // namespace stagehand
