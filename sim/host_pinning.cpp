#include "sim/host_pinning.hpp"

#include "device/format.hpp"
#include "sim/sim_units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <new>

namespace stagehand::sim {

HostPinning::HostPinning(SimSystem& system, const DeviceModel& model, const FaultPlan& faults, int ordinal,
                         TraceTrack host_track)
    : system_(system),
      model_(model),
      faults_(faults),
      ordinal_(ordinal),
      trace_(system.trace()),
      host_track_(host_track) {}

// ---------------------------------------------------------------------------------------------
// Host-blocking calls

asio::awaitable<void> HostPinning::host_call(const char* call, Nanoseconds duration, std::string detail, bool pinning) {
  auto start = system_.now();
  auto begins = start;
  if (model_.host_calls_queue) {
    // Behind every call already given to the GPU's host worker.
    begins = std::max(start, host_worker_free_ns_);
    host_worker_free_ns_ = begins + duration;
  }
  if (pinning && model_.pinning_holds_calls) pinning_calls_.emplace_back(begins, begins + duration);
  co_await system_.sleep_for(begins + duration - start);
  trace_.async_span(host_track_, call, "host-blocking", begins, system_.now(), std::move(detail));
}

Nanoseconds HostPinning::calls_held_until() {
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

// ---------------------------------------------------------------------------------------------
// Pinned host memory

asio::awaitable<void> HostPinning::register_host(HostRange range) {
  if (range.bytes == 0) throw DeviceError(DeviceErrc::invalid_value, "register_host: empty range");
  auto cost = milliseconds(model_.register_fixed_ms + gib(range.bytes) * model_.register_ms_per_gib);
  if (take_pin_fault()) {
    co_await host_call("cudaHostRegister (failed)", cost, format_bytes(range.bytes));
    throw DeviceError(DeviceErrc::host_pin_failed,
                      fmt::format("register_host({}) on GPU {}: injected fault", format_bytes(range.bytes), ordinal_));
  }
  if (system_.pinned_host().overlaps(range.address, range.bytes)) {
    throw DeviceError(DeviceErrc::invalid_value, "register_host: range overlaps memory that is already pinned");
  }
  // Held from the call's start, so that a second registration of the same memory while the
  // first runs (from another GPU's thread) fails as the driver's would.
  system_.pinned_host().add(range.address, {range.bytes, false, ordinal_});
  try {
    co_await host_call("cudaHostRegister", cost, format_bytes(range.bytes), true);
  } catch (...) {
    system_.pinned_host().take(range.address, false);
    throw;
  }
}

asio::awaitable<void> HostPinning::unregister_host(HostRange range) {
  if (!system_.pinned_host().take(range.address, false)) {
    throw DeviceError(DeviceErrc::invalid_value, "unregister_host: range was not registered");
  }
  co_await host_call("cudaHostUnregister",
                     milliseconds(model_.unregister_fixed_ms + gib(range.bytes) * model_.unregister_ms_per_gib),
                     format_bytes(range.bytes), true);
}

asio::awaitable<HostRange> HostPinning::allocate_pinned_host(Bytes bytes) {
  if (bytes == 0) throw DeviceError(DeviceErrc::invalid_value, "allocate_pinned_host: zero bytes");
  auto cost = milliseconds(gib(bytes) * model_.pinned_alloc_ms_per_gib);
  if (take_pin_fault()) {
    co_await host_call("cudaHostAlloc (failed)", cost, format_bytes(bytes));
    throw DeviceError(DeviceErrc::host_pin_failed,
                      fmt::format("allocate_pinned_host({}) on GPU {}: injected fault", format_bytes(bytes), ordinal_));
  }
  HostRange range;
  if (system_.options().functional) {
    auto* memory = static_cast<std::byte*>(::operator new (bytes, std::align_val_t{4096}));
    range = HostRange{reinterpret_cast<std::uintptr_t>(memory), bytes};
  } else {
    range = system_.virtual_host_range(bytes);
  }
  system_.pinned_host().add(range.address, {bytes, true, ordinal_});
  co_await host_call("cudaHostAlloc", cost, format_bytes(bytes), true);
  co_return range;
}

asio::awaitable<void> HostPinning::free_pinned_host(HostRange range) {
  const auto entry = system_.pinned_host().take(range.address, true);
  if (!entry)
    throw DeviceError(DeviceErrc::invalid_value, "free_pinned_host: range was not allocated by allocate_pinned_host");
  const auto bytes = entry->bytes;
  if (system_.options().functional) ::operator delete (range.data(), std::align_val_t{4096});
  co_await host_call("cudaFreeHost", milliseconds(gib(bytes) * model_.pinned_free_ms_per_gib), format_bytes(bytes),
                     true);
}

bool HostPinning::pinned(HostRange range) const { return system_.pinned_host().contains(range.address, range.bytes); }

void HostPinning::report_leaks(std::vector<std::string>& leaks) const {
  system_.pinned_host().report_leaks(ordinal_, leaks);
}

// ---------------------------------------------------------------------------------------------
// The host's pinned ranges

bool PinnedHostRanges::overlaps(std::uintptr_t address, Bytes bytes) const {
  auto after = ranges_.upper_bound(address + bytes - 1);
  if (after == ranges_.begin()) return false;
  auto previous = std::prev(after);
  return previous->first + previous->second.bytes > address;
}

bool PinnedHostRanges::contains(std::uintptr_t address, Bytes bytes) const {
  auto after = ranges_.upper_bound(address);
  if (after == ranges_.begin()) return false;
  auto candidate = std::prev(after);
  return address + bytes <= candidate->first + candidate->second.bytes;
}

std::optional<PinnedHostRanges::Entry> PinnedHostRanges::take(std::uintptr_t address, bool allocated) {
  auto found = ranges_.find(address);
  if (found == ranges_.end() || found->second.allocated != allocated) return std::nullopt;
  auto entry = found->second;
  ranges_.erase(found);
  return entry;
}

void PinnedHostRanges::report_leaks(int ordinal, std::vector<std::string>& leaks) const {
  for (const auto& [address, entry] : ranges_) {
    if (entry.ordinal != ordinal) continue;
    leaks.push_back(fmt::format("GPU {}: pinned host range of {} at {:#x} never {}", ordinal, format_bytes(entry.bytes),
                                address, entry.allocated ? "freed" : "unregistered"));
  }
}

}  // namespace stagehand::sim
