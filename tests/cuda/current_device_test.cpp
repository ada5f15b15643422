// Every CudaDevice call on the GPU it belongs to. In a multi-GPU process one io_context thread
// drives several CudaDevices, so the thread's current device is whichever was used last. Here a
// CudaDevice opens on the last GPU while GPU 0 is made current before each of its calls
// (GpuZeroFirst) and at every turn of the io_context, as another GPU's coroutines would do: every
// call must still succeed, allocate, launch and set limits on its own GPU, and compute the right
// values. Needs two GPUs; with fewer it reports itself skipped (exit 77).
#define BOOST_TEST_NO_MAIN
#define BOOST_TEST_ALTERNATIVE_INIT_API
#include <boost/test/unit_test.hpp>

#include "cuda_device.hpp"
#include "device/busy_wait.hpp"
#include "device/kernel_abi.hpp"
#include "math/fr.hpp"
#include "msm/msm.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

using namespace stagehand;

namespace {

// How far a GPU's memory may stray from the figure expected: what GPU 0 may gain while the device
// on the last GPU works, say. None of the device's allocations (1 GiB and more), its ballast or its
// stack reserve (hundreds of MiB) fits under it.
constexpr Bytes kMemorySlack = 64 * kMiB;

void make_gpu_zero_current() { STAGEHAND_CUDA_CHECK(cudaSetDevice(0)); }

int current_device() {
  int device = -1;
  STAGEHAND_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

// The figures of GPU `ordinal`, read with it current; GPU 0 is current afterwards.
Bytes used_bytes(int ordinal) {
  STAGEHAND_CUDA_CHECK(cudaSetDevice(ordinal));
  std::size_t free = 0, total = 0;
  STAGEHAND_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  make_gpu_zero_current();
  return total - free;
}

Bytes free_bytes(int ordinal) {
  STAGEHAND_CUDA_CHECK(cudaSetDevice(ordinal));
  std::size_t free = 0, total = 0;
  STAGEHAND_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  make_gpu_zero_current();
  return free;
}

std::size_t stack_limit(int ordinal) {
  STAGEHAND_CUDA_CHECK(cudaSetDevice(ordinal));
  std::size_t bytes = 0;
  STAGEHAND_CUDA_CHECK(cudaDeviceGetLimit(&bytes, cudaLimitStackSize));
  make_gpu_zero_current();
  return bytes;
}

// The GPU a device pointer lies on; -1 for anything but device memory.
int gpu_of(DevicePointer pointer) {
  cudaPointerAttributes attributes{};
  STAGEHAND_CUDA_CHECK(cudaPointerGetAttributes(&attributes, reinterpret_cast<const void*>(pointer.address)));
  return attributes.type == cudaMemoryTypeDevice ? attributes.device : -1;
}

// Forwards every call to `inner` with GPU 0 made current first, so that a call that does not
// make its own device current goes to GPU 0.
class GpuZeroFirst final : public Device {
 public:
  explicit GpuZeroFirst(Device& inner) : inner_(inner) {}

  const DeviceProperties& properties() const override { return inner_.properties(); }
  asio::any_io_executor executor() override { return inner_.executor(); }
  Nanoseconds now() const override { return inner_.now(); }
  asio::awaitable<void> sleep_for(Nanoseconds duration) override { co_await inner_.sleep_for(duration); }

  StreamHandle create_stream() override { return zero_then(inner_).create_stream(); }
  void destroy_stream(StreamHandle stream) override { zero_then(inner_).destroy_stream(stream); }
  EventHandle create_event() override { return zero_then(inner_).create_event(); }
  void destroy_event(EventHandle event) override { zero_then(inner_).destroy_event(event); }
  void record_event(EventHandle event, StreamHandle stream) override { zero_then(inner_).record_event(event, stream); }
  void stream_wait_event(StreamHandle stream, EventHandle event) override {
    zero_then(inner_).stream_wait_event(stream, event);
  }
  bool event_complete(EventHandle event) override { return zero_then(inner_).event_complete(event); }
  asio::awaitable<void> wait_event(EventHandle event) override { co_await zero_then(inner_).wait_event(event); }
  asio::awaitable<void> synchronize_stream(StreamHandle stream) override {
    co_await zero_then(inner_).synchronize_stream(stream);
  }
  asio::awaitable<void> synchronize_device() override { co_await zero_then(inner_).synchronize_device(); }

  asio::awaitable<void> copy_to_device(DevicePointer destination, HostRange source, StreamHandle stream) override {
    co_await zero_then(inner_).copy_to_device(destination, source, stream);
  }
  asio::awaitable<void> copy_to_host(HostRange destination, DevicePointer source, StreamHandle stream) override {
    co_await zero_then(inner_).copy_to_host(destination, source, stream);
  }
  void memset_async(DevicePointer destination, std::uint8_t value, Bytes bytes, StreamHandle stream) override {
    zero_then(inner_).memset_async(destination, value, bytes, stream);
  }

  asio::awaitable<DevicePointer> allocate(Bytes bytes) override {
    co_return co_await zero_then(inner_).allocate(bytes);
  }
  asio::awaitable<void> free(DevicePointer pointer) override { co_await zero_then(inner_).free(pointer); }
  asio::awaitable<DevicePointer> allocate_async(Bytes bytes, StreamHandle stream) override {
    co_return co_await zero_then(inner_).allocate_async(bytes, stream);
  }
  void free_async(DevicePointer pointer, StreamHandle stream) override {
    zero_then(inner_).free_async(pointer, stream);
  }
  void set_pool_release_threshold(Bytes bytes) override { zero_then(inner_).set_pool_release_threshold(bytes); }
  void trim_pool(Bytes keep_bytes) override { zero_then(inner_).trim_pool(keep_bytes); }
  PoolStats pool_stats() const override { return zero_then(inner_).pool_stats(); }
  MemoryInfo memory_info() const override { return zero_then(inner_).memory_info(); }
  void set_pool_cross_stream_reuse(bool allowed) override { zero_then(inner_).set_pool_cross_stream_reuse(allowed); }

  asio::awaitable<void> register_host(HostRange range) override { co_await zero_then(inner_).register_host(range); }
  asio::awaitable<void> unregister_host(HostRange range) override { co_await zero_then(inner_).unregister_host(range); }
  asio::awaitable<HostRange> allocate_pinned_host(Bytes bytes) override {
    co_return co_await zero_then(inner_).allocate_pinned_host(bytes);
  }
  asio::awaitable<void> free_pinned_host(HostRange range) override {
    co_await zero_then(inner_).free_pinned_host(range);
  }

  void launch(const KernelLaunch& kernel, StreamHandle stream) override { zero_then(inner_).launch(kernel, stream); }
  Bytes kernel_scratch_bytes(const std::string& kernel, std::uint64_t work_units) const override {
    return zero_then(inner_).kernel_scratch_bytes(kernel, work_units);
  }
  void host_callback(StreamHandle stream, std::function<void()> callback) override {
    zero_then(inner_).host_callback(stream, std::move(callback));
  }
  void host_callback_reached(StreamHandle stream, std::function<void(Nanoseconds reached)> callback) override {
    zero_then(inner_).host_callback_reached(stream, std::move(callback));
  }
  const DeviceCounters& counters() const override { return zero_then(inner_).counters(); }

 private:
  static Device& zero_then(Device& device) {
    make_gpu_zero_current();
    return device;
  }
  Device& inner_;
};

// What another GPU's coroutines do to the thread between this device's steps: GPU 0 is made
// current at every turn of the io_context, so that a coroutine of the device that resumes without
// making its own GPU current again runs on GPU 0.
asio::awaitable<void> keep_gpu_zero_current(asio::any_io_executor executor, const bool& stop) {
  while (!stop) {
    make_gpu_zero_current();
    co_await asio::post(executor, asio::use_awaitable);
  }
}

// A CudaDevice on the last GPU, opened with GPU 0 current, and what GPU 0 held before.
class LastGpu {
 public:
  explicit LastGpu(Bytes memory_cap_bytes = 0) {
    make_gpu_zero_current();
    STAGEHAND_CUDA_CHECK(cudaFree(nullptr));  // GPU 0's context exists before its memory is read
    gpu_zero_used_before_ = used_bytes(0);
    gpu_zero_stack_before_ = stack_limit(0);
    device_ = std::make_unique<cuda::CudaDevice>(ordinal_, io_.get_executor(), memory_cap_bytes);
    gpu_ = std::make_unique<GpuZeroFirst>(*device_);
  }

  int ordinal() const { return ordinal_; }
  cuda::CudaDevice& device() { return *device_; }
  Device& gpu() { return *gpu_; }  // GPU 0 current before every call
  Bytes gpu_zero_growth() const {
    const Bytes used = used_bytes(0);
    return used > gpu_zero_used_before_ ? used - gpu_zero_used_before_ : 0;
  }
  std::size_t gpu_zero_stack_before() const { return gpu_zero_stack_before_; }

  // Runs `body` on the io_context beside keep_gpu_zero_current; rethrows what it threw.
  void run(asio::awaitable<void> body) {
    bool stop = false;
    std::exception_ptr failure;
    bool finished = false;
    asio::co_spawn(io_, keep_gpu_zero_current(io_.get_executor(), stop), asio::detached);
    asio::co_spawn(io_, std::move(body), [&](std::exception_ptr error) {
      failure = error;
      finished = true;
      stop = true;
    });
    io_.run();
    if (failure) std::rethrow_exception(failure);
    BOOST_REQUIRE(finished);
  }

 private:
  int ordinal_ = cuda::device_count() - 1;
  Bytes gpu_zero_used_before_ = 0;
  std::size_t gpu_zero_stack_before_ = 0;
  asio::io_context io_;
  std::unique_ptr<cuda::CudaDevice> device_;
  std::unique_ptr<GpuZeroFirst> gpu_;
};

HostRange range_of(std::vector<std::byte>& bytes) {
  return HostRange{reinterpret_cast<std::uintptr_t>(bytes.data()), bytes.size()};
}

// n Fr values spread over the field, in the kernels' layout (Montgomery limbs).
std::vector<math::Fr> sample_fr(std::size_t n, std::uint64_t seed) {
  std::vector<math::Fr> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto value = math::Fr::from_uint64(seed * 0x9e3779b97f4a7c15ULL + i * 0xbf58476d1ce4e5b9ULL + 1);
    values[i] = value * value * value;
  }
  return values;
}

std::vector<std::byte> bytes_of(const std::vector<math::Fr>& values) {
  std::vector<std::byte> bytes(values.size() * 32);
  for (std::size_t i = 0; i < values.size(); ++i)
    std::memcpy(bytes.data() + 32 * i, values[i].montgomery_limbs().data(), 32);
  return bytes;
}

bool holds(const std::byte* bytes, const std::vector<math::Fr>& expected) {
  return std::memcmp(bytes, bytes_of(expected).data(), expected.size() * 32) == 0;
}

// h_pointwise over n elements on `stream`: a[i] = (a[i]·b[i] − c[i])·factor.
void launch_h_pointwise(Device& gpu, std::size_t n, const math::Fr& factor, DevicePointer a, DevicePointer b,
                        DevicePointer c, StreamHandle stream) {
  const Bytes bytes = n * 32;
  KernelLaunch pointwise;
  pointwise.name = kernel::h_pointwise;
  pointwise.work_units = n;
  for (auto limb : factor.montgomery_limbs()) pointwise.arguments.push_back(limb);
  pointwise.reads = {{b, bytes}, {c, bytes}};
  pointwise.writes = {{a, bytes}};
  gpu.launch(pointwise, stream);
}

}  // namespace

BOOST_AUTO_TEST_CASE(opening_sets_the_stack_limit_and_the_ballast_on_its_own_gpu) {
  constexpr Bytes cap = 8 * kGiB;
  LastGpu last(cap);
  BOOST_TEST(current_device() == last.ordinal());  // a call leaves its GPU current
  cudaDeviceProp properties{};
  STAGEHAND_CUDA_CHECK(cudaGetDeviceProperties(&properties, last.ordinal()));
  BOOST_TEST(last.device().properties().ordinal == last.ordinal());
  BOOST_TEST(last.device().properties().name == std::string(properties.name));
  BOOST_TEST(last.device().properties().total_memory_bytes == std::min<Bytes>(cap, properties.totalGlobalMem));
  // Read with the last GPU current: reading the MSM kernels' attributes loads them into a GPU.
  STAGEHAND_CUDA_CHECK(cudaSetDevice(last.ordinal()));
  const std::size_t msm_stack = cuda::msm_kernel_stack_bytes();
  BOOST_TEST(stack_limit(last.ordinal()) >= msm_stack);
  BOOST_TEST(stack_limit(0) == last.gpu_zero_stack_before());
  // The ballast holds all but the cap on the last GPU, none of GPU 0.
  BOOST_TEST(free_bytes(last.ordinal()) <= cap + kMemorySlack);
  BOOST_TEST(last.gpu_zero_growth() < kMemorySlack);
}

BOOST_AUTO_TEST_CASE(streams_events_and_callbacks_run_on_its_own_gpu) {
  LastGpu last;
  last.run([&]() -> asio::awaitable<void> {
    Device& gpu = last.gpu();
    const auto first = gpu.create_stream();
    const auto second = gpu.create_stream();
    const auto recorded = gpu.create_event();
    gpu.launch(busy_wait(1'000'000), first);
    gpu.record_event(recorded, first);
    gpu.stream_wait_event(second, recorded);
    bool called = false;
    Nanoseconds reached = -1;
    gpu.host_callback(second, [&] { called = true; });
    gpu.host_callback_reached(second, [&](Nanoseconds at) { reached = at; });
    co_await gpu.synchronize_stream(second);
    for (int i = 0; i < 5000 && (!called || reached < 0); ++i) co_await gpu.sleep_for(1'000'000);
    BOOST_TEST(called);
    BOOST_TEST(reached >= 0);
    BOOST_TEST(gpu.event_complete(recorded));

    // A wait that has to suspend: the event completes 50 ms after it was recorded.
    const auto later = gpu.create_event();
    gpu.launch(busy_wait(50'000'000), first);
    gpu.record_event(later, first);
    co_await gpu.wait_event(later);
    BOOST_TEST(gpu.event_complete(later));
    co_await gpu.synchronize_stream(first);
    co_await gpu.synchronize_device();
    const auto& totals = gpu.counters().kernel_totals;
    const auto busy_wait_totals = totals.find(kernel::busy_wait);
    BOOST_REQUIRE(busy_wait_totals != totals.end());
    BOOST_TEST(busy_wait_totals->second.launches == 2u);  // both timed by their events

    gpu.destroy_event(later);
    gpu.destroy_event(recorded);
    gpu.destroy_stream(second);
    gpu.destroy_stream(first);

    // Not restored: the caller's device is not put back after a call.
    make_gpu_zero_current();
    last.device().destroy_event(last.device().create_event());
    BOOST_TEST(current_device() == last.ordinal());
  }());
}

BOOST_AUTO_TEST_CASE(allocations_and_the_pool_are_its_own_gpus) {
  LastGpu last;
  last.run([&]() -> asio::awaitable<void> {
    Device& gpu = last.gpu();
    constexpr Bytes bytes = kGiB;
    const auto stream = gpu.create_stream();
    const auto before = gpu.memory_info();
    const auto synchronous = co_await gpu.allocate(bytes);
    const auto pooled = co_await gpu.allocate_async(bytes, stream);
    BOOST_TEST(gpu_of(synchronous) == last.ordinal());
    BOOST_TEST(gpu_of(pooled) == last.ordinal());
    BOOST_TEST(gpu.pool_stats().used_bytes >= bytes);
    // Both gigabytes are gone from the last GPU, and GPU 0 holds none of them.
    BOOST_TEST(gpu.memory_info().free_bytes + 2 * bytes <= before.free_bytes);
    BOOST_TEST(last.gpu_zero_growth() < kMemorySlack);

    gpu.set_pool_release_threshold(512 * kMiB);
    BOOST_TEST(gpu.pool_stats().release_threshold_bytes == 512 * kMiB);
    gpu.set_pool_cross_stream_reuse(false);
    gpu.set_pool_cross_stream_reuse(true);
    gpu.free_async(pooled, stream);
    co_await gpu.synchronize_stream(stream);
    gpu.trim_pool(0);
    BOOST_TEST(gpu.pool_stats().reserved_bytes == 0u);
    gpu.set_pool_release_threshold(0);
    co_await gpu.free(synchronous);

    const auto pinned = co_await gpu.allocate_pinned_host(kMiB);
    co_await gpu.free_pinned_host(pinned);
    gpu.destroy_stream(stream);
  }());
}

// h_pointwise: a[i] = (a[i]·b[i] − c[i])·factor, its inputs uploaded from pinned, pageable and
// registered memory and its result read back into pinned and pageable memory, on a second stream
// that waits for the kernel's event.
BOOST_AUTO_TEST_CASE(copies_memset_and_a_kernel_compute_the_right_values) {
  LastGpu last;
  last.run([&]() -> asio::awaitable<void> {
    Device& gpu = last.gpu();
    constexpr std::size_t n = 4096;
    constexpr Bytes bytes = n * 32;
    const auto a = sample_fr(n, 1), b = sample_fr(n, 2), c = sample_fr(n, 3);
    const math::Fr factor = sample_fr(1, 4)[0];
    std::vector<math::Fr> expected(n);
    for (std::size_t i = 0; i < n; ++i) expected[i] = (a[i] * b[i] - c[i]) * factor;

    const auto compute = gpu.create_stream();
    const auto download = gpu.create_stream();
    const auto computed = gpu.create_event();
    const auto device_a = co_await gpu.allocate(bytes);
    const auto device_b = co_await gpu.allocate(bytes);
    const auto device_c = co_await gpu.allocate_async(bytes, compute);
    for (auto pointer : {device_a, device_b, device_c}) BOOST_TEST(gpu_of(pointer) == last.ordinal());

    const auto pinned_in = co_await gpu.allocate_pinned_host(bytes);
    const auto pinned_out = co_await gpu.allocate_pinned_host(bytes);
    std::memcpy(pinned_in.data(), bytes_of(a).data(), bytes);
    auto pageable_in = bytes_of(b);
    auto registered_in = bytes_of(c);
    co_await gpu.register_host(range_of(registered_in));
    const auto copied_before = gpu.counters();
    co_await gpu.copy_to_device(device_a, pinned_in, compute);
    co_await gpu.copy_to_device(device_b, range_of(pageable_in), compute);
    co_await gpu.copy_to_device(device_c, range_of(registered_in), compute);

    launch_h_pointwise(gpu, n, factor, device_a, device_b, device_c, compute);
    gpu.record_event(computed, compute);
    gpu.stream_wait_event(download, computed);

    std::vector<std::byte> pageable_out(bytes);
    co_await gpu.copy_to_host(pinned_out, device_a, download);
    co_await gpu.copy_to_host(range_of(pageable_out), device_a, download);
    co_await gpu.synchronize_stream(download);
    BOOST_TEST(holds(pinned_out.data(), expected));
    BOOST_TEST(holds(pageable_out.data(), expected));
    const auto& copied = gpu.counters();
    BOOST_TEST(copied.pinned_bytes_copied - copied_before.pinned_bytes_copied == 3 * bytes);
    BOOST_TEST(copied.pageable_bytes_copied - copied_before.pageable_bytes_copied == 2 * bytes);

    gpu.memset_async(device_c, 0x5a, bytes, compute);
    co_await gpu.copy_to_host(range_of(pageable_out), device_c, compute);
    BOOST_TEST(std::all_of(pageable_out.begin(), pageable_out.end(),
                           [](std::byte value) { return value == std::byte{0x5a}; }));

    co_await gpu.synchronize_device();
    const auto& totals = gpu.counters().kernel_totals;
    const auto pointwise_totals = totals.find(kernel::h_pointwise);
    BOOST_REQUIRE(pointwise_totals != totals.end());
    BOOST_TEST(pointwise_totals->second.launches == 1u);
    BOOST_TEST(last.gpu_zero_growth() < kMemorySlack);

    gpu.free_async(device_c, compute);
    co_await gpu.synchronize_stream(compute);
    co_await gpu.free(device_b);
    co_await gpu.free(device_a);
    co_await gpu.unregister_host(range_of(registered_in));
    co_await gpu.free_pinned_host(pinned_out);
    co_await gpu.free_pinned_host(pinned_in);
    gpu.destroy_event(computed);
    gpu.destroy_stream(download);
    gpu.destroy_stream(compute);
  }());
}

bool init_unit_test() {
  boost::unit_test::framework::master_test_suite().p_name.value = "cuda_current_device";
  return true;
}

int main(int argc, char* argv[]) {
  const int count = stagehand::cuda::device_count();
  if (count < 2) {
    std::printf("cuda_current_device: %d CUDA device%s present, the test needs 2: skipped\n", count,
                count == 1 ? "" : "s");
    return 77;
  }
  return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
