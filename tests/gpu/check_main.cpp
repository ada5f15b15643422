// stagehand_kernel_check: the whole GPU correctness check in one run, for scripts/gpu-check-kernels.sh.
//   stagehand_kernel_check [--max-log N] [--big LOG] [--seed S] [--msm-only 1] [--big-ntt 0]
//                          [--big-parts ntt,h,msm] [--g2-log N] [--setup-log N] [--setup-bench 0|1]
//                          [--setup-only 1]
// NTT, H forms: 2^1..2^max-log (default 22); MSM: 2^10..2^max-log; then one run of each at 2^big
// (default 26, 0 to skip; --big-parts picks which, --big-ntt 0 is "msm"); the Groth16 program's
// groth16_abc and G2 MSM (2^1..2^g2-log, default 22, 0 to skip); the setup's fixed-base kernels
// over 2^setup-log scalars and edge cases (default 12, 0 to skip), with --setup-bench 1 their
// timing at 2^20 and 2^24 G1 and 2^20 and 2^22 G2 points; --setup-only 1 runs those two alone.
// Exit 0 when everything matched, 1 on a mismatch, 77 without a GPU.
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "kernel_checks.hpp"
#include "setup_checks.hpp"

int main(int argc, char** argv) {
  using namespace stagehand::cuda::checks;
  unsigned max_log = 22, big = 26;
  unsigned g2_log = 22;  // the G2 MSM: 2^1..2^g2_log (0: none)
  bool msm_only = false;  // leave out the NTT and H checks (for MSM work that touches neither)
  unsigned setup_log = 12;  // the setup kernels' check: 2^setup_log scalars (0: none)
  bool setup_bench = false, setup_only = false;
  // Which checks run at 2^big: the NTT kinds, the H forms and the MSM (the CPU-side NTT references
  // take minutes at 2^26, so a call may split them).
  std::string big_parts = "ntt,h,msm";
  std::uint64_t seed = 20261130;
  if (argc > 1 && std::string(argv[1]) == "--probe") return 0;  // the script's "does it start here" test
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--max-log") max_log = std::atoi(argv[i + 1]);
    else if (flag == "--big") big = std::atoi(argv[i + 1]);
    else if (flag == "--seed") seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--msm-only") msm_only = std::atoi(argv[i + 1]) != 0;
    else if (flag == "--big-ntt" && std::atoi(argv[i + 1]) == 0) big_parts = "msm";
    else if (flag == "--big-parts") big_parts = argv[i + 1];
    else if (flag == "--g2-log") g2_log = std::atoi(argv[i + 1]);
    else if (flag == "--setup-log") setup_log = std::atoi(argv[i + 1]);
    else if (flag == "--setup-bench") setup_bench = std::atoi(argv[i + 1]) != 0;
    else if (flag == "--setup-only") setup_only = std::atoi(argv[i + 1]) != 0;
  }
  std::string why;
  if (!gpu_present(why)) {
    std::cout << "stagehand_kernel_check: skipped, " << why << std::endl;
    return 77;
  }
  Result total;
  auto add = [&](const Result& r) {
    total.passed += r.passed;
    total.failed += r.failed;
  };
  try {
    using stagehand::cuda::FixedBaseGroup;
    namespace setup = stagehand::cuda::setup_checks;
    if (setup_log != 0) {
      add(setup::check_fixed_base(std::cout, FixedBaseGroup::g1, setup_log, seed + 960));
      add(setup::check_fixed_base(std::cout, FixedBaseGroup::g2, setup_log, seed + 961));
    }
    if (setup_bench || setup_only) add(setup::bench(std::cout, 20, 24, 20, 22, 3));
    if (setup_only) {
      std::cout << "kernel check: " << total.passed << " passed, " << total.failed << " failed" << std::endl;
      return total.failed == 0 ? 0 : 1;
    }
    add(check_launchers(std::cout, seed));
    add(check_partition_launchers(std::cout, 12, seed + 40));
    add(check_partition_launchers(std::cout, 18, seed + 41));
    add(check_abc(std::cout, 1000, seed + 900));
    add(check_abc(std::cout, std::uint64_t{1} << 20, seed + 901));
    if (g2_log != 0) add(check_msm_g2(std::cout, g2_log, std::min(g2_log, 18u), seed + 950));
    add(check_msm_edge_cases(std::cout, seed));
    add(check_msm_tunings(std::cout, 14, seed + 700));
    if (!msm_only) {
      for (unsigned log = 1; log <= max_log; ++log) add(check_ntt(std::cout, log, seed + log));
      for (unsigned log = 1; log <= max_log; ++log) add(check_h(std::cout, log, seed + 100 + log));
    }
    for (unsigned log = 10; log <= max_log; ++log) add(check_msm(std::cout, log, seed + 200 + log, false));
    add(check_msm_streamed(std::cout, 16, 13, seed + 300));
    add(check_msm_streamed(std::cout, 20, 18, seed + 800));
    if (big != 0) {
      const auto wanted = [&](const std::string& part) {
        return ("," + big_parts + ",").find("," + part + ",") != std::string::npos;
      };
      if (!msm_only && wanted("ntt")) add(check_ntt(std::cout, big, seed + 400));
      if (!msm_only && wanted("h")) add(check_h(std::cout, big, seed + 500));
      if (wanted("msm")) add(check_msm(std::cout, big, seed + 600, false));
    }
  } catch (const std::exception& error) {
    std::cout << "FAIL  exception: " << error.what() << std::endl;
    ++total.failed;
  }
  std::cout << "kernel check: " << total.passed << " passed, " << total.failed << " failed" << std::endl;
  return total.failed == 0 ? 0 : 1;
}
