// stagehand_math_bench [--quick] [--threads N]: the CPU reference benchmark on its own, until the
// command line offers `stagehand bench math`.
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "math/benchmark.hpp"

int main(int argument_count, char** arguments) {
  stagehand::math::BenchmarkOptions options;
  for (int index = 1; index < argument_count; ++index) {
    const std::string_view argument = arguments[index];
    if (argument == "--quick") {
      options.quick = true;
    } else if (argument == "--threads" && index + 1 < argument_count) {
      options.threads = static_cast<unsigned>(std::strtoul(arguments[++index], nullptr, 10));
    } else {
      std::cerr << "usage: stagehand_math_bench [--quick] [--threads N]\n";
      return 2;
    }
  }
  return stagehand::math::run_benchmark(std::cout, options);
}
