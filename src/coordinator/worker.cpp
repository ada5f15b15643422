#include "coordinator/worker.hpp"

#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace stagehand {
std::string describe(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& exception) {
    return exception.what();
  } catch (...) {
    return "unknown error";
  }
}

namespace {

// Runs `program` with `state` kept alive until its frame is gone.
asio::awaitable<void> holding(std::shared_ptr<void> state, asio::awaitable<void> program) {
  co_await std::move(program);
}

}  // namespace

Worker::Worker(Run& run, Lane& lane, int index)
    : run_(run),
      workload_(run.workload),
      lane_(lane),
      device_(lane.device),
      index_(index),
      track_(run.trace.track(fmt::format("GPU {} coordinator", lane.index), fmt::format("worker {}", index))) {}

asio::awaitable<void> Worker::run() {
  co_await open_streams();
  // A GPU that could not be set up takes no jobs: the others take them all.
  if (!open_failure_) ++lane_.workers_taking;
  while (auto taken = co_await take_job()) {
    auto& job = run_.jobs[static_cast<std::size_t>(*taken)];
    job.device = lane_.index;
    job.worker = index_;
    job.started_ns = device_.now();
    ++job.attempts;
    co_await run_one(job);
    if (!job.completed()) co_await clear_stream_errors();
    STAGEHAND_ASSERT(run_.jobs_on_gpus > 0, "job {} left GPU {} with no job counted on the GPUs", job.index,
                     lane_.index);
    --run_.jobs_on_gpus;
    const bool retried = retry_elsewhere(job);
    run_.queue_changed.notify_all();
    if (retried) continue;
    if (job.completed() && run_.settings.overlap_finish) {
      // The host step after the GPU runs beside this worker's next job.
      co_await wait_for_finishing();
      finishing_ = true;
      asio::co_spawn(lane_.strand, holding(run_.keepalive.lock(), finish_and_close(job)), asio::detached);
      continue;
    }
    if (job.completed()) {
      co_await finish(job);
      if (!job.completed()) co_await clear_stream_errors();
    }
    close(job);
  }
  STAGEHAND_ASSERT(open_failure_ || lane_.workers_taking > 0, "worker {} of GPU {} stops taking jobs with none counted",
                   index_, lane_.index);
  if (!open_failure_) --lane_.workers_taking;
  // Workers elsewhere waiting for a job may be the last ones who can take it.
  run_.queue_changed.notify_all();
  co_await wait_for_finishing();
  co_await close_streams();
}

void Run::take_joined_jobs() {
  for (; feed != nullptr && feed->added_ > 0; --feed->added_) {
    JobRecord record;
    record.index = total_jobs++;
    record.proof = workload.proof_of(record.index);
    jobs.push_back(std::move(record));
    queue.push_back(jobs.back().index);
  }
}

asio::awaitable<std::optional<int>> Worker::take_job() {
  for (;;) {
    if (open_failure_ || lane_.lost) co_return std::nullopt;
    run_.take_joined_jobs();
    if (!run_.queue.empty()) {
      const int job = run_.queue.front();
      run_.queue.pop_front();
      ++run_.jobs_on_gpus;
      co_return job;
    }
    if (run_.no_more_jobs()) co_return std::nullopt;
    co_await run_.queue_changed.wait();
  }
}

bool Worker::retry_elsewhere(JobRecord& job) {
  if (job.completed() || job.attempts > 1 || !lane_.lost) return false;
  const bool another_takes = std::any_of(run_.lanes.begin(), run_.lanes.end(),
                                         [&](const Lane* lane) { return lane != &lane_ && lane->can_take_jobs(); });
  if (!another_takes) return false;
  const auto error = fmt::format("GPU {}: {}", lane_.index, job.error);
  run_.log.push_back(fmt::format("job {} goes to another GPU: {}", job.index, error));
  mark("job goes to another GPU", error);
  // What the job kept from its first attempt (its witness, its partial results) is dropped; the
  // next attempt starts from its inputs again.
  workload_.abandon(job.index);
  JobRecord again;
  again.index = job.index;
  again.proof = job.proof;
  again.attempts = job.attempts;
  again.first_device = lane_.index;
  again.retried_after = error;
  job = std::move(again);
  run_.queue.push_front(job.index);
  return true;
}

asio::awaitable<void> Worker::open_streams() {
  open_failure_ = lane_.setup_failure;
  if (open_failure_) co_return;
  try {
    compute_ = device_.create_stream();
    upload_ = device_.create_stream();
    landed_ = device_.create_stream();
    chunk_done_.resize(static_cast<std::size_t>(run_.settings.prestage_chunks_in_flight));
    for (auto& event : chunk_done_) event = device_.create_event();
    results_ = lane_.results.take();
    if (run_.total_jobs > 0) co_await fit_results(workload_.memory_plan(0).result_bytes);
  } catch (...) {
    open_failure_ = std::current_exception();
  }
  if (open_failure_) {
    // This worker takes no jobs; the lane's others, and the other GPUs, take them.
    if (is_device_lost(open_failure_) && !lane_.lost) lane_.lost = open_failure_;
    if (!lane_.worker_failure) lane_.worker_failure = open_failure_;
    run_.log.push_back(fmt::format("GPU {} worker {} could not start: {}; it takes no jobs", lane_.index, index_,
                                   describe(open_failure_)));
  }
}

asio::awaitable<void> Worker::fit_results(Bytes bytes) { co_await lane_.results.fit(results_, bytes); }

asio::awaitable<void> Worker::clear_stream_errors() {
  // A job's error that a device keeps on the stream until it is synchronised (FaultyDevice's
  // injected kernel failure; a kernel that faults on a GPU loses the device instead): the job that
  // saw it synchronises the worker's streams before the next job uses them, so that the next
  // job's waits do not report it again.
  // Only where no other job's work is on them: a synchronise would take that job's error too.
  if (compute_) co_await quietly([&] { return device_.synchronize_stream(compute_); });
  if (upload_) co_await quietly([&] { return device_.synchronize_stream(upload_); });
  if (landed_) co_await quietly([&] { return device_.synchronize_stream(landed_); });
}

asio::awaitable<void> Worker::close_streams() {
  co_await clear_stream_errors();
  co_await lane_.results.give_back(std::exchange(results_, std::vector<HostRange>(ResultBuffers::kPerWorker)));
  try {
    for (auto event : chunk_done_) {
      if (event) device_.destroy_event(event);
    }
    if (compute_) device_.destroy_stream(compute_);
    if (upload_) device_.destroy_stream(upload_);
    if (landed_) device_.destroy_stream(landed_);
  } catch (const DeviceError&) {
    // A lost device has no handles left to destroy.
  }
}

asio::awaitable<void> Worker::run_one(JobRecord& job) {
  plan_ = workload_.memory_plan(job.index);
  std::exception_ptr failure;
  try {
    co_await fit_results(plan_.result_bytes);
    co_await run_job(job);
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure && job.completed()) fail(job, failure);
}

void Worker::span(const char* name, Nanoseconds start, std::string detail) {
  run_.trace.span(track_, name, "coordinator", start, device_.now(), std::move(detail));
}

void Worker::mark(const char* name, std::string detail) {
  run_.trace.instant(track_, name, "coordinator", device_.now(), std::move(detail));
}

void Worker::fail(JobRecord& job, std::exception_ptr error) {
  if (is_device_lost(error)) {
    if (!lane_.lost) {
      lane_.lost = error;
      run_.log.push_back(fmt::format("GPU {} lost: {}; it takes no more jobs", lane_.index, describe(error)));
    }
    // Nothing on the device will complete any more: wake whoever waits for it.
    if (lane_.budget) lane_.budget->device_lost(error);
    lane_.drop_link_claims();
  }
  if (is_out_of_memory(error)) ++job.out_of_memory_errors;
  job.error = describe(error);
  mark(is_out_of_memory(error) ? "out of memory (job failed)" : "job failed", job.error);
}

asio::awaitable<void> Worker::prepare(const char* name, JobRecord& job, const std::vector<HostRange>& inputs) {
  const auto sizes = staged_input_sizes(plan_);
  STAGEHAND_ASSERT(inputs.size() == sizes.size(), "job {}: {} input buffers, its plan has {}", job.index, inputs.size(),
                   sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    STAGEHAND_ASSERT(inputs[i].bytes >= sizes[i], "job {}: input {} has {} bytes of {}", job.index, i, inputs[i].bytes,
                     sizes[i]);
  }
  auto start = device_.now();
  co_await workload_.prepare(job.index, device_, inputs);
  job.prepare_ns = device_.now() - start;
  span(name, start, fmt::format("partition {}", job.index));
}

asio::awaitable<void> Worker::finish(JobRecord& job) {
  auto start = device_.now();
  std::exception_ptr failure;
  try {
    co_await workload_.finish(job.index, device_);
  } catch (...) {
    failure = std::current_exception();
  }
  // Beside the next job its span goes on a track of its own (spans on one track must nest).
  const auto track = run_.settings.overlap_finish ? side_track(finish_track_, "after the GPU") : track_;
  job.finish_ns = device_.now() - start;
  run_.trace.span(track, "host work after the GPU", "coordinator", start, device_.now(),
                  fmt::format("partition {}", job.index));
  if (failure) fail(job, failure);
}

asio::awaitable<void> Worker::finish_and_close(JobRecord& job) {
  // Beside the next job: its work is on the streams now, so an error this job's step saw stays
  // there for the next job's own waits (clearing it here could clear the next job's error too).
  co_await finish(job);
  // What close() throws (a run hook) ends the worker, as it does without the overlap.
  try {
    close(job);
  } catch (...) {
    close_failure_ = std::current_exception();
  }
  finishing_ = false;
  finish_done_.notify_all();
}

asio::awaitable<void> Worker::wait_for_finishing() {
  while (finishing_) co_await finish_done_.wait();
  if (close_failure_) std::rethrow_exception(std::exchange(close_failure_, nullptr));
}

void Worker::close(JobRecord& job) {
  // A job's end is reported once: a job moved off a lost GPU is not closed there (retry_elsewhere).
  STAGEHAND_ASSERT(job.finished_ns < 0, "job {} ends a second time on GPU {}", job.index, lane_.index);
  if (!job.completed()) workload_.abandon(job.index);
  job.finished_ns = device_.now();
  if (run_.hooks.on_job_done) run_.hooks.on_job_done(job);
}

asio::awaitable<JobTimes> Worker::run_program(JobRecord& job, const JobInputs& inputs, JobMemory& memory) {
  JobContext context{device_, lane_.index, compute_, upload_, inputs, memory, results_, lane_.link_claim_hooks()};
  auto times = co_await workload_.run_program(job.index, context);
  job.program_note = times.note;
  co_return times;
}

std::vector<HostRange> Worker::pageable_inputs() const {
  std::vector<HostRange> host;
  for (const auto bytes : staged_input_sizes(plan_)) host.push_back(run_.hooks.pageable_memory(bytes));
  return host;
}

LockHold Worker::take_place(ComputeLock& lock, JobRecord& job) {
  if (job.lock_requested_ns < 0) job.lock_requested_ns = device_.now();
  return LockHold{&lock, lock.take_ticket()};
}

asio::awaitable<void> Worker::wait_for_lock(const LockHold& hold, JobRecord& job) {
  auto start = device_.now();
  co_await hold.lock->acquire(hold.ticket);
  job.lock_acquired_ns = device_.now();
  if (job.lock_acquired_ns > start) span("wait for the compute lock", start);
}

void Worker::leave(LockHold& hold, JobRecord& job) {
  if (!hold.lock) return;
  if (hold.lock->is_holder(hold.ticket)) {
    job.lock_released_ns = device_.now();
    hold.lock->release(hold.ticket);
    span("GPU program (compute lock held)", job.lock_acquired_ns,
         fmt::format("partition {}{}", job.index, job.program_note.empty() ? "" : ", " + job.program_note));
  } else {
    hold.lock->abandon(hold.ticket);
  }
  if (hold.lock == &lane_.compute_lock && !lane_.compute_lock.holder()) lane_.drop_link_claims();
  hold.lock = nullptr;
  lane_.prestage_slots.notify_all();
  lane_.pacing.notify_all();
}

TraceTrack Worker::side_track(std::optional<TraceTrack>& track, const char* what) {
  if (!track) {
    track = run_.trace.track(fmt::format("GPU {} coordinator", lane_.index), fmt::format("worker {} {}", index_, what));
  }
  return *track;
}

void Worker::destroy_events_quietly(const std::vector<EventHandle>& events) {
  try {
    for (auto event : events) {
      if (event) device_.destroy_event(event);
    }
  } catch (const DeviceError&) {
  }
}

}  // namespace stagehand
