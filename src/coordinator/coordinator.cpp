#include "coordinator/coordinator.hpp"

#include "coordinator/porep_workload.hpp"
#include "coordinator/program_memory.hpp"
#include "device/format.hpp"
#include "util/random.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

namespace stagehand {

const std::vector<std::string>& policy_names() {
  static const std::vector<std::string> names{"serial", "prestage", "two-lock", "budgeted"};
  return names;
}

std::string to_string(Policy policy) { return policy_names().at(static_cast<std::size_t>(policy)); }

Policy policy_from_string(const std::string& name) {
  const auto& names = policy_names();
  auto found = std::find(names.begin(), names.end(), name);
  if (found == names.end()) {
    throw std::invalid_argument(fmt::format("unknown policy '{}' (one of: {})", name, fmt::join(names, ", ")));
  }
  return static_cast<Policy>(found - names.begin());
}

namespace {

// One GPU: its locks, its budget, its staging, and the proving key pinned for it.
struct Lane {
  Lane(Device& device, int index, const CoordinatorSettings& settings, Random& random, std::function<HostRange(Bytes)> pageable)
      : device(device),
        index(index),
        compute_lock(settings.policy == Policy::two_lock || !settings.grant_order_is_lock_order
                         ? std::function<std::size_t(std::size_t)>([&random](std::size_t count) { return random.below(count); })
                         : std::function<std::size_t(std::size_t)>()),
        staging(device,
                settings.policy == Policy::budgeted ? settings.host_staging : HostStagingMode::register_in_place,
                settings.pinned_host_budget_bytes, std::move(pageable)) {}

  Device& device;
  int index;
  // Everything of this GPU (its workers, locks, budget) runs on this strand: no thread ever
  // blocks on the lock, and the lane's state needs no mutex whatever runs the io_context.
  asio::strand<asio::any_io_executor> strand{device.executor()};
  ComputeLock compute_lock;
  ComputeLock memory_lock;  // two-lock only
  std::unique_ptr<VramBudget> budget;
  HostStaging staging;
  std::exception_ptr setup_failure;  // the workload's set-up failed: every job on this GPU fails with it
  AsyncWaitList prestage_slots;
  // The lock holder's use of the host-to-device link: its PCIe-bound phases, and its uploads (the
  // start event of each one enqueued, oldest first, until it is done). Pre-staging issues no
  // chunk meanwhile, so that neither waits for the other on the copy engine.
  int holder_pcie_phases = 0;
  std::deque<EventHandle> holder_uploads;
  AsyncWaitList link_free;
  bool holder_on_link() {
    if (holder_pcie_phases > 0) return true;
    try {
      return !holder_uploads.empty() && device.event_complete(holder_uploads.front());
    } catch (const DeviceError&) {
      return false;  // a lost device carries nothing
    }
  }
  LinkClaimHooks link_claim_hooks() {
    return LinkClaimHooks{[this](bool entering) {
                            // Never below 0: a failed holder's phases were dropped with its hold,
                            // and its leaving may still arrive from the stream.
                            holder_pcie_phases = std::max(0, holder_pcie_phases + (entering ? 1 : -1));
                            if (holder_pcie_phases == 0) link_free.notify_all();
                          },
                          [this](EventHandle started) { holder_uploads.push_back(started); },
                          [this](EventHandle started) {
                            // Absent when dropped with the hold before this arrived.
                            auto found = std::find(holder_uploads.begin(), holder_uploads.end(), started);
                            if (found != holder_uploads.end()) {
                              destroy_quietly(*found);
                              holder_uploads.erase(found);
                            }
                            link_free.notify_all();
                          }};
  }
  // With the holder's hold (a program that failed never let go).
  void drop_link_claims() {
    holder_pcie_phases = 0;
    for (auto event : holder_uploads) destroy_quietly(event);
    holder_uploads.clear();
    link_free.notify_all();
  }
  void destroy_quietly(EventHandle event) {
    try {
      device.destroy_event(event);
    } catch (const DeviceError&) {
    }
  }
  // Woken when a pre-staging chunk lands or the lock changes hands.
  AsyncWaitList pacing;
};

struct Run {
  CoordinatorSettings settings;
  Workload& workload;
  Trace& trace;
  CoordinatorHooks hooks;
  Random random;
  int next_job = 0;
  int total_jobs = 0;
  std::vector<JobRecord> jobs;
  std::vector<std::string> log;
  std::uint64_t fallbacks = 0;
};

// The device's error code, when the error came from the device.
std::optional<DeviceErrc> device_errc(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const DeviceError& device_error) {
    return device_error.errc();
  } catch (...) {
    return std::nullopt;
  }
}

bool is_out_of_memory(std::exception_ptr error) { return device_errc(error) == DeviceErrc::out_of_memory; }
bool is_device_lost(std::exception_ptr error) { return device_errc(error) == DeviceErrc::device_lost; }

std::string describe(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& exception) {
    return exception.what();
  } catch (...) {
    return "unknown error";
  }
}

// Runs `step` and drops its error: cleaning up after a failure (a lost device, say) must go on.
template <class Step>
asio::awaitable<void> quietly(Step step) {
  try {
    co_await step();
  } catch (...) {
  }
}

// A job's place at a lock: released when held, abandoned when still waiting.
struct LockHold {
  ComputeLock* lock = nullptr;
  ComputeLock::Ticket ticket = 0;
};

class Worker {
 public:
  Worker(Run& run, Lane& lane, int index)
      : run_(run), workload_(run.workload), lane_(lane), device_(lane.device), index_(index),
        track_(run.trace.track(fmt::format("GPU {} coordinator", lane.index), fmt::format("worker {}", index))) {}

  asio::awaitable<void> run() {
    std::exception_ptr setup_failure = lane_.setup_failure;
    if (!setup_failure) try {
      compute_ = device_.create_stream();
      upload_ = device_.create_stream();
      landed_ = device_.create_stream();
      chunk_done_.resize(static_cast<std::size_t>(run_.settings.prestage_chunks_in_flight));
      for (auto& event : chunk_done_) event = device_.create_event();
      for (auto& range : results_) range = co_await device_.allocate_pinned_host(PartitionShape::kBucketResultBytes);
    } catch (...) {
      setup_failure = std::current_exception();
    }
    // Every job is taken and ends completed or failed, whatever happened to the device.
    while (run_.next_job < run_.total_jobs) {
      auto& job = run_.jobs[static_cast<std::size_t>(run_.next_job++)];
      job.device = lane_.index;
      job.worker = index_;
      job.started_ns = device_.now();
      if (setup_failure) {
        fail(job, setup_failure);
      } else {
        plan_ = workload_.memory_plan(job.index);
        co_await run_job(job);
      }
      if (job.completed() && run_.settings.overlap_finish) {
        // The host step after the GPU runs beside this worker's next job.
        co_await wait_for_finishing();
        finishing_ = true;
        asio::co_spawn(lane_.strand, finish_and_close(job), asio::detached);
        continue;
      }
      if (job.completed()) co_await finish(job);
      close(job);
    }
    co_await wait_for_finishing();
    if (compute_) co_await quietly([&] { return device_.synchronize_stream(compute_); });
    if (upload_) co_await quietly([&] { return device_.synchronize_stream(upload_); });
    if (landed_) co_await quietly([&] { return device_.synchronize_stream(landed_); });
    for (auto& range : results_) {
      if (range.bytes) co_await quietly([&] { return device_.free_pinned_host(range); });
    }
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

 private:
  asio::awaitable<void> run_job(JobRecord& job) {
    std::exception_ptr failure;
    try {
      switch (run_.settings.policy) {
        case Policy::serial: co_await serial(job); break;
        case Policy::prestage: co_await prestage(job); break;
        case Policy::two_lock: co_await two_lock(job); break;
        case Policy::budgeted: co_await budgeted(job); break;
      }
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure && job.completed()) fail(job, failure);
  }

  void span(const char* name, Nanoseconds start, std::string detail = {}) {
    run_.trace.span(track_, name, "coordinator", start, device_.now(), std::move(detail));
  }
  void mark(const char* name, std::string detail) { run_.trace.instant(track_, name, "coordinator", device_.now(), std::move(detail)); }

  void fail(JobRecord& job, std::exception_ptr error) {
    if (is_device_lost(error)) {
      // Nothing on the device will complete any more: wake whoever waits for it.
      if (lane_.budget) lane_.budget->device_lost(error);
      lane_.drop_link_claims();
    }
    if (is_out_of_memory(error)) ++job.out_of_memory_errors;
    job.error = describe(error);
    mark(is_out_of_memory(error) ? "out of memory (job failed)" : "job failed", job.error);
  }

  // The workload's host work before the GPU, filling a, b and c.
  asio::awaitable<void> prepare(const char* name, const JobRecord& job, const std::vector<HostRange>& abc) {
    auto start = device_.now();
    co_await workload_.prepare(job.index, device_, abc);
    span(name, start, fmt::format("partition {}", job.index));
  }

  // The workload's host work after the GPU; its failure fails the job.
  asio::awaitable<void> finish(JobRecord& job) {
    auto start = device_.now();
    std::exception_ptr failure;
    try {
      co_await workload_.finish(job.index, device_);
    } catch (...) {
      failure = std::current_exception();
    }
    // Beside the next job its span goes on a track of its own (spans on one track must nest).
    const auto track = run_.settings.overlap_finish ? finish_track() : track_;
    run_.trace.span(track, "G2 MSM and proof assembly", "coordinator", start, device_.now(),
                    fmt::format("partition {}", job.index));
    if (failure) fail(job, failure);
  }

  asio::awaitable<void> finish_and_close(JobRecord& job) {
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

  // Before the worker takes another job or stops: the step beside it has ended.
  asio::awaitable<void> wait_for_finishing() {
    while (finishing_) co_await finish_done_.wait();
    if (close_failure_) std::rethrow_exception(std::exchange(close_failure_, nullptr));
  }

  // A job ends: what failed is abandoned, and the run hears of it.
  void close(JobRecord& job) {
    if (!job.completed()) workload_.abandon(job.index);
    job.finished_ns = device_.now();
    if (run_.hooks.on_job_done) run_.hooks.on_job_done(job);
  }

  // The workload's GPU program, on this worker's streams.
  asio::awaitable<ProgramTimes> run_program(JobRecord& job, const PartitionInputs& inputs, ProgramMemory& memory) {
    JobContext context{device_, lane_.index, compute_, upload_, inputs, memory, results_, lane_.link_claim_hooks()};
    auto times = co_await workload_.run_program(job.index, context);
    job.fetched_ahead = times.fetched_ahead;
    co_return times;
  }

  std::vector<HostRange> pageable_inputs() const {
    std::vector<HostRange> host;
    for (int i = 0; i < 3; ++i) host.push_back(run_.hooks.pageable_memory(plan_.input_bytes));
    return host;
  }

  LockHold take_place(ComputeLock& lock, JobRecord& job) {
    if (job.lock_requested_ns < 0) job.lock_requested_ns = device_.now();
    return LockHold{&lock, lock.take_ticket()};
  }

  asio::awaitable<void> wait_for_lock(const LockHold& hold, JobRecord& job) {
    auto start = device_.now();
    co_await hold.lock->acquire(hold.ticket);
    job.lock_acquired_ns = device_.now();
    if (job.lock_acquired_ns > start) span("wait for the compute lock", start);
  }

  void leave(LockHold& hold, JobRecord& job) {
    if (!hold.lock) return;
    if (hold.lock->is_holder(hold.ticket)) {
      job.lock_released_ns = device_.now();
      hold.lock->release(hold.ticket);
      span("GPU program (compute lock held)", job.lock_acquired_ns,
           fmt::format("partition {}{}", job.index, job.fetched_ahead.empty() ? "" : ", " + job.fetched_ahead + " fetched ahead"));
    } else {
      hold.lock->abandon(hold.ticket);
    }
    if (hold.lock == &lane_.compute_lock && !lane_.compute_lock.holder()) lane_.drop_link_claims();
    hold.lock = nullptr;
    lane_.prestage_slots.notify_all();
    lane_.pacing.notify_all();
  }

  // Built outside the coroutines: GCC 12 miscompiles braced lists that live across a co_await.
  static PartitionInputs legacy_inputs(const LegacyMemory& memory, EventHandle uploaded) {
    return PartitionInputs{memory.a(), memory.b(), memory.c(), uploaded, uploaded, uploaded};
  }
  static PartitionInputs budgeted_inputs(const std::vector<DevicePointer>& inputs, const std::vector<EventHandle>& uploaded) {
    return PartitionInputs{inputs[0], inputs[1], inputs[2], uploaded[0], uploaded[1], uploaded[2]};
  }

  // Uploads a, b, c from `host` into the legacy buffers on `stream`.
  asio::awaitable<void> upload_legacy_inputs(LegacyMemory& memory, const std::vector<HostRange>& host, StreamHandle stream) {
    co_await device_.copy_to_device(memory.a(), host[0], stream);
    co_await device_.copy_to_device(memory.b(), host[1], stream);
    co_await device_.copy_to_device(memory.c(), host[2], stream);
  }

  // ---- serial: one lock around everything, pageable uploads inside it ----
  asio::awaitable<void> serial(JobRecord& job) {
    const auto host = pageable_inputs();
    co_await prepare("prepare a, b, c", job, host);
    LockHold hold = take_place(lane_.compute_lock, job);
    LegacyMemory memory(device_, false);
    std::exception_ptr failure;
    try {
      co_await wait_for_lock(hold, job);
      co_await memory.allocate_inputs(plan_.input_bytes);
      auto start = device_.now();
      co_await upload_legacy_inputs(memory, host, compute_);  // each call holds the host until done
      auto upload_ns = device_.now() - start;
      span("pageable upload of a, b, c (in the lock)", start);
      auto times = co_await run_program(job, legacy_inputs(memory, EventHandle{}), memory);
      job.waited_for_inputs_ns = upload_ns + times.waited_for_inputs_ns;
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) fail(job, failure);
    co_await quietly([&] { return memory.release_all(compute_); });
    leave(hold, job);
  }

  // ---- prestage and two-lock: the historical pre-staging ----
  asio::awaitable<void> make_room_the_old_way() {
    const auto& switches = run_.settings.prestage;
    if (switches.synchronize_device) co_await device_.synchronize_device();
    if (switches.trim_pool) device_.trim_pool(0);
  }

  bool free_memory_check_passes() {
    const auto& switches = run_.settings.prestage;
    if (!switches.free_memory_check) return true;
    return device_.memory_info().free_bytes >= 3 * plan_.input_bytes + switches.margin_bytes;
  }

  // Allocates a and b|c (cudaMalloc) and starts their upload; false if the free-memory check
  // said no. An out-of-memory error is counted and cleaned up, and also answers false.
  asio::awaitable<bool> try_stage_legacy(JobRecord& job, LegacyMemory& memory, const StagedHostBuffers& host,
                                         EventHandle uploaded) {
    std::exception_ptr failure;
    try {
      auto start = device_.now();
      co_await make_room_the_old_way();
      if (!free_memory_check_passes()) co_return false;
      job.prestage_started_ns = device_.now();
      co_await memory.allocate_inputs(plan_.input_bytes);
      co_await upload_legacy_inputs(memory, host.buffers, upload_);
      device_.record_event(uploaded, upload_);
      job.prestaged_bytes = 3 * plan_.input_bytes;
      span("pre-stage a, b, c", start);
      co_return true;
    } catch (...) {
      failure = std::current_exception();
    }
    if (!is_out_of_memory(failure)) std::rethrow_exception(failure);
    ++job.out_of_memory_errors;
    mark("out of memory while pre-staging", describe(failure));
    co_await quietly([&] { return memory.release_all(upload_); });
    co_return false;
  }

  // Holds the lock for the program; uploads inside it when pre-staging did not happen.
  asio::awaitable<void> run_legacy_in_lock(JobRecord& job, const LockHold& hold, LegacyMemory& memory,
                                           const StagedHostBuffers& host, EventHandle uploaded, bool staged) {
    co_await wait_for_lock(hold, job);
    if (!staged) {
      // The fallback: upload inside the lock, with the GPU waiting.
      job.fell_back = true;
      ++run_.fallbacks;
      mark("fallback: upload inside the lock", fmt::format("partition {}", job.index));
      co_await make_room_the_old_way();
      co_await memory.allocate_inputs(plan_.input_bytes);
      co_await upload_legacy_inputs(memory, host.buffers, upload_);
      device_.record_event(uploaded, upload_);
    }
    auto times = co_await run_program(job, legacy_inputs(memory, uploaded), memory);
    job.waited_for_inputs_ns = times.waited_for_inputs_ns;
  }

  // prestage (memory_lock null) and two-lock (memory_lock set) differ only in the memory lock.
  asio::awaitable<void> legacy(JobRecord& job, ComputeLock* memory_lock) {
    const auto pageable = pageable_inputs();
    co_await prepare("prepare a, b, c", job, pageable);
    StagedHostBuffers host;
    bool have_host = false;
    EventHandle uploaded;
    LegacyMemory memory(device_, true);
    LockHold hold;
    std::exception_ptr failure;
    try {
      auto start = device_.now();
      host = co_await lane_.staging.pin_in_place(pageable);
      have_host = true;
      span("cudaHostRegister a, b, c", start);
      uploaded = device_.create_event();
      bool staged = false;
      if (memory_lock) {
        LockHold memory_hold{memory_lock, memory_lock->take_ticket()};
        start = device_.now();
        co_await memory_lock->acquire(memory_hold.ticket);
        if (device_.now() > start) span("wait for the memory lock", start);
        std::exception_ptr staging_failure;
        try {
          staged = co_await try_stage_legacy(job, memory, host, uploaded);
          if (staged) co_await device_.synchronize_stream(upload_);  // the upload ends under the memory lock
        } catch (...) {
          staging_failure = std::current_exception();
        }
        memory_lock->release(memory_hold.ticket);
        if (staging_failure) std::rethrow_exception(staging_failure);
      } else {
        staged = co_await try_stage_legacy(job, memory, host, uploaded);
      }
      hold = take_place(lane_.compute_lock, job);
      co_await run_legacy_in_lock(job, hold, memory, host, uploaded, staged);
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) fail(job, failure);
    co_await quietly([&] { return memory.release_all(compute_); });
    co_await quietly([&] { return device_.synchronize_stream(upload_); });
    leave(hold, job);
    try {
      if (uploaded) device_.destroy_event(uploaded);
    } catch (const DeviceError&) {
    }
    if (have_host) {
      auto start = device_.now();
      co_await quietly([&] { return lane_.staging.release(host); });
      span("cudaHostUnregister a, b, c", start);
    }
  }

  asio::awaitable<void> prestage(JobRecord& job) { co_await legacy(job, nullptr); }
  asio::awaitable<void> two_lock(JobRecord& job) { co_await legacy(job, &lane_.memory_lock); }

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
        co_await claimed_upload(device_, lane_.link_claim_hooks(), destination + offset, source.sub(offset, source.bytes - offset), upload_);
        break;
      }
      auto slot = issued % in_flight;
      // Wait for the oldest chunk in flight, unless the lock comes first.
      while (issued >= in_flight && !device_.event_complete(chunk_done_[slot]) && !lane_.compute_lock.is_holder(ticket)) {
        co_await lane_.pacing.wait();
      }
      while (lane_.holder_on_link() && !lane_.compute_lock.is_holder(ticket)) co_await lane_.link_free.wait();
      if (lane_.compute_lock.is_holder(ticket)) {
        co_await claimed_upload(device_, lane_.link_claim_hooks(), destination + offset, source.sub(offset, source.bytes - offset), upload_);
        break;
      }
      auto bytes = std::min(chunk_bytes, source.bytes - offset);
      const auto issued_ns = device_.now();
      co_await device_.copy_to_device(destination + offset, source.sub(offset, bytes), upload_);
      device_.record_event(chunk_done_[slot], upload_);
      // Told on a stream of its own: a host callback on the upload stream would hold the next
      // chunk until the host ran it (0.1-0.2 ms per chunk on the H200). Timed when the stream
      // got there, not when this thread got to the callback (it may be busy then).
      device_.stream_wait_event(landed_, chunk_done_[slot]);
      device_.host_callback_reached(landed_, [this, &job, bytes, issued_ns, ticket](Nanoseconds now) {
        // The chunk started when it was issued or when the one before it landed, the later. One
        // that lands after the job took the lock is an upload inside the lock, as the rest of its
        // input then is: not pre-staged.
        const auto started = std::max(issued_ns, last_chunk_landed_ns_);
        // (Its ticket may hold the lock before the job, resuming, records taking it.)
        const bool before_lock = job.lock_acquired_ns >= 0 ? now < job.lock_acquired_ns : !lane_.compute_lock.is_holder(ticket);
        if (before_lock) {
          job.prestage_copy_ns += now - started;
          job.prestage_copy_bytes += bytes;
        }
        last_chunk_landed_ns_ = now;
        run_.trace.span(chunk_track(), "pre-stage chunk", "coordinator", started, now,
                        fmt::format("partition {}: {}, {:.1f} GB/s", job.index, format_bytes(bytes),
                                    static_cast<double>(bytes) / static_cast<double>(std::max<Nanoseconds>(1, now - started))));
        lane_.pacing.notify_all();
      });
    }
  }

  // ---- budgeted: every byte reserved, grant order = lock order, pinned-pool staging ----
  asio::awaitable<void> budgeted(JobRecord& job) {
    StagedHostBuffers host;
    bool have_host = false;
    std::vector<EventHandle> uploaded;
    LockHold hold;
    bool added = false;
    std::optional<BudgetedMemory> memory;
    auto& budget = *lane_.budget;
    std::exception_ptr failure;
    try {
      host = co_await lane_.staging.acquire(plan_.input_bytes);
      have_host = true;
      co_await prepare("prepare a, b, c (into pinned buffers)", job, host.buffers);
      // A bounded number of jobs per GPU hold a ticket without the lock.
      while (static_cast<int>(lane_.compute_lock.queue().size()) >= run_.settings.prestage_depth) {
        co_await lane_.prestage_slots.wait();
      }
      hold = take_place(lane_.compute_lock, job);
      budget.add_job(hold.ticket, plan_.peak_bytes);
      added = true;
      memory.emplace(device_, budget, hold.ticket, plan_.peak_after_b_and_c_bytes, plan_.peak_after_a_bytes);
      for (int i = 0; i < 3; ++i) uploaded.push_back(device_.create_event());
      // Buffer by buffer, as the budget admits them; what is not admitted before the lock comes
      // is uploaded once the job holds it (the budget then serves the holder first).
      std::vector<DevicePointer> inputs(3);
      auto start = device_.now();
      for (std::size_t i = 0; i < 3; ++i) {
        if (i == 0 && !lane_.compute_lock.is_holder(hold.ticket)) job.prestage_started_ns = device_.now();
        inputs[i] = co_await memory->allocate(plan_.input_bytes, upload_);
        co_await upload_yielding(inputs[i], host.buffers[i], hold.ticket, job);
        device_.record_event(uploaded[i], upload_);
        if (!lane_.compute_lock.is_holder(hold.ticket)) job.prestaged_bytes += plan_.input_bytes;
      }
      memory->set_inputs(inputs[0], inputs[1], inputs[2]);
      span("pre-stage a, b, c", start, format_bytes(job.prestaged_bytes) + " before the lock");
      co_await wait_for_lock(hold, job);
      lane_.prestage_slots.notify_all();
      auto times = co_await run_program(job, budgeted_inputs(inputs, uploaded), *memory);
      job.waited_for_inputs_ns = times.waited_for_inputs_ns;
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
    try {
      for (auto event : uploaded) device_.destroy_event(event);
    } catch (const DeviceError&) {
    }
    if (have_host) co_await quietly([&] { return lane_.staging.release(host); });
  }

  Run& run_;
  Workload& workload_;
  Lane& lane_;
  Device& device_;
  int index_;
  JobMemoryPlan plan_;  // of the job in hand
  TraceTrack track_;
  std::optional<TraceTrack> finish_track_;  // with overlap_finish: the host steps after the GPU
  bool finishing_ = false;                  // a job's step after the GPU runs beside the next
  AsyncWaitList finish_done_;
  std::exception_ptr close_failure_;

  TraceTrack finish_track() { return side_track(finish_track_, "after the GPU"); }
  // A track of this worker's beside its own, made when first used (a run without it shows none).
  TraceTrack side_track(std::optional<TraceTrack>& track, const char* what) {
    if (!track) track = run_.trace.track(fmt::format("GPU {} coordinator", lane_.index), fmt::format("worker {} {}", index_, what));
    return *track;
  }
  StreamHandle compute_;
  StreamHandle upload_;
  StreamHandle landed_;  // where pre-staging hears that its chunks landed
  std::vector<HostRange> results_ = std::vector<HostRange>(2);
  std::vector<EventHandle> chunk_done_;  // one per pre-staging chunk in flight
  std::optional<TraceTrack> chunk_track_;
  TraceTrack chunk_track() { return side_track(chunk_track_, "pre-stage chunks"); }
  Nanoseconds last_chunk_landed_ns_ = 0;  // of this worker's upload stream
};

}  // namespace

asio::awaitable<RunReport> run_coordinator(std::vector<Device*> devices, CoordinatorSettings settings, Trace& trace,
                                           CoordinatorHooks hooks) {
  PoRepWorkload workload(settings.shape, settings.program, settings.proofs, settings.partitions_per_proof);
  co_return co_await run_coordinator(std::move(devices), std::move(settings), workload, trace, std::move(hooks));
}

asio::awaitable<RunReport> run_coordinator(std::vector<Device*> devices, CoordinatorSettings settings, Workload& workload,
                                           Trace& trace, CoordinatorHooks hooks) {
  if (devices.empty()) throw std::invalid_argument("run_coordinator: no devices");
  Run run{settings, workload, trace, hooks, Random(settings.seed ^ 0x5eed), 0, workload.job_count(), {}, {}, 0};
  run.jobs.resize(static_cast<std::size_t>(run.total_jobs));
  for (int i = 0; i < run.total_jobs; ++i) {
    run.jobs[static_cast<std::size_t>(i)].index = i;
    run.jobs[static_cast<std::size_t>(i)].proof = workload.proof_of(i);
  }

  std::vector<std::unique_ptr<Lane>> lanes;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    lanes.push_back(std::make_unique<Lane>(*devices[i], static_cast<int>(i), settings, run.random, hooks.pageable_memory));
    auto& lane = *lanes.back();
    if (settings.policy == Policy::budgeted) {
      auto total = lane.device.properties().total_memory_bytes;
      auto reserved = settings.safety_margin_bytes + settings.resident_bytes + workload.resident_bytes();
      auto capacity = total > reserved ? total - reserved : 0;
      lane.budget = std::make_unique<VramBudget>(lane.device, lane.compute_lock, capacity, settings.budget_rules,
                                                 asio::any_io_executor(lane.strand));
      lane.budget->set_log([&run](const std::string& line) { run.log.push_back(line); });
      if (hooks.on_budget) hooks.on_budget(static_cast<int>(i), *lane.budget);
    }
    std::exception_ptr failure;
    try {
      if (settings.policy == Policy::budgeted) {
        // The budget decides who gets memory: the pool keeps what it has (no release at every
        // synchronise, no regrowth cost) and never makes one stream wait for another's free.
        lane.device.set_pool_release_threshold(lane.budget->capacity_bytes());
        lane.device.set_pool_cross_stream_reuse(false);
      } else if (settings.policy != Policy::serial) {
        // With pre-staging the production engine took its working memory from the stream-ordered
        // pool and kept freed memory cached there (a high release threshold, to avoid allocating
        // anew every partition): exactly what a plain cudaMalloc cannot use on the incident's
        // driver, and what the fix's synchronise-and-trim gave back.
        lane.device.set_pool_release_threshold(std::numeric_limits<Bytes>::max());
      }
      co_await workload.set_up(lane.device, lane.index);
      if (settings.policy == Policy::budgeted && settings.prewarm_pinned_pool && workload.job_count() > 0) {
        const auto began = lane.device.now();
        co_await lane.staging.prewarm(workload.memory_plan(0).input_bytes, settings.workers_per_device);
        run.log.push_back(fmt::format("GPU {}: pinned pool prewarmed with {} in {}", lane.index,
                                      format_bytes(lane.staging.pinned_bytes()), format_duration(lane.device.now() - began)));
      }
    } catch (...) {
      failure = std::current_exception();
    }
    lane.setup_failure = failure;
  }

  auto start = devices.front()->now();
  int workers_running = 0;
  std::exception_ptr worker_failure;
  AsyncWaitList all_done;
  std::vector<std::unique_ptr<Worker>> workers;
  for (auto& lane : lanes) {
    for (int w = 0; w < settings.workers_per_device; ++w) {
      workers.push_back(std::make_unique<Worker>(run, *lane, w));
      ++workers_running;
      asio::co_spawn(lane->strand, workers.back()->run(), [&](std::exception_ptr error) {
        if (error && !worker_failure) worker_failure = error;
        if (--workers_running == 0) all_done.notify_all();
      });
    }
  }
  while (workers_running > 0) co_await all_done.wait();
  auto end = devices.front()->now();
  if (worker_failure) std::rethrow_exception(worker_failure);

  for (auto& lane : lanes) {
    if (lane->budget) co_await lane->budget->drain();
    co_await quietly([&] { return lane->staging.shutdown(); });
    co_await quietly([&] { return workload.tear_down(lane->device, lane->index); });
    try {
      lane->device.set_pool_release_threshold(0);
      lane->device.trim_pool(0);
    } catch (const DeviceError&) {
      // A lost device keeps nothing to trim.
    }
  }

  RunReport report;
  report.policy = to_string(settings.policy);
  report.devices = static_cast<int>(devices.size());
  report.proofs = workload.proof_count();
  report.partitions = run.total_jobs;
  report.makespan_ns = end - start;
  Nanoseconds lock_held = 0;
  Bytes prestage_bytes = 0;
  Nanoseconds prestage_ns = 0;
  for (const auto& job : run.jobs) {
    if (job.completed()) {
      ++report.partitions_completed;
      lock_held += job.lock_released_ns - job.lock_acquired_ns;
    }
    if (job.lock_acquired_ns >= 0 && job.lock_requested_ns >= 0) {
      report.lock_wait_seconds += static_cast<double>(job.lock_acquired_ns - job.lock_requested_ns) / 1e9;
    }
    report.upload_wait_seconds += static_cast<double>(job.waited_for_inputs_ns) / 1e9;
    prestage_bytes += job.prestage_copy_bytes;
    prestage_ns += job.prestage_copy_ns;
  }
  report.prestage_gbps = prestage_ns > 0 ? static_cast<double>(prestage_bytes) / static_cast<double>(prestage_ns) : 0;
  double makespan_seconds = static_cast<double>(report.makespan_ns) / 1e9;
  report.seconds_per_proof = report.proofs > 0 ? makespan_seconds / report.proofs : 0;
  report.partitions_per_second = makespan_seconds > 0 ? report.partitions_completed / makespan_seconds : 0;
  report.gpu_seconds_per_partition =
      report.partitions_completed > 0 ? static_cast<double>(lock_held) / 1e9 / report.partitions_completed : 0;
  double busy = 0;
  double span = 0;
  for (auto* device : devices) {
    const auto& counters = device->counters();
    busy += static_cast<double>(counters.compute_busy_ns);
    if (counters.first_kernel_start_ns >= 0) span += static_cast<double>(counters.last_kernel_end_ns - counters.first_kernel_start_ns);
    report.pcie_bytes_pinned += counters.pinned_bytes_copied;
    report.pcie_bytes_pageable += counters.pageable_bytes_copied;
    report.vram_peak_bytes = std::max(report.vram_peak_bytes, counters.peak_memory_used_bytes);
    report.oom_count += counters.out_of_memory_count;
    for (const auto& [name, totals] : counters.kernel_totals) {
      auto& sum = report.kernel_totals[name];
      sum.launches += totals.launches;
      sum.work_units += totals.work_units;
      sum.busy_ns += totals.busy_ns;
    }
  }
  report.compute_busy_fraction = span > 0 ? busy / span : 0;
  report.compute_idle_seconds_per_partition =
      report.partitions_completed > 0 ? (span - busy) / 1e9 / report.partitions_completed : 0;
  report.fallback_count = run.fallbacks;
  report.jobs = std::move(run.jobs);
  report.log = std::move(run.log);
  co_return report;
}

}  // namespace stagehand
