// A printed benchmark of the CPU reference: field multiplications, NTTs and G1 MSMs.
#pragma once

#include <ostream>

namespace stagehand::math {

struct BenchmarkOptions {
  unsigned threads = 0;  // 0 = all cores
  bool quick = false;    // small sizes, for smoke tests: 2^12/2^14 instead of 2^16/2^20
};

// Prints a table to `out`; returns 0 on success (the process exit code for `stagehand bench math`).
int run_benchmark(std::ostream& out, const BenchmarkOptions& options);

}  // namespace stagehand::math
