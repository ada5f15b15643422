#include "coordinator/compute_lock.hpp"

#include <algorithm>
#include <cassert>
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
  assert(is_holder(ticket));
  holder_.reset();
  grant_next();
  if (!holder_ && on_change_) on_change_();
}

void ComputeLock::abandon(Ticket ticket) {
  if (is_holder(ticket)) {
    release(ticket);
    return;
  }
  std::erase(queue_, ticket);
  if (on_change_) on_change_();
}

void ComputeLock::grant_next() {
  if (holder_ || queue_.empty()) return;
  // FIFO: the head of the queue; unfair: whichever waiter `pick_` chooses.
  auto index = pick_ ? pick_(queue_.size()) : 0;
  holder_ = queue_[index];
  queue_.erase(queue_.begin() + static_cast<long>(index));
  if (on_change_) on_change_();
  waiters_.notify_all();
}

}  // namespace stagehand
