// stagehand_batch_check: the batch-addition kernels' GPU check and timing in one run, for
// scripts/gpu/batch.sh.
//   stagehand_batch_check [--max-log N] [--bench LOG] [--reps R] [--seed S] [--group g1|g2|both]
// Checks: sizes 1, 2, 1000, 2^max-log (default 20) and the edge cases of batch_checks.hpp; then the
// timing at 2^bench points (default 22, 0 to skip), median of R (default 20) runs.
// Exit 0 when everything matched, 1 on a mismatch, 77 without a GPU.
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "batch_checks.hpp"

int main(int argc, char** argv) {
  using namespace stagehand::cuda;
  using namespace stagehand::cuda::batch_checks;
  if (argc > 1 && std::string(argv[1]) == "--probe") return 0;  // the script's "does it start here" test
  unsigned max_log = 20, bench_log = 22;
  int repetitions = 20;
  std::uint64_t seed = 20261201;
  std::string groups = "both";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--max-log")
      max_log = std::atoi(argv[i + 1]);
    else if (flag == "--bench")
      bench_log = std::atoi(argv[i + 1]);
    else if (flag == "--reps")
      repetitions = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--seed")
      seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--group")
      groups = argv[i + 1];
    else {
      std::cerr << "unknown flag " << flag << std::endl;
      return 2;
    }
  }
  std::string why;
  if (!gpu_present(why)) {
    std::cout << "stagehand_batch_check: skipped, " << why << std::endl;
    return 77;
  }
  Result total;
  try {
    for (BatchGroup group : {BatchGroup::g1, BatchGroup::g2}) {
      if (groups != "both" && groups != (group == BatchGroup::g1 ? "g1" : "g2")) continue;
      total.add(check_batch_addition(std::cout, group, max_log, seed + (group == BatchGroup::g1 ? 0 : 1)));
      if (bench_log != 0) total.add(bench_batch_addition(std::cout, group, bench_log, repetitions, seed + 10));
    }
  } catch (const std::exception& error) {
    std::cout << "FAIL  exception: " << error.what() << std::endl;
    ++total.failed;
  }
  std::cout << "batch check: " << total.passed << " passed, " << total.failed << " failed" << std::endl;
  return total.failed == 0 ? 0 : 1;
}
