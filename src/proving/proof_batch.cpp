#include "proving/proof_batch.hpp"

#include "proving/listened_workload.hpp"

#include "coordinator/async_wait.hpp"
#include "coordinator/pageable_arena.hpp"
#include "device/errors.hpp"
#include "groth16/curve.hpp"
#include "groth16/json.hpp"
#include "util/assert.hpp"
#include "workloads/host_work.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace stagehand::proving {
std::vector<DeviceCounters> counters_of(const std::vector<Device*>& devices) {
  std::vector<DeviceCounters> counters;
  for (auto* device : devices) counters.push_back(device->counters());
  return counters;
}

namespace {

std::vector<DeviceMemory> memory_of(const std::vector<Device*>& devices) {
  std::vector<DeviceMemory> memory(devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    try {
      memory[i].free_bytes = devices[i]->memory_info().free_bytes;
      memory[i].held_bytes = devices[i]->counters().allocated_bytes + devices[i]->pool_stats().reserved_bytes;
      memory[i].known = true;
    } catch (const DeviceError&) {
      // A lost device answers nothing: its memory stays unknown.
    }
  }
  return memory;
}

// The batch's proofs by job index: their texts as the workload makes them, and whether each has
// ended (the run's thread only). Deques: jobs join while the run holds references to others.
class Ends {
 public:
  explicit Ends(BatchListener& listener) : listener_(listener) {}
  void add() {
    texts_.emplace_back();
    ended_.push_back(false);
    ++unended_;
  }
  std::size_t size() const { return ended_.size(); }
  std::size_t unended() const { return unended_; }
  bool ended(std::size_t job) const { return ended_.at(job); }
  std::optional<std::pair<std::string, std::string>>& texts(std::size_t job) { return texts_.at(job); }
  // The first end of a job counts; later ones (the fallbacks after a run) are no news.
  void end(ProofEnd end) {
    const auto job = static_cast<std::size_t>(end.job);
    STAGEHAND_ASSERT(job < ended_.size(), "job {} of a batch of {} ended", end.job, ended_.size());
    if (ended_[job]) return;
    ended_[job] = true;
    STAGEHAND_ASSERT(unended_ > 0, "job {} ended with none of the batch's proofs unended", end.job);
    --unended_;
    listener_.ended(end);
  }
  void fail(std::size_t job, std::string error) {
    ProofEnd end;
    end.job = static_cast<int>(job);
    end.error = std::move(error);
    this->end(std::move(end));
  }

 private:
  BatchListener& listener_;
  std::deque<std::optional<std::pair<std::string, std::string>>> texts_;
  std::deque<bool> ended_;
  std::size_t unended_ = 0;
};

// A batch's job as the workload of its key's curve takes it, with r and s over that curve.
template <class Job>
Job curve_job(BatchJob job) {
  using Randomness = decltype(Job::randomness);
  Job made;
  made.wtns = std::move(job.wtns);
  made.wtns_bytes = std::move(job.wtns_bytes);
  made.randomness = job.seed ? Randomness::from_seed(*job.seed) : Randomness::from_system();
  return made;
}

// The checks as the workload of the key's curve takes them (a constraint system of the other
// curve refused before anything runs).
template <class Key>
typename groth16::BasicGroth16Workload<Key>::Checks curve_checks(const BatchChecks& checks, const BatchKey& key) {
  typename groth16::BasicGroth16Workload<Key>::Checks made;
  made.verify = checks.verify;
  made.r1cs = r1cs_of_curve<Key>(checks.r1cs, checks.r1cs_path, key.path);
  made.r1cs_path = checks.r1cs_path;
  return made;
}

// One run of the batch on the backend: the hooks, the feeder of joining proofs, the coordinator;
// over the workload of the key's curve.
template <class CurveWorkload>
class BatchRun {
 public:
  BatchRun(Backend& backend, const BatchKey& key, const BatchSettings& settings, BatchListener& listener,
           CurveWorkload& workload, Workload& listened, Ends& ends)
      : backend_(backend),
        key_(key),
        settings_(settings),
        listener_(listener),
        workload_(workload),
        listened_(listened),
        ends_(ends) {}

  RunReport run(Trace& trace);

 private:
  CoordinatorHooks hooks();
  void end_reported(const JobRecord& record);
  asio::awaitable<void> feed();
  void add_joining(std::vector<BatchJob> jobs);

  Backend& backend_;
  const BatchKey& key_;
  const BatchSettings& settings_;
  BatchListener& listener_;
  CurveWorkload& workload_;
  Workload& listened_;
  Ends& ends_;
  PageableArena pageable_;  // serial uploads a, b, c from it; prestage and two-lock pin it in place
  std::map<int, const VramBudget*> budgets_;
  // What wakes the feeder: the listener's news (posted from any thread) and each proof's end.
  std::shared_ptr<AsyncWaitList> news_ = std::make_shared<AsyncWaitList>();
  JobFeed feed_;
  bool run_over_ = false;  // run_coordinator has returned
  bool feeder_done_ = false;
  AsyncWaitList feeder_ended_;
};

template <class CurveWorkload>
CoordinatorHooks BatchRun<CurveWorkload>::hooks() {
  CoordinatorHooks hooks;
  hooks.kept_pinned = settings_.kept_pinned;
  hooks.keep_pinned = settings_.keep_pinned;
  hooks.pageable_memory = [this](Bytes bytes) { return pageable_.take(bytes); };
  hooks.on_budget = [this](int device, const VramBudget& budget) { budgets_[device] = &budget; };
  hooks.on_budget_gone = [this](int device, const VramBudget&) {
    budgets_.erase(device);
    listener_.sample(budgets_);
  };
  hooks.on_job_done = [this](const JobRecord& record) {
    listener_.sample(budgets_);
    end_reported(record);
    news_->notify_all();
  };
  return hooks;
}

template <class CurveWorkload>
void BatchRun<CurveWorkload>::end_reported(const JobRecord& record) {
  const auto job = static_cast<std::size_t>(record.index);
  STAGEHAND_ASSERT(record.index >= 0 && job < ends_.size() && !ends_.ended(job),
                   "the coordinator reported job {} of a batch of {} that is unknown or has ended", record.index,
                   ends_.size());
  ProofEnd end;
  end.job = record.index;
  end.record = &record;
  end.check_seconds = workload_.check_seconds(record.index);
  auto& texts = ends_.texts(job);
  if (record.completed() && texts) {
    end.made = true;
    end.proof_json = std::move(texts->first);
    end.public_json = std::move(texts->second);
  } else {
    end.error = record.completed() ? "the run ended without a proof for it" : record.error;
  }
  ends_.end(std::move(end));
}

template <class CurveWorkload>
void BatchRun<CurveWorkload>::add_joining(std::vector<BatchJob> jobs) {
  for (auto& job : jobs) {
    const int index = workload_.add_job(curve_job<typename CurveWorkload::Job>(std::move(job)));
    ends_.add();
    STAGEHAND_ASSERT(static_cast<std::size_t>(index) + 1 == ends_.size(),
                     "a joining proof became job {} of a batch of {}", index, ends_.size());
    if (!feed_.add()) ends_.fail(static_cast<std::size_t>(index), "the run ended before this proof could join it");
  }
}

// The feeder waits for news only while some of the batch's proofs are unended (with none, the
// listener closes): their work keeps the backend's run() going (a GPU's operations are tracked
// work, the simulator's are its events), so a run that can no longer go on still ends (on the
// simulator: as a deadlock) instead of waiting for news for ever.
template <class CurveWorkload>
asio::awaitable<void> BatchRun<CurveWorkload>::feed() {
  try {
    listener_.open([backend = &backend_, news = news_] { backend->post_from_outside([news] { news->notify_all(); }); });
    for (;;) {
      Joining joining = run_over_ ? Joining{} : listener_.join(ends_.size(), ends_.unended());
      add_joining(std::move(joining.jobs));
      if (joining.close) break;
      co_await news_->wait();
    }
  } catch (...) {
    // Nothing above throws but an allocation; the run then takes no more and ends as it is.
  }
  feed_.close();
  listener_.closed();
  feeder_done_ = true;
  feeder_ended_.notify_all();
}

template <class CurveWorkload>
RunReport BatchRun<CurveWorkload>::run(Trace& trace) {
  RunReport report;
  const auto& devices = backend_.devices();
  backend_.run([&]() -> asio::awaitable<void> {
    asio::co_spawn(co_await asio::this_coro::executor, feed(), asio::detached);
    std::exception_ptr failure;
    try {
      report = co_await run_coordinator(devices, settings_.coordinator, listened_, trace, hooks(), &feed_);
    } catch (...) {
      failure = std::current_exception();
    }
    run_over_ = true;
    news_->notify_all();
    while (!feeder_done_) co_await feeder_ended_.wait();
    if (failure) std::rethrow_exception(failure);
    // A GPU lost in the run keeps nothing that could be freed: its part of the kept state goes.
    for (std::size_t i = 0; i < devices.size(); ++i) {
      if (key_.device_state && listener_.lost(static_cast<int>(i)))
        co_await key_.device_state->release_device(static_cast<int>(i));
    }
  }());
  return report;
}

// The batch's run over its key's curve: the curve's workload, jobs and proof texts.
template <class Key>
void run_curve(Backend& backend, const BatchKey& batch_key, const Key& key, const BatchSettings& settings,
               BatchListener& listener, std::vector<BatchJob> jobs, Ends& ends, BatchFigures& figures) {
  using CurveWorkload = groth16::BasicGroth16Workload<Key>;
  const auto& devices = backend.devices();
  auto checks = curve_checks<Key>(settings.checks, batch_key);
  std::vector<typename CurveWorkload::Job> curve_jobs;
  for (auto& job : jobs) curve_jobs.push_back(curve_job<typename CurveWorkload::Job>(std::move(job)));
  // Threads for the host steps of the jobs (a/b/c, G2 MSM): inline on the simulator.
  HostWork host_work(backend.on_gpu() ? host_work_threads(settings.coordinator.workers_per_device, devices.size()) : 0);
  auto on_proof = [&ends](int job, const typename CurveWorkload::Proof& proof,
                          const std::vector<typename CurveWorkload::Fr>& signals) {
    auto& texts = ends.texts(static_cast<std::size_t>(job));
    STAGEHAND_ASSERT(!texts && !ends.ended(static_cast<std::size_t>(job)), "job {} made a proof twice or after its end",
                     job);
    if constexpr (Key::curve == groth16::Curve::bn254) {
      texts.emplace(groth16::bn254::proof_json(proof), groth16::bn254::public_json(signals));
    } else {
      texts.emplace(groth16::proof_json(proof), groth16::public_json(signals));
    }
  };
  const auto& layout = settings.layout;
  CurveWorkload workload(key, batch_key.path, std::move(curve_jobs), host_work, settings.threads, on_proof,
                         std::move(checks), layout.abc_step, layout.placement, batch_key.device_state, batch_key.sizes);
  ListenedWorkload listened(workload, listener, devices);
  Trace& trace = settings.trace != nullptr ? *settings.trace : backend.trace();
  {
    const KernelTraceScope kernels_traced(backend, settings.trace_kernels ? &trace : nullptr);
    figures.report =
        BatchRun<CurveWorkload>(backend, batch_key, settings, listener, workload, listened, ends).run(trace);
  }
  figures.set_up_seconds = workload.set_up_seconds();
  figures.counters_after_set_up = workload.counters_after_set_up();
  figures.resident_bytes = workload.resident_bytes();
  figures.msm_scratch_bytes = workload.msm_scratch_bytes();
  figures.h_scratch_bytes = workload.h_scratch_bytes();
}

}  // namespace

ProofBatch::ProofBatch(Backend& backend, BatchKey key, BatchSettings settings, BatchListener& listener)
    : backend_(backend), key_(std::move(key)), settings_(std::move(settings)), listener_(listener) {
  STAGEHAND_ASSERT(std::visit([](const auto* key) { return key != nullptr; }, key_.key) && key_.sizes != nullptr,
                   "a proof batch of {} without its key or its sizes", key_.path.string());
}

BatchFigures ProofBatch::run(std::vector<BatchJob> jobs) {
  BatchFigures figures;
  const auto& devices = backend_.devices();
  Ends ends(listener_);
  for (std::size_t i = 0; i < jobs.size(); ++i) ends.add();
  figures.memory_before = memory_of(devices);
  figures.counters_before = counters_of(devices);
  try {
    std::visit(
        [&](const auto* key) { run_curve(backend_, key_, *key, settings_, listener_, std::move(jobs), ends, figures); },
        key_.key);
  } catch (const std::exception& error) {
    figures.failure = error.what();
    for (std::size_t i = 0; i < ends.size(); ++i) ends.fail(i, fmt::format("the run failed: {}", error.what()));
  }
  // The coordinator reports every job; a proof it did not report still gets an answer.
  for (std::size_t i = 0; i < ends.size(); ++i) ends.fail(i, "the run ended without reporting this proof");
  STAGEHAND_ASSERT(ends.unended() == 0, "a batch of {} proofs returns with {} unended", ends.size(), ends.unended());
  figures.proofs = ends.size();
  figures.counters_after = counters_of(devices);
  figures.memory_after = memory_of(devices);
  return figures;
}

}  // namespace stagehand::proving
