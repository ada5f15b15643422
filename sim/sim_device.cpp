#include "sim/sim_device.hpp"

#include "device/format.hpp"
#include "device/kernel_abi.hpp"
#include "sim/sim_system.hpp"
#include "sim/sim_units.hpp"
#include "util/assert.hpp"

#include "device/asio.hpp"
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace stagehand::sim {

SimDevice::SimDevice(SimSystem& system, DeviceModel model, int ordinal, FaultPlan faults)
    : system_(system),
      model_(std::move(model)),
      faults_(std::move(faults)),
      link_(system,
            LinkRates{bytes_per_ns(model_.host_to_device_pinned_gbps), bytes_per_ns(model_.device_to_host_pinned_gbps),
                      bytes_per_ns(model_.bidirectional_gbps), bytes_per_ns(model_.pageable_gbps)}),
      trace_(system.trace()),
      process_name_(fmt::format("GPU {}: {}", ordinal, model_.name)),
      host_track_(trace_.track(process_name_, "host calls")),
      engines_(system, *this, stats_, process_name_,
               EngineSlots{model_.compute_concurrency, model_.copy_engines_host_to_device,
                           model_.copy_engines_device_to_host}),
      pool_(system, model_, faults_, stats_, host_track_),
      pinning_(system, model_, faults_, ordinal, host_track_),
      checker_(system, pool_, ordinal) {
  properties_.name = model_.name;
  properties_.ordinal = ordinal;
  properties_.total_memory_bytes = model_.memory_bytes;
  properties_.async_engine_count = model_.async_engine_count();
  // The backend hands the rest of a plan to a FaultyDevice around this one.
  STAGEHAND_ASSERT(!faults_.adaptor_part().any(),
                   "GPU {}: a simulated device was given faults only FaultyDevice injects", ordinal);
  schedule_faults();
}

SimDevice::~SimDevice() = default;

asio::any_io_executor SimDevice::executor() { return system_.io().get_executor(); }
Nanoseconds SimDevice::now() const { return system_.now(); }

asio::awaitable<void> SimDevice::sleep_for(Nanoseconds duration) { co_await system_.sleep_for(duration); }

// ---------------------------------------------------------------------------------------------
// Handles

void SimDevice::ensure_alive(const char* call) const {
  if (lost_) {
    throw DeviceError(DeviceErrc::device_lost, fmt::format("{} on GPU {}: {}", call, properties_.ordinal, lost_cause_));
  }
}

Stream& SimDevice::stream_at(StreamHandle handle, const char* call) {
  ensure_alive(call);
  return engines_.stream(handle, call);
}

Event& SimDevice::event_at(EventHandle handle, const char* call) {
  ensure_alive(call);
  return engines_.event(handle, call);
}

StreamHandle SimDevice::create_stream() {
  ensure_alive("create_stream");
  return engines_.create_stream();
}

void SimDevice::destroy_stream(StreamHandle handle) {
  // As in CUDA, work already enqueued still runs to completion.
  stream_at(handle, "destroy_stream").alive = false;
}

EventHandle SimDevice::create_event() {
  ensure_alive("create_event");
  return engines_.create_event();
}

void SimDevice::destroy_event(EventHandle handle) { event_at(handle, "destroy_event").alive = false; }

// ---------------------------------------------------------------------------------------------
// Engine operations (OpRunner)

void SimDevice::start(Stream& stream, Op& op, std::function<void()> done) {
  switch (op.kind) {
    case OpKind::kernel: {
      Nanoseconds duration = 1000;
      if (model_.has_kernel(op.kernel->name) || !system_.options().functional) {
        duration = model_.kernel_ns(op.kernel->name, op.kernel->curve, op.kernel->work_units, op.kernel->light_units);
      }
      if (kernels_running_++ == 0) {
        compute_busy_since_ns_ = system_.now();
        if (stats_.first_kernel_start_ns < 0) stats_.first_kernel_start_ns = system_.now();
      }
      system_.schedule_after(system_.jittered(duration), std::move(done));
      break;
    }
    case OpKind::memset: {
      auto duration = static_cast<Nanoseconds>(std::ceil(static_cast<double>(op.bytes) / model_.memset_gbps));
      system_.schedule_after(system_.jittered(duration), std::move(done));
      break;
    }
    case OpKind::copy_to_device:
    case OpKind::copy_to_host: {
      auto direction = op.kind == OpKind::copy_to_device ? Direction::host_to_device : Direction::device_to_host;
      double scale = system_.options().duration_jitter == 0
                         ? 1.0
                         : 1.0 / system_.random().jitter(system_.options().duration_jitter);
      link_.start(direction, op.bytes, op.pageable, scale, std::move(done));
      break;
    }
    default: break;
  }
}

void SimDevice::finish(Stream& stream, Op& op) {
  switch (op.kind) {
    case OpKind::kernel: finish_kernel(stream, op); break;
    case OpKind::memset: finish_memset(stream, op); break;
    case OpKind::copy_to_device:
    case OpKind::copy_to_host: finish_copy(stream, op); break;
    default: break;
  }
}

void SimDevice::finish_kernel(Stream& stream, Op& op) {
  auto now = system_.now();
  STAGEHAND_ASSERT(kernels_running_ > 0, "a kernel finished with {} kernels running", kernels_running_);
  if (--kernels_running_ == 0) {
    stats_.compute_busy_ns += now - compute_busy_since_ns_;
    stats_.last_kernel_end_ns = now;
  }
  ++stats_.kernels;
  auto& totals = stats_.kernel_totals[op.kernel->name];
  ++totals.launches;
  totals.work_units += op.kernel->work_units;
  totals.busy_ns += now - op.started_ns;
  trace_.span(stream.track, op.kernel->name, op.fail ? "kernel (failed)" : "kernel", op.started_ns, now,
              fmt::format("work_units={}", op.kernel->work_units));
  if (op.fail) {
    // On a GPU a kernel that faults is no error of its stream alone: it loses the context, so
    // every later call fails with it until the process restarts (CUDA's "sticky" errors).
    lose_device(fmt::format("kernel '{}' failed on {} (injected fault), and a failed kernel loses the device",
                            op.kernel->name, StreamEngines::stream_name(stream.id)));
  } else if (system_.options().functional) {
    run_kernel_function(op);
  }
}

// Functional mode: the kernel's host function on the bytes of its buffers.
void SimDevice::run_kernel_function(const Op& op) {
  const auto* function = system_.kernel_function(op.kernel->name, op.kernel->curve);
  if (function == nullptr) return;
  std::vector<std::span<std::byte>> reads;
  std::vector<std::span<std::byte>> writes;
  auto view = [&](const BufferUse& use) {
    auto* allocation = pool_.find_backing(use.pointer);
    if (allocation == nullptr || use.pointer.address + use.bytes > allocation->base + allocation->bytes) {
      throw DeviceError(
          DeviceErrc::invalid_value,
          fmt::format("kernel '{}' on GPU {}: buffer {:#x} ({}) is not inside a live allocation", op.kernel->name,
                      properties_.ordinal, use.pointer.address, format_bytes(use.bytes)));
    }
    return std::span<std::byte>(allocation->backing.data() + (use.pointer.address - allocation->base), use.bytes);
  };
  for (const auto& use : op.kernel->reads) reads.push_back(view(use));
  for (const auto& use : op.kernel->writes) writes.push_back(view(use));
  KernelContext context(*op.kernel, std::move(reads), std::move(writes));
  (*function)(context);
}

void SimDevice::finish_memset(Stream& stream, Op& op) {
  if (system_.options().functional) {
    auto* allocation = pool_.find_backing(op.device_pointer);
    if (allocation != nullptr) {
      std::memset(allocation->backing.data() + (op.device_pointer.address - allocation->base), op.memset_value,
                  op.bytes);
    }
  }
  trace_.span(stream.track, "memset", "memset", op.started_ns, system_.now(), format_bytes(op.bytes));
}

void SimDevice::finish_copy(Stream& stream, Op& op) {
  bool to_device = op.kind == OpKind::copy_to_device;
  if (system_.options().functional) {
    auto* allocation = pool_.find_backing(op.device_pointer);
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
              op.started_ns, system_.now(), format_bytes(op.bytes));
}

void SimDevice::free_reached(const Stream& stream, const Op& op) {
  pool_.free_reached(stream.id, op.sequence, op.device_pointer);
}

// ---------------------------------------------------------------------------------------------
// Events and synchronisation

void SimDevice::record_event(EventHandle event_handle, StreamHandle stream_handle) {
  auto& event = event_at(event_handle, "record_event");
  auto& stream = stream_at(stream_handle, "record_event");
  engines_.record_event(event, event_handle, stream);
}

void SimDevice::stream_wait_event(StreamHandle stream_handle, EventHandle event_handle) {
  auto& event = event_at(event_handle, "stream_wait_event");
  auto& stream = stream_at(stream_handle, "stream_wait_event");
  engines_.stream_wait_event(stream, event, event_handle);
}

bool SimDevice::event_complete(EventHandle event_handle) {
  auto& event = event_at(event_handle, "event_complete");
  bool complete = event.completed >= event.recorded;
  if (complete) engines_.observe_on_host(event.clock);
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
  engines_.observe_on_host(clock);
  pool_.release_to_threshold();
}

asio::awaitable<void> SimDevice::synchronize_stream(StreamHandle stream_handle) {
  auto& stream = stream_at(stream_handle, "synchronize_stream");
  auto clock = stream.clock;
  co_await engines_.wait_until_reached(stream, stream.enqueued);
  engines_.observe_on_host(clock);
  pool_.release_to_threshold();
}

asio::awaitable<void> SimDevice::synchronize_device() {
  ensure_alive("synchronize_device");
  auto start = system_.now();
  std::vector<std::pair<std::uint32_t, std::uint64_t>> targets;
  for (std::uint32_t id = 1; id <= engines_.stream_count(); ++id)
    targets.emplace_back(id, engines_.stream_by_id(id).enqueued);
  for (auto [id, target] : targets) {
    co_await engines_.wait_until_reached(engines_.stream_by_id(id), target);
    engines_.observe_on_host(engines_.stream_by_id(id).clock);
  }
  pool_.release_to_threshold();
  trace_.async_span(host_track_, "cudaDeviceSynchronize", "host-blocking", start, system_.now());
}

// ---------------------------------------------------------------------------------------------
// Copies, memset, kernels, callbacks

asio::awaitable<void> SimDevice::copy_to_device(DevicePointer destination, HostRange source,
                                                StreamHandle stream_handle) {
  co_await copy(OpKind::copy_to_device, destination, source, stream_handle);
}

asio::awaitable<void> SimDevice::copy_to_host(HostRange destination, DevicePointer source, StreamHandle stream_handle) {
  co_await copy(OpKind::copy_to_host, source, destination, stream_handle);
}

asio::awaitable<void> SimDevice::copy(OpKind kind, DevicePointer device_side, HostRange host_side,
                                      StreamHandle stream_handle) {
  bool to_device = kind == OpKind::copy_to_device;
  const char* call = to_device ? "copy_to_device" : "copy_to_host";
  auto& stream = stream_at(stream_handle, call);
  pool_.allocation_for(device_side, host_side.bytes, call);
  bool pageable = !pinning_.pinned(host_side);
  auto& op = engines_.enqueue(stream, kind);
  op.not_before_ns = pinning_.calls_held_until();
  op.bytes = host_side.bytes;
  op.device_pointer = device_side;
  op.host = host_side;
  op.pageable = pageable;
  auto sequence = op.sequence;
  if (to_device) {
    checker_.note_write(stream, sequence, device_side, "copy to device");
  } else {
    checker_.check_read(stream, device_side, "copy to host");
  }
  auto clock = stream.clock;
  engines_.advance(stream);
  if (pageable) {
    // The driver stages pageable memory through its own pinned buffer: the call returns when the
    // copy is done, holding the calling host thread all the while.
    auto start = system_.now();
    co_await engines_.wait_until_reached(stream, sequence);
    engines_.observe_on_host(clock);
    trace_.async_span(host_track_,
                      to_device ? "pageable copy to device (host blocked)" : "pageable copy to host (host blocked)",
                      "host-blocking", start, system_.now(), format_bytes(host_side.bytes));
  }
}

void SimDevice::memset_async(DevicePointer destination, std::uint8_t value, Bytes bytes, StreamHandle stream_handle) {
  auto& stream = stream_at(stream_handle, "memset_async");
  pool_.allocation_for(destination, bytes, "memset_async");
  auto& op = engines_.enqueue(stream, OpKind::memset);
  op.not_before_ns = pinning_.calls_held_until();
  op.device_pointer = destination;
  op.bytes = bytes;
  op.memset_value = value;
  checker_.note_write(stream, op.sequence, destination, "memset");
  engines_.advance(stream);
}

Bytes SimDevice::kernel_scratch_bytes(const std::string& kernel, std::uint64_t work_units) const {
  const Bytes modelled = model_.kernel_scratch_bytes(kernel, work_units);
  if (!system_.options().functional || work_units == 0) return modelled;
  return std::max(modelled, system_.kernel_function_scratch_bytes(kernel));
}

void SimDevice::launch(const KernelLaunch& kernel, StreamHandle stream_handle) {
  auto& stream = stream_at(stream_handle, "launch");
  const bool functional = system_.options().functional;
  if (functional ? !system_.has_kernel_function(kernel.name) : !model_.has_kernel(kernel.name)) {
    throw DeviceError(
        DeviceErrc::unknown_kernel,
        fmt::format("launch: kernel '{}' is not known to {} ({})", kernel.name,
                    functional ? "the functional simulator" : "the device model", model_.source.string()));
  }
  // A kernel of the launch's curve, never another curve's over its bytes: functionally, a host
  // function registered for the pair; timed, an instantiation the kernel ABI declares. A BN254
  // launch is charged its kernel's [kernels.NAME.bn254] time where the model has one, else the
  // kernel's own (BLS12-381's: its Fq products dearer, so it overcharges an unmeasured BN254 kernel).
  if (functional ? system_.kernel_function(kernel.name, kernel.curve) == nullptr
                 : !kernel::has_instance(kernel.name, kernel.curve)) {
    throw DeviceError(DeviceErrc::unknown_kernel, fmt::format("launch: kernel '{}' has no instantiation over {}",
                                                              kernel.name, kernel::curve_name(kernel.curve)));
  }
  for (const auto& use : kernel.reads) pool_.allocation_for(use.pointer, use.bytes, "launch (read buffer)");
  for (const auto& use : kernel.writes) pool_.allocation_for(use.pointer, use.bytes, "launch (write buffer)");
  auto& op = engines_.enqueue(stream, OpKind::kernel);
  op.not_before_ns = pinning_.calls_held_until();
  op.kernel = std::make_unique<KernelLaunch>(kernel);
  if (!faults_.fail_kernel_name.empty() && kernel.name == faults_.fail_kernel_name &&
      ++faulted_kernel_launches_ == faults_.fail_kernel_occurrence) {
    op.fail = true;
  }
  // busy_wait's fault argument (kernel_abi.hpp): the fault a CUDA kernel can be asked for.
  if (kernel.name == kernel::busy_wait && !kernel.arguments.empty() && kernel.arguments[0] != 0) op.fail = true;
  auto reader = fmt::format("kernel '{}'", kernel.name);
  for (const auto& use : kernel.reads) checker_.check_read(stream, use.pointer, reader);
  for (const auto& use : kernel.writes) checker_.note_write(stream, op.sequence, use.pointer, reader);
  engines_.advance(stream);
}

void SimDevice::host_callback(StreamHandle stream_handle, std::function<void()> callback) {
  auto& stream = stream_at(stream_handle, "host_callback");
  auto& op = engines_.enqueue(stream, OpKind::host_callback);
  op.callback = std::move(callback);
  engines_.advance(stream);
}

// ---------------------------------------------------------------------------------------------
// Device memory

asio::awaitable<DevicePointer> SimDevice::allocate(Bytes bytes) {
  ensure_alive("allocate");
  if (bytes == 0) throw DeviceError(DeviceErrc::invalid_value, "allocate: zero bytes");
  auto cost = milliseconds(model_.malloc_ms);
  auto what = [&] {
    return fmt::format("cudaMalloc({}) on GPU {}: out of memory (free {}, pool reserved {} of which {} pending free)",
                       format_bytes(bytes), properties_.ordinal, format_bytes(pool_.free_bytes()),
                       format_bytes(pool_.reserved_bytes()), format_bytes(pool_.pending_bytes()));
  };
  if (pool_.take_allocation_fault()) {
    co_await pinning_.host_call("cudaMalloc (failed)", cost, format_bytes(bytes));
    pool_.out_of_memory(what() + " [injected fault]");
  }
  cost += pool_.reclaim_idle_for(bytes);
  if (pool_.free_bytes() < bytes) {
    auto message = what();
    co_await pinning_.host_call("cudaMalloc (failed)", cost, format_bytes(bytes));
    pool_.out_of_memory(message);
  }
  auto pointer = pool_.allocate_synchronous(bytes);
  co_await pinning_.host_call("cudaMalloc", cost, format_bytes(bytes));
  co_return pointer;
}

asio::awaitable<void> SimDevice::free(DevicePointer pointer) {
  ensure_alive("free");
  pool_.check_synchronous(pointer);
  // cudaFree waits for all work on the device, whoever enqueued it.
  auto start = system_.now();
  for (std::uint32_t id = 1; id <= engines_.stream_count(); ++id) {
    auto& stream = engines_.stream_by_id(id);
    co_await engines_.wait_until_reached(stream, stream.enqueued);
  }
  co_await sleep_for(milliseconds(model_.free_ms));
  auto bytes = pool_.free_synchronous(pointer);
  trace_.async_span(host_track_, "cudaFree (waits for the device)", "host-blocking", start, system_.now(),
                    format_bytes(bytes));
}

asio::awaitable<DevicePointer> SimDevice::allocate_async(Bytes bytes, StreamHandle stream_handle) {
  auto& stream = stream_at(stream_handle, "allocate_async");
  if (bytes == 0) throw DeviceError(DeviceErrc::invalid_value, "allocate_async: zero bytes");
  auto cost = milliseconds(model_.pool_alloc_ms);
  auto what = [&] {
    return fmt::format(
        "cudaMallocAsync({}) on GPU {} {}: out of memory (free {}, pool reserved {}, used {}, {} pending free)",
        format_bytes(bytes), properties_.ordinal, StreamEngines::stream_name(stream.id),
        format_bytes(pool_.free_bytes()), format_bytes(pool_.reserved_bytes()), format_bytes(pool_.used_bytes()),
        format_bytes(pool_.pending_bytes()));
  };
  if (pool_.take_allocation_fault()) {
    co_await pinning_.host_call("cudaMallocAsync (failed)", cost, format_bytes(bytes));
    pool_.out_of_memory(what() + " [injected fault]");
  }
  Bytes growth = pool_.growth_for(bytes, stream.id);
  if (growth > pool_.free_bytes()) {
    auto message = what();
    co_await pinning_.host_call("cudaMallocAsync (failed)", cost, format_bytes(bytes));
    pool_.out_of_memory(message);
  }
  auto dependencies = pool_.take_for(bytes, stream.id, growth, stream.clock);
  if (growth > 0) cost += milliseconds(gib(growth) * model_.pool_grow_ms_per_gib);
  enqueue_pool_dependencies(stream, dependencies);
  auto pointer = pool_.new_pool_block(bytes, stream.id);
  engines_.advance(stream);
  co_await pinning_.host_call(growth > 0 ? "cudaMallocAsync (pool grows)" : "cudaMallocAsync", cost,
                              format_bytes(bytes));
  co_return pointer;
}

// The hidden dependencies of a block made of other streams' pending frees: this stream now
// follows each of those streams up to its free.
void SimDevice::enqueue_pool_dependencies(Stream& stream, const PoolDependencies& dependencies) {
  for (const auto& [other, dependency] : dependencies) {
    ++stats_.pool_cross_stream_reuses;
    auto& op = engines_.enqueue(stream, OpKind::pool_dependency);
    op.other_stream = other;
    op.other_sequence = dependency.sequence;
    trace_.instant(stream.track, "hidden dependency (pool reuse)", "dependency", system_.now(),
                   fmt::format("waits for {} to reach its free of {}", StreamEngines::stream_name(other),
                               format_bytes(dependency.bytes)));
    trace_.flow(engines_.stream_by_id(other).track, system_.now(), stream.track, system_.now(), "pool reuse");
  }
}

void SimDevice::free_async(DevicePointer pointer, StreamHandle stream_handle) {
  auto& stream = stream_at(stream_handle, "free_async");
  auto bytes = pool_.release_block(pointer);
  auto& op = engines_.enqueue(stream, OpKind::free_async);
  op.bytes = bytes;
  op.device_pointer = pointer;
  pool_.add_pending(stream.id, op.sequence, bytes, stream.clock);
  engines_.advance(stream);
}

void SimDevice::set_pool_release_threshold(Bytes bytes) {
  ensure_alive("set_pool_release_threshold");
  pool_.set_release_threshold(bytes);
}

void SimDevice::trim_pool(Bytes keep_bytes) {
  ensure_alive("trim_pool");
  pool_.trim(keep_bytes);
}

PoolStats SimDevice::pool_stats() const { return pool_.stats(); }

MemoryInfo SimDevice::memory_info() const {
  ensure_alive("memory_info");
  return MemoryInfo{pool_.free_bytes(), model_.memory_bytes};
}

// ---------------------------------------------------------------------------------------------
// Host memory

asio::awaitable<void> SimDevice::register_host(HostRange range) {
  ensure_alive("register_host");
  co_await pinning_.register_host(range);
}

asio::awaitable<void> SimDevice::unregister_host(HostRange range) {
  ensure_alive("unregister_host");
  co_await pinning_.unregister_host(range);
}

asio::awaitable<HostRange> SimDevice::allocate_pinned_host(Bytes bytes) {
  ensure_alive("allocate_pinned_host");
  const auto range = co_await pinning_.allocate_pinned_host(bytes);
  ++stats_.pinned_host_allocations;
  co_return range;
}

asio::awaitable<void> SimDevice::free_pinned_host(HostRange range) {
  ensure_alive("free_pinned_host");
  co_await pinning_.free_pinned_host(range);
}

// ---------------------------------------------------------------------------------------------
// Faults and the checker

void SimDevice::schedule_faults() {
  if (faults_.lose_device_at_ns >= 0) {
    system_.schedule_at(faults_.lose_device_at_ns, [this] { lose_device("the device was lost (injected fault)"); });
  }
  if (faults_.pcie_slowdown_factor != 1.0) {
    system_.schedule_at(faults_.pcie_slowdown_from_ns, [this] {
      if (lost_) return;
      trace_.instant(host_track_, "PCIe link slowed", "fault", system_.now(),
                     fmt::format("{}x slower", faults_.pcie_slowdown_factor));
      link_.slow_down(faults_.pcie_slowdown_factor);
    });
  }
}

void SimDevice::lose_device(std::string cause) {
  if (lost_) return;
  lost_ = true;
  lost_cause_ = std::move(cause);
  trace_.instant(host_track_, "device lost", "fault", system_.now(), lost_cause_);
  link_.abandon();
  auto error = std::make_exception_ptr(
      DeviceError(DeviceErrc::device_lost, fmt::format("GPU {}: {}", properties_.ordinal, lost_cause_)));
  engines_.fail_everything(error);
}

CheckerReport SimDevice::check() const { return checker_.report(lost_, engines_, pinning_); }

}  // namespace stagehand::sim
