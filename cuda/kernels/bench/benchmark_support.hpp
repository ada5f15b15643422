// The kernel benchmark's timing and its table rows, shared by BLS12-381's (benchmark.cu) and
// BN254's (benchmark_bn254.cpp) benchmarks.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <string>
#include <vector>

#include "bench/benchmark.hpp"
#include "util/cuda_check.hpp"

namespace stagehand::cuda {

struct Stats {
  double median = 0, minimum = 0, maximum = 0;
};

inline Stats summarise(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  Stats stats;
  stats.minimum = times.front();
  stats.maximum = times.back();
  const std::size_t middle = times.size() / 2;
  stats.median = times.size() % 2 ? times[middle] : 0.5 * (times[middle - 1] + times[middle]);
  return stats;
}

inline void row(std::ostream& out, const std::string& name, unsigned log_size, const Stats& stats, unsigned repetitions,
                const std::string& note = "") {
  out << std::left << std::setw(24) << name << std::right << std::setw(4) << log_size << std::fixed
      << std::setprecision(3) << std::setw(12) << stats.median << std::setw(12) << stats.minimum << std::setw(12)
      << stats.maximum << std::setw(6) << repetitions << "  " << note << std::endl;
}

// body(r) `repetitions` times after one warm-up (module load, first touch of the buffers), each
// timed by CUDA events on `stream`.
template <class Body>
Stats time_events(unsigned repetitions, cudaStream_t stream, Body body) {
  cudaEvent_t start, stop;
  STAGEHAND_CUDA_CHECK(cudaEventCreate(&start));
  STAGEHAND_CUDA_CHECK(cudaEventCreate(&stop));
  body(0u);
  STAGEHAND_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> times;
  for (unsigned r = 0; r < repetitions; ++r) {
    STAGEHAND_CUDA_CHECK(cudaEventRecord(start, stream));
    body(r + 1);
    STAGEHAND_CUDA_CHECK(cudaEventRecord(stop, stream));
    STAGEHAND_CUDA_CHECK(cudaEventSynchronize(stop));
    float milliseconds = 0;
    STAGEHAND_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start, stop));
    times.push_back(milliseconds);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return summarise(times);
}

// BN254's NTT kinds, its snarkjs H form and its G1 and G2 MSMs at 2^log_size (benchmark_bn254.cpp),
// each MSM result checked through the sample points' discrete logarithms.
void bench_bn254(std::ostream& out, unsigned log_size, const KernelBenchmarkOptions& options, cudaStream_t stream);

}  // namespace stagehand::cuda
