#include "engine/proof_queue.hpp"

#include "util/assert.hpp"

#include <algorithm>

namespace stagehand::engine {

ProofQueue::ProofQueue(std::chrono::nanoseconds promote_after) : promote_after_(promote_after) {
  STAGEHAND_ASSERT(promote_after_.count() > 0, "promote_after must be positive, not {} ns", promote_after_.count());
}

void ProofQueue::push(QueuedProof proof) {
  // front() relies on it: within a class, a later arrival has waited no longer.
  auto& proofs = by_class_[index(proof.priority)];
  STAGEHAND_ASSERT(proofs.empty() || proofs.back().queued_at <= proof.queued_at,
                   "a proof of key {} queued at an instant before the last of its class", proof.key);
  proof.arrival = next_arrival_++;
  proofs.push_back(std::move(proof));
  ++size_;
}

Priority ProofQueue::effective(const QueuedProof& proof, Clock::time_point now) const {
  const auto waited = std::max(Clock::duration::zero(), now - proof.queued_at);
  const auto steps = static_cast<std::size_t>(waited / promote_after_);
  return static_cast<Priority>(
      std::min(index(Priority::critical), index(proof.priority) + std::min<std::size_t>(steps, 3)));
}

bool ProofQueue::before(const QueuedProof& a, const QueuedProof& b, Clock::time_point now) const {
  const auto class_a = effective(a, now), class_b = effective(b, now);
  return class_a != class_b ? class_a > class_b : a.arrival < b.arrival;
}

const QueuedProof* ProofQueue::front(Clock::time_point now) const {
  // Within a class the oldest is the most promoted and the earliest, so it beats the rest of it.
  const QueuedProof* best = nullptr;
  for (const auto& proofs : by_class_) {
    if (!proofs.empty() && (best == nullptr || before(proofs.front(), *best, now))) best = &proofs.front();
  }
  return best;
}

QueuedProof ProofQueue::pop_front_of(std::size_t class_index) {
  auto& proofs = by_class_.at(class_index);
  STAGEHAND_ASSERT(!proofs.empty(), "popping class {} of an empty queue", class_index);
  auto proof = std::move(proofs.front());
  proofs.pop_front();
  --size_;
  return proof;
}

std::vector<QueuedProof> ProofQueue::take_leading(const std::string& key, std::size_t most, Clock::time_point now) {
  std::vector<QueuedProof> taken;
  while (taken.size() < most) {
    const auto* next = front(now);
    if (next == nullptr || next->key != key) break;
    taken.push_back(pop_front_of(index(next->priority)));
  }
  return taken;
}

std::vector<QueuedProof> ProofQueue::take_batch(const std::string& key, std::size_t most, Clock::time_point now) {
  // The highest class any other key's proof has now: the batch takes none of key's below it.
  std::optional<Priority> others;
  for (const auto& proofs : by_class_) {
    for (const auto& proof : proofs) {
      if (proof.key != key) others = std::max(others.value_or(Priority::low), effective(proof, now));
    }
  }
  std::vector<const QueuedProof*> chosen;
  for (const auto& proofs : by_class_) {
    for (const auto& proof : proofs) {
      if (proof.key == key && (!others || effective(proof, now) >= *others)) chosen.push_back(&proof);
    }
  }
  std::sort(chosen.begin(), chosen.end(),
            [&](const QueuedProof* a, const QueuedProof* b) { return before(*a, *b, now); });
  chosen.resize(std::min(chosen.size(), most));
  std::vector<std::uint64_t> arrivals;
  for (const auto* proof : chosen) arrivals.push_back(proof->arrival);
  std::vector<QueuedProof> taken;
  for (const auto arrival : arrivals) {
    for (auto& proofs : by_class_) {
      const auto found =
          std::find_if(proofs.begin(), proofs.end(), [&](const QueuedProof& p) { return p.arrival == arrival; });
      if (found == proofs.end()) continue;
      taken.push_back(std::move(*found));
      proofs.erase(found);
      --size_;
      break;
    }
  }
  STAGEHAND_ASSERT(taken.size() == arrivals.size(), "took {} of the {} proofs chosen for key {}", taken.size(),
                   arrivals.size(), key);
  return taken;
}

bool ProofQueue::remove(const detail::ProofRecord* record) {
  for (auto& proofs : by_class_) {
    const auto found =
        std::find_if(proofs.begin(), proofs.end(), [&](const QueuedProof& p) { return p.record.get() == record; });
    if (found == proofs.end()) continue;
    proofs.erase(found);
    --size_;
    return true;
  }
  return false;
}

std::vector<QueuedProof> ProofQueue::take_all() {
  std::vector<QueuedProof> taken;
  for (auto& proofs : by_class_) {
    for (auto& proof : proofs) taken.push_back(std::move(proof));
    proofs.clear();
  }
  size_ = 0;
  std::sort(taken.begin(), taken.end(),
            [](const QueuedProof& a, const QueuedProof& b) { return a.arrival < b.arrival; });
  return taken;
}

std::vector<QueuedProof> ProofQueue::take_expired(Clock::time_point now) {
  std::vector<QueuedProof> taken;
  for (auto& proofs : by_class_) {
    const auto expired = [&](const QueuedProof& p) { return p.deadline && *p.deadline <= now; };
    for (const auto& proof : proofs) {
      if (expired(proof)) taken.push_back(proof);
    }
    proofs.erase(std::remove_if(proofs.begin(), proofs.end(), expired), proofs.end());
  }
  size_ -= taken.size();
  return taken;
}

std::optional<ProofQueue::Clock::time_point> ProofQueue::earliest_deadline() const {
  std::optional<Clock::time_point> earliest;
  for (const auto& proofs : by_class_) {
    for (const auto& proof : proofs) {
      if (proof.deadline && (!earliest || *proof.deadline < *earliest)) earliest = proof.deadline;
    }
  }
  return earliest;
}

}  // namespace stagehand::engine
