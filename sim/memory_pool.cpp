#include "sim/memory_pool.hpp"

#include "device/format.hpp"
#include "sim/sim_units.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace stagehand::sim {
namespace {
// Keep allocations apart so that pointer arithmetic past an end never lands in a neighbour.
constexpr std::uint64_t kAddressAlignment = 2 * kMiB;
}  // namespace

MemoryPool::MemoryPool(SimSystem& system, const DeviceModel& model, const FaultPlan& faults, DeviceCounters& stats,
                       TraceTrack host_track)
    : system_(system),
      model_(model),
      faults_(faults),
      stats_(stats),
      trace_(system.trace()),
      host_track_(host_track),
      pool_release_threshold_bytes_(model.pool_release_threshold_bytes),
      cross_stream_reuse_(model.pool_reuse_across_streams) {
  record_memory();
}

// ---------------------------------------------------------------------------------------------
// Accounting

Bytes MemoryPool::free_bytes() const {
  Bytes used = sync_used_bytes_ + pool_reserved_bytes_ + external_bytes_;
  return used >= model_.memory_bytes ? 0 : model_.memory_bytes - used;
}

Bytes MemoryPool::idle_bytes() const {
  check_accounting();
  return pool_reserved_bytes_ - pool_used_bytes_ - pool_pending_bytes_;
}

// The pool's bytes are used, pending or idle: used and pending never exceed what it reserved.
void MemoryPool::check_accounting() const {
  STAGEHAND_ASSERT(
      pool_used_bytes_ <= pool_reserved_bytes_ && pool_pending_bytes_ <= pool_reserved_bytes_ - pool_used_bytes_,
      "pool reserves {} B but {} B are used and {} B pending", pool_reserved_bytes_, pool_used_bytes_,
      pool_pending_bytes_);
}

void MemoryPool::note_peak() { stats_.peak_memory_used_bytes = std::max(stats_.peak_memory_used_bytes, held_bytes()); }

void MemoryPool::record_memory() {
  // Held is what the report's peak counts (cudaMalloc plus everything the pool reserved, cached
  // frees included); in use leaves out the pool's idle and pending bytes.
  auto sample = [&](const char* name, Bytes bytes, Bytes& recorded) {
    if (bytes == recorded) return;
    recorded = bytes;
    trace_.counter(host_track_, name, "memory", system_.now(), static_cast<std::int64_t>(bytes));
  };
  Bytes capacity = model_.memory_bytes > external_bytes_ ? model_.memory_bytes - external_bytes_ : 0;
  sample("VRAM capacity", capacity, recorded_capacity_bytes_);
  sample("VRAM held", held_bytes(), recorded_held_bytes_);
  sample("VRAM in use", sync_used_bytes_ + pool_used_bytes_, recorded_in_use_bytes_);
}

bool MemoryPool::take_allocation_fault() { return ++allocation_count_ == faults_.fail_allocation_number; }

void MemoryPool::out_of_memory(const std::string& what) {
  ++stats_.out_of_memory_count;
  trace_.instant(host_track_, "out of memory", "error", system_.now(), what);
  throw DeviceError(DeviceErrc::out_of_memory, what);
}

// ---------------------------------------------------------------------------------------------
// Synchronous allocations

Nanoseconds MemoryPool::reclaim_idle_for(Bytes bytes) {
  if (free_bytes() >= bytes || !model_.malloc_reclaims_idle_pool) return 0;
  // The H200's driver releases idle pool memory to serve a cudaMalloc; pending frees are not idle.
  Bytes idle = idle_bytes();
  if (idle == 0) return 0;
  pool_reserved_bytes_ -= idle;
  trace_.instant(host_track_, "driver released idle pool memory", "memory", system_.now(), format_bytes(idle));
  record_memory();
  return milliseconds(gib(idle) * model_.malloc_reclaim_ms_per_gib);
}

DevicePointer MemoryPool::allocate_synchronous(Bytes bytes) {
  STAGEHAND_ASSERT(bytes <= free_bytes(), "cudaMalloc of {} B with {} B free", bytes, free_bytes());
  auto pointer = new_allocation(bytes, false, 0);
  sync_used_bytes_ += bytes;
  stats_.allocated_bytes = sync_used_bytes_;
  note_peak();
  record_memory();
  return pointer;
}

void MemoryPool::check_synchronous(DevicePointer pointer) const {
  auto found = allocations_.find(pointer.address);
  if (found == allocations_.end() || found->second->pool) {
    throw DeviceError(DeviceErrc::invalid_value,
                      fmt::format("free: {:#x} is not a live cudaMalloc allocation", pointer.address));
  }
}

Bytes MemoryPool::free_synchronous(DevicePointer pointer) {
  auto found = allocations_.find(pointer.address);
  if (found == allocations_.end()) throw DeviceError(DeviceErrc::invalid_value, "free: freed twice");
  auto bytes = found->second->bytes;
  STAGEHAND_ASSERT(!found->second->pool && bytes <= sync_used_bytes_, "cudaFree of {} B with {} B allocated", bytes,
                   sync_used_bytes_);
  sync_used_bytes_ -= bytes;
  stats_.allocated_bytes = sync_used_bytes_;
  allocations_.erase(found);
  record_memory();
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// The stream-ordered pool

Bytes MemoryPool::growth_for(Bytes bytes, std::uint32_t stream) const {
  // What the pool can serve without growing: idle bytes, frees pending on this stream (already
  // ordered before anything that uses the new block), and, where allowed, frees pending on other
  // streams (which makes this stream wait for them).
  Bytes idle = idle_bytes();
  Bytes same_stream = 0;
  Bytes other_streams = 0;
  for (const auto& pending : pending_frees_) {
    (pending.stream == stream ? same_stream : other_streams) += pending.bytes;
  }
  if (!cross_stream_reuse_) other_streams = 0;
  Bytes without_growth = idle + same_stream + other_streams;
  return bytes > without_growth ? bytes - without_growth : 0;
}

PoolDependencies MemoryPool::take_for(Bytes bytes, std::uint32_t stream, Bytes growth, VectorClock& clock) {
  STAGEHAND_ASSERT(growth <= free_bytes(), "the pool grows by {} B with {} B free", growth, free_bytes());
  Bytes needed = bytes - std::min(bytes, idle_bytes());
  for (auto& pending : pending_frees_) {
    if (needed == 0 || pending.stream != stream) continue;
    Bytes taken = std::min(needed, pending.bytes);
    pending.bytes -= taken;
    pool_pending_bytes_ -= taken;
    needed -= taken;
  }
  PoolDependencies dependencies;
  if (cross_stream_reuse_) take_other_streams(needed, stream, dependencies, clock);
  std::erase_if(pending_frees_, [](const PendingFree& pending) { return pending.bytes == 0; });
  if (growth > 0) pool_reserved_bytes_ += growth;
  pool_used_bytes_ += bytes;
  check_accounting();
  note_peak();
  record_memory();
  return dependencies;
}

// Other streams' pending frees, in an order the seed chooses (the driver's choice is not ours).
void MemoryPool::take_other_streams(Bytes& needed, std::uint32_t stream, PoolDependencies& dependencies,
                                    VectorClock& clock) {
  while (needed > 0) {
    std::vector<std::size_t> candidates;
    for (std::size_t i = 0; i < pending_frees_.size(); ++i) {
      if (pending_frees_[i].stream != stream && pending_frees_[i].bytes > 0) candidates.push_back(i);
    }
    if (candidates.empty()) break;
    auto& pending = pending_frees_[candidates[system_.random().below(candidates.size())]];
    Bytes taken = std::min(needed, pending.bytes);
    pending.bytes -= taken;
    pool_pending_bytes_ -= taken;
    needed -= taken;
    auto& dependency = dependencies[pending.stream];
    dependency.sequence = std::max(dependency.sequence, pending.sequence);
    dependency.bytes += taken;
    merge_clock(clock, pending.clock);
  }
}

Bytes MemoryPool::release_block(DevicePointer pointer) {
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
  STAGEHAND_ASSERT(bytes <= pool_used_bytes_, "free_async of {} B with {} B used", bytes, pool_used_bytes_);
  pool_used_bytes_ -= bytes;
  record_memory();
  return bytes;
}

void MemoryPool::add_pending(std::uint32_t stream, std::uint64_t sequence, Bytes bytes, const VectorClock& clock) {
  pending_frees_.push_back(PendingFree{stream, sequence, bytes, clock});
  pool_pending_bytes_ += bytes;
  check_accounting();
}

void MemoryPool::free_reached(std::uint32_t stream, std::uint64_t sequence, DevicePointer pointer) {
  auto found = std::find_if(pending_frees_.begin(), pending_frees_.end(), [&](const PendingFree& pending) {
    return pending.stream == stream && pending.sequence == sequence;
  });
  if (found != pending_frees_.end()) {
    STAGEHAND_ASSERT(found->bytes <= pool_pending_bytes_, "a free of {} B reached with {} B pending", found->bytes,
                     pool_pending_bytes_);
    pool_pending_bytes_ -= found->bytes;
    pending_frees_.erase(found);
  }
  retiring_.erase(pointer.address);
}

void MemoryPool::release_to_threshold() {
  if (pool_reserved_bytes_ <= pool_release_threshold_bytes_) return;
  Bytes idle = idle_bytes();
  pool_reserved_bytes_ -= std::min(idle, pool_reserved_bytes_ - pool_release_threshold_bytes_);
  record_memory();
}

void MemoryPool::trim(Bytes keep_bytes) {
  if (pool_reserved_bytes_ <= keep_bytes) return;
  Bytes idle = idle_bytes();
  Bytes released = std::min(idle, pool_reserved_bytes_ - keep_bytes);
  pool_reserved_bytes_ -= released;
  trace_.instant(host_track_, "cudaMemPoolTrimTo", "memory", system_.now(), format_bytes(released));
  record_memory();
}

// ---------------------------------------------------------------------------------------------
// The allocation table

DevicePointer MemoryPool::new_allocation(Bytes bytes, bool pool, std::uint32_t stream) {
  auto allocation = std::make_unique<Allocation>();
  allocation->base = next_device_address_;
  allocation->bytes = bytes;
  allocation->pool = pool;
  if (system_.options().functional)
    allocation->backing.assign(bytes, std::byte{0xa5});  // never zero: catches reads of unwritten memory
  next_device_address_ += (bytes + 2 * kAddressAlignment - 1) / kAddressAlignment * kAddressAlignment;
  DevicePointer pointer{allocation->base};
  allocations_.emplace(allocation->base, std::move(allocation));
  return pointer;
}

Allocation* MemoryPool::find_allocation(DevicePointer pointer) {
  auto after = allocations_.upper_bound(pointer.address);
  if (after == allocations_.begin()) return nullptr;
  auto& candidate = *std::prev(after)->second;
  return pointer.address < candidate.base + candidate.bytes ? &candidate : nullptr;
}

Allocation* MemoryPool::find_backing(DevicePointer pointer) {
  if (auto* live = find_allocation(pointer)) return live;
  auto after = retiring_.upper_bound(pointer.address);
  if (after == retiring_.begin()) return nullptr;
  auto& candidate = *std::prev(after)->second;
  return pointer.address < candidate.base + candidate.bytes ? &candidate : nullptr;
}

Allocation& MemoryPool::allocation_for(DevicePointer pointer, Bytes bytes, const char* call) {
  auto* allocation = find_allocation(pointer);
  if (allocation == nullptr) {
    throw DeviceError(DeviceErrc::invalid_value,
                      fmt::format("{}: device pointer {:#x} is not in a live allocation (freed or never allocated)",
                                  call, pointer.address));
  }
  if (pointer.address + bytes > allocation->base + allocation->bytes) {
    throw DeviceError(DeviceErrc::invalid_value,
                      fmt::format("{}: {} at {:#x} runs past the end of its {} allocation", call, format_bytes(bytes),
                                  pointer.address, format_bytes(allocation->bytes)));
  }
  return *allocation;
}

void MemoryPool::report_leaks(int ordinal, std::vector<std::string>& leaks) const {
  for (const auto& [base, allocation] : allocations_) {
    leaks.push_back(fmt::format("GPU {}: {} device allocation of {} at {:#x}", ordinal,
                                allocation->pool ? "stream-ordered" : "synchronous", format_bytes(allocation->bytes),
                                base));
  }
}

}  // namespace stagehand::sim
