#pragma once
// MemoryPool: the device memory of one simulated GPU, as the CUDA runtime hands it out (measured
// in docs/device-facts.md): synchronous allocations (cudaMalloc), and a stream-ordered pool
// (cudaMallocAsync) whose frees take effect only when their stream reaches them. Until then the
// bytes are pending: reserved by the pool, used by nobody, and reusable only by work ordered after
// the free (on the same stream, or, where the pool reuses across streams, through a hidden
// dependency on the freeing stream).
//
// The pool keeps the bookkeeping and the allocation table; SimDevice's calls add the host-side
// cost and the stream order around it.

#include "device/device.hpp"
#include "sim/device_model.hpp"
#include "device/fault_plan.hpp"
#include "sim/sim_system.hpp"
#include "sim/stream_engines.hpp"
#include "trace/trace.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace stagehand::sim {

struct Allocation {
  std::uint64_t base = 0;
  Bytes bytes = 0;
  bool pool = false;
  std::vector<std::byte> backing;  // functional mode only
  // The latest operation enqueued to write it, for the race checker.
  std::uint32_t writer_stream = 0;
  std::uint64_t writer_sequence = 0;
  std::string writer;
};

// A stream-ordered allocation that asks for frees pending on other streams must wait for those
// streams to reach them: per stream, the latest such free and the bytes taken from that stream.
struct PoolDependency {
  std::uint64_t sequence = 0;
  Bytes bytes = 0;
};
using PoolDependencies = std::map<std::uint32_t, PoolDependency>;

class MemoryPool {
 public:
  MemoryPool(SimSystem& system, const DeviceModel& model, const FaultPlan& faults, DeviceCounters& stats,
             TraceTrack host_track);

  // ---- Accounting (the capacity is the model's memory_bytes) ----
  void set_external(Bytes bytes) {
    external_bytes_ = bytes;
    record_memory();
  }
  // Samples what this process holds and can get into the trace's counters, where they changed
  // (the pictures draw memory over time from them). The pool calls it at every change of its
  // own; the device calls it when the model's memory size changes.
  void record_memory();
  // What this process could still get: the capacity less what it holds and what others hold.
  Bytes free_bytes() const;
  Bytes held_bytes() const { return sync_used_bytes_ + pool_reserved_bytes_; }
  Bytes synchronous_bytes() const { return sync_used_bytes_; }
  Bytes reserved_bytes() const { return pool_reserved_bytes_; }
  Bytes used_bytes() const { return pool_used_bytes_; }
  Bytes pending_bytes() const { return pool_pending_bytes_; }
  PoolStats stats() const { return PoolStats{pool_reserved_bytes_, pool_used_bytes_, pool_release_threshold_bytes_}; }

  // Counts an allocation; true when the fault plan makes this one fail.
  bool take_allocation_fault();
  [[noreturn]] void out_of_memory(const std::string& what);

  // ---- Synchronous allocations ----
  // Where the model's driver releases idle pool memory to serve a cudaMalloc that would not fit:
  // releases it and returns the extra cost.
  Nanoseconds reclaim_idle_for(Bytes bytes);
  // Takes `bytes` (the caller checked they fit).
  DevicePointer allocate_synchronous(Bytes bytes);
  // Throws DeviceError unless `pointer` is a live cudaMalloc allocation.
  void check_synchronous(DevicePointer pointer) const;
  // Frees it; returns its size.
  Bytes free_synchronous(DevicePointer pointer);

  // ---- The stream-ordered pool ----
  // The pool's growth that serving `bytes` on `stream` needs.
  Bytes growth_for(Bytes bytes, std::uint32_t stream) const;
  // Serves `bytes` on `stream` with `growth` (from growth_for, checked to fit): idle bytes first,
  // then the stream's own pending frees, then, where allowed, other streams' in an order the seed
  // chooses. Merges the clocks of the frees taken into `clock`; returns the dependencies.
  PoolDependencies take_for(Bytes bytes, std::uint32_t stream, Bytes growth, VectorClock& clock);
  DevicePointer new_pool_block(Bytes bytes, std::uint32_t stream) { return new_allocation(bytes, true, stream); }
  // free_async of a live stream-ordered block (DeviceError otherwise): no longer used, not yet
  // idle; returns its size. `pending` then records the free at its place on the stream.
  Bytes release_block(DevicePointer pointer);
  void add_pending(std::uint32_t stream, std::uint64_t sequence, Bytes bytes, const VectorClock& clock);
  // The stream reached the free: the block is idle in the pool from now on.
  void free_reached(std::uint32_t stream, std::uint64_t sequence, DevicePointer pointer);
  void set_cross_stream_reuse(bool allowed) { cross_stream_reuse_ = allowed; }

  void set_release_threshold(Bytes bytes) { pool_release_threshold_bytes_ = bytes; }
  // After a host synchronise: idle memory above the threshold goes back to the device.
  void release_to_threshold();
  void trim(Bytes keep_bytes);

  // ---- The allocation table ----
  Allocation* find_allocation(DevicePointer pointer);
  // Live or freed with free_async but not yet reached: where functional work finds its bytes.
  Allocation* find_backing(DevicePointer pointer);
  // The live allocation holding [pointer, pointer + bytes); DeviceError naming `call` otherwise.
  Allocation& allocation_for(DevicePointer pointer, Bytes bytes, const char* call);
  void report_leaks(int ordinal, std::vector<std::string>& leaks) const;

 private:
  struct PendingFree {
    std::uint32_t stream;
    std::uint64_t sequence;  // the free's position on its stream
    Bytes bytes;
    VectorClock clock;
  };

  Bytes idle_bytes() const;
  void take_other_streams(Bytes& needed, std::uint32_t stream, PoolDependencies& dependencies, VectorClock& clock);
  DevicePointer new_allocation(Bytes bytes, bool pool, std::uint32_t stream);
  void note_peak();
  void check_accounting() const;

  SimSystem& system_;
  const DeviceModel& model_;
  const FaultPlan& faults_;
  DeviceCounters& stats_;
  Trace& trace_;
  TraceTrack host_track_;

  std::map<std::uint64_t, std::unique_ptr<Allocation>> allocations_;  // by base address
  std::map<std::uint64_t, std::unique_ptr<Allocation>> retiring_;     // functional: freed, not yet reached
  std::uint64_t next_device_address_ = 0x7000'0000'0000ull;
  Bytes sync_used_bytes_ = 0;
  Bytes pool_reserved_bytes_ = 0;
  Bytes pool_used_bytes_ = 0;
  Bytes pool_pending_bytes_ = 0;
  Bytes pool_release_threshold_bytes_ = 0;
  Bytes external_bytes_ = 0;
  bool cross_stream_reuse_ = true;
  std::vector<PendingFree> pending_frees_;
  std::uint64_t allocation_count_ = 0;
  Bytes recorded_held_bytes_ = ~Bytes{0};
  Bytes recorded_in_use_bytes_ = ~Bytes{0};
  Bytes recorded_capacity_bytes_ = ~Bytes{0};
};

}  // namespace stagehand::sim
