#pragma once
// The compute lock of one GPU: whoever holds it may run kernels. Coroutines wait for it without
// blocking a thread. Grants go in ticket order (FIFO) unless the lock is built unfair, which
// models the plain mutex of the abandoned two-lock design: any waiter may get it next.

#include "coordinator/async_wait.hpp"
#include "device/types.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace stagehand {

class ComputeLock {
 public:
  using Ticket = std::uint64_t;
  // `pick` chooses among the waiting tickets when the lock is unfair (given the count, returns an
  // index); null means FIFO.
  explicit ComputeLock(std::function<std::size_t(std::size_t)> pick = {}) : pick_(std::move(pick)) {}

  // Takes a place in the queue and asks for the lock. A job that pre-stages takes its ticket
  // first, so that the order in which it got memory is the order in which it reaches the GPU.
  Ticket take_ticket();
  // Waits until `ticket` holds the lock.
  asio::awaitable<void> acquire(Ticket ticket);
  void release(Ticket ticket);
  // Leaves the queue without ever holding the lock (a job that failed before its turn).
  void abandon(Ticket ticket);

  std::optional<Ticket> holder() const { return holder_; }
  // Tickets still waiting, in queue order (the holder excluded).
  const std::vector<Ticket>& queue() const { return queue_; }
  bool is_holder(Ticket ticket) const { return holder_ && *holder_ == ticket; }
  // Called whenever the holder changes (the VRAM budget re-checks its waiters then).
  void on_holder_change(std::function<void()> callback) { on_change_ = std::move(callback); }

 private:
  void grant_next();

  std::function<std::size_t(std::size_t)> pick_;
  std::function<void()> on_change_;
  Ticket next_ticket_ = 1;
  std::optional<Ticket> holder_;
  std::vector<Ticket> queue_;  // waiting, in ticket order
  AsyncWaitList waiters_;
};

}  // namespace stagehand
