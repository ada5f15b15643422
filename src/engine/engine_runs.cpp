// The dispatcher and its coordinator runs: a batch of one key's proofs, the linger, the kept state.
#include "engine/engine_impl.hpp"

namespace stagehand::engine {

// r and s from [engine] seed count the proofs from 0 (unless the caller numbers them), as
// `stagehand prove --seed` counts its witnesses: the engine's first proof is prove's first.
proving::BatchJob EngineBatch::proof_job(const ProofRecord& record) const {
  proving::BatchJob job;
  job.wtns = record.name;
  if (const auto& seed = engine_.config.engine.seed) job.seed = *seed + record.seed_index;
  job.wtns_bytes = record.wtns;
  return job;
}

void EngineBatch::step(int job, proving::BatchStep step, int device) {
  auto& record = *proofs_.at(static_cast<std::size_t>(job));
  const auto now = Clock::now();
  if (step == proving::BatchStep::prepare) {
    // Its run was ready for it once its GPU was set up, or when it joined a run already set up.
    std::lock_guard lock(record.mutex);
    STAGEHAND_ASSERT(record.taken.has_value(), "proof {} reached its host step without leaving the queue", record.id);
    if (!record.prepared) {
      Clock::time_point ready = *record.taken;
      if (device >= 0 && set_up_ended_.at(static_cast<std::size_t>(device)))
        ready = *set_up_ended_[static_cast<std::size_t>(device)];
      record.ready = std::clamp(ready, *record.taken, now);
      record.prepared = now;
    }
  } else if (step == proving::BatchStep::program || step == proving::BatchStep::program_ended) {
    // A proof moved off a lost GPU runs its program again: this attempt's instants count.
    std::lock_guard lock(record.mutex);
    (step == proving::BatchStep::program ? record.program_started : record.program_ended) = now;
    if (step == proving::BatchStep::program) record.program_ended.reset();
    if (step == proving::BatchStep::program_ended) return;
  }
  if (record.cancel_requested.load()) throw std::runtime_error("cancelled while running");
  if (step != proving::BatchStep::prepare || device < 0) return;
  std::lock_guard lock(engine_.mutex);
  if (record.gpu != device) {
    if (record.gpu >= 0) engine_.gpu_left(record.gpu);  // its first GPU was lost under it
    record.gpu = device;
    engine_.gpu_started(device);
  }
}

void EngineBatch::ended(const proving::ProofEnd& end) {
  const auto index = static_cast<std::size_t>(end.job);
  STAGEHAND_ASSERT(index < proofs_.size() && !ended_[index],
                   "job {} of a run of key {} ({} proofs) ended twice or is unknown", end.job, key_name_,
                   proofs_.size());
  auto& record = *proofs_[index];
  {
    std::lock_guard lock(record.mutex);
    record.check_seconds = end.check_seconds;
  }
  if (end.made) {
    this->end(index, ProofState::done, {}, end.proof_json, end.public_json);
  } else if (record.cancel_requested.load()) {
    this->end(index, ProofState::cancelled, end.record != nullptr && end.record->completed() ? "cancelled" : end.error);
  } else {
    this->end(index, ProofState::failed, end.error);
  }
}

void EngineBatch::end(std::size_t index, ProofState state, std::string error, std::string proof,
                      std::string public_signals) {
  STAGEHAND_ASSERT(!ended_[index], "proof {} of key {} ends a second time", proofs_[index]->id, key_name_);
  ended_[index] = true;
  const auto& record = proofs_[index];
  {
    std::lock_guard lock(engine_.mutex);
    if (record->gpu >= 0) engine_.gpu_ended(record->gpu);
    STAGEHAND_ASSERT(engine_.running > 0, "proof {} of key {} ends with no proof running", record->id, key_name_);
    --engine_.running;
    engine_.key_proof_left(key_name_, true);
    engine_.check_counts_locked();
  }
  engine_.end_proof(record, state, std::move(error), std::move(proof), std::move(public_signals));
}

// Proofs of the key that arrive while the run goes on join it, so that the GPUs go from one
// proof to the next without a run's end and the next one's start between them (under load the
// drain between batches cost about a tenth of the throughput). Only those at the queue's front
// join (by class, then arrival: none overtakes another key's proof, which runs next), and only
// while the run has room (run_room). The run takes no more, and ends once its proofs have, when
// they have all ended with none of its key at the queue's head within [engine] linger_ms
// (linger_locked), when a key's device state waits to be given back, when the engine stops, or
// at max_batch proofs. So a critical proof of this key takes the run's next free place, once one
// of its proofs ends; kernels are not preempted, so one of another key waits for the run's
// unended proofs (at most run_room) and then its own key's set-up, and no longer.
proving::Joining EngineBatch::join(std::size_t jobs, std::size_t unended) {
  STAGEHAND_ASSERT(jobs == proofs_.size(), "a run of key {} has {} jobs for {} proofs", key_name_, jobs,
                   proofs_.size());
  proving::Joining joining;
  std::vector<std::shared_ptr<ProofRecord>> taken;
  {
    std::unique_lock lock(engine_.mutex);
    const std::size_t most = engine_.config.engine.max_batch;
    joining.close = engine_.stopping || !engine_.retired.empty() || jobs >= most;
    if (joining.close) return joining;
    const std::size_t room = std::min(most - jobs, engine_.run_room() - std::min(engine_.run_room(), unended));
    taken = engine_.take_queued_locked(key_name_, room, true, engine_.clock->now());
    if (taken.empty() && unended == 0) taken = engine_.linger_locked(lock, key_name_, room);
    joining.close = taken.empty() && unended == 0;
  }
  for (const auto& record : taken) {
    joining.jobs.push_back(proof_job(*record));
    proofs_.push_back(record);
    ended_.push_back(false);
  }
  return joining;
}

void Engine::Impl::release_device_states(
    const std::vector<std::shared_ptr<groth16::DeviceKeyState>>& states, bool with_kept_staging,
    const std::vector<std::shared_ptr<groth16::AssignmentKeyState>>& assignment_states) {
  if (states.empty() && assignment_states.empty() && !(with_kept_staging && !kept_pinned.empty())) return;
  try {
    backend->run([&]() -> asio::awaitable<void> {
      for (const auto& state : states) co_await state->release();
      for (const auto& state : assignment_states) co_await state->release();
      if (!with_kept_staging) co_return;
      auto buffers = std::exchange(kept_pinned, {});
      const auto& devices = backend->devices();
      for (const auto& [index, kept] : buffers) {
        for (const auto* ranges : {&kept.staging, &kept.results}) {
          for (const auto& range : *ranges) {
            try {
              co_await devices.at(static_cast<std::size_t>(index))->free_pinned_host(range);
            } catch (const DeviceError&) {
              // A lost device: the host memory goes with the process.
            }
          }
        }
      }
    }());
  } catch (const std::exception&) {
    // release() swallows a lost device's errors; anything else leaves the memory to the process's end.
  }
  std::lock_guard lock(mutex);
  if (with_kept_staging) {
    for (auto& gpu : gpus) gpu.pinned_kept = 0;
  }
  sample_devices({});
}

void Engine::Impl::give_back_retired() {
  // The retired keys stay listed until their memory is given back: wait_key_gone's predicate
  // reads the list, and a key taken off it before the release would let a waiter return while
  // the key's sets or the kept staging were still held.
  std::vector<Retired> gone;
  {
    std::lock_guard lock(mutex);
    gone = retired;
  }
  if (gone.empty()) return;
  std::vector<std::shared_ptr<groth16::DeviceKeyState>> states;
  std::vector<std::shared_ptr<groth16::AssignmentKeyState>> assignment_states;
  for (const auto& entry : gone) {
    states.push_back(entry.device_state);
    if (entry.assignment_state) assignment_states.push_back(entry.assignment_state);
  }
  release_device_states(states, true, assignment_states);
  std::lock_guard lock(mutex);
  std::erase_if(retired, [&](const Retired& entry) {
    return std::any_of(gone.begin(), gone.end(),
                       [&](const Retired& given) { return given.device_state == entry.device_state; });
  });
  gone.clear();  // the keys' host bytes, now that nothing refers to them
  key_gone.notify_all();
}

void Engine::Impl::dispatch() {
  for (;;) {
    give_back_retired();
    std::unique_lock lock(mutex);
    work.wait(lock, [&] { return !queue.empty() || stopping || !retired.empty(); });
    if (!retired.empty()) continue;
    expire_locked(clock->now());
    if (queue.empty()) {
      if (!stopping) continue;  // what was queued had expired
      // Stopping, nothing left: every key's device state goes back before the devices close.
      std::vector<std::shared_ptr<groth16::DeviceKeyState>> states;
      std::vector<std::shared_ptr<groth16::AssignmentKeyState>> assignment_states;
      for (const auto& [name, key] : keys) {
        states.push_back(key.device_state);
        assignment_states.push_back(key.assignment_state);
      }
      lock.unlock();
      release_device_states(states, true, assignment_states);
      give_back_retired();  // those retired meanwhile (a state emptied since goes at once: retire_key)
      return;
    }
    if (stopping && drain == Drain::fail_queued) {
      fail_queued(lock, "the engine shut down before this proof ran", true);
      continue;
    }
    if (const auto lost = every_gpu_lost_locked(); !lost.empty()) {
      fail_queued(lock, lost, false);
      continue;
    }
    run_front(lock);
  }
}

void Engine::Impl::run_front(std::unique_lock<std::mutex>& lock) {
  // The front proof's key, and its proofs best first, up to a batch, all judged at one instant.
  const auto dispatched = Clock::now();
  const auto judged = clock->now();
  expire_locked(judged);
  if (queue.empty()) return;
  const std::string name = queue.front(judged)->key;
  auto batch = take_queued_locked(name, std::min(config.engine.max_batch, run_room()), false, judged);
  STAGEHAND_ASSERT(!batch.empty(), "the queue's front proof (key {}) was not taken into its run", name);
  auto& key = keys.at(name);
  ++batches;
  const BatchOf of{
      name, key.key, key.sizes, key.path, key.r1cs, key.r1cs_path, key.device_state, key.params, key.assignment_state};
  const Bytes proof_bytes = key.proof_bytes;
  key.last_batch = batches;
  const auto give_back = others_to_give_back(lock, of, proof_bytes);
  release_device_states(give_back.states, false, give_back.assignment_states);
  if (of.params) {
    run_params_batch(of, std::move(batch));
  } else {
    run_batch(of, give_back.held_by_others, std::move(batch), dispatched);
  }
}

Engine::Impl::GiveBack Engine::Impl::others_to_give_back(std::unique_lock<std::mutex>& lock, const BatchOf& of,
                                                         Bytes proof_bytes) {
  STAGEHAND_ASSERT(lock.owns_lock(), "the other keys' states looked at for key {} without the engine mutex", of.name);
  GiveBack out;
  // The other .zkey keys set up on the devices stay there while this batch loses nothing by it
  // (states_to_give_back); the least recently proved go first. A .params key's sets have no
  // account of their bytes to weigh: they go before any other key's run, and a .params key's run
  // gives back every other key's state.
  std::vector<std::pair<std::uint64_t, std::shared_ptr<groth16::DeviceKeyState>>> others;
  for (const auto& [other_name, other] : keys) {
    if (other_name == of.name) continue;
    if (other.assignment_state->holds_anything()) out.assignment_states.push_back(other.assignment_state);
    if (other.device_state->holds_anything()) others.emplace_back(other.last_batch, other.device_state);
  }
  std::sort(others.begin(), others.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  lock.unlock();
  std::vector<Bytes> held;
  for (const auto& other : others) held.push_back(other.second->device_bytes());
  const std::size_t give_back = of.params ? others.size() : states_to_give_back(*of.sizes, proof_bytes, held);
  for (std::size_t i = 0; i < others.size(); ++i) {
    if (i < give_back) {
      out.states.push_back(others[i].second);
    } else {
      out.held_by_others += held[i];
    }
  }
  return out;
}

std::vector<std::shared_ptr<ProofRecord>> Engine::Impl::take_queued_locked(const std::string& name, std::size_t most,
                                                                           bool leading_only, Clock::time_point now) {
  std::vector<std::shared_ptr<ProofRecord>> taken;
  auto key = keys.find(name);
  if (key == keys.end()) return taken;
  expire_locked(now);
  for (auto& proof : leading_only ? queue.take_leading(name, most, now) : queue.take_batch(name, most, now)) {
    taken.push_back(std::move(proof.record));
  }
  key->second.queued -= taken.size();
  key->second.running += taken.size();
  running += taken.size();
  const auto taken_at = Clock::now();  // a timing, on the steady clock (`now` is the queue's)
  for (const auto& record : taken) {
    std::lock_guard record_lock(record->mutex);
    record->result.state = ProofState::running;
    record->taken = taken_at;
  }
  if (!taken.empty()) space.notify_all();
  check_counts_locked();
  return taken;
}

std::size_t Engine::Impl::states_to_give_back(const groth16::KeySizes& sizes, Bytes proof_bytes,
                                              const std::vector<Bytes>& held_oldest_first) const {
  if (held_oldest_first.empty()) return 0;
  const auto settings = settings_for(config.run, config.engine.policy);
  const auto alone = proof_layout(sizes, settings);
  const Bytes needed = proof_bytes + settings.safety_margin_bytes + settings.resident_bytes;
  Bytes smallest = ~Bytes{0};
  for (const auto* device : backend->devices()) smallest = std::min(smallest, device->properties().total_memory_bytes);
  Bytes held = 0;
  for (const Bytes bytes : held_oldest_first) held += bytes;
  for (std::size_t first = 0; first < held_oldest_first.size(); held -= held_oldest_first[first++]) {
    auto beside = settings;
    beside.resident_bytes += held;
    const auto layout = proof_layout(sizes, beside);
    if (needed + held <= smallest && layout.abc_step == alone.abc_step && layout.placement == alone.placement)
      return first;
  }
  return held_oldest_first.size();
}

void Engine::Impl::run_batch(const BatchOf& of, Bytes held_by_others, std::vector<std::shared_ptr<ProofRecord>> batch,
                             Clock::time_point dispatched) {
  EngineBatch listener(*this, of.name, batch);
  try {
    const bool on_gpu = backend->on_gpu();
    auto settings = batch_settings(of, held_by_others);
    // The run's own trace where [engine] trace_dir asks for one (the backend's keeps only a hash),
    // with the kernels on a GPU; else, where the engine's owner asks, the backend's.
    std::optional<Trace> run_trace;
    const Trace* traced = nullptr;
    if (!config.engine.trace_dir.empty()) {
      run_trace.emplace(true);
      if (on_gpu) trace_dispatch(*run_trace, listener.first().submitted, dispatched);
      settings.trace = &*run_trace;
      settings.trace_kernels = on_gpu;
      traced = &*run_trace;
    } else if (hooks.trace_runs) {
      settings.trace_kernels = true;
      traced = &backend->trace();
    }
    const proving::BatchKey batch_key{batch_key_of(of.key), of.sizes.get(), of.path,
                                      config.engine.keep_key_on_device ? of.device_state : nullptr};
    const auto figures = proving::ProofBatch(*backend, batch_key, std::move(settings), listener).run(listener.jobs());
    listener.end_rest("the run ended without reporting this proof");
    if (run_trace) write_run_trace(*run_trace, figures.report, of.name, figures.proofs, on_gpu);
    try {
      if (hooks.on_run) hooks.on_run(RunSummary{of.name, batch_number(), listener.ids(), &figures, traced, on_gpu});
    } catch (...) {
      // The owner's callback must not take the engine down: its proofs are answered already.
    }
  } catch (const std::exception& error) {
    listener.end_rest(fmt::format("the run failed: {}", error.what()));
  }
  listener.end_rest("the run ended without reporting this proof");
  run_ended();
}

void Engine::Impl::run_ended() {
  {
    std::lock_guard lock(mutex);
    sample_devices({});  // what the run left on the devices (the key, where it stays set up)
  }
  if (!hooks.on_run_end) return;
  try {
    hooks.on_run_end(batch_number());
  } catch (...) {
    // As on_run: the owner's callback must not take the engine down.
  }
}

proving::BatchSettings Engine::Impl::batch_settings(const BatchOf& of, Bytes held_by_others) {
  proving::BatchSettings settings;
  settings.coordinator = settings_for(config.run, config.engine.policy);
  // Run after run, another GPU is offered the jobs first: lone proofs spread over idle GPUs.
  settings.coordinator.first_device = static_cast<int>(batch_number() % backend->devices().size());
  settings.layout = proof_layout(*of.sizes, settings.coordinator);
  // The other keys kept set up are outside this run's budget (their layout left this one's as
  // it is alone: states_to_give_back).
  settings.coordinator.resident_bytes += held_by_others;
  // The key stays set up between its runs unless this one keeps other sets there (a GPU lost
  // since makes the plan smaller).
  const auto& layout = settings.layout;
  if (!of.device_state->made_for(layout.abc_step == groth16::AbcStep::device, layout.placement))
    release_device_states({of.device_state});
  settings.checks.verify = config.engine.verify;
  settings.checks.r1cs = batch_r1cs_of(of.r1cs);
  settings.checks.r1cs_path = of.r1cs_path;
  settings.threads = config.engine.threads;
  if (config.engine.keep_key_on_device) keep_staging(settings);
  return settings;
}

void Engine::Impl::keep_staging(proving::BatchSettings& settings) {
  // The pinned staging pool and result buffers stay for the next batch, as the key does (the
  // run's thread only).
  auto count = [this](int device) {
    const Bytes bytes = kept_pinned[device].bytes();
    std::lock_guard lock(mutex);
    if (static_cast<std::size_t>(device) < gpus.size()) gpus[static_cast<std::size_t>(device)].pinned_kept = bytes;
  };
  settings.kept_pinned = [this, count](int device) {
    auto buffers = std::exchange(kept_pinned[device], {});
    count(device);
    return buffers;
  };
  settings.keep_pinned = [this, count](int device, KeptPinned buffers) {
    auto& kept = kept_pinned[device];
    kept.staging.insert(kept.staging.end(), buffers.staging.begin(), buffers.staging.end());
    kept.results.insert(kept.results.end(), buffers.results.begin(), buffers.results.end());
    count(device);
  };
}

void Engine::Impl::trace_dispatch(Trace& trace, Clock::time_point first_submitted, Clock::time_point dispatched) {
  const auto& devices = backend->devices();
  if (devices.empty()) return;
  // The engine's own steps before the run, on the device's clock (a GPU's is the host's steady
  // clock; the simulator's is its own, which the engine's steps do not advance).
  const Nanoseconds now_ns = devices.front()->now();
  const auto at = [&](Clock::time_point t) {
    return now_ns - std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
  };
  const auto track = trace.track("engine", "dispatcher");
  trace.span(track, "queued (the batch's first proof)", "engine", at(first_submitted), at(dispatched));
  trace.span(track, "dispatch: other keys' states, the layout, the workload", "engine", at(dispatched), now_ns);
}

std::vector<std::shared_ptr<ProofRecord>> Engine::Impl::linger_locked(std::unique_lock<std::mutex>& lock,
                                                                      const std::string& name, std::size_t room) {
  STAGEHAND_ASSERT(lock.owns_lock() && room > 0, "a run lingers for key {} with the engine unlocked or no room", name);
  std::vector<std::shared_ptr<ProofRecord>> joining;
  if (config.engine.linger_ms <= 0) return joining;
  const auto until = clock->now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double, std::milli>(config.engine.linger_ms));
  // The wait blocks the run's thread instead of waiting on the backend's loop: with none of the
  // run's proofs unended nothing else in the run can go on, and the simulator takes a program
  // that waits for news with no work of its own for a deadlock (backend.hpp). Submits, retiring a
  // key and stopping all notify `work` (wake_dispatcher_locked).
  while (clock->wait_until(work, lock, until, [&] { return stopping || !retired.empty() || !queue.empty(); })) {
    if (stopping || !retired.empty()) break;
    const auto now = clock->now();
    expire_locked(now);
    if (queue.empty()) continue;               // what came had expired: the linger goes on
    if (queue.front(now)->key != name) break;  // another key's proof runs next
    joining = take_queued_locked(name, room, true, now);
    break;
  }
  STAGEHAND_ASSERT(joining.size() <= room, "a lingering run of key {} took {} proofs for {} places", name,
                   joining.size(), room);
  return joining;
}

std::uint64_t Engine::Impl::batch_number() {
  std::lock_guard lock(mutex);
  return batches;
}

void Engine::Impl::write_run_trace(const Trace& trace, const RunReport& report, const std::string& key_name,
                                   std::size_t proofs, bool on_gpu) {
  const std::uint64_t number = batch_number();
  const auto& dir = config.engine.trace_dir;
  auto file = [&](std::uint64_t n, const char* extension) { return dir / fmt::format("run-{:06}{}", n, extension); };
  try {
    proving::write_batch_trace(
        trace, report, {file(number, ".trace.json"), file(number, ".svg"), /*own_window=*/true},
        fmt::format("stagehand engine: batch {}, {} proof{} of key {}, {}", number, proofs, proofs == 1 ? "" : "s",
                    key_name, on_gpu ? "CUDA" : "simulator (the coordinator's rows)"));
    if (number > config.engine.trace_runs) {
      std::error_code ignored;
      std::filesystem::remove(file(number - config.engine.trace_runs, ".trace.json"), ignored);
      std::filesystem::remove(file(number - config.engine.trace_runs, ".svg"), ignored);
    }
  } catch (const std::exception& error) {
    // The proofs are made and answered; a trace that cannot be written is said, not fatal.
    fmt::print(stderr, "stagehand engine: batch {}'s trace not written: {}\n", number, error.what());
  }
}

}  // namespace stagehand::engine
