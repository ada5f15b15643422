// budgeted: every byte reserved in the VramBudget, grant order = lock order, a/b/c staged in
// the pinned pool and pre-staged in chunks that keep off the lock holder's use of the link.

#include "coordinator/job_memory.hpp"
#include "coordinator/policy/workers.hpp"
#include "device/format.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <span>

namespace stagehand {
namespace {

// Where each of staged_input_sizes's buffers goes among a, b, c (0, 1, 2) and the extra input (3).
std::size_t input_slot(std::size_t buffer, int input_count) {
  return static_cast<int>(buffer) < input_count ? buffer : 3;
}

// Whether the policy uploads buffer `buffer` of staged_input_sizes's: all of them, but c and the
// extra input where the plan leaves them to the program.
bool policy_uploads(std::size_t buffer, const JobMemoryPlan& plan) {
  return !plan.late_inputs || input_slot(buffer, plan.input_count) < 2;
}

// Built outside the coroutines: GCC 12 miscompiles braced lists that live across a co_await.
// Inputs the plan has not stay null, with no event; those left to the program (late_inputs) are
// given as their staged host buffers.
JobInputs budgeted_inputs(const std::vector<DevicePointer>& inputs, const std::vector<EventHandle>& uploaded,
                          const JobMemoryPlan& plan, std::span<const HostRange> staged) {
  STAGEHAND_ASSERT(inputs.size() == 4 && uploaded.size() == 4);
  JobInputs given{.a = inputs[0],
                  .b = inputs[1],
                  .c = inputs[2],
                  .a_uploaded = uploaded[0],
                  .b_uploaded = uploaded[1],
                  .c_uploaded = uploaded[2],
                  .extra = inputs[3],
                  .extra_uploaded = uploaded[3],
                  .c_host = {},
                  .extra_host = {}};
  if (plan.late_inputs) {
    STAGEHAND_ASSERT(staged.size() == 4 && !given.c && !given.extra, "late inputs: c and the extra input uploaded");
    given.c_host = staged[2].sub(0, plan.input_bytes);
    given.extra_host = staged[3].sub(0, plan.extra_input_bytes);
  }
  return given;
}

class BudgetedWorker final : public Worker {
 public:
  using Worker::Worker;

 private:
  // Uploads `source` on the upload stream in chunks, a bounded number in flight, and issues no chunk
  // while the lock holder claims the link (unless this job holds the lock): sharing it would
  // slow the holder's uploads, and its kernels wait for them, while a waiting job has the rest of
  // the holder's run to upload.
  asio::awaitable<void> upload_yielding(DevicePointer destination, HostRange source, ComputeLock::Ticket ticket,
                                        JobRecord& job) {
    const Bytes chunk_bytes = run_.settings.prestage_chunk_bytes;
    const std::size_t in_flight = chunk_done_.size();
    std::size_t issued = 0;
    for (Bytes offset = 0; offset < source.bytes; offset += chunk_bytes, ++issued) {
      if (lane_.compute_lock.is_holder(ticket)) {
        // The GPU is ours: enqueue the rest at once and let the kernels wait for it on the device,
        // claiming the link as the program's uploads do (shared with the next job's pre-staging,
        // the first job's inputs crossed at half the rate while its NTTs waited).
        co_await claimed_upload(device_, lane_.link_claim_hooks(), destination + offset,
                                source.sub(offset, source.bytes - offset), upload_);
        break;
      }
      auto slot = issued % in_flight;
      // Wait for the oldest chunk in flight, unless the lock comes first.
      while (issued >= in_flight && !device_.event_complete(chunk_done_[slot]) &&
             !lane_.compute_lock.is_holder(ticket)) {
        co_await lane_.pacing.wait();
      }
      while (lane_.holder_on_link() && !lane_.compute_lock.is_holder(ticket)) co_await lane_.link_free.wait();
      if (lane_.compute_lock.is_holder(ticket)) {
        co_await claimed_upload(device_, lane_.link_claim_hooks(), destination + offset,
                                source.sub(offset, source.bytes - offset), upload_);
        break;
      }
      auto bytes = std::min(chunk_bytes, source.bytes - offset);
      const auto issued_ns = device_.now();
      co_await device_.copy_to_device(destination + offset, source.sub(offset, bytes), upload_);
      device_.record_event(chunk_done_[slot], upload_);
      // Told on a stream of its own: a host callback on the upload stream would hold the next
      // chunk until the host ran it, a delay every chunk paid on the H200
      // (bench/journal/2026-11-30.md). Timed when the stream
      // got there, not when this thread got to the callback (it may be busy then).
      device_.stream_wait_event(landed_, chunk_done_[slot]);
      device_.host_callback_reached(landed_, [this, &job, bytes, issued_ns, ticket](Nanoseconds now) {
        // The chunk started when it was issued or when the one before it landed, the later. One
        // that lands after the job took the lock is an upload inside the lock, as the rest of its
        // input then is: not pre-staged.
        const auto started = std::max(issued_ns, last_chunk_landed_ns_);
        // (Its ticket may hold the lock before the job, resuming, records taking it.)
        const bool before_lock =
            job.lock_acquired_ns >= 0 ? now < job.lock_acquired_ns : !lane_.compute_lock.is_holder(ticket);
        if (before_lock) {
          job.prestage_copy_ns += now - started;
          job.prestage_copy_bytes += bytes;
        }
        last_chunk_landed_ns_ = now;
        run_.trace.span(
            chunk_track(), "pre-stage chunk", "coordinator", started, now,
            fmt::format("partition {}: {}, {:.1f} GB/s", job.index, format_bytes(bytes),
                        static_cast<double>(bytes) / static_cast<double>(std::max<Nanoseconds>(1, now - started))));
        lane_.pacing.notify_all();
      });
    }
  }

  asio::awaitable<void> run_job(JobRecord& job) override {
    StagedHostBuffers host;
    bool have_host = false;
    std::vector<EventHandle> uploaded;
    LockHold hold;
    bool added = false;
    std::optional<BudgetedMemory> memory;
    auto& budget = *lane_.budget;
    std::exception_ptr failure;
    try {
      host = co_await lane_.staging.acquire(plan_);
      have_host = true;
      co_await prepare("prepare a, b, c (into pinned buffers)", job, host.buffers);
      // A bounded number of jobs per GPU hold a ticket without the lock.
      while (static_cast<int>(lane_.compute_lock.queue().size()) >= run_.settings.prestage_depth) {
        co_await lane_.prestage_slots.wait();
      }
      hold = take_place(lane_.compute_lock, job);
      STAGEHAND_ASSERT(static_cast<int>(lane_.compute_lock.queue().size()) <= run_.settings.prestage_depth,
                       "{} tickets wait for GPU {}'s lock, at most {} may", lane_.compute_lock.queue().size(),
                       lane_.index, run_.settings.prestage_depth);
      budget.add_job(hold.ticket, plan_.peak_bytes);
      added = true;
      memory.emplace(device_, budget, hold.ticket, plan_.peak_after_b_and_c_bytes, plan_.peak_after_a_bytes);
      const auto sizes = staged_input_sizes(plan_);
      STAGEHAND_ASSERT(host.buffers.size() == sizes.size(), "{} staged buffers for {} inputs", host.buffers.size(),
                       sizes.size());
      // Indexed by slot (a, b, c, extra); the events made in the order of the buffers.
      std::vector<DevicePointer> inputs(4);
      uploaded.resize(4);
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (policy_uploads(i, plan_)) uploaded[input_slot(i, plan_.input_count)] = device_.create_event();
      }
      // Buffer by buffer, as the budget admits them; what is not admitted before the lock comes
      // is uploaded once the job holds it (the budget then serves the holder first). The extra
      // input goes last: the program reads it after a, b and c.
      auto start = device_.now();
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (!policy_uploads(i, plan_)) continue;
        const auto slot = input_slot(i, plan_.input_count);
        if (i == 0 && !lane_.compute_lock.is_holder(hold.ticket)) job.prestage_started_ns = device_.now();
        inputs[slot] = co_await memory->allocate(sizes[i], upload_);
        co_await upload_yielding(inputs[slot], host.buffers[i].sub(0, sizes[i]), hold.ticket, job);
        device_.record_event(uploaded[slot], upload_);
        if (!lane_.compute_lock.is_holder(hold.ticket)) job.prestaged_bytes += sizes[i];
      }
      memory->set_inputs(inputs[0], inputs[1], inputs[2], inputs[3]);
      span("pre-stage a, b, c", start, format_bytes(job.prestaged_bytes) + " before the lock");
      co_await wait_for_lock(hold, job);
      lane_.prestage_slots.notify_all();
      auto times = co_await run_program(job, budgeted_inputs(inputs, uploaded, plan_, host.buffers), *memory);
      job.waited_for_inputs_ns = times.waited_for_inputs_ns;
      // The extra input lives until the program ends; a, b and c the program freed itself.
      co_await memory->release_extra(compute_);
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) {
      fail(job, failure);
      if (memory) memory->release_all(compute_);
      co_await quietly([&] { return device_.synchronize_stream(upload_); });
      co_await quietly([&] { return device_.synchronize_stream(compute_); });
    }
    leave(hold, job);
    if (added) budget.remove_job(hold.ticket);
    destroy_events_quietly(uploaded);
    if (have_host) co_await quietly([&] { return lane_.staging.release(host); });
  }

  std::optional<TraceTrack> chunk_track_;
  TraceTrack chunk_track() { return side_track(chunk_track_, "pre-stage chunks"); }
  Nanoseconds last_chunk_landed_ns_ = 0;  // of this worker's upload stream
};

}  // namespace

std::unique_ptr<Worker> make_budgeted_worker(Run& run, Lane& lane, int index) {
  return std::make_unique<BudgetedWorker>(run, lane, index);
}

}  // namespace stagehand
