// stagehand_setup_check: the setup kernels' GPU check and timing in one run, for
// scripts/gpu/setup.sh.
//   stagehand_setup_check [--log N] [--g1 LOG] [--g1-large LOG] [--g2 LOG] [--g2-large LOG] [--reps R]
//                         [--only checks|bench]
// Checks: setup_fixed_base_g1 and _g2 over 2^log (default 12) random scalars and the edge cases,
// and refused arguments (setup_checks.hpp); then the kernels timed at 2^g1 and 2^g1-large G1
// points (20, 24) and 2^g2 and 2^g2-large G2 points (20, 22) (0 skips one), median of R (3)
// runs, and the projected kernel time of a 2^26 setup. Exit 0 when everything matched, 1 on a
// mismatch, 77 without a GPU.
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "setup_checks.hpp"

int main(int argc, char** argv) {
  using namespace stagehand::cuda;
  using namespace stagehand::cuda::setup_checks;
  if (argc > 1 && std::string(argv[1]) == "--probe") return 0;  // the script's "does it start here" test
  unsigned log = 12, g1 = 20, g1_large = 24, g2 = 20, g2_large = 22;
  int repetitions = 3;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const unsigned value = static_cast<unsigned>(std::atoi(argv[i + 1]));
    if (flag == "--log")
      log = value;
    else if (flag == "--g1")
      g1 = value;
    else if (flag == "--g1-large")
      g1_large = value;
    else if (flag == "--g2")
      g2 = value;
    else if (flag == "--g2-large")
      g2_large = value;
    else if (flag == "--reps")
      repetitions = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--only")
      only = argv[i + 1];
    else {
      std::cerr << "unknown flag " << flag << std::endl;
      return 2;
    }
  }
  if (log > 24 || g1 > 26 || g1_large > 26 || g2 > 26 || g2_large > 26) {
    std::cerr << "--log must be at most 24 and the timed sizes at most 26" << std::endl;
    return 2;
  }
  std::string why;
  if (!gpu_present(why)) {
    std::cout << "stagehand_setup_check: skipped, " << why << std::endl;
    return 77;
  }
  Result total;
  try {
    if (only != "bench") {
      total.add(check_fixed_base(std::cout, FixedBaseGroup::g1, log, 1));
      total.add(check_fixed_base(std::cout, FixedBaseGroup::g2, log, 2));
    }
    if (only != "checks") total.add(bench(std::cout, g1, g1_large, g2, g2_large, repetitions));
  } catch (const std::exception& error) {
    std::cout << "FAIL  exception: " << error.what() << std::endl;
    ++total.failed;
  }
  std::cout << "setup check: " << total.passed << " passed, " << total.failed << " failed" << std::endl;
  return total.failed == 0 ? 0 : 1;
}
