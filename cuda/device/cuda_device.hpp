#pragma once
// CudaDevice: the Device interface on the CUDA runtime.
//
// Coroutines run on the coordinator's io_context. Calls that return at once on real hardware
// (stream-ordered work, events, cudaMemGetInfo) run on the calling thread; calls that hold a host
// thread (cudaMalloc, cudaFree, cudaHostRegister/Unregister, pinned host allocations, pageable
// copies, cudaDeviceSynchronize, a growing cudaMallocAsync) run on one worker thread per GPU and
// complete to the io_context. Waits for the device complete through stream callbacks
// (cudaStreamAddCallback), which post to the io_context, with the error where the context failed.
// Every CUDA call is checked; an error names the call, file and line.
//
// The current device. CUDA sends a call to the calling thread's current device, and one
// io_context thread drives every CudaDevice of a multi-GPU process, so that device is whichever
// was used last. Every member that calls CUDA therefore first makes its own GPU current
// (use_device()), and so does every resumption inside the class after a wait (on_worker,
// when_reached), since other devices' coroutines may have run on the thread meanwhile; the worker
// thread does it per job. A call leaves its GPU current and does not restore the caller's device:
// an awaitable call resumes long after other code has run on the thread, so no "before" would be
// safe to put back. Code that calls CUDA itself beside a CudaDevice makes its own device current.

#include "device/device.hpp"
#include "trace/trace.hpp"
#include "util/cuda_check.hpp"

#include <cuda_runtime.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace stagehand::cuda {

// The number of CUDA devices; 0 when there is no driver or no GPU.
int device_count();

class CudaDevice final : public Device {
 public:
  // memory_cap_bytes > 0 emulates a smaller card: a ballast allocation holds all but that much of
  // the free memory for the device's life, and the properties report the cap as the total.
  CudaDevice(int ordinal, asio::any_io_executor executor, Bytes memory_cap_bytes = 0);
  ~CudaDevice() override;

  const DeviceProperties& properties() const override { return properties_; }
  asio::any_io_executor executor() override { return executor_; }
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
  void set_pool_cross_stream_reuse(bool allowed) override;

  asio::awaitable<void> register_host(HostRange range) override;
  asio::awaitable<void> unregister_host(HostRange range) override;
  asio::awaitable<HostRange> allocate_pinned_host(Bytes bytes) override;
  asio::awaitable<void> free_pinned_host(HostRange range) override;

  void launch(const KernelLaunch& kernel, StreamHandle stream) override;
  Bytes kernel_scratch_bytes(const std::string& kernel, std::uint64_t work_units) const override;
  void host_callback(StreamHandle stream, std::function<void()> callback) override;
  void host_callback_reached(StreamHandle stream, std::function<void(Nanoseconds reached)> callback) override;
  const DeviceCounters& counters() const override;

  // Each kernel's span, timed by its CUDA events, onto one row of `trace` (nullptr: none), as the
  // simulator's traces show the compute engine; spans arrive as their events complete, all of
  // them by the time counters() has been read with the device idle. Each blocking host call
  // (allocations, pinning, pageable copies) onto a second row, as it ends.
  void trace_kernels(Trace* trace);

 private:
  // Runs `work` on this GPU's worker thread; the coroutine resumes on the executor afterwards
  // and rethrows what `work` threw. With a trace, a span named `call` (`bytes` in its detail,
  // where not 0) on the GPU's "host calls" row.
  asio::awaitable<void> on_worker(const char* call, Bytes bytes, std::function<void()> work);
  // Resumes once `stream` reaches this point (cudaStreamAddCallback); throws the context's error
  // where a kernel before it failed.
  asio::awaitable<void> when_reached(cudaStream_t stream);
  // Both directions: from pinned memory enqueued at once, from pageable memory on the worker.
  asio::awaitable<void> copy(void* to, const void* from, Bytes bytes, const void* host_side, cudaMemcpyKind kind,
                             StreamHandle stream);
  cudaStream_t stream_of(StreamHandle handle) const;
  cudaEvent_t event_of(EventHandle handle) const;
  bool pinned(const void* pointer) const;
  // cudaSetDevice(ordinal_): the first thing every member that calls CUDA does (see the top of
  // this file). On the device already current it costs next to nothing.
  void use_device() const;
  void harvest_kernel_times() const;

  void* ballast_ = nullptr;  // see the constructor
  int ordinal_;
  asio::any_io_executor executor_;
  DeviceProperties properties_;
  cudaMemPool_t pool_ = nullptr;
  std::chrono::steady_clock::time_point origin_ = std::chrono::steady_clock::now();
  std::map<std::uint32_t, cudaStream_t> streams_;
  std::map<std::uint32_t, cudaEvent_t> events_;
  std::map<std::uint64_t, Bytes> allocation_bytes_;  // live allocate()s, for counters_.allocated_bytes
  std::uint32_t next_handle_ = 1;
  cudaStream_t waiter_stream_ = nullptr;  // carries host functions that wait for events

  // The worker thread for calls that block.
  std::mutex worker_mutex_;
  std::condition_variable worker_wake_;
  std::deque<std::function<void()>> worker_queue_;
  bool worker_stop_ = false;
  std::thread worker_;

  // Kernel times: an event pair per launch, read once complete.
  struct KernelTiming {
    cudaEvent_t start;
    cudaEvent_t end;
    const std::string* name;  // a key of counters_.kernel_totals (map nodes stay put)
    std::uint64_t work_units;
  };
  mutable std::deque<KernelTiming> kernel_timings_;
  Trace* kernel_trace_ = nullptr;
  TraceTrack kernel_track_;
  TraceTrack host_calls_track_;
  mutable DeviceCounters counters_;
  cudaEvent_t origin_event_ = nullptr;
};

}  // namespace stagehand::cuda
