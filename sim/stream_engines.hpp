#pragma once
// StreamEngines: the streams, events and engines of one simulated GPU, and the order in which
// their operations run.
//
// Streams execute their operations strictly in order. Kernels and memsets take the compute
// engine, copies a copy engine of their direction; an operation whose engine has no free slot
// waits in that engine's queue. Events and the stream-ordered pool's hidden dependencies hold a
// stream's head until what they wait for is reached. Every stream and the host carry a vector
// clock of what is known to precede them, which the race checker reads.
//
// What an engine operation does (its duration, its bytes, its trace span) is the owner's: the
// OpRunner interface below, which SimDevice implements.

#include "device/device.hpp"
#include "sim/sim_system.hpp"
#include "trace/trace.hpp"

#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace stagehand::sim {

// clock[s] = the last operation of stream s known to precede what comes next.
using VectorClock = std::vector<std::uint64_t>;
void merge_clock(VectorClock& into, const VectorClock& from);

enum class OpKind : std::uint8_t {
  kernel,
  memset,
  copy_to_device,
  copy_to_host,
  record_event,
  wait_event,
  free_async,
  host_callback,
  pool_dependency
};

struct Op {
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
  Nanoseconds not_before_ns = 0;  // issued while a pinning call held the GPU's calls (model pinning_holds_calls)
  std::unique_ptr<KernelLaunch> kernel;
  std::function<void()> callback;
};

using SequenceWaiter = std::function<void(std::exception_ptr)>;

struct Stream {
  std::uint32_t id = 0;
  bool alive = true;
  std::deque<Op> ops;
  bool head_started = false;  // the head operation runs or waits for an engine or a dependency
  std::uint64_t enqueued = 0;
  std::uint64_t completed = 0;
  VectorClock clock;
  std::uint64_t merged_host_clock_version = 0;
  std::multimap<std::uint64_t, SequenceWaiter> waiters;
  TraceTrack track;
};

struct Event {
  bool alive = true;
  std::uint64_t recorded = 0;  // generation of the latest record
  std::uint64_t completed = 0;
  VectorClock clock;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> blocked_streams;
  std::vector<std::pair<std::uint64_t, std::shared_ptr<Completion>>> host_waiters;
};

struct EngineSlots {
  int compute = 1;
  int copy_to_device = 1;
  int copy_to_host = 1;
};

// What the owner of the engines does with the operations they schedule.
class OpRunner {
 public:
  // While the device is lost nothing more runs.
  virtual bool lost() const = 0;
  // A kernel, memset or copy got its engine slot: start it and call `done` when it is over.
  virtual void start(Stream& stream, Op& op, std::function<void()> done) = 0;
  // It is over: apply its effects. A kernel that faulted loses the device here (lost() turns true,
  // and every operation and waiter is dropped, `op` with them).
  virtual void finish(Stream& stream, Op& op) = 0;
  // The stream reached a free_async: the block is idle in the pool from now on.
  virtual void free_reached(const Stream& stream, const Op& op) = 0;

 protected:
  ~OpRunner() = default;
};

class StreamEngines {
 public:
  StreamEngines(SimSystem& system, OpRunner& runner, DeviceCounters& stats, std::string process_name,
                EngineSlots slots);

  StreamHandle create_stream();
  EventHandle create_event();
  // The live stream or event of a handle; DeviceError (invalid_value) otherwise.
  Stream& stream(StreamHandle handle, const char* call);
  Event& event(EventHandle handle, const char* call);
  // Every stream ever created, destroyed ones included: ids 1 .. stream_count().
  std::size_t stream_count() const { return streams_.size() - 1; }
  Stream& stream_by_id(std::uint32_t id);
  static std::string stream_name(std::uint32_t id);

  // Appends an operation to the stream's queue; `advance` then runs what can run.
  Op& enqueue(Stream& stream, OpKind kind);
  void advance(Stream& stream);

  void record_event(Event& event, EventHandle handle, Stream& stream);
  void stream_wait_event(Stream& stream, Event& event, EventHandle handle);
  // Calls `waiter` once the stream has completed its operation number `sequence`.
  void when_reached(Stream& stream, std::uint64_t sequence, SequenceWaiter waiter);
  asio::awaitable<void> wait_until_reached(Stream& stream, std::uint64_t sequence);
  // The host has seen work complete: everything it enqueues from now on follows that work.
  void observe_on_host(const VectorClock& clock);

  // The device is lost: drops every queued operation and fails every waiter with `error`.
  void fail_everything(const std::exception_ptr& error);
  // Streams and events never destroyed.
  void report_leaks(int ordinal, std::vector<std::string>& leaks) const;
  // The most operations one stream has held queued (enqueued, not yet complete) at once. On a GPU
  // a deep queue blocks the enqueueing host thread (CUDA's queues are bounded): a program that
  // enqueues far ahead of the device holds its executor, and every coroutine on it, meanwhile.
  std::size_t most_operations_queued() const { return most_operations_queued_; }

 private:
  struct Engine {
    int slots = 1;
    int busy = 0;
    std::deque<std::uint32_t> waiting;  // streams whose head operation waits for a slot
  };

  bool advance_head(Stream& stream);
  bool wait_for_event(Stream& stream, const Op& op);
  bool wait_for_pool_dependency(Stream& stream, const Op& op);
  void take_engine(Stream& stream, Op& op);
  void finish_head(Stream& stream);
  void start_on_engine(Stream& stream);
  void complete_running(std::uint32_t stream_id);
  Engine& engine_for(OpKind kind);
  void complete_event(Event& event, std::uint64_t generation);

  SimSystem& system_;
  OpRunner& runner_;
  DeviceCounters& stats_;
  Trace& trace_;
  std::string process_name_;
  std::vector<std::unique_ptr<Stream>> streams_;  // index = handle id; 0 unused
  std::vector<std::unique_ptr<Event>> events_;
  Engine compute_engine_;
  Engine copy_engine_to_device_;
  Engine copy_engine_to_host_;
  VectorClock host_clock_;
  std::uint64_t host_clock_version_ = 0;
  std::size_t most_operations_queued_ = 0;
};

}  // namespace stagehand::sim
