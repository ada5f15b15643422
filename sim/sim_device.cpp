#include "sim/sim_device.hpp"

#include "device/format.hpp"
#include "sim/sim_system.hpp"

#include "device/asio.hpp"
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace stagehand::sim {

struct SimDevice::Op {
  OpKind kind;
  std::uint64_t sequence = 0;
  Nanoseconds started_ns = 0;
  Bytes bytes = 0;
  DevicePointer device_pointer;
  HostRange host;
  bool pageable = false;
  bool fail = false;  // an injected kernel fault
  std::uint8_t memset_value = 0;
  std::uint32_t event = 0;
  std::uint64_t generation = 0;
  std::uint32_t other_stream = 0;
  std::uint64_t other_sequence = 0;
  Nanoseconds not_before_ns = 0;  // issued while a pinning call held the GPU's calls (model_.pinning_holds_calls)
  std::unique_ptr<KernelLaunch> kernel;
  std::function<void()> callback;
};

struct SimDevice::Stream {
  std::uint32_t id = 0;
  bool alive = true;
  std::deque<Op> ops;
  bool head_started = false;  // the head operation runs or waits for an engine or a dependency
  std::uint64_t enqueued = 0;
  std::uint64_t completed = 0;
  // Vector clock: clock[s] = the last operation of stream s known to precede what is enqueued next.
  std::vector<std::uint64_t> clock;
  std::uint64_t merged_host_clock_version = 0;
  std::multimap<std::uint64_t, SequenceWaiter> waiters;
  TraceTrack track;
  std::exception_ptr error;  // a failed kernel, reported once at the next host synchronise
};

struct SimDevice::Event {
  bool alive = true;
  std::uint64_t recorded = 0;  // generation of the latest record
  std::uint64_t completed = 0;
  std::uint32_t recorded_stream = 0;
  std::vector<std::uint64_t> clock;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> blocked_streams;
  std::vector<std::pair<std::uint64_t, std::shared_ptr<Completion>>> host_waiters;
};

struct SimDevice::Allocation {
  std::uint64_t base = 0;
  Bytes bytes = 0;
  bool pool = false;
  std::vector<std::byte> backing;  // functional mode only
  std::uint32_t writer_stream = 0;
  std::uint64_t writer_sequence = 0;
  std::string writer;
};

namespace {
double gib(Bytes bytes) { return static_cast<double>(bytes) / static_cast<double>(kGiB); }
Nanoseconds milliseconds(double ms) { return static_cast<Nanoseconds>(std::llround(ms * 1e6)); }
double bytes_per_ns(double gbps) { return gbps; }  // 1 GB/s = 1e9 B/s = 1 B/ns
// Keep allocations apart so that pointer arithmetic past an end never lands in a neighbour.
constexpr std::uint64_t kAddressAlignment = 2 * kMiB;
}  // namespace

std::string CheckerReport::describe() const {
  std::string text;
  for (const auto& leak : leaks) text += fmt::format("leak: {}\n", leak);
  for (const auto& read : unsynchronized_reads) text += fmt::format("unsynchronized read: {}\n", read);
  return text.empty() ? "clean\n" : text;
}

SimDevice::SimDevice(SimSystem& system, DeviceModel model, int ordinal, FaultPlan faults)
    : system_(system),
      model_(std::move(model)),
      faults_(std::move(faults)),
      link_(system, LinkRates{bytes_per_ns(model_.host_to_device_pinned_gbps), bytes_per_ns(model_.device_to_host_pinned_gbps),
                              bytes_per_ns(model_.bidirectional_gbps), bytes_per_ns(model_.pageable_gbps)}),
      trace_(system.trace()) {
  properties_.name = model_.name;
  properties_.ordinal = ordinal;
  properties_.total_memory_bytes = model_.memory_bytes;
  properties_.async_engine_count = model_.async_engine_count();
  process_name_ = fmt::format("GPU {}: {}", ordinal, model_.name);
  host_track_ = trace_.track(process_name_, "host calls");
  streams_.emplace_back();  // handle 0 is never valid
  events_.emplace_back();
  compute_engine_.slots = model_.compute_concurrency;
  copy_engine_to_device_.slots = model_.copy_engines_host_to_device;
  copy_engine_to_host_.slots = model_.copy_engines_device_to_host;
  pool_release_threshold_bytes_ = model_.pool_release_threshold_bytes;
  pool_cross_stream_reuse_ = model_.pool_reuse_across_streams;
  if (faults_.lose_device_at_ns >= 0) system_.schedule_at(faults_.lose_device_at_ns, [this] { lose_device(); });
  if (faults_.pcie_slowdown_factor != 1.0) {
    system_.schedule_at(faults_.pcie_slowdown_from_ns, [this] {
      if (lost_) return;
      trace_.instant(host_track_, "PCIe link slowed", "fault", system_.now(),
                     fmt::format("{}x slower", faults_.pcie_slowdown_factor));
      link_.slow_down(faults_.pcie_slowdown_factor);
    });
  }
}

SimDevice::~SimDevice() = default;

asio::any_io_executor SimDevice::executor() { return system_.io().get_executor(); }
Nanoseconds SimDevice::now() const { return system_.now(); }

asio::awaitable<void> SimDevice::sleep_for(Nanoseconds duration) {
  co_await await_completion([&](Completion completion) {
    auto shared = std::make_shared<Completion>(std::move(completion));
    // Host work modelled as taking time varies like every other modelled duration.
    system_.schedule_after(std::max<Nanoseconds>(0, jittered(duration)), [shared] { shared->complete(); });
  });
}

// ---------------------------------------------------------------------------------------------
// Handles

void SimDevice::ensure_alive(const char* call) const {
  if (lost_) throw DeviceError(DeviceErrc::device_lost, fmt::format("{} on GPU {}: the device was lost", call, properties_.ordinal));
}

SimDevice::Stream& SimDevice::stream_at(StreamHandle handle, const char* call) {
  ensure_alive(call);
  if (handle.id == 0 || handle.id >= streams_.size() || !streams_[handle.id]->alive) {
    throw DeviceError(DeviceErrc::invalid_value, fmt::format("{}: invalid stream {}", call, handle.id));
  }
  return *streams_[handle.id];
}

SimDevice::Event& SimDevice::event_at(EventHandle handle, const char* call) {
  ensure_alive(call);
  if (handle.id == 0 || handle.id >= events_.size() || !events_[handle.id]->alive) {
    throw DeviceError(DeviceErrc::invalid_value, fmt::format("{}: invalid event {}", call, handle.id));
  }
  return *events_[handle.id];
}

std::string SimDevice::stream_name(std::uint32_t id) const { return fmt::format("stream {}", id); }

StreamHandle SimDevice::create_stream() {
  ensure_alive("create_stream");
  auto stream = std::make_unique<Stream>();
  stream->id = static_cast<std::uint32_t>(streams_.size());
  stream->track = trace_.track(process_name_, stream_name(stream->id));
  streams_.push_back(std::move(stream));
  return StreamHandle{streams_.back()->id};
}

void SimDevice::destroy_stream(StreamHandle handle) {
  // As in CUDA, work already enqueued still runs to completion.
  stream_at(handle, "destroy_stream").alive = false;
}

EventHandle SimDevice::create_event() {
  ensure_alive("create_event");
  events_.push_back(std::make_unique<Event>());
  return EventHandle{static_cast<std::uint32_t>(events_.size() - 1)};
}

void SimDevice::destroy_event(EventHandle handle) { event_at(handle, "destroy_event").alive = false; }

// ---------------------------------------------------------------------------------------------
// Stream execution

void SimDevice::merge_clock(std::vector<std::uint64_t>& into, const std::vector<std::uint64_t>& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (std::size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

void SimDevice::observe_on_host(const std::vector<std::uint64_t>& clock) {
  merge_clock(host_clock_, clock);
  ++host_clock_version_;
}

SimDevice::Op& SimDevice::enqueue(Stream& stream, OpKind kind) {
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
  return op;
}

SimDevice::Engine& SimDevice::engine_for(OpKind kind) {
  switch (kind) {
    case OpKind::copy_to_device: return copy_engine_to_device_;
    case OpKind::copy_to_host: return copy_engine_to_host_;
    default: return compute_engine_;
  }
}

void SimDevice::finish_head(Stream& stream) {
  stream.ops.pop_front();
  stream.head_started = false;
  ++stream.completed;
  while (!stream.waiters.empty() && stream.waiters.begin()->first <= stream.completed) {
    auto waiter = std::move(stream.waiters.begin()->second);
    stream.waiters.erase(stream.waiters.begin());
    waiter(nullptr);
  }
}

void SimDevice::when_reached(Stream& stream, std::uint64_t sequence, SequenceWaiter waiter) {
  if (stream.completed >= sequence) {
    waiter(nullptr);
    return;
  }
  stream.waiters.emplace(sequence, std::move(waiter));
}

asio::awaitable<void> SimDevice::wait_until_reached(Stream& stream, std::uint64_t sequence) {
  co_await await_completion([&](Completion completion) {
    auto shared = std::make_shared<Completion>(std::move(completion));
    when_reached(stream, sequence, [shared](std::exception_ptr error) { shared->complete(error); });
  });
}

void SimDevice::advance(Stream& stream) {
  while (!lost_ && !stream.ops.empty() && !stream.head_started) {
    Op& op = stream.ops.front();
    switch (op.kind) {
      case OpKind::record_event:
        complete_event(*events_[op.event], op.generation, nullptr);
        finish_head(stream);
        break;
      case OpKind::wait_event: {
        auto& event = *events_[op.event];
        if (event.completed >= op.generation) {
          finish_head(stream);
          break;
        }
        event.blocked_streams.emplace_back(op.generation, stream.id);
        stream.head_started = true;
        return;
      }
      case OpKind::free_async: {
        // The stream has reached the free: the block is idle in the pool from now on.
        auto found = std::find_if(pending_frees_.begin(), pending_frees_.end(), [&](const PendingFree& pending) {
          return pending.stream == stream.id && pending.sequence == op.sequence;
        });
        if (found != pending_frees_.end()) {
          pool_pending_bytes_ -= found->bytes;
          pending_frees_.erase(found);
        }
        retiring_.erase(op.device_pointer.address);
        finish_head(stream);
        break;
      }
      case OpKind::host_callback:
        asio::post(system_.io(), std::move(op.callback));
        finish_head(stream);
        break;
      case OpKind::pool_dependency: {
        auto& other = *streams_[op.other_stream];
        if (other.completed >= op.other_sequence) {
          finish_head(stream);
          break;
        }
        stream.head_started = true;
        when_reached(other, op.other_sequence, [this, id = stream.id](std::exception_ptr) {
          auto& waiting = *streams_[id];
          if (lost_ || waiting.ops.empty()) return;
          finish_head(waiting);
          advance(waiting);
        });
        return;
      }
      case OpKind::kernel:
      case OpKind::memset:
      case OpKind::copy_to_device:
      case OpKind::copy_to_host: {
        stream.head_started = true;
        if (op.not_before_ns > system_.now()) {
          // Its call was still waiting for a pinning call when the stream got here.
          system_.schedule_at(op.not_before_ns, [this, id = stream.id] {
            auto& waiting = *streams_[id];
            if (lost_ || waiting.ops.empty()) return;
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
        }
        return;
      }
    }
  }
}

Nanoseconds SimDevice::jittered(Nanoseconds duration) {
  auto spread = system_.options().duration_jitter;
  if (spread == 0) return duration;
  return static_cast<Nanoseconds>(std::llround(static_cast<double>(duration) * system_.random().jitter(spread)));
}

void SimDevice::start_on_engine(Stream& stream) {
  Op& op = stream.ops.front();
  op.started_ns = system_.now();
  auto id = stream.id;
  switch (op.kind) {
    case OpKind::kernel: {
      Nanoseconds duration = 1000;
      if (model_.has_kernel(op.kernel->name) || !system_.options().functional) {
        duration = model_.kernel_ns(op.kernel->name, op.kernel->work_units);
      }
      if (kernels_running_++ == 0) {
        compute_busy_since_ns_ = system_.now();
        if (stats_.first_kernel_start_ns < 0) stats_.first_kernel_start_ns = system_.now();
      }
      system_.schedule_after(jittered(duration), [this, id] { complete_running(id, nullptr); });
      break;
    }
    case OpKind::memset: {
      auto duration = static_cast<Nanoseconds>(std::ceil(static_cast<double>(op.bytes) / model_.memset_gbps));
      system_.schedule_after(jittered(duration), [this, id] { complete_running(id, nullptr); });
      break;
    }
    case OpKind::copy_to_device:
    case OpKind::copy_to_host: {
      auto direction = op.kind == OpKind::copy_to_device ? Direction::host_to_device : Direction::device_to_host;
      double scale = system_.options().duration_jitter == 0 ? 1.0 : 1.0 / system_.random().jitter(system_.options().duration_jitter);
      link_.start(direction, op.bytes, op.pageable, scale, [this, id] { complete_running(id, nullptr); });
      break;
    }
    default: break;
  }
}

void SimDevice::complete_running(std::uint32_t stream_id, std::exception_ptr error) {
  if (lost_) return;
  auto& stream = *streams_[stream_id];
  Op& op = stream.ops.front();
  auto now = system_.now();
  bool functional = system_.options().functional;
  switch (op.kind) {
    case OpKind::kernel: {
      if (--kernels_running_ == 0) {
        stats_.compute_busy_ns += now - compute_busy_since_ns_;
        stats_.last_kernel_end_ns = now;
      }
      ++stats_.kernels;
      {
        auto& totals = stats_.kernel_totals[op.kernel->name];
        ++totals.launches;
        totals.work_units += op.kernel->work_units;
        totals.busy_ns += now - op.started_ns;
      }
      if (op.fail) {
        error = std::make_exception_ptr(DeviceError(
            DeviceErrc::kernel_failed, fmt::format("kernel '{}' failed on GPU {} {} (injected fault)", op.kernel->name,
                                                   properties_.ordinal, stream_name(stream_id))));
      } else if (functional) {
        if (const auto* function = system_.kernel_function(op.kernel->name)) {
          std::vector<std::span<std::byte>> reads;
          std::vector<std::span<std::byte>> writes;
          auto view = [&](const BufferUse& use) {
            auto* allocation = find_backing(use.pointer);
            if (allocation == nullptr || use.pointer.address + use.bytes > allocation->base + allocation->bytes) {
              throw DeviceError(DeviceErrc::invalid_value,
                                fmt::format("kernel '{}' on GPU {}: buffer {:#x} ({}) is not inside a live allocation",
                                            op.kernel->name, properties_.ordinal, use.pointer.address, format_bytes(use.bytes)));
            }
            return std::span<std::byte>(allocation->backing.data() + (use.pointer.address - allocation->base), use.bytes);
          };
          for (const auto& use : op.kernel->reads) reads.push_back(view(use));
          for (const auto& use : op.kernel->writes) writes.push_back(view(use));
          KernelContext context(*op.kernel, std::move(reads), std::move(writes));
          (*function)(context);
        }
      }
      trace_.span(stream.track, op.kernel->name, op.fail ? "kernel (failed)" : "kernel", op.started_ns, now,
                  fmt::format("work_units={}", op.kernel->work_units));
      break;
    }
    case OpKind::memset:
      if (functional) {
        auto* allocation = find_backing(op.device_pointer);
        if (allocation != nullptr) {
          std::memset(allocation->backing.data() + (op.device_pointer.address - allocation->base), op.memset_value, op.bytes);
        }
      }
      trace_.span(stream.track, "memset", "memset", op.started_ns, now, format_bytes(op.bytes));
      break;
    case OpKind::copy_to_device:
    case OpKind::copy_to_host: {
      bool to_device = op.kind == OpKind::copy_to_device;
      if (functional) {
        auto* allocation = find_backing(op.device_pointer);
        if (allocation != nullptr) {
          auto* device_bytes = allocation->backing.data() + (op.device_pointer.address - allocation->base);
          if (to_device) {
            std::memcpy(device_bytes, op.host.data(), op.bytes);
          } else {
            std::memcpy(op.host.data(), device_bytes, op.bytes);
          }
        }
      }
      (op.pageable ? stats_.pageable_bytes_copied : stats_.pinned_bytes_copied) += op.bytes;
      trace_.span(stream.track, to_device ? "copy HtoD" : "copy DtoH", op.pageable ? "copy (pageable)" : "copy (pinned)",
                  op.started_ns, now, format_bytes(op.bytes));
      break;
    }
    default: break;
  }
  if (error) stream.error = error;
  auto& engine = engine_for(op.kind);
  finish_head(stream);
  --engine.busy;
  if (!engine.waiting.empty()) {
    auto next = engine.waiting.front();
    engine.waiting.pop_front();
    ++engine.busy;
    start_on_engine(*streams_[next]);
  }
  advance(stream);
}

void SimDevice::complete_event(Event& event, std::uint64_t generation, std::exception_ptr error) {
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
  for (auto& host : ready_hosts) host->complete(error);
  for (auto id : ready_streams) {
    auto& stream = *streams_[id];
    finish_head(stream);
    advance(stream);
  }
}

// ---------------------------------------------------------------------------------------------
// Events and synchronisation

void SimDevice::record_event(EventHandle event_handle, StreamHandle stream_handle) {
  auto& event = event_at(event_handle, "record_event");
  auto& stream = stream_at(stream_handle, "record_event");
  auto& op = enqueue(stream, OpKind::record_event);
  op.event = event_handle.id;
  op.generation = ++event.recorded;
  event.recorded_stream = stream.id;
  event.clock = stream.clock;
  advance(stream);
}

void SimDevice::stream_wait_event(StreamHandle stream_handle, EventHandle event_handle) {
  auto& event = event_at(event_handle, "stream_wait_event");
  auto& stream = stream_at(stream_handle, "stream_wait_event");
  if (event.recorded == 0) return;  // CUDA: waiting for a never-recorded event does nothing
  merge_clock(stream.clock, event.clock);
  auto& op = enqueue(stream, OpKind::wait_event);
  op.event = event_handle.id;
  op.generation = event.recorded;
  advance(stream);
}

bool SimDevice::event_complete(EventHandle event_handle) {
  auto& event = event_at(event_handle, "event_complete");
  bool complete = event.completed >= event.recorded;
  if (complete) observe_on_host(event.clock);
  return complete;
}

asio::awaitable<void> SimDevice::wait_event(EventHandle event_handle) {
  auto& event = event_at(event_handle, "wait_event");
  auto clock = event.clock;
  if (event.completed < event.recorded) {
    auto generation = event.recorded;
    co_await await_completion([&](Completion completion) {
      event.host_waiters.emplace_back(generation, std::make_shared<Completion>(std::move(completion)));
    });
  }
  observe_on_host(clock);
  release_pool_to_threshold();
  if (event.recorded_stream != 0) {
    if (auto error = std::exchange(streams_[event.recorded_stream]->error, nullptr)) std::rethrow_exception(error);
  }
}

asio::awaitable<void> SimDevice::synchronize_stream(StreamHandle stream_handle) {
  auto& stream = stream_at(stream_handle, "synchronize_stream");
  auto clock = stream.clock;
  co_await wait_until_reached(stream, stream.enqueued);
  observe_on_host(clock);
  release_pool_to_threshold();
  if (auto error = std::exchange(stream.error, nullptr)) std::rethrow_exception(error);
}

asio::awaitable<void> SimDevice::synchronize_device() {
  ensure_alive("synchronize_device");
  auto start = system_.now();
  std::vector<std::pair<std::uint32_t, std::uint64_t>> targets;
  for (std::size_t id = 1; id < streams_.size(); ++id) targets.emplace_back(static_cast<std::uint32_t>(id), streams_[id]->enqueued);
  for (auto [id, target] : targets) {
    co_await wait_until_reached(*streams_[id], target);
    observe_on_host(streams_[id]->clock);
  }
  release_pool_to_threshold();
  trace_.async_span(host_track_, "cudaDeviceSynchronize", "host-blocking", start, system_.now());
}

// ---------------------------------------------------------------------------------------------
// Copies, memset, kernels, callbacks

bool SimDevice::pinned(HostRange range) const {
  auto after = pinned_ranges_.upper_bound(range.address);
  if (after == pinned_ranges_.begin()) return false;
  auto candidate = std::prev(after);
  return range.address + range.bytes <= candidate->first + candidate->second.first;
}

SimDevice::Allocation* SimDevice::find_allocation(DevicePointer pointer) {
  auto after = allocations_.upper_bound(pointer.address);
  if (after == allocations_.begin()) return nullptr;
  auto& candidate = *std::prev(after)->second;
  return pointer.address < candidate.base + candidate.bytes ? &candidate : nullptr;
}

SimDevice::Allocation* SimDevice::find_backing(DevicePointer pointer) {
  if (auto* live = find_allocation(pointer)) return live;
  auto after = retiring_.upper_bound(pointer.address);
  if (after == retiring_.begin()) return nullptr;
  auto& candidate = *std::prev(after)->second;
  return pointer.address < candidate.base + candidate.bytes ? &candidate : nullptr;
}

SimDevice::Allocation& SimDevice::allocation_for(DevicePointer pointer, Bytes bytes, const char* call) {
  auto* allocation = find_allocation(pointer);
  if (allocation == nullptr) {
    throw DeviceError(DeviceErrc::invalid_value,
                      fmt::format("{}: device pointer {:#x} is not in a live allocation (freed or never allocated)", call,
                                  pointer.address));
  }
  if (pointer.address + bytes > allocation->base + allocation->bytes) {
    throw DeviceError(DeviceErrc::invalid_value,
                      fmt::format("{}: {} at {:#x} runs past the end of its {} allocation", call, format_bytes(bytes),
                                  pointer.address, format_bytes(allocation->bytes)));
  }
  return *allocation;
}

void SimDevice::check_read(const Stream& stream, DevicePointer pointer, const std::string& reader) {
  auto* allocation = find_allocation(pointer);
  if (allocation == nullptr || allocation->writer_stream == 0 || allocation->writer_stream == stream.id) return;
  auto known = allocation->writer_stream < stream.clock.size() ? stream.clock[allocation->writer_stream] : 0;
  if (known < allocation->writer_sequence) {
    unsynchronized_reads_.push_back(fmt::format(
        "{} on GPU {} {} reads the buffer at {:#x} written by {} on {} without waiting for it (at {})", reader,
        properties_.ordinal, stream_name(stream.id), allocation->base, allocation->writer,
        stream_name(allocation->writer_stream), format_duration(system_.now())));
  }
}

void SimDevice::note_write(const Stream& stream, std::uint64_t sequence, DevicePointer pointer, std::string writer) {
  auto* allocation = find_allocation(pointer);
  if (allocation == nullptr) return;
  allocation->writer_stream = stream.id;
  allocation->writer_sequence = sequence;
  allocation->writer = std::move(writer);
}

asio::awaitable<void> SimDevice::copy_to_device(DevicePointer destination, HostRange source, StreamHandle stream_handle) {
  co_await copy(OpKind::copy_to_device, destination, source, stream_handle);
}

asio::awaitable<void> SimDevice::copy_to_host(HostRange destination, DevicePointer source, StreamHandle stream_handle) {
  co_await copy(OpKind::copy_to_host, source, destination, stream_handle);
}

asio::awaitable<void> SimDevice::copy(OpKind kind, DevicePointer device_side, HostRange host_side, StreamHandle stream_handle) {
  bool to_device = kind == OpKind::copy_to_device;
  const char* call = to_device ? "copy_to_device" : "copy_to_host";
  auto& stream = stream_at(stream_handle, call);
  allocation_for(device_side, host_side.bytes, call);
  bool pageable = !pinned(host_side);
  auto& op = enqueue(stream, kind);
  op.not_before_ns = calls_held_until();
  op.bytes = host_side.bytes;
  op.device_pointer = device_side;
  op.host = host_side;
  op.pageable = pageable;
  auto sequence = op.sequence;
  if (to_device) {
    note_write(stream, sequence, device_side, "copy to device");
  } else {
    check_read(stream, device_side, "copy to host");
  }
  auto clock = stream.clock;
  advance(stream);
  if (pageable) {
    // The driver stages pageable memory through its own pinned buffer: the call returns when the
    // copy is done, holding the calling host thread all the while.
    auto start = system_.now();
    co_await wait_until_reached(stream, sequence);
    observe_on_host(clock);
    trace_.async_span(host_track_, to_device ? "pageable copy to device (host blocked)" : "pageable copy to host (host blocked)",
                      "host-blocking", start, system_.now(), format_bytes(host_side.bytes));
  }
}

void SimDevice::memset_async(DevicePointer destination, std::uint8_t value, Bytes bytes, StreamHandle stream_handle) {
  auto& stream = stream_at(stream_handle, "memset_async");
  allocation_for(destination, bytes, "memset_async");
  auto& op = enqueue(stream, OpKind::memset);
  op.not_before_ns = calls_held_until();
  op.device_pointer = destination;
  op.bytes = bytes;
  op.memset_value = value;
  note_write(stream, op.sequence, destination, "memset");
  advance(stream);
}

void SimDevice::launch(const KernelLaunch& kernel, StreamHandle stream_handle) {
  auto& stream = stream_at(stream_handle, "launch");
  if (system_.options().functional ? system_.kernel_function(kernel.name) == nullptr : !model_.has_kernel(kernel.name)) {
    throw DeviceError(DeviceErrc::unknown_kernel,
                      fmt::format("launch: kernel '{}' is not known to {} ({})", kernel.name,
                                  system_.options().functional ? "the functional simulator" : "the device model",
                                  model_.source.string()));
  }
  for (const auto& use : kernel.reads) allocation_for(use.pointer, use.bytes, "launch (read buffer)");
  for (const auto& use : kernel.writes) allocation_for(use.pointer, use.bytes, "launch (write buffer)");
  auto& op = enqueue(stream, OpKind::kernel);
  op.not_before_ns = calls_held_until();
  op.kernel = std::make_unique<KernelLaunch>(kernel);
  if (!faults_.fail_kernel_name.empty() && kernel.name == faults_.fail_kernel_name &&
      ++faulted_kernel_launches_ == faults_.fail_kernel_occurrence) {
    op.fail = true;
  }
  auto reader = fmt::format("kernel '{}'", kernel.name);
  for (const auto& use : kernel.reads) check_read(stream, use.pointer, reader);
  for (const auto& use : kernel.writes) note_write(stream, op.sequence, use.pointer, reader);
  advance(stream);
}

void SimDevice::host_callback(StreamHandle stream_handle, std::function<void()> callback) {
  auto& stream = stream_at(stream_handle, "host_callback");
  auto& op = enqueue(stream, OpKind::host_callback);
  op.callback = std::move(callback);
  advance(stream);
}

// ---------------------------------------------------------------------------------------------
// Memory

Bytes SimDevice::device_free_bytes() const {
  Bytes used = sync_used_bytes_ + pool_reserved_bytes_ + external_bytes_;
  return used >= model_.memory_bytes ? 0 : model_.memory_bytes - used;
}

void SimDevice::note_memory_peak() {
  stats_.peak_memory_used_bytes = std::max(stats_.peak_memory_used_bytes, memory_held_bytes());
}

void SimDevice::out_of_memory(const std::string& what) {
  ++stats_.out_of_memory_count;
  trace_.instant(host_track_, "out of memory", "error", system_.now(), what);
  throw DeviceError(DeviceErrc::out_of_memory, what);
}

bool SimDevice::take_allocation_fault() {
  return ++allocation_count_ == faults_.fail_allocation_number;
}

DevicePointer SimDevice::new_allocation(Bytes bytes, bool pool, std::uint32_t stream) {
  auto allocation = std::make_unique<Allocation>();
  allocation->base = next_device_address_;
  allocation->bytes = bytes;
  allocation->pool = pool;
  if (system_.options().functional) allocation->backing.assign(bytes, std::byte{0xa5});  // never zero: catches reads of unwritten memory
  next_device_address_ += (bytes + 2 * kAddressAlignment - 1) / kAddressAlignment * kAddressAlignment;
  DevicePointer pointer{allocation->base};
  allocations_.emplace(allocation->base, std::move(allocation));
  return pointer;
}

asio::awaitable<void> SimDevice::host_call(const char* call, Nanoseconds duration, std::string detail, bool pinning) {
  auto start = system_.now();
  auto begins = start;
  if (model_.host_calls_queue) {
    // Behind every call already given to the GPU's host worker.
    begins = std::max(start, host_worker_free_ns_);
    host_worker_free_ns_ = begins + duration;
  }
  if (pinning && model_.pinning_holds_calls) pinning_calls_.emplace_back(begins, begins + duration);
  co_await sleep_for(begins + duration - start);
  trace_.async_span(host_track_, call, "host-blocking", begins, system_.now(), std::move(detail));
}

Nanoseconds SimDevice::calls_held_until() {
  const auto now = system_.now();
  std::erase_if(pinning_calls_, [now](const auto& call) { return call.second <= now; });
  // A call issued now waits for a pinning call in progress, and for any queued right behind it.
  Nanoseconds until = now;
  bool extended = true;
  while (extended) {
    extended = false;
    for (const auto& [begins, ends] : pinning_calls_) {
      if (begins <= until && until < ends) {
        until = ends;
        extended = true;
      }
    }
  }
  return until;
}

asio::awaitable<DevicePointer> SimDevice::allocate(Bytes bytes) {
  ensure_alive("allocate");
  if (bytes == 0) throw DeviceError(DeviceErrc::invalid_value, "allocate: zero bytes");
  auto cost = milliseconds(model_.malloc_ms);
  auto what = [&] {
    return fmt::format("cudaMalloc({}) on GPU {}: out of memory (free {}, pool reserved {} of which {} pending free)",
                       format_bytes(bytes), properties_.ordinal, format_bytes(device_free_bytes()),
                       format_bytes(pool_reserved_bytes_), format_bytes(pool_pending_bytes_));
  };
  if (take_allocation_fault()) {
    co_await host_call("cudaMalloc (failed)", cost, format_bytes(bytes));
    out_of_memory(what() + " [injected fault]");
  }
  if (device_free_bytes() < bytes && model_.malloc_reclaims_idle_pool) {
    // The H200's driver releases idle pool memory to serve a cudaMalloc; pending frees are not idle.
    Bytes idle = pool_reserved_bytes_ - pool_used_bytes_ - pool_pending_bytes_;
    if (idle > 0) {
      pool_reserved_bytes_ -= idle;
      cost += milliseconds(gib(idle) * model_.malloc_reclaim_ms_per_gib);
      trace_.instant(host_track_, "driver released idle pool memory", "memory", system_.now(), format_bytes(idle));
    }
  }
  if (device_free_bytes() < bytes) {
    auto message = what();
    co_await host_call("cudaMalloc (failed)", cost, format_bytes(bytes));
    out_of_memory(message);
  }
  auto pointer = new_allocation(bytes, false, 0);
  sync_used_bytes_ += bytes;
  note_memory_peak();
  co_await host_call("cudaMalloc", cost, format_bytes(bytes));
  co_return pointer;
}

asio::awaitable<void> SimDevice::free(DevicePointer pointer) {
  ensure_alive("free");
  auto found = allocations_.find(pointer.address);
  if (found == allocations_.end() || found->second->pool) {
    throw DeviceError(DeviceErrc::invalid_value,
                      fmt::format("free: {:#x} is not a live cudaMalloc allocation", pointer.address));
  }
  // cudaFree waits for all work on the device, whoever enqueued it.
  auto start = system_.now();
  for (std::size_t id = 1; id < streams_.size(); ++id) {
    co_await wait_until_reached(*streams_[id], streams_[id]->enqueued);
  }
  co_await sleep_for(milliseconds(model_.free_ms));
  found = allocations_.find(pointer.address);
  if (found == allocations_.end()) throw DeviceError(DeviceErrc::invalid_value, "free: freed twice");
  sync_used_bytes_ -= found->second->bytes;
  trace_.async_span(host_track_, "cudaFree (waits for the device)", "host-blocking", start, system_.now(),
                    format_bytes(found->second->bytes));
  allocations_.erase(found);
}

asio::awaitable<DevicePointer> SimDevice::allocate_async(Bytes bytes, StreamHandle stream_handle) {
  auto& stream = stream_at(stream_handle, "allocate_async");
  if (bytes == 0) throw DeviceError(DeviceErrc::invalid_value, "allocate_async: zero bytes");
  auto cost = milliseconds(model_.pool_alloc_ms);
  auto what = [&] {
    return fmt::format("cudaMallocAsync({}) on GPU {} {}: out of memory (free {}, pool reserved {}, used {}, {} pending free)",
                       format_bytes(bytes), properties_.ordinal, stream_name(stream.id), format_bytes(device_free_bytes()),
                       format_bytes(pool_reserved_bytes_), format_bytes(pool_used_bytes_), format_bytes(pool_pending_bytes_));
  };
  if (take_allocation_fault()) {
    co_await host_call("cudaMallocAsync (failed)", cost, format_bytes(bytes));
    out_of_memory(what() + " [injected fault]");
  }
  // What the pool can serve without growing: idle bytes, frees pending on this stream (already
  // ordered before anything that uses the new block), and, where allowed, frees pending on other
  // streams (which makes this stream wait for them).
  Bytes idle = pool_reserved_bytes_ - pool_used_bytes_ - pool_pending_bytes_;
  Bytes same_stream = 0;
  Bytes other_streams = 0;
  for (const auto& pending : pending_frees_) {
    (pending.stream == stream.id ? same_stream : other_streams) += pending.bytes;
  }
  if (!pool_cross_stream_reuse_) other_streams = 0;
  Bytes without_growth = idle + same_stream + other_streams;
  Bytes growth = bytes > without_growth ? bytes - without_growth : 0;
  if (growth > device_free_bytes()) {
    auto message = what();
    co_await host_call("cudaMallocAsync (failed)", cost, format_bytes(bytes));
    out_of_memory(message);
  }
  Bytes needed = bytes - std::min(bytes, idle);
  auto take = [&](PendingFree& pending) {
    Bytes taken = std::min(needed, pending.bytes);
    pending.bytes -= taken;
    pool_pending_bytes_ -= taken;
    needed -= taken;
  };
  for (auto& pending : pending_frees_) {
    if (needed > 0 && pending.stream == stream.id) take(pending);
  }
  // Other streams' pending frees, in an order the seed chooses (the driver's choice is not ours).
  std::map<std::uint32_t, std::pair<std::uint64_t, Bytes>> dependencies;  // stream -> (sequence, bytes)
  while (needed > 0 && other_streams > 0) {
    std::vector<std::size_t> candidates;
    for (std::size_t i = 0; i < pending_frees_.size(); ++i) {
      if (pending_frees_[i].stream != stream.id && pending_frees_[i].bytes > 0) candidates.push_back(i);
    }
    if (candidates.empty()) break;
    auto& pending = pending_frees_[candidates[system_.random().below(candidates.size())]];
    auto before = needed;
    take(pending);
    auto& dependency = dependencies[pending.stream];
    dependency.first = std::max(dependency.first, pending.sequence);
    dependency.second += before - needed;
    merge_clock(stream.clock, pending.clock);
  }
  std::erase_if(pending_frees_, [](const PendingFree& pending) { return pending.bytes == 0; });
  if (growth > 0) {
    pool_reserved_bytes_ += growth;
    cost += milliseconds(gib(growth) * model_.pool_grow_ms_per_gib);
  }
  pool_used_bytes_ += bytes;
  note_memory_peak();
  for (const auto& [other, dependency] : dependencies) {
    // The hidden dependency: this stream now follows the other stream up to its free.
    ++stats_.pool_cross_stream_reuses;
    auto& op = enqueue(stream, OpKind::pool_dependency);
    op.other_stream = other;
    op.other_sequence = dependency.first;
    trace_.instant(stream.track, "hidden dependency (pool reuse)", "dependency", system_.now(),
                   fmt::format("waits for {} to reach its free of {}", stream_name(other), format_bytes(dependency.second)));
    trace_.flow(streams_[other]->track, system_.now(), stream.track, system_.now(), "pool reuse");
  }
  auto pointer = new_allocation(bytes, true, stream.id);
  advance(stream);
  co_await host_call(growth > 0 ? "cudaMallocAsync (pool grows)" : "cudaMallocAsync", cost, format_bytes(bytes));
  co_return pointer;
}

void SimDevice::free_async(DevicePointer pointer, StreamHandle stream_handle) {
  auto& stream = stream_at(stream_handle, "free_async");
  auto found = allocations_.find(pointer.address);
  if (found == allocations_.end() || !found->second->pool) {
    throw DeviceError(DeviceErrc::invalid_value,
                      fmt::format("free_async: {:#x} is not a live stream-ordered allocation", pointer.address));
  }
  auto bytes = found->second->bytes;
  // Functional mode: the bytes stay readable until the stream reaches the free, for the work
  // enqueued before it (addresses are never reused, so nothing else can land there).
  if (system_.options().functional) retiring_.emplace(pointer.address, std::move(found->second));
  allocations_.erase(found);
  pool_used_bytes_ -= bytes;
  auto& op = enqueue(stream, OpKind::free_async);
  op.bytes = bytes;
  op.device_pointer = pointer;
  pending_frees_.push_back(PendingFree{stream.id, op.sequence, bytes, stream.clock});
  pool_pending_bytes_ += bytes;
  advance(stream);
}

void SimDevice::release_pool_to_threshold() {
  if (pool_reserved_bytes_ <= pool_release_threshold_bytes_) return;
  Bytes idle = pool_reserved_bytes_ - pool_used_bytes_ - pool_pending_bytes_;
  pool_reserved_bytes_ -= std::min(idle, pool_reserved_bytes_ - pool_release_threshold_bytes_);
}

void SimDevice::set_pool_release_threshold(Bytes bytes) {
  ensure_alive("set_pool_release_threshold");
  pool_release_threshold_bytes_ = bytes;
}

void SimDevice::trim_pool(Bytes keep_bytes) {
  ensure_alive("trim_pool");
  if (pool_reserved_bytes_ <= keep_bytes) return;
  Bytes idle = pool_reserved_bytes_ - pool_used_bytes_ - pool_pending_bytes_;
  Bytes released = std::min(idle, pool_reserved_bytes_ - keep_bytes);
  pool_reserved_bytes_ -= released;
  trace_.instant(host_track_, "cudaMemPoolTrimTo", "memory", system_.now(), format_bytes(released));
}

PoolStats SimDevice::pool_stats() const {
  return PoolStats{pool_reserved_bytes_, pool_used_bytes_, pool_release_threshold_bytes_};
}

MemoryInfo SimDevice::memory_info() const {
  ensure_alive("memory_info");
  return MemoryInfo{device_free_bytes(), model_.memory_bytes};
}

// ---------------------------------------------------------------------------------------------
// Host memory

asio::awaitable<void> SimDevice::register_host(HostRange range) {
  ensure_alive("register_host");
  if (range.bytes == 0) throw DeviceError(DeviceErrc::invalid_value, "register_host: empty range");
  auto cost = milliseconds(model_.register_fixed_ms + gib(range.bytes) * model_.register_ms_per_gib);
  if (++host_pin_count_ == faults_.fail_host_pin_number) {
    co_await host_call("cudaHostRegister (failed)", cost, format_bytes(range.bytes));
    throw DeviceError(DeviceErrc::host_pin_failed, fmt::format("register_host({}) on GPU {}: injected fault",
                                                               format_bytes(range.bytes), properties_.ordinal));
  }
  auto after = pinned_ranges_.upper_bound(range.address + range.bytes - 1);
  if (after != pinned_ranges_.begin()) {
    auto previous = std::prev(after);
    if (previous->first + previous->second.first > range.address) {
      throw DeviceError(DeviceErrc::invalid_value, "register_host: range overlaps memory that is already pinned");
    }
  }
  co_await host_call("cudaHostRegister", cost, format_bytes(range.bytes), true);
  pinned_ranges_.emplace(range.address, std::make_pair(range.bytes, false));
}

asio::awaitable<void> SimDevice::unregister_host(HostRange range) {
  ensure_alive("unregister_host");
  auto found = pinned_ranges_.find(range.address);
  if (found == pinned_ranges_.end() || found->second.second) {
    throw DeviceError(DeviceErrc::invalid_value, "unregister_host: range was not registered");
  }
  pinned_ranges_.erase(found);
  co_await host_call("cudaHostUnregister",
                     milliseconds(model_.unregister_fixed_ms + gib(range.bytes) * model_.unregister_ms_per_gib),
                     format_bytes(range.bytes), true);
}

asio::awaitable<HostRange> SimDevice::allocate_pinned_host(Bytes bytes) {
  ensure_alive("allocate_pinned_host");
  if (bytes == 0) throw DeviceError(DeviceErrc::invalid_value, "allocate_pinned_host: zero bytes");
  auto cost = milliseconds(gib(bytes) * model_.pinned_alloc_ms_per_gib);
  if (++host_pin_count_ == faults_.fail_host_pin_number) {
    co_await host_call("cudaHostAlloc (failed)", cost, format_bytes(bytes));
    throw DeviceError(DeviceErrc::host_pin_failed, fmt::format("allocate_pinned_host({}) on GPU {}: injected fault",
                                                               format_bytes(bytes), properties_.ordinal));
  }
  HostRange range;
  if (system_.options().functional) {
    auto* memory = static_cast<std::byte*>(::operator new(bytes, std::align_val_t{4096}));
    range = HostRange{reinterpret_cast<std::uintptr_t>(memory), bytes};
  } else {
    range = system_.virtual_host_range(bytes);
  }
  pinned_ranges_.emplace(range.address, std::make_pair(bytes, true));
  co_await host_call("cudaHostAlloc", cost, format_bytes(bytes));
  co_return range;
}

asio::awaitable<void> SimDevice::free_pinned_host(HostRange range) {
  ensure_alive("free_pinned_host");
  auto found = pinned_ranges_.find(range.address);
  if (found == pinned_ranges_.end() || !found->second.second) {
    throw DeviceError(DeviceErrc::invalid_value, "free_pinned_host: range was not allocated by allocate_pinned_host");
  }
  auto bytes = found->second.first;
  pinned_ranges_.erase(found);
  if (system_.options().functional) ::operator delete(range.data(), std::align_val_t{4096});
  co_await host_call("cudaFreeHost", milliseconds(gib(bytes) * model_.pinned_free_ms_per_gib), format_bytes(bytes));
}

// ---------------------------------------------------------------------------------------------
// Faults and the checker

void SimDevice::lose_device() {
  if (lost_) return;
  lost_ = true;
  trace_.instant(host_track_, "device lost", "fault", system_.now());
  link_.abandon();
  auto error = std::make_exception_ptr(
      DeviceError(DeviceErrc::device_lost, fmt::format("GPU {} was lost (injected fault)", properties_.ordinal)));
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

CheckerReport SimDevice::check() const {
  CheckerReport report;
  report.unsynchronized_reads = unsynchronized_reads_;
  // A lost device takes its context, and every handle in it, with it: nothing is left to free.
  if (lost_) return report;
  for (const auto& [base, allocation] : allocations_) {
    report.leaks.push_back(fmt::format("GPU {}: {} device allocation of {} at {:#x}", properties_.ordinal,
                                       allocation->pool ? "stream-ordered" : "synchronous", format_bytes(allocation->bytes), base));
  }
  for (std::size_t id = 1; id < streams_.size(); ++id) {
    if (streams_[id]->alive) report.leaks.push_back(fmt::format("GPU {}: {} never destroyed", properties_.ordinal, stream_name(static_cast<std::uint32_t>(id))));
  }
  for (std::size_t id = 1; id < events_.size(); ++id) {
    if (events_[id]->alive) report.leaks.push_back(fmt::format("GPU {}: event {} never destroyed", properties_.ordinal, id));
  }
  for (const auto& [address, entry] : pinned_ranges_) {
    report.leaks.push_back(fmt::format("GPU {}: pinned host range of {} at {:#x} never {}", properties_.ordinal,
                                       format_bytes(entry.first), address, entry.second ? "freed" : "unregistered"));
  }
  return report;
}

}  // namespace stagehand::sim
