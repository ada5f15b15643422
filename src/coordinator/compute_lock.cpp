#include "coordinator/compute_lock.hpp"

#include "util/assert.hpp"

#include <algorithm>
#include <stdexcept>

namespace stagehand {

ComputeLock::Ticket ComputeLock::take_ticket() {
  auto ticket = next_ticket_++;
  queue_.push_back(ticket);
  grant_next();
  return ticket;
}

asio::awaitable<void> ComputeLock::acquire(Ticket ticket) {
  if (std::find(queue_.begin(), queue_.end(), ticket) == queue_.end() && !is_holder(ticket)) {
    throw std::logic_error("ComputeLock::acquire: ticket not in the queue");
  }
  while (!is_holder(ticket)) co_await waiters_.wait();
}

void ComputeLock::release(Ticket ticket) {
  STAGEHAND_ASSERT(is_holder(ticket), "ticket {} releases a lock held by {}", ticket, holder_ ? *holder_ : 0);
  holder_.reset();
  grant_next();
  if (!holder_ && on_change_) on_change_();
}

void ComputeLock::abandon(Ticket ticket) {
  if (is_holder(ticket)) {
    release(ticket);
    return;
  }
  const auto erased = std::erase(queue_, ticket);
  STAGEHAND_ASSERT(erased == 1, "ticket {} abandons a lock it is not waiting for", ticket);
  if (on_change_) on_change_();
}

void ComputeLock::grant_next() {
  if (holder_ || queue_.empty()) return;
  // FIFO: the head of the queue; unfair: whichever waiter `pick_` chooses.
  auto index = pick_ ? pick_(queue_.size()) : 0;
  STAGEHAND_ASSERT(index < queue_.size(), "the lock's grant picked waiter {} of {}", index, queue_.size());
  // Tickets wait in the order they were taken: FIFO grants are lock order.
  STAGEHAND_ASSERT(pick_ || std::is_sorted(queue_.begin(), queue_.end()), "the lock's queue is out of ticket order");
  holder_ = queue_[index];
  queue_.erase(queue_.begin() + static_cast<long>(index));
  if (on_change_) on_change_();
  waiters_.notify_all();
}

}  // namespace stagehand
