// A proof's end: its result and timings, the counters, request ids, deadlines, device samples.
#include "engine/engine_impl.hpp"

namespace stagehand::engine {

namespace {

// The parts of a proof's life that ended at `end` (record mutex held). An instant it never
// reached is the next one it did, so the part it ended in runs to its end; each instant is at
// least the one before, so the parts telescope to the total.
ProofTimings timings_of(const ProofRecord& record, Clock::time_point end) {
  std::array<std::optional<Clock::time_point>, 7> at{
      record.submitted, record.taken, record.ready, record.prepared, record.program_started, record.program_ended, end};
  for (std::size_t i = at.size() - 1; i-- > 1;) {
    if (!at[i]) at[i] = at[i + 1];
  }
  for (std::size_t i = 1; i < at.size(); ++i) at[i] = std::max(*at[i], *at[i - 1]);
  const auto seconds = [&](std::size_t from, std::size_t to) { return seconds_between(*at[from], *at[to]); };
  ProofTimings timings;
  // Waiting for a worker of its run is waiting in a queue too: the run's own.
  timings.queue_s = seconds(0, 1) + seconds(2, 3);
  timings.setup_s = seconds(1, 2);
  timings.host_before_s = seconds(3, 4);
  timings.gpu_s = seconds(4, 5);
  const double after = seconds(5, 6);
  timings.check_s = std::clamp(record.check_seconds, 0.0, after);
  timings.host_after_s = after - timings.check_s;
  timings.total_s = seconds(0, 6);
  return timings;
}

}  // namespace

void Engine::Impl::end_proof(const std::shared_ptr<ProofRecord>& record, ProofState state, std::string error,
                             std::string proof, std::string public_signals) {
  const auto end = Clock::now();
  std::vector<ProofCallback> callbacks;
  {
    // Both locks (the engine's first, as everywhere): whoever sees the proof ended finds it
    // counted too, and its request id among the ended ones.
    std::lock_guard lock(mutex);
    ProofTimings timings;
    {
      std::lock_guard record_lock(record->mutex);
      if (record->finished_locked()) return;
      timings = timings_of(*record, end);
      record->result.state = state;
      record->result.error = std::move(error);
      record->result.proof_json = std::move(proof);
      record->result.public_json = std::move(public_signals);
      record->result.seconds = timings.total_s;
      record->result.timings = timings;
      record->result.gpu = record->gpu;
      callbacks = std::move(record->on_done);
      record->on_done.clear();
    }
    count_ended_locked(record, state, timings, end);
  }
  record->ended.notify_all();
  for (const auto& callback : callbacks) {
    if (!callback) continue;
    try {
      callback(ProofHandle(record));
    } catch (...) {
      // A caller's callback must not take the engine down; what it does with its error is its own.
    }
  }
}

void Engine::Impl::count_ended_locked(const std::shared_ptr<ProofRecord>& record, ProofState state,
                                      const ProofTimings& timings, Clock::time_point end) {
  // The record stays for find() among the last kFinishedKept; its witness (32 MiB at 2^20)
  // must not: kept, a service's memory grew by a witness a proof until 4,096 were held.
  record->wtns.reset();
  (state == ProofState::done ? done : state == ProofState::failed ? failed : cancelled) += 1;
  if (state != ProofState::cancelled) {
    const auto bucket =
        std::lower_bound(kHistogramBounds.begin(), kHistogramBounds.end(), timings.total_s) - kHistogramBounds.begin();
    ++histogram[static_cast<std::size_t>(bucket)];
    histogram_sum += timings.total_s;
    // A key's histograms go with it: a proof that ends after its key has gone adds to none.
    if (keys.count(record->key) != 0) {
      auto& parts = this->timings[{record->key, record->priority}];
      const auto values = timing_parts(timings);
      for (std::size_t i = 0; i < values.size(); ++i) {
        const auto at = std::lower_bound(kTimingBounds.begin(), kTimingBounds.end(), values[i]) - kTimingBounds.begin();
        ++parts[i].counts[static_cast<std::size_t>(at)];
        parts[i].sum += values[i];
      }
    }
  }
  finished_order.push_back(record->id);
  while (finished_order.size() > kFinishedKept) {
    proofs.erase(finished_order.front());
    finished_order.pop_front();
  }
  if (!record->request_id.empty()) requests_ended.emplace_back(end, record);
}

std::shared_ptr<ProofRecord> Engine::Impl::find_request_locked(const std::string& key, const std::string& request_id) {
  const auto retention = std::chrono::duration<double>(config.engine.request_id_retention_s);
  const auto now = Clock::now();
  while (!requests_ended.empty() && now - requests_ended.front().first >= retention) {
    const auto& gone = requests_ended.front().second;
    const auto found = requests.find(gone->request_id);
    if (found != requests.end() && found->second == gone) requests.erase(found);
    requests_ended.pop_front();
  }
  if (request_id.empty()) return nullptr;
  const auto found = requests.find(request_id);
  if (found == requests.end()) return nullptr;
  if (found->second->key != key) {
    throw EngineError(ErrorKind::request_conflict,
                      fmt::format("request id '{}' names proof {} of key '{}', not a proof of key '{}'", request_id,
                                  found->second->id, found->second->key, key));
  }
  return found->second;
}

ProofHandle Engine::Impl::repeat(const std::shared_ptr<ProofRecord>& record, ProofCallback on_done) {
  {
    std::lock_guard lock(record->mutex);
    if (!record->finished_locked()) {
      record->on_done.push_back(std::move(on_done));
      return ProofHandle(record, true);
    }
  }
  if (on_done) on_done(ProofHandle(record, true));
  return ProofHandle(record, true);
}

void Engine::Impl::expire_locked(Clock::time_point now) {
  const auto gone = queue.take_expired(now);
  if (gone.empty()) return;
  for (const auto& proof : gone) {
    key_proof_left(proof.key, false);
    expired.push_back(proof.record);
  }
  check_counts_locked();
  space.notify_all();
  deadlines.notify_all();
}

void Engine::Impl::watch_deadlines() {
  std::unique_lock lock(mutex);
  for (;;) {
    expire_locked(clock->now());
    if (!expired.empty()) {
      const auto gone = std::exchange(expired, {});
      lock.unlock();
      for (const auto& record : gone) {
        STAGEHAND_ASSERT(record->deadline.has_value(), "proof {} expired without a deadline", record->id);
        const double allowed = seconds_between(record->submitted_on_clock, *record->deadline);
        {
          std::lock_guard record_lock(record->mutex);
          record->result.deadline_missed = true;
        }
        end_proof(record, ProofState::failed,
                  fmt::format("its deadline ({:.3f} s after its submit) passed while it was queued: it was not run",
                              allowed));
      }
      lock.lock();
      continue;
    }
    if (watcher_stopping) return;
    if (const auto earliest = queue.earliest_deadline()) {
      clock->wait_until(deadlines, lock, *earliest,
                        [&] { return watcher_stopping || !expired.empty() || queue.earliest_deadline() != earliest; });
    } else {
      deadlines.wait(lock);
    }
  }
}

void Engine::Impl::sample_devices(const std::map<int, const VramBudget*>& budgets) {
  const auto& devices = backend->devices();
  for (std::size_t i = 0; i < devices.size() && i < gpus.size(); ++i) {
    if (gpus[i].lost) continue;
    try {
      const auto info = devices[i]->memory_info();
      gpus[i].used = info.total_bytes - info.free_bytes;
    } catch (const DeviceError& error) {
      if (error.errc() != DeviceErrc::device_lost) throw;
      gpus[i].lost = true;  // its proofs go to the other GPUs (the coordinator moves them)
      continue;
    }
    gpus[i].pinned_allocations = devices[i]->counters().pinned_host_allocations;
    auto found = budgets.find(static_cast<int>(i));
    gpus[i].reserved = found == budgets.end() ? 0 : found->second->held_bytes();
  }
}

}  // namespace stagehand::engine
