#include "coordinator/coordinator.hpp"

#include "coordinator/lane.hpp"
#include "coordinator/run_report.hpp"
#include "coordinator/worker.hpp"
#include "device/format.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <limits>
#include <memory>
#include <stdexcept>

namespace stagehand {
namespace {

// The pool's settings for the policy, on the lane's device.
void configure_pool(Lane& lane, Policy policy) {
  if (policy == Policy::budgeted) {
    // The budget decides who gets memory: the pool keeps what it has (no release at every
    // synchronise, no regrowth cost) and never makes one stream wait for another's free.
    lane.device.set_pool_release_threshold(lane.budget->capacity_bytes());
    lane.device.set_pool_cross_stream_reuse(false);
  } else if (policy != Policy::serial) {
    // With pre-staging the production prover took its working memory from the stream-ordered
    // pool and kept freed memory cached there (a high release threshold, to avoid allocating
    // anew every partition): exactly what a plain cudaMalloc cannot use on the incident's
    // driver, and what the fix's synchronise-and-trim gave back.
    lane.device.set_pool_release_threshold(std::numeric_limits<Bytes>::max());
  }
}

// Budgeted: the lane's budget, of the device's memory less the margin and the residents.
void create_budget(Lane& lane, Run& run) {
  const auto& settings = run.settings;
  auto total = lane.device.properties().total_memory_bytes;
  auto reserved = settings.safety_margin_bytes + settings.resident_bytes + run.workload.resident_bytes();
  auto capacity = total > reserved ? total - reserved : 0;
  lane.budget = std::make_unique<VramBudget>(lane.device, lane.compute_lock, capacity, settings.budget_rules,
                                             asio::any_io_executor(lane.strand));
  lane.budget->set_log([&run](const std::string& line) { run.log.push_back(line); });
  // On the lane's own process, beside its workers' rows: Perfetto shows the two as counter tracks.
  auto track = run.trace.track(fmt::format("GPU {} coordinator", lane.index), "VRAM budget");
  lane.budget->set_observer(
      [&run, &lane, track, held_was = ~Bytes{0}, capacity_was = ~Bytes{0}](Bytes held, Bytes capacity) mutable {
        auto now = lane.device.now();
        if (held != held_was)
          run.trace.counter(track, "VRAM reserved (budget)", "memory", now, static_cast<std::int64_t>(held));
        if (capacity != capacity_was) {
          run.trace.counter(track, "VRAM budget capacity", "memory", now, static_cast<std::int64_t>(capacity));
        }
        held_was = held;
        capacity_was = capacity;
      });
  if (run.hooks.on_budget) run.hooks.on_budget(lane.index, *lane.budget);
}

// The lane's budget, pool settings and the workload's set-up; a failure is kept in the lane and
// fails its jobs.
asio::awaitable<void> set_up_lane(Lane& lane, Run& run) {
  const auto& settings = run.settings;
  if (settings.policy == Policy::budgeted) create_budget(lane, run);
  std::exception_ptr failure;
  if (run.hooks.kept_pinned && run.hooks.keep_pinned) {
    auto kept = run.hooks.kept_pinned(lane.index);
    lane.results.adopt(std::move(kept.results));
    KeptPinned left{lane.staging.adopt(std::move(kept.staging)), {}};
    if (!left.empty()) run.hooks.keep_pinned(lane.index, std::move(left));
  }
  try {
    configure_pool(lane, settings.policy);
    co_await run.workload.set_up(lane.device, lane.index);
    if (settings.policy == Policy::budgeted && settings.prewarm_pinned_pool && run.workload.job_count() > 0) {
      const auto began = lane.device.now();
      const auto plan = run.workload.memory_plan(0);
      co_await lane.staging.prewarm(plan, settings.workers_per_device);
      run.log.push_back(fmt::format("GPU {}: pinned pool prewarmed with {} in {}", lane.index,
                                    format_bytes(lane.staging.pinned_bytes()),
                                    format_duration(lane.device.now() - began)));
    }
  } catch (...) {
    failure = std::current_exception();
  }
  lane.setup_failure = failure;
  if (failure)
    run.log.push_back(fmt::format("GPU {} could not be set up: {}; it takes no jobs", lane.index, describe(failure)));
}

// What a run's coroutines share, owned by all of them (Run::keepalive): the run coroutine and
// every worker. Members are destroyed workers first, then lanes, then the run they refer to.
struct RunState {
  explicit RunState(Run r) : run(std::move(r)) {}
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;
  ~RunState() {
    // Checkers that read a budget stop here, while it is still whole.
    if (!run.hooks.on_budget_gone) return;
    for (auto& lane : lanes) {
      if (lane->budget) run.hooks.on_budget_gone(lane->index, *lane->budget);
    }
  }
  Run run;
  std::vector<std::unique_ptr<Lane>> lanes;
  std::vector<std::unique_ptr<Worker>> workers;
};

asio::awaitable<void> run_worker(std::shared_ptr<RunState> state, Worker& worker) { co_await worker.run(); }

asio::awaitable<void> run_set_up(std::shared_ptr<RunState> state, Lane& lane) {
  co_await set_up_lane(lane, state->run);
}

// A coroutine to run beside others, on its executor.
struct ConcurrentTask {
  asio::any_io_executor executor;
  asio::awaitable<void> body;
};

// Starts every task at once and returns when the last has ended, with the first error one of
// them let escape (none if none did).
asio::awaitable<std::exception_ptr> run_together(std::vector<ConcurrentTask> tasks) {
  int running = static_cast<int>(tasks.size());
  std::exception_ptr first_failure;
  AsyncWaitList all_done;
  for (auto& task : tasks) {
    asio::co_spawn(task.executor, std::move(task.body), [&](std::exception_ptr error) {
      if (error && !first_failure) first_failure = error;
      if (--running == 0) all_done.notify_all();
    });
  }
  while (running > 0) co_await all_done.wait();
  co_return first_failure;
}

// Every GPU set up at once: each one's uploads and precomputed bases beside the others' (set one
// after another, a second GPU would wait for the first's set-up too, and precomputing a 2^24 key's
// bases takes many seconds on the H200: bench/RESULTS.md, "MSMs over precomputed bases", has the
// figure). The workload pins a key's host memory once for all, the first set-up
// doing it while the others wait for it (Workload::set_up). set_up_lane keeps a lane's failure in
// the lane, so nothing escapes here.
asio::awaitable<void> set_up_lanes(const std::shared_ptr<RunState>& state) {
  const auto executor = co_await asio::this_coro::executor;
  std::vector<ConcurrentTask> tasks;
  for (auto& lane : state->lanes) tasks.push_back(ConcurrentTask{executor, run_set_up(state, *lane)});
  co_await run_together(std::move(tasks));
}

// Every lane's workers, each on its lane's strand, until the last one stops; rethrows what escaped
// a worker.
asio::awaitable<void> run_workers(const std::shared_ptr<RunState>& state) {
  auto& run = state->run;
  std::vector<ConcurrentTask> tasks;
  const auto lanes = state->lanes.size();
  STAGEHAND_ASSERT(lanes > 0 && run.settings.first_device >= 0, "a run of {} GPUs with first device {}", lanes,
                   run.settings.first_device);
  for (std::size_t i = 0; i < lanes; ++i) {
    auto& lane = *state->lanes[(i + static_cast<std::size_t>(run.settings.first_device)) % lanes];
    for (int w = 0; w < run.settings.workers_per_device; ++w) {
      state->workers.push_back(make_worker(run.settings.policy, run, lane, w));
      tasks.push_back(ConcurrentTask{lane.strand, run_worker(state, *state->workers.back())});
    }
  }
  if (const auto failure = co_await run_together(std::move(tasks))) std::rethrow_exception(failure);
}

// What went wrong with a GPU, in words; empty if nothing did.
std::string lane_failure(const Lane& lane) {
  if (lane.setup_failure) return "could not be set up: " + describe(lane.setup_failure);
  if (lane.lost) return "lost: " + describe(lane.lost);
  if (lane.worker_failure) return "could not start a worker: " + describe(lane.worker_failure);
  return {};
}

// The jobs still queued when every worker has stopped: no GPU was left to take them (each was
// lost or could not be set up). Each fails with what happened to the GPUs.
void fail_jobs_no_gpu_took(Run& run, Nanoseconds now) {
  run.take_joined_jobs();
  if (run.queue.empty()) return;
  std::string reasons;
  for (const auto* lane : run.lanes) {
    const auto failure = lane_failure(*lane);
    if (!failure.empty()) reasons += fmt::format("{}GPU {} {}", reasons.empty() ? "" : "; ", lane->index, failure);
  }
  const auto error = fmt::format("not run: no GPU could take it ({})", reasons.empty() ? "no GPU took jobs" : reasons);
  for (const int index : run.queue) {
    auto& job = run.jobs[static_cast<std::size_t>(index)];
    STAGEHAND_ASSERT(job.finished_ns < 0, "job {} was queued after its end", index);
    job.error = error;
    job.device = -1;  // it ran on none
    job.finished_ns = now;
    run.workload.abandon(index);
    if (run.hooks.on_job_done) run.hooks.on_job_done(job);
  }
  run.queue.clear();
}

asio::awaitable<void> tear_down_lane(Lane& lane, Workload& workload, const CoordinatorHooks& hooks) {
  if (lane.budget) co_await lane.budget->drain();
  if (hooks.kept_pinned && hooks.keep_pinned && !lane.lost) {
    hooks.keep_pinned(lane.index, KeptPinned{lane.staging.take_idle(), lane.results.take_kept()});
  }
  co_await quietly([&] { return lane.staging.shutdown(); });
  co_await lane.results.shutdown();
  co_await quietly([&] { return workload.tear_down(lane.device, lane.index); });
  try {
    lane.device.set_pool_release_threshold(0);
    lane.device.trim_pool(0);
  } catch (const DeviceError&) {
    // A lost device keeps nothing to trim.
  }
}

}  // namespace

Bytes KeptPinned::bytes() const {
  Bytes bytes = 0;
  for (const auto* buffers : {&staging, &results}) {
    for (const auto& buffer : *buffers) bytes += buffer.bytes;
  }
  return bytes;
}

bool JobFeed::add(int count) {
  if (closed_ || ended_) return false;
  added_ += count;
  if (changed_) changed_();
  return true;
}

void JobFeed::close() {
  closed_ = true;
  if (changed_) changed_();
}

asio::awaitable<RunReport> run_coordinator(std::vector<Device*> devices, CoordinatorSettings settings,
                                           Workload& workload, Trace& trace, CoordinatorHooks hooks, JobFeed* feed) {
  if (devices.empty()) throw std::invalid_argument("run_coordinator: no devices");
  if (workload.job_count() > 0) {
    check_workers_staging_fit(settings.workers_per_device, workload.memory_plan(0), settings.host_staging_budget_bytes,
                              settings.host_staging_budget_where);
  }
  auto state = std::make_shared<RunState>(Run(settings, workload, trace, hooks));
  auto& run = state->run;
  run.keepalive = state;
  run.jobs.resize(static_cast<std::size_t>(run.total_jobs));
  for (int i = 0; i < run.total_jobs; ++i) {
    run.jobs[static_cast<std::size_t>(i)].index = i;
    run.jobs[static_cast<std::size_t>(i)].proof = workload.proof_of(i);
    run.queue.push_back(i);
  }
  // Jobs join until the feed closes or the run ends; the feed outlives the run, its news not.
  struct Unfed {
    JobFeed* feed;
    ~Unfed() {
      if (feed == nullptr) return;
      feed->changed_ = nullptr;
      feed->ended_ = true;
    }
  } unfed{feed};
  if (feed != nullptr) {
    run.feed = feed;
    feed->changed_ = [&run] { run.queue_changed.notify_all(); };
  }
  auto& lanes = state->lanes;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    lanes.push_back(
        std::make_unique<Lane>(*devices[i], static_cast<int>(i), settings, run.random, hooks.pageable_memory));
    run.lanes.push_back(lanes.back().get());
  }
  co_await set_up_lanes(state);
  const auto start = devices.front()->now();
  co_await run_workers(state);
  fail_jobs_no_gpu_took(run, devices.front()->now());
  const auto end = devices.front()->now();
  for (auto& lane : lanes) co_await tear_down_lane(*lane, workload, run.hooks);
  std::vector<std::string> failures;
  for (const auto& lane : lanes) failures.push_back(lane_failure(*lane));
  co_return summarise_run(
      RunTotals{to_string(settings.policy), workload.proof_count(), end - start, run.fallbacks, std::move(failures)},
      devices,
      std::vector<JobRecord>(std::make_move_iterator(run.jobs.begin()), std::make_move_iterator(run.jobs.end())),
      std::move(run.log));
}

}  // namespace stagehand
