// The dispatcher and its coordinator runs: a batch of one key's proofs, the linger, the kept state.
#include "engine/engine_impl.hpp"

namespace stagehand::engine {

namespace {

// The Groth16 workload with the engine's checks between steps: a cancelled proof stops before
// its next step, each proof's GPU is noted when its host step begins (again on the GPU it moves
// to when its first one is lost), and the instants of its timings are marked as it reaches them.
class EngineWorkload final : public Workload {
 public:
  EngineWorkload(groth16::Groth16Workload& inner, const std::deque<std::shared_ptr<ProofRecord>>& batch, Engine::Impl& engine,
                 const std::vector<Device*>& devices)
      : inner_(inner), batch_(batch), engine_(engine), devices_(devices), set_up_ended_(devices.size()) {}

  int job_count() const override { return inner_.job_count(); }
  int proof_count() const override { return inner_.proof_count(); }
  int proof_of(int job) const override { return inner_.proof_of(job); }
  JobMemoryPlan memory_plan(int job) const override { return inner_.memory_plan(job); }
  Bytes resident_bytes() const override { return inner_.resident_bytes(); }
  asio::awaitable<void> set_up(Device& device, int device_index) override {
    co_await inner_.set_up(device, device_index);
    set_up_ended_.at(static_cast<std::size_t>(device_index)) = Clock::now();
  }
  asio::awaitable<void> tear_down(Device& device, int device_index) override { return inner_.tear_down(device, device_index); }

  asio::awaitable<void> prepare(int job, Device& device, std::span<const HostRange> abc) override {
    auto& record = *batch_.at(static_cast<std::size_t>(job));
    const auto where = std::find(devices_.begin(), devices_.end(), &device);
    const int gpu = where != devices_.end() ? static_cast<int>(where - devices_.begin()) : -1;
    {
      // Its run was ready for it once its GPU was set up, or when it joined a run already set up.
      const auto now = Clock::now();
      const auto set_up = gpu >= 0 ? set_up_ended_.at(static_cast<std::size_t>(gpu)) : std::nullopt;
      std::lock_guard lock(record.mutex);
      STAGEHAND_ASSERT(record.taken.has_value(), "proof {} reached its host step without leaving the queue", record.id);
      if (!record.prepared) {
        record.ready = std::clamp(set_up.value_or(*record.taken), *record.taken, now);
        record.prepared = now;
      }
    }
    check_cancelled(job);
    {
      std::lock_guard lock(engine_.mutex);
      if (gpu >= 0 && record.gpu != gpu) {
        if (record.gpu >= 0) engine_.gpu_left(record.gpu);  // its first GPU was lost under it
        record.gpu = gpu;
        engine_.gpu_started(gpu);
      }
    }
    co_await inner_.prepare(job, device, abc);
  }
  asio::awaitable<JobTimes> run_program(int job, JobContext& context) override {
    auto& record = *batch_.at(static_cast<std::size_t>(job));
    {
      // A proof moved off a lost GPU runs its program again: this attempt's instants count.
      std::lock_guard lock(record.mutex);
      record.program_started = Clock::now();
      record.program_ended.reset();
    }
    check_cancelled(job);
    auto times = co_await inner_.run_program(job, context);
    std::lock_guard lock(record.mutex);
    record.program_ended = Clock::now();
    co_return times;
  }
  asio::awaitable<void> finish(int job, Device& device) override {
    check_cancelled(job);
    return inner_.finish(job, device);
  }
  void abandon(int job) override { inner_.abandon(job); }

 private:
  void check_cancelled(int job) const {
    if (batch_.at(static_cast<std::size_t>(job))->cancel_requested.load()) throw std::runtime_error("cancelled while running");
  }

  groth16::Groth16Workload& inner_;
  const std::deque<std::shared_ptr<ProofRecord>>& batch_;
  Engine::Impl& engine_;
  const std::vector<Device*>& devices_;
  std::vector<std::optional<Clock::time_point>> set_up_ended_;  // by device index (the run's thread only)
};

}  // namespace

void Engine::Impl::release_device_states(const std::vector<std::shared_ptr<groth16::DeviceKeyState>>& states,
                                         bool with_kept_staging) {
  if (states.empty() && !(with_kept_staging && !kept_pinned.empty())) return;
  try {
    backend->run([&]() -> asio::awaitable<void> {
      for (const auto& state : states) co_await state->release();
      if (!with_kept_staging) co_return;
      auto buffers = std::exchange(kept_pinned, {});
      const auto& devices = backend->devices();
      for (const auto& [index, ranges] : buffers) {
        for (const auto& range : ranges) {
          try {
            co_await devices.at(static_cast<std::size_t>(index))->free_pinned_host(range);
          } catch (const DeviceError&) {
            // A lost device: the host memory goes with the process.
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
  for (const auto& entry : gone) states.push_back(entry.device_state);
  release_device_states(states, true);
  std::lock_guard lock(mutex);
  std::erase_if(retired, [&](const Retired& entry) {
    return std::any_of(gone.begin(), gone.end(), [&](const Retired& given) { return given.device_state == entry.device_state; });
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
    expire_locked(Clock::now());
    if (queue.empty()) {
      if (!stopping) continue;  // what was queued had expired
      // Stopping, nothing left: every key's device state goes back before the devices close.
      std::vector<std::shared_ptr<groth16::DeviceKeyState>> states;
      for (const auto& [name, key] : keys) states.push_back(key.device_state);
      lock.unlock();
      release_device_states(states, true);
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
  expire_locked(dispatched);
  if (queue.empty()) return;
  const std::string name = queue.front(dispatched)->key;
  auto batch = take_queued_locked(name, std::min(config.engine.max_batch, run_room()), false, dispatched);
  STAGEHAND_ASSERT(!batch.empty(), "the queue's front proof (key {}) was not taken into its run", name);
  auto& key = keys.at(name);
  ++batches;
  const auto proving_key = key.key;
  const auto sizes = key.sizes;
  const Bytes proof_bytes = key.proof_bytes;
  const auto key_path = key.path;
  const auto device_state = key.device_state;
  key.last_batch = batches;
  // The other keys set up on the devices stay there while this batch loses nothing by it
  // (states_to_give_back); the least recently proved go first.
  std::vector<std::pair<std::uint64_t, std::shared_ptr<groth16::DeviceKeyState>>> others;
  for (const auto& [other_name, other] : keys) {
    if (other_name != name && other.device_state->holds_anything()) others.emplace_back(other.last_batch, other.device_state);
  }
  std::sort(others.begin(), others.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  lock.unlock();
  std::vector<Bytes> held;
  for (const auto& other : others) held.push_back(other.second->device_bytes());
  const std::size_t give_back = states_to_give_back(*sizes, proof_bytes, held);
  std::vector<std::shared_ptr<groth16::DeviceKeyState>> given_back;
  Bytes held_by_others = 0;
  for (std::size_t i = 0; i < others.size(); ++i) {
    if (i < give_back) {
      given_back.push_back(others[i].second);
    } else {
      held_by_others += held[i];
    }
  }
  release_device_states(given_back);
  run_batch(name, proving_key, *sizes, key_path, device_state, held_by_others, std::move(batch), dispatched);
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
  for (const auto& record : taken) {
    std::lock_guard record_lock(record->mutex);
    record->result.state = ProofState::running;
    record->taken = now;
  }
  if (!taken.empty()) space.notify_all();
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
    if (needed + held <= smallest && layout.abc_step == alone.abc_step && layout.placement == alone.placement) return first;
  }
  return held_oldest_first.size();
}

void Engine::Impl::run_batch(const std::string& key_name, const std::shared_ptr<const groth16::ProvingKey>& key,
                             const groth16::KeySizes& sizes, const std::filesystem::path& key_path, const std::shared_ptr<groth16::DeviceKeyState>& device_state,
                             Bytes held_by_others, std::vector<std::shared_ptr<ProofRecord>> batch, Clock::time_point dispatched) {
  // The run's proofs by job index: the batch, then those that join while it runs (deques: the
  // run's callbacks hold elements while others join).
  std::deque<std::shared_ptr<ProofRecord>> run_proofs(batch.begin(), batch.end());
  std::deque<std::optional<std::pair<std::string, std::string>>> texts(batch.size());
  std::deque<bool> ended(batch.size(), false);
  // What wakes the feeder below: the engine's news (posted from any thread) and each proof's end.
  const auto news = std::make_shared<AsyncWaitList>();
  auto finish = [&](std::size_t index, ProofState state, std::string error) {
    if (ended[index]) return;
    ended[index] = true;
    const auto& record = run_proofs[index];
    {
      std::lock_guard lock(mutex);
      if (record->gpu >= 0) gpu_ended(record->gpu);
      --running;
      key_proof_left(key_name, true);
    }
    if (state == ProofState::done) {
      end_proof(record, state, {}, std::move(texts[index]->first), std::move(texts[index]->second));
    } else {
      end_proof(record, state, std::move(error));
    }
  };
  auto proof_job = [&](const ProofRecord& record) {
    groth16::ProofJob job;
    job.wtns = fmt::format("proof {} (key {})", record.id, key_name);
    job.randomness = config.engine.seed ? groth16::ProofRandomness::from_seed(*config.engine.seed + record.id)
                                        : groth16::ProofRandomness::from_system();
    job.wtns_bytes = record.wtns;
    return job;
  };

  try {
    std::vector<groth16::ProofJob> jobs;
    for (const auto& record : batch) jobs.push_back(proof_job(*record));
    const auto& devices = backend->devices();
    const bool on_gpu = backend->on_gpu();
    auto settings = settings_for(config.run, config.engine.policy);
    HostWork host_work(on_gpu ? host_work_threads(settings.workers_per_device, devices.size()) : 0);
    groth16::ProofChecks checks;
    checks.verify = config.engine.verify;
    auto on_proof = [&](int job, const groth16::Proof& proof, const std::vector<math::Fr>& signals) {
      texts.at(static_cast<std::size_t>(job)).emplace(groth16::proof_json(proof), groth16::public_json(signals));
    };
    const auto layout = proof_layout(sizes, settings);
    // The other keys kept set up are outside this run's budget (their layout left this one's as
    // it is alone: states_to_give_back).
    settings.resident_bytes += held_by_others;
    // The key stays set up between its runs unless this one keeps other sets there (a GPU lost
    // since makes the plan smaller).
    if (!device_state->made_for(layout.abc_step == groth16::AbcStep::device, layout.placement)) release_device_states({device_state});
    groth16::Groth16Workload proofs_workload(*key, key_path, std::move(jobs), host_work, config.engine.threads, on_proof, checks,
                                             layout.abc_step, layout.placement,
                                             config.engine.keep_key_on_device ? device_state : nullptr, &sizes);
    EngineWorkload workload(proofs_workload, run_proofs, *this, devices);

    std::map<int, const VramBudget*> budgets;  // the coordinator's thread only
    auto sample = [&] {
      std::lock_guard lock(mutex);
      sample_devices(budgets);
    };
    CoordinatorHooks hooks;
    if (config.engine.keep_key_on_device) {
      // The pinned staging pool stays for the next batch, as the key does.
      auto count = [this](int device) {
        Bytes bytes = 0;
        for (const auto& range : kept_pinned[device]) bytes += range.bytes;
        std::lock_guard lock(mutex);
        if (static_cast<std::size_t>(device) < gpus.size()) gpus[static_cast<std::size_t>(device)].pinned_kept = bytes;
      };
      hooks.kept_pinned = [this, count](int device) {
        auto buffers = std::exchange(kept_pinned[device], {});
        count(device);
        return buffers;
      };
      hooks.keep_pinned = [this, count](int device, std::vector<HostRange> buffers) {
        auto& kept = kept_pinned[device];
        kept.insert(kept.end(), buffers.begin(), buffers.end());
        count(device);
      };
    }
    PageableArena pageable;
    hooks.pageable_memory = [&pageable](Bytes bytes) { return pageable.take(bytes); };
    hooks.on_budget = [&](int device, const VramBudget& budget) { budgets[device] = &budget; };
    hooks.on_budget_gone = [&](int device, const VramBudget&) {
      budgets.erase(device);
      sample();
    };
    hooks.on_job_done = [&](const JobRecord& record) {
      sample();
      const auto index = static_cast<std::size_t>(record.index);
      auto& proof = *run_proofs.at(index);
      {
        std::lock_guard lock(proof.mutex);
        proof.check_seconds = proofs_workload.check_seconds(record.index);
      }
      if (record.completed() && texts.at(index)) {
        finish(index, ProofState::done, {});
      } else if (proof.cancel_requested.load()) {
        finish(index, ProofState::cancelled, record.completed() ? "cancelled" : record.error);
      } else {
        finish(index, ProofState::failed, record.completed() ? "the run ended without a proof for it" : record.error);
      }
      news->notify_all();
    };
    // The run's own trace where [engine] trace_dir asks for one (the backend's keeps only a hash).
    std::optional<Trace> run_trace;
    if (!config.engine.trace_dir.empty()) run_trace.emplace(true);
    const KernelTraceScope kernels_traced(*backend, run_trace && on_gpu ? &*run_trace : nullptr);
    if (run_trace && on_gpu && !devices.empty()) {
      // The engine's own steps before the run, on the device's clock (a GPU's is the host's
      // steady clock; the simulator's is its own, which the engine's steps do not advance).
      const Nanoseconds now_ns = devices.front()->now();
      const auto at = [&](Clock::time_point t) {
        return now_ns - std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
      };
      const auto track = run_trace->track("engine", "dispatcher");
      run_trace->span(track, "queued (the batch's first proof)", "engine", at(batch.front()->submitted), at(dispatched));
      run_trace->span(track, "dispatch: other keys' states, the layout, the workload", "engine", at(dispatched), now_ns);
    }

    // Proofs of the key that arrive while the run goes on join it, so that the GPUs go from one
    // proof to the next without a run's end and the next one's start between them (under load the
    // drain between batches cost about a tenth of the throughput). Only those at the queue's front
    // join (by class, then arrival: none overtakes another key's proof, which runs next), and only
    // while the run has room (run_room). The run takes no more, and ends once its proofs have,
    // when they have all ended with none of its key at the queue's head within [engine] linger_ms
    // (linger_locked), when a key's device state waits to be given back, when the engine stops, or
    // at max_batch proofs. So a critical proof of this key takes the run's next free place, once
    // one of its proofs ends; kernels are not preempted, so one of another key waits for the run's
    // unended proofs (at most run_room) and then its own key's set-up, and no longer.
    JobFeed feed;
    bool run_over = false;  // run_coordinator has returned
    bool feeder_done = false;
    AsyncWaitList feeder_ended;
    // The feeder waits for news only while some of the run's proofs are unended (with none, it
    // closes the feed): their work keeps the backend's run() going (a GPU's operations are tracked
    // work, the simulator's are its events), so a run that can no longer go on still ends (on the
    // simulator: as a deadlock) instead of waiting for news for ever.
    auto feed_run = [&]() -> asio::awaitable<void> {
      try {
        for (;;) {
          std::vector<std::shared_ptr<ProofRecord>> joining;
          bool close = run_over;
          if (!close) {
            std::unique_lock lock(mutex);
            // Set under the lock of the first look at the queue: nothing queued before it is missed.
            if (!wake_open_run) wake_open_run = [this, news] { backend->post_from_outside([news] { news->notify_all(); }); };
            close = stopping || !retired.empty() || run_proofs.size() >= config.engine.max_batch;
            if (!close) {
              const auto unended = static_cast<std::size_t>(std::count(ended.begin(), ended.end(), false));
              const std::size_t room = std::min(config.engine.max_batch - run_proofs.size(), run_room() - std::min(run_room(), unended));
              joining = take_queued_locked(key_name, room, true, Clock::now());
              if (joining.empty() && unended == 0) joining = linger_locked(lock, key_name, room);
              close = joining.empty() && unended == 0;
            }
          }
          for (const auto& record : joining) {
            const int job = proofs_workload.add_job(proof_job(*record));
            run_proofs.push_back(record);
            texts.emplace_back();
            ended.push_back(false);
            if (!feed.add()) {
              finish(static_cast<std::size_t>(job), ProofState::failed, "the run ended before this proof could join it");
            }
          }
          if (close) break;
          co_await news->wait();
        }
      } catch (...) {
        // Nothing above throws but an allocation; the run then takes no more and ends as it is.
      }
      feed.close();
      {
        std::lock_guard lock(mutex);
        wake_open_run = nullptr;
      }
      feeder_done = true;
      feeder_ended.notify_all();
    };

    RunReport report;
    backend->run([&]() -> asio::awaitable<void> {
      asio::co_spawn(co_await asio::this_coro::executor, feed_run(), asio::detached);
      std::exception_ptr failure;
      try {
        report = co_await run_coordinator(devices, settings, workload, run_trace ? *run_trace : backend->trace(), hooks, &feed);
      } catch (...) {
        failure = std::current_exception();
      }
      run_over = true;
      news->notify_all();
      while (!feeder_done) co_await feeder_ended.wait();
      if (failure) std::rethrow_exception(failure);
      // A GPU lost in the run keeps nothing that could be freed: its part of the state goes.
      for (std::size_t i = 0; i < devices.size(); ++i) {
        bool lost = false;
        {
          std::lock_guard lock(mutex);
          lost = i < gpus.size() && gpus[i].lost;
        }
        if (lost) co_await device_state->release_device(static_cast<int>(i));
      }
    }());
    if (run_trace) write_run_trace(*run_trace, report, key_name, run_proofs.size(), on_gpu);
  } catch (const std::exception& error) {
    for (std::size_t i = 0; i < run_proofs.size(); ++i) finish(i, ProofState::failed, fmt::format("the run failed: {}", error.what()));
  }
  // The coordinator reports every job; a proof it did not report still gets an answer.
  for (std::size_t i = 0; i < run_proofs.size(); ++i) finish(i, ProofState::failed, "the run ended without reporting this proof");
  std::lock_guard lock(mutex);
  sample_devices({});  // what the run left on the devices (the key, where it stays set up)
}

std::vector<std::shared_ptr<ProofRecord>> Engine::Impl::linger_locked(std::unique_lock<std::mutex>& lock, const std::string& name,
                                                                      std::size_t room) {
  STAGEHAND_ASSERT(lock.owns_lock() && room > 0, "a run lingers for key {} with the engine unlocked or no room", name);
  std::vector<std::shared_ptr<ProofRecord>> joining;
  if (config.engine.linger_ms <= 0) return joining;
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(config.engine.linger_ms));
  // The wait blocks the run's thread instead of waiting on the backend's loop: with none of the
  // run's proofs unended nothing else in the run can go on, and the simulator takes a program
  // that waits for news with no work of its own for a deadlock (backend.hpp). Submits, retiring a
  // key and stopping all notify `work` (wake_dispatcher_locked).
  while (work.wait_until(lock, until, [&] { return stopping || !retired.empty() || !queue.empty(); })) {
    if (stopping || !retired.empty()) break;
    const auto now = Clock::now();
    expire_locked(now);
    if (queue.empty()) continue;  // what came had expired: the linger goes on
    if (queue.front(now)->key != name) break;  // another key's proof runs next
    joining = take_queued_locked(name, room, true, now);
    break;
  }
  STAGEHAND_ASSERT(joining.size() <= room, "a lingering run of key {} took {} proofs for {} places", name, joining.size(), room);
  return joining;
}

void Engine::Impl::write_run_trace(const Trace& trace, const RunReport& report, const std::string& key_name, std::size_t proofs,
                                   bool on_gpu) {
  std::uint64_t number = 0;
  {
    std::lock_guard lock(mutex);
    number = batches;
  }
  const auto& dir = config.engine.trace_dir;
  auto file = [&](std::uint64_t n, const char* extension) { return dir / fmt::format("run-{:06}{}", n, extension); };
  try {
    trace.write_chrome_json(file(number, ".trace.json"));
    PictureOptions options;
    options.worker_rows = true;
    options.job_rows = true;
    options.job_word = "proof";
    // The batch's own window: the engine's device clocks count from its start.
    options.from_ns = std::numeric_limits<Nanoseconds>::max();
    for (const auto& event : trace.events()) {
      options.from_ns = std::min(options.from_ns, event.start_ns);
      options.to_ns = std::max(options.to_ns, event.end_ns);
    }
    write_svg_picture({PictureLane{report.policy, headline_figures(report), &trace}}, file(number, ".svg"),
                      fmt::format("stagehand engine: batch {}, {} proof{} of key {}, {}", number, proofs, proofs == 1 ? "" : "s",
                                  key_name, on_gpu ? "CUDA" : "simulator (the coordinator's rows)"),
                      options);
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
