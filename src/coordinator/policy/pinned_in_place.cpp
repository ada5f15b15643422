#include "coordinator/policy/pinned_in_place.hpp"

#include <fmt/format.h>

namespace stagehand {

Bytes PinnedInPlaceWorker::input_bytes() const {
  return plan_.input_count * plan_.input_bytes + plan_.extra_input_bytes;
}

asio::awaitable<void> PinnedInPlaceWorker::make_room() {
  const auto& switches = run_.settings.prestage;
  if (switches.synchronize_device) co_await device_.synchronize_device();
  if (switches.trim_pool) device_.trim_pool(0);
}

bool PinnedInPlaceWorker::free_memory_check_passes() {
  const auto& switches = run_.settings.prestage;
  if (!switches.free_memory_check) return true;
  return device_.memory_info().free_bytes >= input_bytes() + switches.margin_bytes;
}

asio::awaitable<bool> PinnedInPlaceWorker::try_stage(JobRecord& job, PlainMemory& memory, const StagedHostBuffers& host,
                                                     EventHandle uploaded) {
  std::exception_ptr failure;
  try {
    auto start = device_.now();
    co_await make_room();
    if (!free_memory_check_passes()) co_return false;
    job.prestage_started_ns = device_.now();
    co_await memory.allocate_inputs(plan_);
    co_await upload_plain_inputs(device_, memory, host.buffers, upload_);
    device_.record_event(uploaded, upload_);
    job.prestaged_bytes = input_bytes();
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

asio::awaitable<void> PinnedInPlaceWorker::run_in_lock(JobRecord& job, const LockHold& hold, PlainMemory& memory,
                                                       const StagedHostBuffers& host, EventHandle uploaded,
                                                       bool staged) {
  co_await wait_for_lock(hold, job);
  if (!staged) {
    // The fallback: upload inside the lock, with the GPU waiting.
    job.fell_back = true;
    ++run_.fallbacks;
    mark("fallback: upload inside the lock", fmt::format("partition {}", job.index));
    co_await make_room();
    co_await memory.allocate_inputs(plan_);
    co_await upload_plain_inputs(device_, memory, host.buffers, upload_);
    device_.record_event(uploaded, upload_);
  }
  auto times = co_await run_program(job, plain_inputs(memory, uploaded), memory);
  job.waited_for_inputs_ns = times.waited_for_inputs_ns;
}

asio::awaitable<void> PinnedInPlaceWorker::run_job(JobRecord& job) {
  const auto pageable = pageable_inputs();
  co_await prepare("prepare a, b, c", job, pageable);
  StagedHostBuffers host;
  bool have_host = false;
  EventHandle uploaded;
  PlainMemory memory(device_, true);
  LockHold hold;
  std::exception_ptr failure;
  try {
    auto start = device_.now();
    host = co_await lane_.staging.pin_in_place(pageable);
    have_host = true;
    span("cudaHostRegister a, b, c", start);
    uploaded = device_.create_event();
    const bool staged = co_await stage(job, memory, host, uploaded);
    hold = take_place(lane_.compute_lock, job);
    co_await run_in_lock(job, hold, memory, host, uploaded, staged);
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) fail(job, failure);
  co_await quietly([&] { return memory.release_all(compute_); });
  co_await quietly([&] { return device_.synchronize_stream(upload_); });
  leave(hold, job);
  destroy_events_quietly({uploaded});
  if (have_host) {
    auto start = device_.now();
    co_await quietly([&] { return lane_.staging.release(host); });
    span("cudaHostUnregister a, b, c", start);
  }
}

}  // namespace stagehand
