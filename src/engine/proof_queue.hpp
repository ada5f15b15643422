#pragma once
// The engine's queue of accepted proofs, ordered by priority class, then arrival, across keys.
//
// A proof's class rises by one for every `promote_after` it waits (low, normal, high, then
// critical), so that a stream of higher-class proofs cannot hold a low one back for ever: a low
// proof is critical after three promote_after and, among critical proofs, older than every proof
// that came after it. Within a class the oldest proof is also the most promoted, so the queue's
// front is the best of its four classes' oldest proofs.
//
// The queue knows nothing of runs or devices; the engine holds its mutex around every call, and
// each call takes the time it judges by as an argument, so that the order can be tested at
// chosen instants.

#include "engine/engine.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stagehand::engine {

namespace detail {
struct ProofRecord;
}

struct QueuedProof {
  using Clock = std::chrono::steady_clock;
  std::shared_ptr<detail::ProofRecord> record;
  std::string key;
  Priority priority = Priority::normal;  // as submitted
  Clock::time_point queued_at;
  std::optional<Clock::time_point> deadline;  // it must leave the queue before this
  std::uint64_t arrival = 0;                  // set by push
};

class ProofQueue {
 public:
  using Clock = std::chrono::steady_clock;

  // promote_after: how long a proof waits before its class rises by one (greater than zero).
  explicit ProofQueue(std::chrono::nanoseconds promote_after);

  void push(QueuedProof proof);
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Queued proofs by the class they were submitted with.
  std::size_t size(Priority priority) const { return by_class_[index(priority)].size(); }

  // Its class at `now`: the submitted class raised once for every promote_after it has waited.
  Priority effective(const QueuedProof& proof, Clock::time_point now) const;
  // The proof that runs next at `now`; null when empty.
  const QueuedProof* front(Clock::time_point now) const;

  // The front proofs while they are `key`'s, up to `most`, best first: those that join a run of
  // that key (no proof of another key is overtaken by them).
  std::vector<QueuedProof> take_leading(const std::string& key, std::size_t most, Clock::time_point now);
  // `key`'s proofs whose class at `now` is at least every other key's, up to `most`, best first:
  // a new run's first proofs. Within a class they may go ahead of older proofs of other keys (a
  // run's proofs share its key's set-up); never ahead of a higher class.
  std::vector<QueuedProof> take_batch(const std::string& key, std::size_t most, Clock::time_point now);
  // Takes the proof out, wherever it is; false when it is not queued.
  bool remove(const detail::ProofRecord* record);
  // Every proof, in arrival order.
  std::vector<QueuedProof> take_all();
  // The proofs whose deadline is at or before `now`: they can no longer start in time.
  std::vector<QueuedProof> take_expired(Clock::time_point now);
  std::optional<Clock::time_point> earliest_deadline() const;

 private:
  static std::size_t index(Priority priority) { return static_cast<std::size_t>(priority); }
  // Whether `a` runs before `b` at `now`.
  bool before(const QueuedProof& a, const QueuedProof& b, Clock::time_point now) const;
  QueuedProof pop_front_of(std::size_t class_index);

  std::chrono::nanoseconds promote_after_;
  std::array<std::deque<QueuedProof>, 4> by_class_;  // each in arrival order
  std::size_t size_ = 0;
  std::uint64_t next_arrival_ = 0;
};

}  // namespace stagehand::engine
