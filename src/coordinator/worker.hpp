#pragma once
// A worker of one GPU: takes the run's jobs one after another and runs each the way its policy
// says (policy/*.cpp derive from Worker). What every policy shares lives here: the loop over
// jobs, the streams, the host steps before and after the GPU, taking and leaving a lock, failing
// a job, the trace.

#include "coordinator/coordinator.hpp"
#include "device/errors.hpp"
#include "coordinator/job.hpp"
#include "coordinator/lane.hpp"
#include "util/random.hpp"

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stagehand {

// What the workers of one run share.
struct Run {
  Run(CoordinatorSettings run_settings, Workload& run_workload, Trace& run_trace, CoordinatorHooks run_hooks)
      : settings(std::move(run_settings)),
        workload(run_workload),
        trace(run_trace),
        hooks(std::move(run_hooks)),
        random(settings.seed ^ 0x5eed),
        total_jobs(workload.job_count()) {}
  CoordinatorSettings settings;
  Workload& workload;
  Trace& trace;
  CoordinatorHooks hooks;
  Random random;
  int total_jobs = 0;
  std::deque<JobRecord> jobs;  // a deque: workers hold their job's record while others join
  JobFeed* feed = nullptr;     // where jobs join while the run goes on (none: the workload's only)
  // Jobs that joined through the feed go to the back of the queue.
  void take_joined_jobs();
  // Whether a worker with nothing to take may stop: no job is on a GPU (each may come back) and
  // none can join.
  bool no_more_jobs() const { return jobs_on_gpus == 0 && (feed == nullptr || feed->closed()); }
  // The jobs no worker has taken, in the order to take them: every job at the start, and a job
  // whose GPU was lost under it put back at the front, for another GPU.
  std::deque<int> queue;
  // Jobs taken and not yet off their GPU: each may still come back to the queue, so a worker
  // with nothing to take waits (queue_changed) until none is left.
  int jobs_on_gpus = 0;
  AsyncWaitList queue_changed;
  std::vector<Lane*> lanes;  // every GPU of the run
  std::vector<std::string> log;
  std::uint64_t fallbacks = 0;
  // The run's shared state (this Run, its lanes and workers; coordinator.cpp). Every coroutine the
  // run spawns holds it: when a simulation deadlocks and its suspended frames are destroyed
  // (sim::run_to_completion), they are destroyed in no particular order, and none may outlive
  // what it refers to.
  std::weak_ptr<void> keepalive;
};

// A job's place at a lock: released when held, abandoned when still waiting.
struct LockHold {
  ComputeLock* lock = nullptr;
  ComputeLock::Ticket ticket = 0;
};

std::string describe(std::exception_ptr error);

// Runs `step` and drops its error: cleaning up after a failure (a lost device, say) must go on.
template <class Step>
asio::awaitable<void> quietly(Step step) {
  try {
    co_await step();
  } catch (...) {
  }
}

class Worker {
 public:
  Worker(Run& run, Lane& lane, int index);
  virtual ~Worker() = default;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Takes jobs until none is left; every job taken ends completed or failed.
  asio::awaitable<void> run();

 protected:
  // The policy's way of running one job; what it throws fails the job.
  virtual asio::awaitable<void> run_job(JobRecord& job) = 0;

  void span(const char* name, Nanoseconds start, std::string detail = {});
  void mark(const char* name, std::string detail);
  void fail(JobRecord& job, std::exception_ptr error);
  // The workload's host work before the GPU, filling a, b, c and the extra input
  // (staged_input_sizes of the job's plan).
  asio::awaitable<void> prepare(const char* name, JobRecord& job, const std::vector<HostRange>& inputs);
  // The workload's GPU program, on this worker's streams.
  asio::awaitable<JobTimes> run_program(JobRecord& job, const JobInputs& inputs, JobMemory& memory);
  // Buffers of the caller's ordinary host memory for a, b, c and the extra input.
  std::vector<HostRange> pageable_inputs() const;

  LockHold take_place(ComputeLock& lock, JobRecord& job);
  asio::awaitable<void> wait_for_lock(const LockHold& hold, JobRecord& job);
  void leave(LockHold& hold, JobRecord& job);

  TraceTrack side_track(std::optional<TraceTrack>& track, const char* what);
  // Destroys events, saying nothing when the device is lost (it has no handles left).
  void destroy_events_quietly(const std::vector<EventHandle>& events);

  Run& run_;
  Workload& workload_;
  Lane& lane_;
  Device& device_;
  int index_;
  JobMemoryPlan plan_;  // of the job in hand
  TraceTrack track_;
  StreamHandle compute_;
  StreamHandle upload_;
  // Where pre-staging in chunks hears that its chunks landed, and the chunks in flight. Every
  // worker has them whatever its policy, so that the device's handles, and with them the trace,
  // are numbered alike under every policy.
  StreamHandle landed_;
  std::vector<EventHandle> chunk_done_;

 private:
  asio::awaitable<void> open_streams();
  // The next job for this worker, waiting while the queue is empty but jobs are still on a GPU;
  // none when the run has no more for it (or its GPU can take no more).
  asio::awaitable<std::optional<int>> take_job();
  // A job whose GPU was lost under it goes back to the queue once, for another GPU, if one can
  // take it; true if it did.
  bool retry_elsewhere(JobRecord& job);
  asio::awaitable<void> clear_stream_errors();
  asio::awaitable<void> close_streams();
  // The pinned buffers the program's results come back into (the lane's: result_buffers.hpp),
  // grown to the job's plan.
  asio::awaitable<void> fit_results(Bytes bytes);
  asio::awaitable<void> run_one(JobRecord& job);
  asio::awaitable<void> finish(JobRecord& job);
  asio::awaitable<void> finish_and_close(JobRecord& job);
  asio::awaitable<void> wait_for_finishing();
  void close(JobRecord& job);

  std::exception_ptr open_failure_;
  std::vector<HostRange> results_ = std::vector<HostRange>(ResultBuffers::kPerWorker);
  std::optional<TraceTrack> finish_track_;  // with overlap_finish: the host steps after the GPU
  bool finishing_ = false;                  // a job's step after the GPU runs beside the next
  AsyncWaitList finish_done_;
  std::exception_ptr close_failure_;
};

}  // namespace stagehand
