#include "coordinator/vram_budget.hpp"

#include "device/format.hpp"
#include "device/errors.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace stagehand {

// ---- Reservation ----

Reservation& Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    if (budget_ && bytes_ > 0) budget_->give_back(ticket_, bytes_);
    budget_ = std::exchange(other.budget_, nullptr);
    ticket_ = other.ticket_;
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

Reservation::~Reservation() {
  if (budget_ && bytes_ > 0) budget_->give_back(ticket_, bytes_);
}

void Reservation::release(Bytes bytes) {
  STAGEHAND_ASSERT(bytes <= bytes_, "releasing {} bytes of a reservation that holds {}", bytes, bytes_);
  bytes_ -= bytes;
  budget_->give_back(ticket_, bytes);
}

void Reservation::release_in_stream_order(Bytes bytes, StreamHandle stream) {
  STAGEHAND_ASSERT(bytes <= bytes_, "releasing {} bytes of a reservation that holds {}", bytes, bytes_);
  if (!budget_->rules_.release_after_free_event) {
    release(bytes);
    return;
  }
  bytes_ -= bytes;
  auto& job = budget_->jobs_.at(ticket_);
  STAGEHAND_ASSERT(job.reserved_bytes >= bytes && budget_->reserved_bytes_ >= bytes,
                   "job {} frees {} bytes in stream order with {} reserved ({} by the budget)", ticket_, bytes,
                   job.reserved_bytes, budget_->reserved_bytes_);
  job.reserved_bytes -= bytes;
  budget_->reserved_bytes_ -= bytes;
  budget_->pending_bytes_ += bytes;
  budget_->watch_free(bytes, stream);
}

Reservation Reservation::split(Bytes bytes) {
  STAGEHAND_ASSERT(bytes <= bytes_, "splitting {} bytes off a reservation that holds {}", bytes, bytes_);
  bytes_ -= bytes;
  return Reservation(budget_, ticket_, bytes);
}

// ---- VramBudget ----

VramBudget::VramBudget(Device& device, ComputeLock& lock, Bytes capacity_bytes, VramBudgetRules rules,
                       asio::any_io_executor executor)
    : device_(device),
      lock_(lock),
      executor_(executor ? std::move(executor) : device.executor()),
      rules_(rules),
      configured_capacity_bytes_(capacity_bytes),
      capacity_bytes_(capacity_bytes) {
  lock_.on_holder_change([this] { serve_waiters(); });
}

void VramBudget::add_job(ComputeLock::Ticket ticket, Bytes peak_bytes) {
  if (peak_bytes > capacity_bytes_) {
    throw std::runtime_error(
        fmt::format("a partition needs {} of device memory at its peak, but the budget holds only {}",
                    format_bytes(peak_bytes), format_bytes(capacity_bytes_)));
  }
  jobs_[ticket] = Job{peak_bytes, 0};
}

void VramBudget::lower_peak(ComputeLock::Ticket ticket, Bytes peak_bytes) {
  auto& job = jobs_.at(ticket);
  job.peak_bytes = std::min(job.peak_bytes, peak_bytes);
  serve_waiters();
}

void VramBudget::remove_job(ComputeLock::Ticket ticket) {
  auto found = jobs_.find(ticket);
  if (found == jobs_.end()) return;
  STAGEHAND_ASSERT(found->second.reserved_bytes == 0, "job {} leaves the budget still holding {} bytes", ticket,
                   found->second.reserved_bytes);
  jobs_.erase(found);
  serve_waiters();
}

Bytes VramBudget::job_reserved_bytes(ComputeLock::Ticket ticket) const {
  auto found = jobs_.find(ticket);
  return found == jobs_.end() ? 0 : found->second.reserved_bytes;
}

std::size_t VramBudget::lock_position(ComputeLock::Ticket ticket) const {
  if (lock_.is_holder(ticket)) return 0;
  const auto& queue = lock_.queue();
  auto found = std::find(queue.begin(), queue.end(), ticket);
  return found == queue.end() ? queue.size() + 1 : static_cast<std::size_t>(found - queue.begin()) + 1;
}

bool VramBudget::admissible(ComputeLock::Ticket ticket, Bytes bytes) const {
  if (held_bytes() + bytes > capacity_bytes_) return false;
  if (!rules_.admission_protects_lock_holder || lock_.is_holder(ticket)) return true;
  // Room the holder and every job ahead in the lock queue may still need to reach its peak.
  Bytes room_ahead = 0;
  auto room_of = [&](ComputeLock::Ticket other) {
    auto found = jobs_.find(other);
    if (found == jobs_.end()) return Bytes{0};
    return found->second.peak_bytes > found->second.reserved_bytes
               ? found->second.peak_bytes - found->second.reserved_bytes
               : 0;
  };
  if (auto holder = lock_.holder(); holder && *holder != ticket) room_ahead += room_of(*holder);
  for (auto other : lock_.queue()) {
    if (other == ticket) break;
    room_ahead += room_of(other);
  }
  return held_bytes() + bytes + room_ahead <= capacity_bytes_;
}

void VramBudget::grant(ComputeLock::Ticket ticket, Bytes bytes) {
  // Granted only when admitted: never more than the capacity held.
  STAGEHAND_ASSERT(held_bytes() + bytes <= capacity_bytes_, "granting {} bytes with {} held of {}", bytes, held_bytes(),
                   capacity_bytes_);
  jobs_.at(ticket).reserved_bytes += bytes;
  reserved_bytes_ += bytes;
  peak_held_bytes_ = std::max(peak_held_bytes_, held_bytes());
  notify();
}

void VramBudget::give_back(ComputeLock::Ticket ticket, Bytes bytes) {
  auto& job = jobs_.at(ticket);
  STAGEHAND_ASSERT(job.reserved_bytes >= bytes && reserved_bytes_ >= bytes,
                   "job {} gives back {} bytes with {} reserved ({} by the budget)", ticket, bytes, job.reserved_bytes,
                   reserved_bytes_);
  job.reserved_bytes -= bytes;
  reserved_bytes_ -= bytes;
  notify();
  serve_waiters();
}

void VramBudget::finish_pending(Bytes bytes) {
  pending_bytes_ -= std::min(pending_bytes_, bytes);  // after device_lost the debt was forgiven
  notify();
  serve_waiters();
}

std::optional<Reservation> VramBudget::try_reserve(ComputeLock::Ticket ticket, Bytes bytes) {
  if (!jobs_.contains(ticket)) throw std::logic_error("VramBudget::try_reserve: job not added");
  reconcile();
  // Waiters ahead in lock order go first.
  for (const auto& waiter : waiters_) {
    if (lock_position(waiter.ticket) < lock_position(ticket)) return std::nullopt;
  }
  if (!admissible(ticket, bytes)) return std::nullopt;
  grant(ticket, bytes);
  return Reservation(this, ticket, bytes);
}

asio::awaitable<Reservation> VramBudget::reserve(ComputeLock::Ticket ticket, Bytes bytes) {
  if (auto now = try_reserve(ticket, bytes)) co_return std::move(*now);
  co_await await_completion([&](Completion completion) {
    waiters_.push_back(Waiter{ticket, bytes, std::move(completion)});
  });
  // serve_waiters granted the bytes before completing us (device_lost completes with an error).
  co_return Reservation(this, ticket, bytes);
}

void VramBudget::serve_waiters() {
  if (waiters_.empty()) return;
  std::stable_sort(waiters_.begin(), waiters_.end(),
                   [&](const Waiter& a, const Waiter& b) { return lock_position(a.ticket) < lock_position(b.ticket); });
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (admissible(it->ticket, it->bytes)) {
      grant(it->ticket, it->bytes);
      auto completion = std::move(it->completion);
      it = waiters_.erase(it);
      completion.complete();
    } else {
      ++it;
    }
  }
}

void VramBudget::watch_free(Bytes bytes, StreamHandle stream) {
  // An event after the free, and a watcher that waits for it without holding a thread. Unlike a
  // host callback, a wait fails when the device is lost, so the budget learns of that too.
  EventHandle reached;
  try {
    reached = device_.create_event();
    device_.record_event(reached, stream);
  } catch (const DeviceError&) {
    if (reached) {
      try {
        device_.destroy_event(reached);
      } catch (const DeviceError&) {
      }
    }
    device_lost(std::current_exception());
    return;
  }
  ++watchers_;
  asio::co_spawn(
      executor_,
      [this, bytes, reached]() -> asio::awaitable<void> {
        std::exception_ptr error;
        try {
          co_await device_.wait_event(reached);
        } catch (...) {
          error = std::current_exception();
        }
        try {
          device_.destroy_event(reached);
        } catch (const DeviceError&) {
        }
        // Only a lost device takes the free with it: a kernel that failed on the stream before the free
        // is the job's error (its own waits report it), and the stream still reached the free.
        if (error && is_device_lost(error)) {
          device_lost(error);
        } else {
          finish_pending(bytes);
        }
        if (--watchers_ == 0) drained_.notify_all();
      },
      asio::detached);
}

void VramBudget::set_observer(std::function<void(Bytes held_bytes, Bytes capacity_bytes)> observer) {
  observer_ = std::move(observer);
  notify();
}

asio::awaitable<void> VramBudget::drain() {
  while (watchers_ > 0) co_await drained_.wait();
}

void VramBudget::device_lost(std::exception_ptr error) {
  pending_bytes_ = 0;
  notify();
  auto waiters = std::move(waiters_);
  waiters_.clear();
  for (auto& waiter : waiters) waiter.completion.complete(error);
}

void VramBudget::reconcile() {
  // What the device counts as used that this process does not hold: another process, or the
  // CUDA context. Its growth since the first look is taken off the capacity.
  auto info = device_.memory_info();
  auto pool = device_.pool_stats();
  Bytes ours = pool.reserved_bytes;
  Bytes used = info.total_bytes - info.free_bytes;
  Bytes foreign = used > ours ? used - ours : 0;
  if (!baseline_taken_) {
    baseline_foreign_bytes_ = foreign;
    baseline_taken_ = true;
    return;
  }
  Bytes grown = foreign > baseline_foreign_bytes_ ? foreign - baseline_foreign_bytes_ : 0;
  Bytes capacity = configured_capacity_bytes_ > grown ? configured_capacity_bytes_ - grown : 0;
  if (capacity != capacity_bytes_) {
    if (log_) {
      log_(fmt::format("GPU {}: device memory info shows {} used outside this budget; capacity {} -> {}",
                       device_.properties().ordinal, format_bytes(grown), format_bytes(capacity_bytes_),
                       format_bytes(capacity)));
    }
    capacity_bytes_ = capacity;
    notify();
    serve_waiters();
  }
}

}  // namespace stagehand
