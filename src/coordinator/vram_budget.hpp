#pragma once
// VramBudget: every byte of device memory a job uses is reserved here first, so that no worker
// ever runs out of device memory.
//
// The rules, each learnt from an incident (docs/design.md):
// - Memory freed in stream order comes back only once the stream has reached the free, never at
//   the call (the dual-worker OOM came from counting it back too early).
// - A job waiting for the GPU may reserve (pre-stage) only what leaves the lock holder, and every
//   job ahead of it in the lock queue, room to reach its peak.
// - Waiting reservations are granted in lock order, the holder first (with the two-lock design a
//   job that had pre-staged could be overtaken, and the overtaker's allocations then failed).
// Capacity = device memory (or the configured cap) - safety margin - long-lived residents, and it
// shrinks when memory info shows another process taking memory.

#include "coordinator/async_wait.hpp"
#include "coordinator/compute_lock.hpp"
#include "device/device.hpp"

#include <functional>
#include <map>
#include <string>

namespace stagehand {

struct VramBudgetRules {
  bool release_after_free_event = true;
  bool admission_protects_lock_holder = true;
};

class VramBudget;

// Bytes reserved by one job. Released in part or whole; whatever is left goes back when it dies.
class Reservation {
 public:
  Reservation() = default;
  Reservation(Reservation&& other) noexcept { *this = std::move(other); }
  Reservation& operator=(Reservation&& other) noexcept;
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  ~Reservation();

  Bytes bytes() const { return bytes_; }
  // Gives `bytes` back now: the memory was never allocated, or its free has completed.
  void release(Bytes bytes);
  // Gives `bytes` back once `stream` reaches this point (call it right after free_async on it).
  void release_in_stream_order(Bytes bytes, StreamHandle stream);
  // Moves `bytes` of this reservation into a new one of the same job.
  Reservation split(Bytes bytes);

 private:
  friend class VramBudget;
  Reservation(VramBudget* budget, ComputeLock::Ticket ticket, Bytes bytes)
      : budget_(budget), ticket_(ticket), bytes_(bytes) {}
  VramBudget* budget_ = nullptr;
  ComputeLock::Ticket ticket_ = 0;
  Bytes bytes_ = 0;
};

class VramBudget {
 public:
  // `executor` runs the budget's own coroutines (the watchers of frees): the GPU's strand, so
  // that the budget's state is only ever touched there. Defaults to the device's executor.
  VramBudget(Device& device, ComputeLock& lock, Bytes capacity_bytes, VramBudgetRules rules = {},
             asio::any_io_executor executor = {});
  VramBudget(const VramBudget&) = delete;
  VramBudget& operator=(const VramBudget&) = delete;

  // A job takes part once it holds a lock ticket; `peak_bytes` is the most it will hold at once.
  // Throws std::runtime_error if the peak can never fit.
  void add_job(ComputeLock::Ticket ticket, Bytes peak_bytes);
  // The most the job will still hold from now on (it has passed its biggest phase). Waiting jobs
  // may then be admitted into the room it will not need again.
  void lower_peak(ComputeLock::Ticket ticket, Bytes peak_bytes);
  // The job has finished or failed; everything it reserved must have been released.
  void remove_job(ComputeLock::Ticket ticket);

  // Waits until the rules admit `bytes` for the job, then reserves them.
  asio::awaitable<Reservation> reserve(ComputeLock::Ticket ticket, Bytes bytes);
  // Reserves only if admitted now.
  std::optional<Reservation> try_reserve(ComputeLock::Ticket ticket, Bytes bytes);

  Bytes capacity_bytes() const { return capacity_bytes_; }
  // Reserved by live reservations plus freed in stream order but not yet reached.
  Bytes held_bytes() const { return reserved_bytes_ + pending_bytes_; }
  Bytes pending_bytes() const { return pending_bytes_; }
  Bytes peak_held_bytes() const { return peak_held_bytes_; }
  Bytes job_reserved_bytes(ComputeLock::Ticket ticket) const;

  // The device is gone: frees it owed will never be reached. Forgets them, and fails every
  // waiting reservation with `error`.
  void device_lost(std::exception_ptr error);

  // Waits until every free it watches has been reached (before the budget is destroyed).
  asio::awaitable<void> drain();

  // Compares with the device's memory info; another process's memory shrinks the capacity.
  // Never waits for the device. `log` receives a line for every disagreement.
  void reconcile();
  void set_log(std::function<void(const std::string&)> log) { log_ = std::move(log); }
  // Told what the budget holds and its capacity now and at every change of either (the
  // coordinator samples them into the trace, for the pictures of memory over time).
  void set_observer(std::function<void(Bytes held_bytes, Bytes capacity_bytes)> observer);

 private:
  friend class Reservation;
  struct Job {
    Bytes peak_bytes = 0;
    Bytes reserved_bytes = 0;
  };
  struct Waiter {
    ComputeLock::Ticket ticket;
    Bytes bytes;
    Completion completion;
  };

  bool admissible(ComputeLock::Ticket ticket, Bytes bytes) const;
  void grant(ComputeLock::Ticket ticket, Bytes bytes);
  void give_back(ComputeLock::Ticket ticket, Bytes bytes);
  void finish_pending(Bytes bytes);
  void watch_free(Bytes bytes, StreamHandle stream);
  void serve_waiters();
  void notify() const {
    if (observer_) observer_(held_bytes(), capacity_bytes_);
  }
  // Lock order: the holder first, then the queue; jobs without a ticket in either come last.
  std::size_t lock_position(ComputeLock::Ticket ticket) const;

  Device& device_;
  ComputeLock& lock_;
  asio::any_io_executor executor_;
  VramBudgetRules rules_;
  Bytes configured_capacity_bytes_;
  Bytes capacity_bytes_;
  Bytes reserved_bytes_ = 0;
  Bytes pending_bytes_ = 0;
  Bytes peak_held_bytes_ = 0;
  Bytes baseline_foreign_bytes_ = 0;
  bool baseline_taken_ = false;
  std::map<ComputeLock::Ticket, Job> jobs_;
  std::vector<Waiter> waiters_;
  int watchers_ = 0;
  AsyncWaitList drained_;
  std::function<void(const std::string&)> log_;
  std::function<void(Bytes, Bytes)> observer_;
};

}  // namespace stagehand
