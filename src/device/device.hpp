#pragma once
// The Device interface: the single seam between the coordinator and a GPU.
//
// The coordinator and every GPU program are written once against this interface, as coroutines
// (asio::awaitable) on the device's executor. Stream operations are enqueued without waiting;
// the host waits only through the awaitable calls. Calls marked [host-blocking] hold a host
// thread on real hardware for the time given: the CUDA backend runs them off the coordinator's
// thread, the simulator suspends the calling coroutine for the modelled time. Every failing call
// throws DeviceError. A kernel that faults loses the device, as it loses a CUDA context: every wait
// in flight and every later call, on every stream, throws device_lost, and nothing clears it
// (docs/device-facts.md).

#include "device/completion.hpp"
#include "device/types.hpp"

#include "device/asio.hpp"

#include <functional>

namespace stagehand {

class Device {
 public:
  virtual ~Device() = default;

  virtual const DeviceProperties& properties() const = 0;
  virtual asio::any_io_executor executor() = 0;
  // The device's clock. Coordinator code takes time from here, never from the wall clock.
  virtual Nanoseconds now() const = 0;
  // Resumes after `duration` of device time (host work modelled as taking time, back-off).
  virtual asio::awaitable<void> sleep_for(Nanoseconds duration) = 0;

  // ---- Streams and events (cudaStreamCreate, cudaEventRecord, cudaStreamWaitEvent, ...) ----
  virtual StreamHandle create_stream() = 0;
  virtual void destroy_stream(StreamHandle stream) = 0;
  virtual EventHandle create_event() = 0;
  virtual void destroy_event(EventHandle event) = 0;
  // Captures the work enqueued on `stream` so far; the event completes when that work has.
  virtual void record_event(EventHandle event, StreamHandle stream) = 0;
  // Later work on `stream` waits for the event's latest record (no host wait).
  virtual void stream_wait_event(StreamHandle stream, EventHandle event) = 0;
  // True when the latest record has completed (or the event was never recorded).
  virtual bool event_complete(EventHandle event) = 0;
  // The host waits for the event without holding a thread (the pool may release memory here).
  virtual asio::awaitable<void> wait_event(EventHandle event) = 0;
  virtual asio::awaitable<void> synchronize_stream(StreamHandle stream) = 0;
  // [host-blocking: until all work on the device completes] cudaDeviceSynchronize.
  virtual asio::awaitable<void> synchronize_device() = 0;

  // ---- Copies and memset ----
  // From pinned memory the call returns at once and the copy runs on a copy engine.
  // [host-blocking when `source` is pageable: until the copy has completed, at the pageable rate]
  virtual asio::awaitable<void> copy_to_device(DevicePointer destination, HostRange source, StreamHandle stream) = 0;
  // [host-blocking when `destination` is pageable]
  virtual asio::awaitable<void> copy_to_host(HostRange destination, DevicePointer source, StreamHandle stream) = 0;
  virtual void memset_async(DevicePointer destination, std::uint8_t value, Bytes bytes, StreamHandle stream) = 0;

  // ---- Synchronous allocation (cudaMalloc / cudaFree) ----
  // [host-blocking: short; longer where the driver first reclaims idle pool memory]
  virtual asio::awaitable<DevicePointer> allocate(Bytes bytes) = 0;
  // [host-blocking: until all work on the device completes, as cudaFree does]
  virtual asio::awaitable<void> free(DevicePointer pointer) = 0;

  // ---- Stream-ordered allocation from the device's pool (cudaMallocAsync / cudaFreeAsync) ----
  // [host-blocking: short; milliseconds when the pool grows]
  virtual asio::awaitable<DevicePointer> allocate_async(Bytes bytes, StreamHandle stream) = 0;
  // The memory returns to the pool when `stream` reaches the free, not before.
  virtual void free_async(DevicePointer pointer, StreamHandle stream) = 0;
  virtual void set_pool_release_threshold(Bytes bytes) = 0;
  // Releases idle pool memory until at most `keep_bytes` stay reserved; does not wait.
  virtual void trim_pool(Bytes keep_bytes) = 0;
  virtual PoolStats pool_stats() const = 0;
  // As cudaMemGetInfo: bytes reserved by the pool count as used.
  virtual MemoryInfo memory_info() const = 0;

  // ---- Host memory ----
  // [host-blocking, in proportion to the size; bench/RESULTS.md, "A run's first proofs"] cudaHostRegister.
  virtual asio::awaitable<void> register_host(HostRange range) = 0;
  // [host-blocking, in proportion to the size; bench/RESULTS.md, "A run's first proofs"] cudaHostUnregister.
  virtual asio::awaitable<void> unregister_host(HostRange range) = 0;
  // [host-blocking, in proportion to the size, longer while a proof stream runs] New pinned
  // host memory, written once (zeroes): CudaDevice maps the pages, writes them on several threads
  // and registers them, because cudaHostAlloc took several times as long (cuda_device.cpp;
  // bench/RESULTS.md, "A run's first proofs: pinned buffers and the key's set-up").
  virtual asio::awaitable<HostRange> allocate_pinned_host(Bytes bytes) = 0;
  // [host-blocking, in proportion to the size] Frees what allocate_pinned_host made.
  virtual asio::awaitable<void> free_pinned_host(HostRange range) = 0;

  // Whether the pool may hand a block whose free is pending on another stream to this stream,
  // making it wait (cudaMemPoolReuseAllowInternalDependencies; on by default).
  virtual void set_pool_cross_stream_reuse(bool allowed) = 0;

  // ---- Kernels and callbacks ----
  virtual void launch(const KernelLaunch& kernel, StreamHandle stream) = 0;
  // Device scratch a launch of `kernel` takes as its extra last write buffer, where its
  // convention has one, when its largest launch has `work_units` (0: it needs none, as the
  // simulator's kernels). The caller allocates it, so that the budget reserves it like any other
  // byte.
  virtual Bytes kernel_scratch_bytes(const std::string& kernel, std::uint64_t work_units) const { return 0; }
  // Runs `callback` on the executor once `stream` reaches this point (a CUDA stream callback); never
  // where the device is lost first.
  virtual void host_callback(StreamHandle stream, std::function<void()> callback) = 0;
  // The same, telling the callback when the stream reached the point (now()'s clock). On a real
  // device that can be well before the callback runs, when the executor's thread is busy.
  virtual void host_callback_reached(StreamHandle stream, std::function<void(Nanoseconds reached)> callback) {
    host_callback(stream, [this, callback = std::move(callback)] { callback(now()); });
  }

  // Totals since the device was opened.
  virtual const DeviceCounters& counters() const = 0;
};

}  // namespace stagehand
