#include "device/faulty_device.hpp"

#include "device/format.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

namespace stagehand {

FaultyDevice::FaultyDevice(Device& inner, FaultPlan faults)
    : inner_(inner), faults_(std::move(faults)), random_(faults_.seed ^ 0xfa017ed0ULL) {
  // The backend refuses these with an error naming the configuration before it gets here.
  STAGEHAND_ASSERT(!faults_.simulator_only(), "a FaultyDevice cannot slow a link ({}x asked for)",
                   faults_.pcie_slowdown_factor);
}

bool FaultyDevice::lost() const {
  return !lost_at_launch_.empty() || (faults_.lose_device_at_ns >= 0 && inner_.now() >= faults_.lose_device_at_ns);
}

void FaultyDevice::check_lost(const char* call) const {
  if (lost()) {
    const auto when = !lost_at_launch_.empty() ? lost_at_launch_ : format_duration(faults_.lose_device_at_ns);
    throw DeviceError(DeviceErrc::device_lost, fmt::format("{} on GPU {}: the device was lost at {} [injected fault]",
                                                           call, properties().ordinal, when));
  }
}

void FaultyDevice::fail(DeviceErrc code, const std::string& what) {
  ++injected_;
  throw DeviceError(code, what);
}

asio::awaitable<void> FaultyDevice::sleep_for(Nanoseconds duration) { co_await inner_.sleep_for(duration); }

StreamHandle FaultyDevice::create_stream() {
  check_lost("create_stream");
  return inner_.create_stream();
}

void FaultyDevice::destroy_stream(StreamHandle stream) {
  failed_streams_.erase(stream.id);
  inner_.destroy_stream(stream);
}

EventHandle FaultyDevice::create_event() {
  check_lost("create_event");
  return inner_.create_event();
}

void FaultyDevice::destroy_event(EventHandle event) {
  recorded_on_.erase(event.id);
  inner_.destroy_event(event);
}

void FaultyDevice::record_event(EventHandle event, StreamHandle stream) {
  check_lost("record_event");
  recorded_on_[event.id] = stream.id;
  inner_.record_event(event, stream);
}

void FaultyDevice::stream_wait_event(StreamHandle stream, EventHandle event) {
  check_lost("stream_wait_event");
  inner_.stream_wait_event(stream, event);
}

bool FaultyDevice::event_complete(EventHandle event) {
  check_lost("event_complete");
  return inner_.event_complete(event);
}

void FaultyDevice::report_kernel_error(std::uint32_t stream, const char* call, bool clear) {
  // Sticky until the stream is synchronised: every wait on the stream's work sees the failure (the
  // budget's watchers of frees as much as the program), and the stream's owner clears it.
  if (!(clear ? failed_streams_.erase(stream) : failed_streams_.count(stream))) return;
  fail(DeviceErrc::kernel_failed,
       fmt::format("{} on GPU {}: kernel '{}' failed [injected fault]", call, properties().ordinal, failed_kernel_));
}

asio::awaitable<void> FaultyDevice::wait_event(EventHandle event) {
  check_lost("wait_event");
  co_await inner_.wait_event(event);
  check_lost("wait_event");
  auto recorded = recorded_on_.find(event.id);
  if (recorded != recorded_on_.end()) report_kernel_error(recorded->second, "wait_event", false);
}

asio::awaitable<void> FaultyDevice::synchronize_stream(StreamHandle stream) {
  check_lost("synchronize_stream");
  co_await inner_.synchronize_stream(stream);
  check_lost("synchronize_stream");
  report_kernel_error(stream.id, "synchronize_stream", true);
}

asio::awaitable<void> FaultyDevice::synchronize_device() {
  check_lost("synchronize_device");
  co_await inner_.synchronize_device();
  check_lost("synchronize_device");
}

asio::awaitable<void> FaultyDevice::copy_delay() {
  if (faults_.copy_delay_ns > 0 && inner_.now() >= faults_.copy_delay_from_ns) {
    ++injected_;
    co_await inner_.sleep_for(faults_.copy_delay_ns);
  }
}

asio::awaitable<void> FaultyDevice::copy_to_device(DevicePointer destination, HostRange source, StreamHandle stream) {
  check_lost("copy_to_device");
  co_await copy_delay();
  check_lost("copy_to_device");
  co_await inner_.copy_to_device(destination, source, stream);
}

asio::awaitable<void> FaultyDevice::copy_to_host(HostRange destination, DevicePointer source, StreamHandle stream) {
  check_lost("copy_to_host");
  co_await copy_delay();
  check_lost("copy_to_host");
  co_await inner_.copy_to_host(destination, source, stream);
}

void FaultyDevice::memset_async(DevicePointer destination, std::uint8_t value, Bytes bytes, StreamHandle stream) {
  check_lost("memset_async");
  inner_.memset_async(destination, value, bytes, stream);
}

bool FaultyDevice::allocation_fails(bool stream_ordered) {
  ++allocations_;
  if (faults_.fail_allocation_number != 0 && allocations_ == faults_.fail_allocation_number) return true;
  // Drawn failures hit the stream-ordered allocations only: a job's working memory, never the
  // long-lived plain allocations a run sets up once (a key's points), whose loss fails a whole GPU.
  return stream_ordered && faults_.allocation_failure_probability > 0 &&
         random_.uniform() < faults_.allocation_failure_probability;
}

asio::awaitable<DevicePointer> FaultyDevice::allocate(Bytes bytes) {
  check_lost("allocate");
  if (allocation_fails(false)) {
    fail(DeviceErrc::out_of_memory, fmt::format("allocate({}) on GPU {}: allocation {} out of memory [injected fault]",
                                                format_bytes(bytes), properties().ordinal, allocations_));
  }
  co_return co_await inner_.allocate(bytes);
}

asio::awaitable<void> FaultyDevice::free(DevicePointer pointer) { co_await inner_.free(pointer); }

asio::awaitable<DevicePointer> FaultyDevice::allocate_async(Bytes bytes, StreamHandle stream) {
  check_lost("allocate_async");
  if (allocation_fails(true)) {
    fail(DeviceErrc::out_of_memory,
         fmt::format("allocate_async({}) on GPU {}: allocation {} out of memory [injected fault]", format_bytes(bytes),
                     properties().ordinal, allocations_));
  }
  co_return co_await inner_.allocate_async(bytes, stream);
}

void FaultyDevice::free_async(DevicePointer pointer, StreamHandle stream) { inner_.free_async(pointer, stream); }

void FaultyDevice::set_pool_release_threshold(Bytes bytes) { inner_.set_pool_release_threshold(bytes); }

void FaultyDevice::trim_pool(Bytes keep_bytes) { inner_.trim_pool(keep_bytes); }

MemoryInfo FaultyDevice::memory_info() const {
  check_lost("memory_info");
  return inner_.memory_info();
}

void FaultyDevice::pin_check(const char* call, Bytes bytes) {
  check_lost(call);
  ++pins_;
  if (faults_.fail_host_pin_number != 0 && pins_ == faults_.fail_host_pin_number) {
    fail(DeviceErrc::host_pin_failed, fmt::format("{}({}) on GPU {}: pinning {} failed [injected fault]", call,
                                                  format_bytes(bytes), properties().ordinal, pins_));
  }
}

asio::awaitable<void> FaultyDevice::register_host(HostRange range) {
  pin_check("register_host", range.bytes);
  co_await inner_.register_host(range);
}

asio::awaitable<void> FaultyDevice::unregister_host(HostRange range) { co_await inner_.unregister_host(range); }

asio::awaitable<HostRange> FaultyDevice::allocate_pinned_host(Bytes bytes) {
  pin_check("allocate_pinned_host", bytes);
  co_return co_await inner_.allocate_pinned_host(bytes);
}

asio::awaitable<void> FaultyDevice::free_pinned_host(HostRange range) { co_await inner_.free_pinned_host(range); }

void FaultyDevice::launch(const KernelLaunch& kernel, StreamHandle stream) {
  if (faults_.lose_device_at_launch != 0 && ++all_launches_ == faults_.lose_device_at_launch) {
    lost_at_launch_ = fmt::format("its kernel launch {}", faults_.lose_device_at_launch);
  }
  check_lost("launch");
  inner_.launch(kernel, stream);
  if (!faults_.fail_kernel_name.empty() && kernel.name == faults_.fail_kernel_name &&
      ++faulting_kernel_launches_ == faults_.fail_kernel_occurrence) {
    ++injected_;
    lost_at_launch_ =
        fmt::format("launch {0} of kernel '{1}' (kernel '{1}' failed, and a failed kernel loses the device)",
                    faults_.fail_kernel_occurrence, kernel.name);
    return;
  }
  const bool named = !faults_.kernel_error_name.empty() && kernel.name == faults_.kernel_error_name &&
                     ++error_kernel_launches_ == faults_.kernel_error_occurrence;
  const bool drawn = faults_.kernel_error_probability > 0 && random_.uniform() < faults_.kernel_error_probability;
  if (named || drawn) {
    failed_kernel_ = kernel.name;
    failed_streams_.insert(stream.id);
  }
}

void FaultyDevice::host_callback(StreamHandle stream, std::function<void()> callback) {
  check_lost("host_callback");
  inner_.host_callback(stream, std::move(callback));
}

void FaultyDevice::host_callback_reached(StreamHandle stream, std::function<void(Nanoseconds reached)> callback) {
  check_lost("host_callback_reached");
  inner_.host_callback_reached(stream, std::move(callback));
}

}  // namespace stagehand
