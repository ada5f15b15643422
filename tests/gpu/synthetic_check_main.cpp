// stagehand_synthetic_check: the synthetic generator's GPU check and timing in one run, for
// scripts/gpu/synthetic.sh.
//   stagehand_synthetic_check [--max-log N] [--g1 LOG] [--g2 LOG] [--scalars LOG] [--tail LOG] [--reps R]
//                             [--only checks|bench]
// Checks: points at 1, 7, 1000 and 2^max-log − 3 (default 20), scalars, tail items and rejected
// arguments (synthetic_checks.hpp); then the timing at 2^g1 G1 points (24), 2^g2 G2 points (22),
// 2^scalars scalars (24) and 2^tail tail items (22) (0 skips one), median of R (5) runs, and the
// projected time of the 2^26 partition's key. Exit 0 when everything matched, 1 on a mismatch,
// 77 without a GPU.
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "synthetic_checks.hpp"

int main(int argc, char** argv) {
  using namespace stagehand::cuda;
  using namespace stagehand::cuda::synthetic_checks;
  if (argc > 1 && std::string(argv[1]) == "--probe") return 0;  // the script's "does it start here" test
  unsigned max_log = 20;
  BenchSizes sizes;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const unsigned value = static_cast<unsigned>(std::atoi(argv[i + 1]));
    if (flag == "--max-log")
      max_log = value;
    else if (flag == "--g1")
      sizes.g1_log = value;
    else if (flag == "--g2")
      sizes.g2_log = value;
    else if (flag == "--scalars")
      sizes.scalars_log = value;
    else if (flag == "--tail")
      sizes.tail_log = value;
    else if (flag == "--reps")
      sizes.repetitions = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--only")
      only = argv[i + 1];
    else {
      std::cerr << "unknown flag " << flag << std::endl;
      return 2;
    }
  }
  if (max_log < 4 || max_log > 26) {
    std::cerr << "--max-log must be within 4..26" << std::endl;
    return 2;
  }
  std::string why;
  if (!gpu_present(why)) {
    std::cout << "stagehand_synthetic_check: skipped, " << why << std::endl;
    return 77;
  }
  Result total;
  try {
    if (only != "bench") {
      total.add(check_arguments(std::cout));
      total.add(check_points(std::cout, SyntheticGroup::g1, max_log));
      total.add(check_points(std::cout, SyntheticGroup::g2, max_log));
      total.add(check_scalars(std::cout, max_log));
      total.add(check_tail_items(std::cout, max_log));
    }
    if (only != "checks") total.add(bench(std::cout, sizes));
  } catch (const std::exception& error) {
    std::cout << "FAIL  exception: " << error.what() << std::endl;
    ++total.failed;
  }
  std::cout << "synthetic check: " << total.passed << " passed, " << total.failed << " failed" << std::endl;
  return total.failed == 0 ? 0 : 1;
}
