// What a job's pinned staging buffer costs to make: the question behind the first proofs of a
// 2^26 stream waiting 0.84 s each for their 2 GiB witness buffers (HostStaging's pinned pool
// takes them from cudaHostAlloc, one after another on the device's thread for blocking calls).
//
// For each size, the median of three rounds, ms:
//   alloc      cudaHostAlloc, then the buffer written once (the witness parse writes all of it)
//   register   pages mapped, first written by 16 threads, then cudaHostRegister
//   huge pages the same, mapped with MADV_HUGEPAGE (2 MiB pages where the kernel's transparent
//              huge pages allow it: fewer page faults and fewer pages to pin; CudaDevice's
//              allocate_pinned_host does this)
//   unwritten  pages mapped, then cudaHostRegister, which faults them in itself on its one thread
//   two allocs / two registers   the same on two threads at once (two workers' first jobs)
// and the frees (cudaFreeHost; cudaHostUnregister then free), and of the make time the part
// cudaHostRegister took. At 8 GiB (a proving key's set: util/pinnable_allocator.hpp registers a
// key's sets in place) only the two written ways. Nothing else runs on the GPU.
//
//   nvcc -std=c++20 -O3 -gencode=arch=compute_90,code=sm_90 bench/pinned_staging.cu -o pinned_staging
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "util/cuda_check.hpp"

using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Writes every byte of [data, data + bytes) on `threads` threads.
void touch(char* data, std::size_t bytes, unsigned threads) {
  std::vector<std::thread> workers;
  const std::size_t part = (bytes + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    const std::size_t begin = std::min(bytes, t * part), end = std::min(bytes, begin + part);
    workers.emplace_back([=] { std::memset(data + begin, 1, end - begin); });
  }
  for (auto& worker : workers) worker.join();
}

struct Times {
  double make = 0, release = 0, register_only = 0;
};

Times by_alloc(std::size_t bytes, unsigned threads) {
  Times times;
  auto start = Clock::now();
  void* pointer = nullptr;
  STAGEHAND_CUDA_CHECK(cudaHostAlloc(&pointer, bytes, cudaHostAllocPortable));
  touch(static_cast<char*>(pointer), bytes, threads);
  times.make = ms_since(start);
  start = Clock::now();
  STAGEHAND_CUDA_CHECK(cudaFreeHost(pointer));
  times.release = ms_since(start);
  return times;
}

// How the pages of a registered buffer are made before cudaHostRegister.
enum class Pages { written, huge, unwritten };

Times by_register(std::size_t bytes, unsigned threads, Pages pages) {
  Times times;
  auto start = Clock::now();
  void* pointer = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pointer == MAP_FAILED) std::abort();
  if (pages == Pages::huge) ::madvise(pointer, bytes, MADV_HUGEPAGE);
  if (pages != Pages::unwritten) touch(static_cast<char*>(pointer), bytes, threads);
  const auto registering = Clock::now();
  STAGEHAND_CUDA_CHECK(cudaHostRegister(pointer, bytes, cudaHostRegisterPortable));
  times.register_only = ms_since(registering);
  times.make = ms_since(start);
  start = Clock::now();
  STAGEHAND_CUDA_CHECK(cudaHostUnregister(pointer));
  ::munmap(pointer, bytes);
  times.release = ms_since(start);
  return times;
}

Times by_register_written(std::size_t bytes, unsigned threads) { return by_register(bytes, threads, Pages::written); }

// `way` on `copies` threads at once; the slowest thread's times.
Times at_once(const std::function<Times(std::size_t, unsigned)>& way, std::size_t bytes, int copies) {
  std::vector<Times> each(static_cast<std::size_t>(copies));
  std::vector<std::thread> threads;
  for (int i = 0; i < copies; ++i) {
    threads.emplace_back([&, i] {
      STAGEHAND_CUDA_CHECK(cudaSetDevice(0));
      each[static_cast<std::size_t>(i)] = way(bytes, 16 / copies);
    });
  }
  for (auto& thread : threads) thread.join();
  Times slowest;
  for (const auto& times : each) {
    slowest.make = std::max(slowest.make, times.make);
    slowest.release = std::max(slowest.release, times.release);
    slowest.register_only = std::max(slowest.register_only, times.register_only);
  }
  return slowest;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int run_benchmark() {
  STAGEHAND_CUDA_CHECK(cudaSetDevice(0));
  STAGEHAND_CUDA_CHECK(cudaFree(nullptr));  // the context first, outside the times
  if (FILE* setting = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r")) {
    char line[128] = {};
    if (std::fgets(line, sizeof line, setting)) std::printf("transparent huge pages: %s", line);
    std::fclose(setting);
  }
  std::printf("%-8s %-14s %12s %12s %14s %12s\n", "GiB", "way", "make ms", "release ms", "make ms/GiB", "register ms");
  for (double gib : {0.5, 2.0, 8.0}) {
    const auto bytes = static_cast<std::size_t>(gib * (1ull << 30));
    const std::pair<const char*, std::function<Times()>> ways[] = {
        {"alloc", [&] { return by_alloc(bytes, 16); }},
        {"register", [&] { return by_register(bytes, 16, Pages::written); }},
        {"huge pages", [&] { return by_register(bytes, 16, Pages::huge); }},
        {"unwritten", [&] { return by_register(bytes, 16, Pages::unwritten); }},
        {"two allocs", [&] { return at_once(by_alloc, bytes, 2); }},
        {"two registers", [&] { return at_once(by_register_written, bytes, 2); }},
    };
    for (const auto& [name, way] : ways) {
      if (gib > 2 && std::strcmp(name, "register") != 0 && std::strcmp(name, "huge pages") != 0) continue;
      std::vector<double> make, release, register_only;
      for (int round = 0; round < 3; ++round) {
        const auto times = way();
        make.push_back(times.make);
        release.push_back(times.release);
        register_only.push_back(times.register_only);
      }
      std::printf("%-8.1f %-14s %12.1f %12.1f %14.1f %12.1f\n", gib, name, median(make), median(release),
                  median(make) / gib, median(register_only));
    }
  }
  return 0;
}

int main() { return stagehand::cuda::exit_status_of(run_benchmark); }
