// What every GPU check driver shares: whether a GPU is there to check on, and the tally of
// passed and failed checks. Header-only, so that each driver links its one set of checks
// without the others.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace stagehand::cuda::check_support {

// cudaGetDeviceCount fails or returns 0: the caller skips (exit 77 for ctest).
inline bool gpu_present(std::string& why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    why = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(status);
    return false;
  }
  if (count == 0) {
    why = "no CUDA device";
    return false;
  }
  return true;
}

// One check's line: "ok" or "FAIL", what was checked, and any detail.
inline bool report(std::ostream& out, bool ok, const std::string& what, const std::string& detail = "") {
  out << (ok ? "ok    " : "FAIL  ") << what << (detail.empty() ? "" : "  ") << detail << std::endl;
  return ok;
}

// Whether `call` refuses its arguments (std::invalid_argument), reported under `what` with the
// refusal's text.
inline bool rejects(std::ostream& out, const std::string& what, const std::function<void()>& call) {
  bool rejected = false;
  std::string message;
  try {
    call();
  } catch (const std::invalid_argument& error) {
    rejected = true;
    message = error.what();
  }
  return report(out, rejected, what, message);
}

struct Result {
  int passed = 0;
  int failed = 0;
  void add(bool ok) { ok ? ++passed : ++failed; }
  void add(const Result& other) {
    passed += other.passed;
    failed += other.failed;
  }
};

// Milliseconds of `repetitions` runs of launch(stream), each between two CUDA events, after one
// warm-up run: the median, the fastest and the slowest.
struct Timing {
  double median = 0;
  double min = 0;
  double max = 0;
};
template <class Launch>
Timing time_launches(int repetitions, Launch&& launch) {
  auto ok = [](cudaError_t status) {
    if (status != cudaSuccess) throw std::runtime_error(std::string("timing: ") + cudaGetErrorString(status));
  };
  cudaStream_t stream;
  cudaEvent_t begin, end;
  ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ok(cudaEventCreate(&begin));
  ok(cudaEventCreate(&end));
  launch(stream);  // warm-up (and any occupancy query)
  ok(cudaStreamSynchronize(stream));
  std::vector<float> milliseconds;
  for (int r = 0; r < std::max(1, repetitions); ++r) {
    ok(cudaEventRecord(begin, stream));
    launch(stream);
    ok(cudaEventRecord(end, stream));
    ok(cudaEventSynchronize(end));
    float ms = 0;
    ok(cudaEventElapsedTime(&ms, begin, end));
    milliseconds.push_back(ms);
  }
  ok(cudaEventDestroy(begin));
  ok(cudaEventDestroy(end));
  ok(cudaStreamDestroy(stream));
  std::sort(milliseconds.begin(), milliseconds.end());
  return Timing{milliseconds[milliseconds.size() / 2], milliseconds.front(), milliseconds.back()};
}

}  // namespace stagehand::cuda::check_support
