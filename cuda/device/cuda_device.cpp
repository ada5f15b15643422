#include "cuda_device.hpp"

#include "device/format.hpp"
#include "launch/groth16_launchers.hpp"
#include "launch/launchers.hpp"
#include "math/parallel.hpp"
#include "msm/msm.hpp"
#include "util/huge_pages.hpp"

#include <boost/asio/steady_timer.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace stagehand::cuda {
namespace {

// Pinned host memory made the cheap way: the pages mapped with huge pages asked for
// (util/huge_pages.hpp), first written by several threads, then registered. cudaHostAlloc faults
// in and zeroes every 4 KiB page on the one thread that calls it, and the driver holds the GPU's
// other calls meanwhile. On the H200 machine (bench/pinned_staging.cu) 4 KiB pages written by 16
// threads and registered were made several times faster than by cudaHostAlloc and freed faster
// than by cudaFreeHost, and huge pages were faster again at both (bench/RESULTS.md, "A run's first
// proofs: pinned buffers and the key's set-up", has the figures). Each thread writes at least kFirstWritePart,
// so the small result buffers of each run take one thread.
constexpr Bytes kFirstWritePart = Bytes{4} << 20;

void* map_written_pages(Bytes bytes) {
  void* pointer = map_huge_pages(bytes);
  if (pointer == nullptr) {
    throw DeviceError(DeviceErrc::out_of_memory, fmt::format("allocate_pinned_host({}): mmap failed: {}",
                                                             format_bytes(bytes), std::strerror(errno)));
  }
  auto* data = static_cast<unsigned char*>(pointer);
  math::detail::run_ranges(bytes, std::min(16u, math::detail::resolve_thread_count(0)), kFirstWritePart,
                           [=](std::size_t begin, std::size_t end) { std::memset(data + begin, 0, end - begin); });
  return pointer;
}

}  // namespace

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

namespace {
// Stream callbacks (cudaStreamAddCallback) rather than host functions (cudaLaunchHostFunc): CUDA
// never calls a host function once the context has failed, so a wait begun before a kernel
// faulted would never resume, and the work it tracks would keep the io_context running for good.
// A stream callback is called exactly once, with the error when there is one.

// What a stream callback needs to resume a coroutine: the completion, and tracked work on the
// executor so that the io_context does not run out of work while the GPU is busy.
struct HostWake {
  std::shared_ptr<Completion> completion;
  asio::any_io_executor work;
};

void CUDART_CB wake_host(cudaStream_t, cudaError_t status, void* data) {
  std::unique_ptr<HostWake> wake(static_cast<HostWake*>(data));
  if (status == cudaSuccess) {
    wake->completion->complete();
    return;
  }
  // The error is made on the executor's thread: a stream callback must not call CUDA.
  asio::post(wake->work, [completion = wake->completion, status] {
    completion->complete(std::make_exception_ptr(cuda_error(status, "waiting for a stream", __FILE__, __LINE__)));
  });
}

// A stream callback's call: the callback is told when CUDA's thread ran it (on now()'s clock),
// which can be well before the executor's thread gets to the callback.
struct HostCall {
  std::function<void(Nanoseconds reached)> callback;
  asio::any_io_executor work;
  std::chrono::steady_clock::time_point origin;
};

void CUDART_CB run_host_call(cudaStream_t, cudaError_t status, void* data) {
  std::unique_ptr<HostCall> call(static_cast<HostCall*>(data));
  // After a failure the stream never reached the point: the callback is dropped, as the
  // simulator drops a lost device's, and the work it tracked goes with `call`.
  if (status != cudaSuccess) return;
  const auto reached =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - call->origin).count();
  // Stream callbacks must not call CUDA: hand the callback to the coordinator's thread.
  auto executor = call->work;
  asio::post(executor,
             [callback = std::move(call->callback), work = std::move(call->work), reached] { callback(reached); });
}

asio::any_io_executor tracked(const asio::any_io_executor& executor) {
  return asio::prefer(executor, asio::execution::outstanding_work.tracked);
}
}  // namespace

CudaDevice::CudaDevice(int ordinal, asio::any_io_executor executor, Bytes memory_cap_bytes)
    : ordinal_(ordinal), executor_(std::move(executor)) {
  if (ordinal_ < 0 || ordinal_ >= device_count()) {
    throw DeviceError(DeviceErrc::device_lost,
                      fmt::format("CUDA device {} not present ({} found)", ordinal_, device_count()));
  }
  use_device();
  cudaDeviceProp prop{};
  STAGEHAND_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal_));
  properties_.name = prop.name;
  properties_.ordinal = ordinal_;
  properties_.total_memory_bytes = prop.totalGlobalMem;
  properties_.async_engine_count = prop.asyncEngineCount;
  // The local memory the MSM kernels' stack frames need, reserved now: left to the first launch
  // that needs it, the runtime took it (hundreds of MiB on the H200) after the cap's ballast and
  // the VRAM budget had been sized, outside both.
  const std::size_t stack = msm_kernel_stack_bytes();
  std::size_t current_stack = 0;
  STAGEHAND_CUDA_CHECK(cudaDeviceGetLimit(&current_stack, cudaLimitStackSize));
  if (stack > current_stack) STAGEHAND_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitStackSize, stack));
  if (memory_cap_bytes > 0) {
    std::size_t free = 0, total = 0;
    STAGEHAND_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    if (free > memory_cap_bytes) STAGEHAND_CUDA_CHECK(cudaMalloc(&ballast_, free - memory_cap_bytes));
    properties_.total_memory_bytes = std::min<Bytes>(memory_cap_bytes, properties_.total_memory_bytes);
  }
  STAGEHAND_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool_, ordinal_));
  STAGEHAND_CUDA_CHECK(cudaStreamCreateWithFlags(&waiter_stream_, cudaStreamNonBlocking));
  STAGEHAND_CUDA_CHECK(cudaEventCreate(&origin_event_));
  STAGEHAND_CUDA_CHECK(cudaEventRecord(origin_event_, waiter_stream_));
  STAGEHAND_CUDA_CHECK(cudaEventSynchronize(origin_event_));
  origin_ = std::chrono::steady_clock::now();
  worker_ = std::thread([this] {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(worker_mutex_);
        worker_wake_.wait(lock, [this] { return worker_stop_ || !worker_queue_.empty(); });
        if (worker_queue_.empty()) return;
        job = std::move(worker_queue_.front());
        worker_queue_.pop_front();
      }
      job();
    }
  });
}

CudaDevice::~CudaDevice() {
  {
    std::lock_guard lock(worker_mutex_);
    worker_stop_ = true;
  }
  worker_wake_.notify_all();
  worker_.join();
  use_device();
  for (auto& timing : kernel_timings_) {
    cudaEventDestroy(timing.start);
    cudaEventDestroy(timing.end);
  }
  for (auto& [id, event] : events_) cudaEventDestroy(event);
  for (auto& [id, stream] : streams_) cudaStreamDestroy(stream);
  cudaStreamDestroy(waiter_stream_);
  cudaEventDestroy(origin_event_);
  if (ballast_ != nullptr) cudaFree(ballast_);
}

void CudaDevice::use_device() const { STAGEHAND_CUDA_CHECK(cudaSetDevice(ordinal_)); }

Nanoseconds CudaDevice::now() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - origin_).count();
}

asio::awaitable<void> CudaDevice::sleep_for(Nanoseconds duration) {
  asio::steady_timer timer(executor_, std::chrono::nanoseconds(std::max<Nanoseconds>(0, duration)));
  co_await timer.async_wait(asio::use_awaitable);
}

asio::awaitable<void> CudaDevice::on_worker(const char* call, Bytes bytes, std::function<void()> work) {
  Nanoseconds started = 0;
  Nanoseconds ended = 0;
  co_await await_completion([&](Completion completion) {
    auto shared = std::make_shared<Completion>(std::move(completion));
    {
      std::lock_guard lock(worker_mutex_);
      worker_queue_.push_back([this, work = std::move(work), shared, &started, &ended, keep = tracked(executor_)] {
        std::exception_ptr error;
        started = now();
        try {
          use_device();
          work();
        } catch (...) {
          error = std::current_exception();
        }
        ended = now();
        shared->complete(error);
      });
    }
    worker_wake_.notify_one();
  });
  use_device();  // other devices' coroutines may have run on this thread meanwhile
  if (kernel_trace_ != nullptr) {
    kernel_trace_->span(host_calls_track_, call, "host call", started, ended,
                        bytes ? format_bytes(bytes) : std::string{});
  }
}

asio::awaitable<void> CudaDevice::when_reached(cudaStream_t stream) {
  use_device();
  std::exception_ptr error;
  co_await await_completion([&](Completion completion) {
    auto* wake = new HostWake{std::make_shared<Completion>(std::move(completion)), tracked(executor_)};
    auto status = cudaStreamAddCallback(stream, wake_host, wake, 0);
    if (status != cudaSuccess) {
      auto shared = wake->completion;
      delete wake;
      try {
        check(status, "cudaStreamAddCallback", __FILE__, __LINE__);
      } catch (...) {
        shared->complete(std::current_exception());
      }
    }
  });
  use_device();  // other devices' coroutines may have run on this thread meanwhile
}

cudaStream_t CudaDevice::stream_of(StreamHandle handle) const {
  auto found = streams_.find(handle.id);
  if (found == streams_.end())
    throw DeviceError(DeviceErrc::invalid_value, fmt::format("invalid stream {}", handle.id));
  return found->second;
}

cudaEvent_t CudaDevice::event_of(EventHandle handle) const {
  auto found = events_.find(handle.id);
  if (found == events_.end()) throw DeviceError(DeviceErrc::invalid_value, fmt::format("invalid event {}", handle.id));
  return found->second;
}

StreamHandle CudaDevice::create_stream() {
  use_device();
  cudaStream_t stream;
  STAGEHAND_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  auto id = next_handle_++;
  streams_.emplace(id, stream);
  return StreamHandle{id};
}

void CudaDevice::destroy_stream(StreamHandle handle) {
  use_device();
  auto stream = stream_of(handle);
  STAGEHAND_CUDA_CHECK(cudaStreamDestroy(stream));  // pending work still completes
  streams_.erase(handle.id);
}

EventHandle CudaDevice::create_event() {
  use_device();
  cudaEvent_t event;
  STAGEHAND_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  auto id = next_handle_++;
  events_.emplace(id, event);
  return EventHandle{id};
}

void CudaDevice::destroy_event(EventHandle handle) {
  use_device();
  STAGEHAND_CUDA_CHECK(cudaEventDestroy(event_of(handle)));
  events_.erase(handle.id);
}

void CudaDevice::record_event(EventHandle event, StreamHandle stream) {
  use_device();
  STAGEHAND_CUDA_CHECK(cudaEventRecord(event_of(event), stream_of(stream)));
}

void CudaDevice::stream_wait_event(StreamHandle stream, EventHandle event) {
  use_device();
  STAGEHAND_CUDA_CHECK(cudaStreamWaitEvent(stream_of(stream), event_of(event), 0));
}

bool CudaDevice::event_complete(EventHandle event) {
  use_device();
  auto status = cudaEventQuery(event_of(event));
  if (status == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  STAGEHAND_CUDA_CHECK(status);
  return true;
}

asio::awaitable<void> CudaDevice::wait_event(EventHandle event) {
  use_device();
  auto cuda_event = event_of(event);
  if (event_complete(event)) co_return;
  // A short-lived stream per wait, so that waits never queue behind one another.
  cudaStream_t stream;
  STAGEHAND_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  STAGEHAND_CUDA_CHECK(cudaStreamWaitEvent(stream, cuda_event, 0));
  co_await when_reached(stream);
  STAGEHAND_CUDA_CHECK(cudaStreamDestroy(stream));
  STAGEHAND_CUDA_CHECK(cudaEventQuery(cuda_event));  // surfaces a failure of the work it followed
}

asio::awaitable<void> CudaDevice::synchronize_stream(StreamHandle stream) {
  use_device();
  auto cuda_stream = stream_of(stream);
  co_await when_reached(cuda_stream);
  // Surfaces a failure of the work waited for. "Not ready" is no failure: CUDA may still count
  // the host function that woke us as running.
  auto status = cudaStreamQuery(cuda_stream);
  if (status != cudaErrorNotReady) STAGEHAND_CUDA_CHECK(status);
  cudaGetLastError();
}

asio::awaitable<void> CudaDevice::synchronize_device() {
  co_await on_worker("cudaDeviceSynchronize", 0, [] { STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize()); });
}

bool CudaDevice::pinned(const void* pointer) const {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

asio::awaitable<void> CudaDevice::copy_to_device(DevicePointer destination, HostRange source, StreamHandle stream) {
  co_await copy(reinterpret_cast<void*>(destination.address), source.data(), source.bytes, source.data(),
                cudaMemcpyHostToDevice, stream);
}

asio::awaitable<void> CudaDevice::copy_to_host(HostRange destination, DevicePointer source, StreamHandle stream) {
  co_await copy(destination.data(), reinterpret_cast<const void*>(source.address), destination.bytes,
                destination.data(), cudaMemcpyDeviceToHost, stream);
}

asio::awaitable<void> CudaDevice::copy(void* to, const void* from, Bytes bytes, const void* host_side,
                                       cudaMemcpyKind kind, StreamHandle stream) {
  use_device();
  auto cuda_stream = stream_of(stream);
  if (pinned(host_side)) {
    counters_.pinned_bytes_copied += bytes;
    STAGEHAND_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, kind, cuda_stream));
    co_return;
  }
  counters_.pageable_bytes_copied += bytes;
  // With pageable memory the call returns only when the copy is done: off this thread.
  co_await on_worker(kind == cudaMemcpyDeviceToHost ? "pageable copy to host" : "pageable copy to device", bytes, [=] {
    STAGEHAND_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, kind, cuda_stream));
    if (kind == cudaMemcpyDeviceToHost) STAGEHAND_CUDA_CHECK(cudaStreamSynchronize(cuda_stream));
  });
}

void CudaDevice::memset_async(DevicePointer destination, std::uint8_t value, Bytes bytes, StreamHandle stream) {
  use_device();
  STAGEHAND_CUDA_CHECK(cudaMemsetAsync(reinterpret_cast<void*>(destination.address), value, bytes, stream_of(stream)));
}

asio::awaitable<DevicePointer> CudaDevice::allocate(Bytes bytes) {
  void* pointer = nullptr;
  co_await on_worker("cudaMalloc", bytes, [&] { STAGEHAND_CUDA_CHECK(cudaMalloc(&pointer, bytes)); });
  allocation_bytes_[reinterpret_cast<std::uint64_t>(pointer)] = bytes;
  counters_.allocated_bytes += bytes;
  auto info = memory_info();
  counters_.peak_memory_used_bytes = std::max(counters_.peak_memory_used_bytes, info.total_bytes - info.free_bytes);
  co_return DevicePointer{reinterpret_cast<std::uint64_t>(pointer)};
}

asio::awaitable<void> CudaDevice::free(DevicePointer pointer) {
  // cudaFree waits for all work on the device: never on the coordinator's thread.
  co_await on_worker("cudaFree", 0, [=] { STAGEHAND_CUDA_CHECK(cudaFree(reinterpret_cast<void*>(pointer.address))); });
  if (auto found = allocation_bytes_.find(pointer.address); found != allocation_bytes_.end()) {
    counters_.allocated_bytes -= found->second;
    allocation_bytes_.erase(found);
  }
}

asio::awaitable<DevicePointer> CudaDevice::allocate_async(Bytes bytes, StreamHandle stream) {
  use_device();
  void* pointer = nullptr;
  auto status = cudaMallocAsync(&pointer, bytes, stream_of(stream));
  if (status == cudaErrorMemoryAllocation) ++counters_.out_of_memory_count;
  STAGEHAND_CUDA_CHECK(status);
  auto info = memory_info();
  counters_.peak_memory_used_bytes = std::max(counters_.peak_memory_used_bytes, info.total_bytes - info.free_bytes);
  co_return DevicePointer{reinterpret_cast<std::uint64_t>(pointer)};
}

void CudaDevice::free_async(DevicePointer pointer, StreamHandle stream) {
  use_device();
  STAGEHAND_CUDA_CHECK(cudaFreeAsync(reinterpret_cast<void*>(pointer.address), stream_of(stream)));
}

void CudaDevice::set_pool_release_threshold(Bytes bytes) {
  use_device();
  std::uint64_t threshold = bytes;
  STAGEHAND_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold));
}

void CudaDevice::trim_pool(Bytes keep_bytes) {
  use_device();
  STAGEHAND_CUDA_CHECK(cudaMemPoolTrimTo(pool_, keep_bytes));
}

PoolStats CudaDevice::pool_stats() const {
  use_device();
  std::uint64_t reserved = 0;
  std::uint64_t used = 0;
  std::uint64_t threshold = 0;
  STAGEHAND_CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved));
  STAGEHAND_CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &used));
  STAGEHAND_CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold));
  return PoolStats{reserved, used, threshold};
}

MemoryInfo CudaDevice::memory_info() const {
  use_device();
  std::size_t free = 0;
  std::size_t total = 0;
  STAGEHAND_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  // Under a cap the ballast is not part of the emulated card.
  return MemoryInfo{free, std::min<Bytes>(total, properties_.total_memory_bytes)};
}

void CudaDevice::set_pool_cross_stream_reuse(bool allowed) {
  use_device();
  int value = allowed ? 1 : 0;
  STAGEHAND_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolReuseAllowInternalDependencies, &value));
}

asio::awaitable<void> CudaDevice::register_host(HostRange range) {
  co_await on_worker("cudaHostRegister", range.bytes, [=] {
    STAGEHAND_CUDA_CHECK(cudaHostRegister(range.data(), range.bytes, cudaHostRegisterPortable));
  });
}

asio::awaitable<void> CudaDevice::unregister_host(HostRange range) {
  co_await on_worker("cudaHostUnregister", range.bytes,
                     [=] { STAGEHAND_CUDA_CHECK(cudaHostUnregister(range.data())); });
}

asio::awaitable<HostRange> CudaDevice::allocate_pinned_host(Bytes bytes) {
  if (bytes == 0) throw DeviceError(DeviceErrc::invalid_value, "allocate_pinned_host: zero bytes");
  void* pointer = nullptr;
  co_await on_worker("pinned allocation", bytes, [&] {
    pointer = map_written_pages(bytes);
    const cudaError_t status = cudaHostRegister(pointer, bytes, cudaHostRegisterPortable);
    if (status != cudaSuccess) unmap_pages(pointer, bytes);
    STAGEHAND_CUDA_CHECK(status);
  });
  ++counters_.pinned_host_allocations;
  co_return HostRange{reinterpret_cast<std::uintptr_t>(pointer), bytes};
}

asio::awaitable<void> CudaDevice::free_pinned_host(HostRange range) {
  co_await on_worker("pinned free", range.bytes, [=] {
    STAGEHAND_CUDA_CHECK(cudaHostUnregister(range.data()));
    unmap_pages(range.data(), range.bytes);
  });
}

Bytes CudaDevice::kernel_scratch_bytes(const std::string& kernel, std::uint64_t work_units) const {
  return cuda::kernel_scratch_bytes(kernel, work_units);
}

void CudaDevice::launch(const KernelLaunch& kernel, StreamHandle stream) {
  use_device();
  const auto* launcher = find_launcher(kernel.name, kernel.curve);
  if (launcher == nullptr) {
    throw DeviceError(DeviceErrc::unknown_kernel, fmt::format("launch: no CUDA launcher for kernel '{}' over {}",
                                                              kernel.name, kernel::curve_name(kernel.curve)));
  }
  auto cuda_stream = stream_of(stream);
  KernelTiming timing{};
  timing.name = &counters_.kernel_totals.try_emplace(kernel.name).first->first;
  timing.work_units = kernel.work_units;
  STAGEHAND_CUDA_CHECK(cudaEventCreate(&timing.start));
  STAGEHAND_CUDA_CHECK(cudaEventCreate(&timing.end));
  STAGEHAND_CUDA_CHECK(cudaEventRecord(timing.start, cuda_stream));
  // A launcher throws std::invalid_argument for arguments that do not fit its kernel and a
  // DeviceError (util/cuda_check.hpp) for a failed CUDA call; neither leaves the events behind.
  const auto destroy_events = [&timing] {
    cudaEventDestroy(timing.start);
    cudaEventDestroy(timing.end);
  };
  try {
    (*launcher)(kernel, cuda_stream);
  } catch (const std::invalid_argument& error) {
    destroy_events();
    throw DeviceError(DeviceErrc::invalid_value, fmt::format("launch '{}': {}", kernel.name, error.what()));
  } catch (...) {
    destroy_events();
    throw;
  }
  STAGEHAND_CUDA_CHECK(cudaGetLastError());
  STAGEHAND_CUDA_CHECK(cudaEventRecord(timing.end, cuda_stream));
  kernel_timings_.push_back(timing);
  ++counters_.kernels;
  if (kernel_timings_.size() > 256) harvest_kernel_times();
}

void CudaDevice::harvest_kernel_times() const {
  use_device();
  // Completed launches in launch order; busy time as the union of their intervals.
  while (!kernel_timings_.empty()) {
    auto timing = kernel_timings_.front();
    auto status = cudaEventQuery(timing.end);
    if (status == cudaErrorNotReady) {
      cudaGetLastError();
      return;
    }
    float start_ms = 0;
    float end_ms = 0;
    if (status == cudaSuccess && cudaEventElapsedTime(&start_ms, origin_event_, timing.start) == cudaSuccess &&
        cudaEventElapsedTime(&end_ms, origin_event_, timing.end) == cudaSuccess) {
      auto start = static_cast<Nanoseconds>(start_ms * 1e6);
      auto end = static_cast<Nanoseconds>(end_ms * 1e6);
      if (counters_.first_kernel_start_ns < 0) counters_.first_kernel_start_ns = start;
      auto from = std::max(start, counters_.last_kernel_end_ns);
      if (end > from) counters_.compute_busy_ns += end - from;
      counters_.last_kernel_end_ns = std::max(counters_.last_kernel_end_ns, end);
      auto& totals = counters_.kernel_totals.find(*timing.name)->second;
      ++totals.launches;
      totals.work_units += timing.work_units;
      totals.busy_ns += end - start;
      if (kernel_trace_ != nullptr) {
        kernel_trace_->span(kernel_track_, *timing.name, "kernel", start, end,
                            fmt::format("{} units", timing.work_units));
      }
    }
    cudaGetLastError();
    cudaEventDestroy(timing.start);
    cudaEventDestroy(timing.end);
    kernel_timings_.pop_front();
  }
}

void CudaDevice::trace_kernels(Trace* trace) {
  harvest_kernel_times();  // earlier launches stay out of a new trace
  kernel_trace_ = trace;
  if (trace == nullptr) return;
  const auto process = fmt::format("GPU {}: {}", properties_.ordinal, properties_.name);
  kernel_track_ = trace->track(process, "kernels (every stream)");
  host_calls_track_ = trace->track(process, "host calls (the GPU's blocking calls, in turn)");
}

void CudaDevice::host_callback(StreamHandle stream, std::function<void()> callback) {
  host_callback_reached(stream, [callback = std::move(callback)](Nanoseconds) { callback(); });
}

void CudaDevice::host_callback_reached(StreamHandle stream, std::function<void(Nanoseconds reached)> callback) {
  use_device();
  auto* call = new HostCall{std::move(callback), tracked(executor_), origin_};
  auto status = cudaStreamAddCallback(stream_of(stream), run_host_call, call, 0);
  if (status != cudaSuccess) delete call;
  STAGEHAND_CUDA_CHECK(status);
}

const DeviceCounters& CudaDevice::counters() const {
  harvest_kernel_times();
  return counters_;
}

}  // namespace stagehand::cuda
