#include "sim/stream_engines.hpp"

#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace stagehand::sim {

void merge_clock(VectorClock& into, const VectorClock& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (std::size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

StreamEngines::StreamEngines(SimSystem& system, OpRunner& runner, DeviceCounters& stats, std::string process_name,
                             EngineSlots slots)
    : system_(system), runner_(runner), stats_(stats), trace_(system.trace()), process_name_(std::move(process_name)) {
  streams_.emplace_back();  // handle 0 is never valid
  events_.emplace_back();
  compute_engine_.slots = slots.compute;
  copy_engine_to_device_.slots = slots.copy_to_device;
  copy_engine_to_host_.slots = slots.copy_to_host;
}

// ---------------------------------------------------------------------------------------------
// Handles

Stream& StreamEngines::stream(StreamHandle handle, const char* call) {
  if (handle.id == 0 || handle.id >= streams_.size() || !streams_[handle.id]->alive) {
    throw DeviceError(DeviceErrc::invalid_value, fmt::format("{}: invalid stream {}", call, handle.id));
  }
  return *streams_[handle.id];
}

Event& StreamEngines::event(EventHandle handle, const char* call) {
  if (handle.id == 0 || handle.id >= events_.size() || !events_[handle.id]->alive) {
    throw DeviceError(DeviceErrc::invalid_value, fmt::format("{}: invalid event {}", call, handle.id));
  }
  return *events_[handle.id];
}

Stream& StreamEngines::stream_by_id(std::uint32_t id) {
  // Ids come from the engines' own operations and queues, never from a caller.
  STAGEHAND_ASSERT(id != 0 && id < streams_.size(), "stream id {} of {} streams", id, stream_count());
  return *streams_[id];
}

std::string StreamEngines::stream_name(std::uint32_t id) { return fmt::format("stream {}", id); }

StreamHandle StreamEngines::create_stream() {
  auto stream = std::make_unique<Stream>();
  stream->id = static_cast<std::uint32_t>(streams_.size());
  stream->track = trace_.track(process_name_, stream_name(stream->id));
  streams_.push_back(std::move(stream));
  return StreamHandle{streams_.back()->id};
}

EventHandle StreamEngines::create_event() {
  events_.push_back(std::make_unique<Event>());
  return EventHandle{static_cast<std::uint32_t>(events_.size() - 1)};
}

// ---------------------------------------------------------------------------------------------
// Stream execution

void StreamEngines::observe_on_host(const VectorClock& clock) {
  merge_clock(host_clock_, clock);
  ++host_clock_version_;
}

Op& StreamEngines::enqueue(Stream& stream, OpKind kind) {
  // Whatever the host has seen complete precedes everything it enqueues afterwards.
  if (stream.merged_host_clock_version != host_clock_version_) {
    merge_clock(stream.clock, host_clock_);
    stream.merged_host_clock_version = host_clock_version_;
  }
  if (stream.clock.size() <= stream.id) stream.clock.resize(stream.id + 1, 0);
  stream.clock[stream.id] = ++stream.enqueued;
  auto& op = stream.ops.emplace_back();
  op.kind = kind;
  op.sequence = stream.enqueued;
  ++stats_.operations;
  most_operations_queued_ = std::max(most_operations_queued_, stream.ops.size());
  return op;
}

StreamEngines::Engine& StreamEngines::engine_for(OpKind kind) {
  switch (kind) {
    case OpKind::copy_to_device: return copy_engine_to_device_;
    case OpKind::copy_to_host: return copy_engine_to_host_;
    default: return compute_engine_;
  }
}

void StreamEngines::finish_head(Stream& stream) {
  STAGEHAND_ASSERT(!stream.ops.empty(), "{}: finishing the head of an empty queue", stream_name(stream.id));
  stream.ops.pop_front();
  stream.head_started = false;
  ++stream.completed;
  STAGEHAND_ASSERT(stream.completed <= stream.enqueued, "{}: {} operations completed of {} enqueued",
                   stream_name(stream.id), stream.completed, stream.enqueued);
  while (!stream.waiters.empty() && stream.waiters.begin()->first <= stream.completed) {
    auto waiter = std::move(stream.waiters.begin()->second);
    stream.waiters.erase(stream.waiters.begin());
    waiter(nullptr);
  }
}

void StreamEngines::when_reached(Stream& stream, std::uint64_t sequence, SequenceWaiter waiter) {
  if (stream.completed >= sequence) {
    waiter(nullptr);
    return;
  }
  stream.waiters.emplace(sequence, std::move(waiter));
}

asio::awaitable<void> StreamEngines::wait_until_reached(Stream& stream, std::uint64_t sequence) {
  co_await await_completion([&](Completion completion) {
    auto shared = std::make_shared<Completion>(std::move(completion));
    when_reached(stream, sequence, [shared](std::exception_ptr error) { shared->complete(error); });
  });
}

void StreamEngines::advance(Stream& stream) {
  while (!runner_.lost() && !stream.ops.empty() && !stream.head_started) {
    if (!advance_head(stream)) return;
  }
}

// Runs or starts the stream's head operation; false when the head now waits (or runs on an engine).
bool StreamEngines::advance_head(Stream& stream) {
  Op& op = stream.ops.front();
  switch (op.kind) {
    case OpKind::record_event:
      STAGEHAND_ASSERT(op.event != 0 && op.event < events_.size(), "record of event {} of {}", op.event,
                       events_.size() - 1);
      complete_event(*events_[op.event], op.generation);
      finish_head(stream);
      return true;
    case OpKind::wait_event: return wait_for_event(stream, op);
    case OpKind::free_async:
      runner_.free_reached(stream, op);
      finish_head(stream);
      return true;
    case OpKind::host_callback:
      asio::post(system_.io(), std::move(op.callback));
      finish_head(stream);
      return true;
    case OpKind::pool_dependency: return wait_for_pool_dependency(stream, op);
    case OpKind::kernel:
    case OpKind::memset:
    case OpKind::copy_to_device:
    case OpKind::copy_to_host: take_engine(stream, op); return false;
  }
  return false;
}

bool StreamEngines::wait_for_event(Stream& stream, const Op& op) {
  STAGEHAND_ASSERT(op.event != 0 && op.event < events_.size(), "wait for event {} of {}", op.event, events_.size() - 1);
  auto& event = *events_[op.event];
  if (event.completed >= op.generation) {
    finish_head(stream);
    return true;
  }
  event.blocked_streams.emplace_back(op.generation, stream.id);
  stream.head_started = true;
  return false;
}

bool StreamEngines::wait_for_pool_dependency(Stream& stream, const Op& op) {
  auto& other = stream_by_id(op.other_stream);
  if (other.completed >= op.other_sequence) {
    finish_head(stream);
    return true;
  }
  stream.head_started = true;
  when_reached(other, op.other_sequence, [this, id = stream.id](std::exception_ptr) {
    auto& waiting = *streams_[id];
    if (runner_.lost() || waiting.ops.empty()) return;
    finish_head(waiting);
    advance(waiting);
  });
  return false;
}

void StreamEngines::take_engine(Stream& stream, Op& op) {
  stream.head_started = true;
  if (op.not_before_ns > system_.now()) {
    // Its call was still waiting for a pinning call when the stream got here.
    system_.schedule_at(op.not_before_ns, [this, id = stream.id] {
      auto& waiting = *streams_[id];
      if (runner_.lost() || waiting.ops.empty()) return;
      waiting.head_started = false;
      advance(waiting);
    });
    return;
  }
  auto& engine = engine_for(op.kind);
  if (engine.busy < engine.slots) {
    ++engine.busy;
    start_on_engine(stream);
  } else {
    engine.waiting.push_back(stream.id);
    // A stream waits in one queue at most, for its head operation.
    STAGEHAND_ASSERT(engine.waiting.size() <= stream_count(), "{} streams wait for an engine, of {}",
                     engine.waiting.size(), stream_count());
  }
}

void StreamEngines::start_on_engine(Stream& stream) {
  Op& op = stream.ops.front();
  op.started_ns = system_.now();
  runner_.start(stream, op, [this, id = stream.id] { complete_running(id); });
}

void StreamEngines::complete_running(std::uint32_t stream_id) {
  if (runner_.lost()) return;
  auto& stream = stream_by_id(stream_id);
  STAGEHAND_ASSERT(!stream.ops.empty() && stream.head_started, "{}: an engine finished work the stream does not run",
                   stream_name(stream_id));
  Op& op = stream.ops.front();
  runner_.finish(stream, op);
  if (runner_.lost()) return;  // a faulted kernel took the device with it, and its queues
  auto& engine = engine_for(op.kind);
  finish_head(stream);
  STAGEHAND_ASSERT(engine.busy > 0 && engine.busy <= engine.slots, "engine busy {} of {} slots at a completion",
                   engine.busy, engine.slots);
  --engine.busy;
  if (!engine.waiting.empty()) {
    auto next = engine.waiting.front();
    engine.waiting.pop_front();
    ++engine.busy;
    start_on_engine(stream_by_id(next));
  }
  advance(stream);
}

void StreamEngines::complete_event(Event& event, std::uint64_t generation) {
  STAGEHAND_ASSERT(generation <= event.recorded, "event completes generation {} of {} recorded", generation,
                   event.recorded);
  event.completed = std::max(event.completed, generation);
  std::vector<std::uint32_t> ready_streams;
  std::erase_if(event.blocked_streams, [&](const auto& entry) {
    if (entry.first > event.completed) return false;
    ready_streams.push_back(entry.second);
    return true;
  });
  std::vector<std::shared_ptr<Completion>> ready_hosts;
  std::erase_if(event.host_waiters, [&](auto& entry) {
    if (entry.first > event.completed) return false;
    ready_hosts.push_back(std::move(entry.second));
    return true;
  });
  for (auto& host : ready_hosts) host->complete(nullptr);
  for (auto id : ready_streams) {
    auto& stream = stream_by_id(id);
    finish_head(stream);
    advance(stream);
  }
}

// ---------------------------------------------------------------------------------------------
// Events

void StreamEngines::record_event(Event& event, EventHandle handle, Stream& stream) {
  auto& op = enqueue(stream, OpKind::record_event);
  op.event = handle.id;
  op.generation = ++event.recorded;
  event.clock = stream.clock;
  advance(stream);
}

void StreamEngines::stream_wait_event(Stream& stream, Event& event, EventHandle handle) {
  if (event.recorded == 0) return;  // CUDA: waiting for a never-recorded event does nothing
  merge_clock(stream.clock, event.clock);
  auto& op = enqueue(stream, OpKind::wait_event);
  op.event = handle.id;
  op.generation = event.recorded;
  advance(stream);
}

// ---------------------------------------------------------------------------------------------
// Device loss and leaks

void StreamEngines::fail_everything(const std::exception_ptr& error) {
  for (std::size_t id = 1; id < streams_.size(); ++id) {
    auto& stream = *streams_[id];
    stream.ops.clear();
    stream.head_started = false;
    auto waiters = std::move(stream.waiters);
    stream.waiters.clear();
    for (auto& [sequence, waiter] : waiters) waiter(error);
  }
  for (std::size_t id = 1; id < events_.size(); ++id) {
    auto waiters = std::move(events_[id]->host_waiters);
    events_[id]->host_waiters.clear();
    events_[id]->blocked_streams.clear();
    for (auto& [generation, completion] : waiters) completion->complete(error);
  }
}

void StreamEngines::report_leaks(int ordinal, std::vector<std::string>& leaks) const {
  for (std::size_t id = 1; id < streams_.size(); ++id) {
    if (streams_[id]->alive)
      leaks.push_back(fmt::format("GPU {}: {} never destroyed", ordinal, stream_name(static_cast<std::uint32_t>(id))));
  }
  for (std::size_t id = 1; id < events_.size(); ++id) {
    if (events_[id]->alive) leaks.push_back(fmt::format("GPU {}: event {} never destroyed", ordinal, id));
  }
}

}  // namespace stagehand::sim
