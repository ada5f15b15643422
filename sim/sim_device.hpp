#pragma once
// SimDevice: one simulated GPU implementing the Device interface in virtual time.
//
// Streams execute their operations strictly in order. Kernels and memsets take the compute
// engine, copies a copy engine of their direction and the PCIe link. Memory follows the CUDA
// runtime as measured in DEVICE_FACTS.md: synchronous allocations, and a stream-ordered pool whose
// frees take effect only when the stream reaches them. Beside the device sits a checker (as in
// TigerBeetle's simulator): it records what real hardware would silently get wrong, such as a
// kernel reading a buffer whose producing copy it never waited for, and every handle leaked.

#include "device/device.hpp"
#include "sim/device_model.hpp"
#include "sim/fault_plan.hpp"
#include "sim/pcie_link.hpp"
#include "trace/trace.hpp"

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace stagehand::sim {

class SimSystem;

// What the checker found. Empty lists: clean.
struct CheckerReport {
  std::vector<std::string> leaks;
  std::vector<std::string> unsynchronized_reads;
  bool clean() const { return leaks.empty() && unsynchronized_reads.empty(); }
  std::string describe() const;
};

class SimDevice final : public Device {
 public:
  SimDevice(SimSystem& system, DeviceModel model, int ordinal, FaultPlan faults);
  ~SimDevice() override;

  const DeviceProperties& properties() const override { return properties_; }
  asio::any_io_executor executor() override;
  Nanoseconds now() const override;
  asio::awaitable<void> sleep_for(Nanoseconds duration) override;

  StreamHandle create_stream() override;
  void destroy_stream(StreamHandle stream) override;
  EventHandle create_event() override;
  void destroy_event(EventHandle event) override;
  void record_event(EventHandle event, StreamHandle stream) override;
  void stream_wait_event(StreamHandle stream, EventHandle event) override;
  bool event_complete(EventHandle event) override;
  asio::awaitable<void> wait_event(EventHandle event) override;
  asio::awaitable<void> synchronize_stream(StreamHandle stream) override;
  asio::awaitable<void> synchronize_device() override;

  asio::awaitable<void> copy_to_device(DevicePointer destination, HostRange source, StreamHandle stream) override;
  asio::awaitable<void> copy_to_host(HostRange destination, DevicePointer source, StreamHandle stream) override;
  void memset_async(DevicePointer destination, std::uint8_t value, Bytes bytes, StreamHandle stream) override;

  asio::awaitable<DevicePointer> allocate(Bytes bytes) override;
  asio::awaitable<void> free(DevicePointer pointer) override;
  asio::awaitable<DevicePointer> allocate_async(Bytes bytes, StreamHandle stream) override;
  void free_async(DevicePointer pointer, StreamHandle stream) override;
  void set_pool_release_threshold(Bytes bytes) override;
  void trim_pool(Bytes keep_bytes) override;
  PoolStats pool_stats() const override;
  MemoryInfo memory_info() const override;

  asio::awaitable<void> register_host(HostRange range) override;
  asio::awaitable<void> unregister_host(HostRange range) override;
  asio::awaitable<HostRange> allocate_pinned_host(Bytes bytes) override;
  asio::awaitable<void> free_pinned_host(HostRange range) override;

  void launch(const KernelLaunch& kernel, StreamHandle stream) override;
  Bytes kernel_scratch_bytes(const std::string& kernel, std::uint64_t work_units) const override {
    return model_.kernel_scratch_bytes(kernel, work_units);
  }
  void host_callback(StreamHandle stream, std::function<void()> callback) override;
  void set_pool_cross_stream_reuse(bool allowed) override { pool_cross_stream_reuse_ = allowed; }
  const DeviceCounters& counters() const override { return stats_; }

  // ---- Simulator only ----
  const DeviceModel& model() const { return model_; }
  const DeviceCounters& stats() const { return stats_; }
  // Device memory as the model has it; the configured cap of a run may lower it.
  void set_memory_bytes(Bytes bytes) { model_.memory_bytes = properties_.total_memory_bytes = bytes; }
  // Memory held by another process on the same GPU: it shrinks what this process can get.
  void set_external_memory(Bytes bytes) { external_bytes_ = bytes; }
  // Ground truth: bytes of device memory held by this process (sync allocations + pool reserved).
  Bytes memory_held_bytes() const { return sync_used_bytes_ + pool_reserved_bytes_; }
  Bytes synchronous_allocated_bytes() const { return sync_used_bytes_; }
  // Freed in stream order, the stream not there yet.
  Bytes pool_pending_bytes() const { return pool_pending_bytes_; }
  bool lost() const { return lost_; }
  // Leaks and unsynchronised reads found so far.
  CheckerReport check() const;

 private:
  enum class OpKind : std::uint8_t {
    kernel, memset, copy_to_device, copy_to_host, record_event, wait_event, free_async, host_callback, pool_dependency
  };
  struct Op;
  struct Stream;
  struct Event;
  struct Allocation;
  struct Engine {
    int slots = 1;
    int busy = 0;
    std::deque<std::uint32_t> waiting;  // streams whose head operation waits for a slot
  };
  struct PendingFree {
    std::uint32_t stream;
    std::uint64_t sequence;  // the free's position on its stream
    Bytes bytes;
    std::vector<std::uint64_t> clock;
  };
  using SequenceWaiter = std::function<void(std::exception_ptr)>;

  Stream& stream_at(StreamHandle handle, const char* call);
  Event& event_at(EventHandle handle, const char* call);
  void ensure_alive(const char* call) const;
  Op& enqueue(Stream& stream, OpKind kind);
  asio::awaitable<void> copy(OpKind kind, DevicePointer device_side, HostRange host_side, StreamHandle stream);
  void advance(Stream& stream);
  void finish_head(Stream& stream);
  void start_on_engine(Stream& stream);
  void complete_running(std::uint32_t stream_id, std::exception_ptr error);
  Engine& engine_for(OpKind kind);
  void when_reached(Stream& stream, std::uint64_t sequence, SequenceWaiter waiter);
  asio::awaitable<void> wait_until_reached(Stream& stream, std::uint64_t sequence);
  void complete_event(Event& event, std::uint64_t generation, std::exception_ptr error);
  // A host-blocking call of `duration` on the GPU's host worker; `pinning`: cudaHostRegister or
  // cudaHostUnregister, which hold the GPU's other calls where the model says so.
  asio::awaitable<void> host_call(const char* call, Nanoseconds duration, std::string detail = {}, bool pinning = false);
  // When a call that issues work, made now, gets through: after the pinning calls it waits for.
  Nanoseconds calls_held_until();
  void release_pool_to_threshold();
  Bytes device_free_bytes() const;
  void note_memory_peak();
  [[noreturn]] void out_of_memory(const std::string& what);
  bool take_allocation_fault();
  Allocation* find_allocation(DevicePointer pointer);
  // Live or freed with free_async but not yet reached: where functional work finds its bytes.
  Allocation* find_backing(DevicePointer pointer);
  Allocation& allocation_for(DevicePointer pointer, Bytes bytes, const char* call);
  void check_read(const Stream& stream, DevicePointer pointer, const std::string& reader);
  void note_write(const Stream& stream, std::uint64_t sequence, DevicePointer pointer, std::string writer);
  void merge_clock(std::vector<std::uint64_t>& into, const std::vector<std::uint64_t>& from);
  void observe_on_host(const std::vector<std::uint64_t>& clock);
  bool pinned(HostRange range) const;
  DevicePointer new_allocation(Bytes bytes, bool pool, std::uint32_t stream);
  void lose_device();
  Nanoseconds jittered(Nanoseconds duration);
  std::string stream_name(std::uint32_t id) const;

  SimSystem& system_;
  DeviceModel model_;
  DeviceProperties properties_;
  FaultPlan faults_;
  PcieLink link_;
  Trace& trace_;
  TraceTrack host_track_;
  std::string process_name_;

  std::vector<std::unique_ptr<Stream>> streams_;  // index = handle id; 0 unused
  std::vector<std::unique_ptr<Event>> events_;
  Engine compute_engine_;
  Engine copy_engine_to_device_;
  Engine copy_engine_to_host_;

  std::map<std::uint64_t, std::unique_ptr<Allocation>> allocations_;  // by base address
  std::map<std::uint64_t, std::unique_ptr<Allocation>> retiring_;     // functional: freed, not yet reached
  std::uint64_t next_device_address_ = 0x7000'0000'0000ull;
  Bytes sync_used_bytes_ = 0;
  Bytes pool_reserved_bytes_ = 0;
  Bytes pool_used_bytes_ = 0;
  Bytes pool_pending_bytes_ = 0;
  Bytes pool_release_threshold_bytes_ = 0;
  Bytes external_bytes_ = 0;
  std::vector<PendingFree> pending_frees_;
  std::map<std::uintptr_t, std::pair<Bytes, bool>> pinned_ranges_;  // start -> (bytes, allocated by us)

  std::vector<std::uint64_t> host_clock_;
  std::uint64_t host_clock_version_ = 0;
  std::vector<std::string> unsynchronized_reads_;

  std::uint64_t allocation_count_ = 0;
  std::uint64_t host_pin_count_ = 0;
  std::uint64_t faulted_kernel_launches_ = 0;
  int kernels_running_ = 0;
  Nanoseconds compute_busy_since_ns_ = 0;
  Nanoseconds host_worker_free_ns_ = 0;  // model.host_calls_queue: when the host worker is next free
  std::vector<std::pair<Nanoseconds, Nanoseconds>> pinning_calls_;  // [begins, ends) of pinning calls, not yet over
  bool lost_ = false;
  bool pool_cross_stream_reuse_ = true;
  DeviceCounters stats_;
};

}  // namespace stagehand::sim
