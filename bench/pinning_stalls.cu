// Whether pinning in place on one host thread holds up the CUDA calls of another thread on the
// same GPU: the question behind the measured model's prestage and two-lock running 10-12% fast
// (bench/RESULTS.md). Their GPU programs took 1.35-1.65 s where they overlapped the other
// worker's cudaHostRegister/cudaHostUnregister, against budgeted's 1.17 s.
//
// One thread (the "program") issues what a partition program issues, in a loop: a 2 MiB pinned
// upload, a short kernel, an event record, an event query; it notes how long each call held it.
// In the last two of the four rounds it leaves the upload out, to see whether the other calls
// wait as well.
// Another thread (the "pinner") registers and unregisters 6 GiB of malloc'd memory, the size of a
// job's a, b, c, then makes and frees a 2 GiB buffer with cudaHostAlloc and cudaFreeHost twice (a
// staging pool's growth: whether it holds the program's calls as registering does). The program's
// call times are reported for the stretches while the pinner is in each of those calls, and with
// no pinning at all.
//
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90,code=sm_90 bench/pinning_stalls.cu -o pinning_stalls
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "util/cuda_check.hpp"

using Clock = std::chrono::steady_clock;

__global__ void spin_kernel(unsigned long long cycles) {
  const unsigned long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

enum Phase : int { kIdle = 0, kRegister = 1, kUnregister = 2, kAlloc = 3, kFree = 4, kPhases = 5 };
const char* phase_name(int phase) {
  switch (phase) {
    case kRegister: return "during cudaHostRegister";
    case kUnregister: return "during cudaHostUnregister";
    case kAlloc: return "during cudaHostAlloc";
    case kFree: return "during cudaFreeHost";
    default: return "no pinning";
  }
}

struct CallTime {
  int phase;  // what the pinner was doing when the call began
  double ms;  // how long the call held the program's thread
  int kind;   // 0 memcpy, 1 launch, 2 record, 3 query, 4 synchronize
};

int run_benchmark() {
  int device = 0;
  STAGEHAND_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp properties{};
  STAGEHAND_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  std::printf("device: %s\n", properties.name);

  constexpr std::size_t kChunk = 2u << 20;
  constexpr std::size_t kPinBytes = std::size_t{6} << 30;
  void* pinned_chunk = nullptr;
  void* device_chunk = nullptr;
  STAGEHAND_CUDA_CHECK(cudaHostAlloc(&pinned_chunk, kChunk, cudaHostAllocDefault));
  STAGEHAND_CUDA_CHECK(cudaMalloc(&device_chunk, kChunk));
  std::memset(pinned_chunk, 1, kChunk);
  char* pageable = static_cast<char*>(std::malloc(kPinBytes));
  if (!pageable) return 1;
  // Touch every page so that registering measures pinning, not first faults.
  for (std::size_t i = 0; i < kPinBytes; i += 4096) pageable[i] = 1;

  cudaStream_t stream;
  STAGEHAND_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t event;
  STAGEHAND_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));

  std::atomic<int> phase{kIdle};
  std::atomic<bool> stop{false};
  std::atomic<bool> with_copies{true};
  std::vector<CallTime> calls;
  calls.reserve(1 << 20);
  const unsigned long long spin_cycles = 200000;  // about 0.1 ms at 1.98 GHz

  std::thread program([&] {
    STAGEHAND_CUDA_CHECK(cudaSetDevice(device));
    while (!stop.load()) {
      for (int kind = with_copies.load() ? 0 : 1; kind < 4; ++kind) {
        const int at = phase.load();
        const auto begin = Clock::now();
        if (kind == 0)
          STAGEHAND_CUDA_CHECK(cudaMemcpyAsync(device_chunk, pinned_chunk, kChunk, cudaMemcpyHostToDevice, stream));
        if (kind == 1) spin_kernel<<<1, 1, 0, stream>>>(spin_cycles);
        if (kind == 2) STAGEHAND_CUDA_CHECK(cudaEventRecord(event, stream));
        if (kind == 3) (void)cudaEventQuery(event);
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
        calls.push_back({at, ms, kind});
      }
      // Keep the queue short, as the program's deferred collect does.
      const int at = phase.load();
      const auto begin = Clock::now();
      STAGEHAND_CUDA_CHECK(cudaStreamSynchronize(stream));
      calls.push_back({at, std::chrono::duration<double, std::milli>(Clock::now() - begin).count(), 4});
    }
  });

  // The pinner's call `call` in phase `during`, timed into `times`, then 200 ms with no pinning.
  auto pinner_call = [&](Phase during, std::vector<double>& times, auto call) {
    phase = during;
    const auto begin = Clock::now();
    call();
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - begin).count());
    phase = kIdle;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  };
  std::vector<double> register_ms, unregister_ms;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a stretch with no pinning first
  for (int round = 0; round < 4; ++round) {
    with_copies = round < 2;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    pinner_call(kRegister, register_ms,
                [&] { STAGEHAND_CUDA_CHECK(cudaHostRegister(pageable, kPinBytes, cudaHostRegisterDefault)); });
    pinner_call(kUnregister, unregister_ms, [&] { STAGEHAND_CUDA_CHECK(cudaHostUnregister(pageable)); });
  }
  std::vector<double> alloc_ms, free_ms;
  constexpr std::size_t kStagingBytes = std::size_t{2} << 30;
  with_copies = true;
  for (int round = 0; round < 2; ++round) {
    void* staging = nullptr;
    pinner_call(kAlloc, alloc_ms,
                [&] { STAGEHAND_CUDA_CHECK(cudaHostAlloc(&staging, kStagingBytes, cudaHostAllocPortable)); });
    pinner_call(kFree, free_ms, [&] { STAGEHAND_CUDA_CHECK(cudaFreeHost(staging)); });
  }
  stop = true;
  program.join();

  std::printf("cudaHostRegister 6 GiB, ms:");
  for (double ms : register_ms) std::printf(" %.1f", ms);
  std::printf("\ncudaHostUnregister 6 GiB, ms:");
  for (double ms : unregister_ms) std::printf(" %.1f", ms);
  std::printf("\ncudaHostAlloc 2 GiB, ms:");
  for (double ms : alloc_ms) std::printf(" %.1f", ms);
  std::printf("\ncudaFreeHost 2 GiB, ms:");
  for (double ms : free_ms) std::printf(" %.1f", ms);
  std::printf("\n\n%-28s %-10s %8s %10s %10s %10s %10s\n", "the pinner", "call", "calls", "median ms", "p99 ms",
              "max ms", "sum ms");
  const char* kinds[] = {"memcpy", "launch", "record", "query", "sync"};
  for (int at = 0; at < kPhases; ++at) {
    for (int kind = 0; kind < 5; ++kind) {
      std::vector<double> times;
      for (const auto& call : calls) {
        if (call.phase == at && call.kind == kind) times.push_back(call.ms);
      }
      if (times.empty()) continue;
      std::sort(times.begin(), times.end());
      double sum = 0;
      for (double t : times) sum += t;
      std::printf("%-28s %-10s %8zu %10.4f %10.4f %10.2f %10.1f\n", phase_name(at), kinds[kind], times.size(),
                  times[times.size() / 2], times[times.size() * 99 / 100], times.back(), sum);
    }
  }
  STAGEHAND_CUDA_CHECK(cudaFreeHost(pinned_chunk));
  STAGEHAND_CUDA_CHECK(cudaFree(device_chunk));
  std::free(pageable);
  return 0;
}

int main() { return stagehand::cuda::exit_status_of(run_benchmark); }
