#pragma once
// Completion: a move-only, type-erased Asio completion handler with signature
// void(std::exception_ptr). A backend stores one while a device operation is in flight and calls
// complete() when it has finished (from the simulator's event loop or a CUDA callback thread);
// the waiting coroutine resumes on its own executor and rethrows the error, if any.

#include "device/asio.hpp"

#include <exception>
#include <memory>
#include <utility>

namespace stagehand {
class Completion {
 public:
  Completion() = default;
  template <class Handler>
  explicit Completion(Handler&& handler)
      : impl_(std::make_unique<Holder<std::decay_t<Handler>>>(std::forward<Handler>(handler))) {}

  explicit operator bool() const { return impl_ != nullptr; }

  // Posts the handler to its executor; a Completion completes once.
  void complete(std::exception_ptr error = nullptr) {
    auto impl = std::move(impl_);
    impl->post(std::move(error));
  }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual void post(std::exception_ptr error) = 0;
  };
  template <class Handler>
  struct Holder final : Base {
    explicit Holder(Handler&& h) : handler(std::move(h)) {}
    void post(std::exception_ptr error) override {
      auto executor = asio::get_associated_executor(handler);
      asio::post(executor, [h = std::move(handler), error]() mutable { h(error); });
    }
    Handler handler;
  };
  std::unique_ptr<Base> impl_;
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
