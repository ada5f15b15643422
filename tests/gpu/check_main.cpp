// stagehand_kernel_check: the whole GPU correctness check in one run, for scripts/gpu/kernels.sh.
//   stagehand_kernel_check [--max-log N] [--big LOG] [--seed S] [--msm-only 1] [--big-ntt 0]
//                          [--big-parts ntt,h,msm] [--g2-log N] [--setup-log N] [--setup-bench 0|1]
//                          [--setup-only 1] [--only PARTS] [--tunings-log N] [--streamed-log N]
//                          [--bn254-log N]
// NTT, H forms: 2^1..2^max-log (default 22); MSM: 2^10..2^max-log; then one run of each at 2^big
// (default 26, 0 to skip; --big-parts picks which, --big-ntt 0 is "msm"); the Groth16 program's
// groth16_abc and G2 MSM (2^1..2^g2-log, default 22, 0 to skip); the setup's fixed-base kernels
// over 2^setup-log scalars and edge cases (default 12, 0 to skip), with --setup-bench 1 their
// timing at 2^20 and 2^24 G1 and 2^20 and 2^22 G2 points; --setup-only 1 runs those two alone.
// Exit 0 when everything matched, 1 on a mismatch, 77 without a GPU.
// --only runs only the parts named (comma-separated, in this order): setup, launchers, partition,
// abc, groth16-h, g2, groth16-streamed, msm-edge, msm-precomputed, msm-tunings (at 2^tunings-log, default 14), ntt, h, msm, msm-streamed (2^streamed-log
// in batches of 2^(streamed-log - 3), default 16), msm-streamed-20 (2^20 in batches of 2^18), big,
// then BN254's (bn254_checks.hpp): bn254-ntt, bn254-h, bn254-msm-g1, bn254-msm-g2 (each at
// 2^1..2^bn254-log, default 20, 0 to skip), bn254-abc, bn254-setup, bn254-wrong-curve.
// A slow tool (compute-sanitizer) can then take one part at a time, at small sizes.
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <iterator>
#include <string>

#include "bn254_checks.hpp"
#include "kernel_checks.hpp"
#include "setup_checks.hpp"

namespace {

using namespace stagehand::cuda::checks;

struct CheckOptions {
  unsigned max_log = 22, big = 26;
  unsigned g2_log = 22;     // the G2 MSM: 2^1..2^g2_log (0: none)
  bool msm_only = false;    // leave out the NTT and H checks (for MSM work that touches neither)
  unsigned setup_log = 12;  // the setup kernels' check: 2^setup_log scalars (0: none)
  bool setup_bench = false, setup_only = false;
  // Which checks run at 2^big: the NTT kinds, the H forms and the MSM (the CPU-side NTT references
  // take minutes at 2^26, so a call may split them).
  std::string big_parts = "ntt,h,msm";
  std::string only;  // empty: every part
  unsigned tunings_log = 14, streamed_log = 16;
  unsigned bn254_log = 20;  // the BN254 parts' sizes: 2^1..2^bn254_log (0: none of those)
  std::uint64_t seed = 20261130;
};

CheckOptions parse_options(int argc, char** argv) {
  CheckOptions o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--max-log")
      o.max_log = std::atoi(argv[i + 1]);
    else if (flag == "--big")
      o.big = std::atoi(argv[i + 1]);
    else if (flag == "--seed")
      o.seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--msm-only")
      o.msm_only = std::atoi(argv[i + 1]) != 0;
    else if (flag == "--big-ntt" && std::atoi(argv[i + 1]) == 0)
      o.big_parts = "msm";
    else if (flag == "--big-parts")
      o.big_parts = argv[i + 1];
    else if (flag == "--g2-log")
      o.g2_log = std::atoi(argv[i + 1]);
    else if (flag == "--setup-log")
      o.setup_log = std::atoi(argv[i + 1]);
    else if (flag == "--setup-bench")
      o.setup_bench = std::atoi(argv[i + 1]) != 0;
    else if (flag == "--setup-only")
      o.setup_only = std::atoi(argv[i + 1]) != 0;
    else if (flag == "--only")
      o.only = argv[i + 1];
    else if (flag == "--tunings-log")
      o.tunings_log = std::atoi(argv[i + 1]);
    else if (flag == "--streamed-log")
      o.streamed_log = std::atoi(argv[i + 1]);
    else if (flag == "--bn254-log")
      o.bn254_log = std::atoi(argv[i + 1]);
  }
  return o;
}

bool listed(const std::string& list, const std::string& part) {
  return ("," + list + ",").find("," + part + ",") != std::string::npos;
}

// False, with the reason on stderr, for options that would check nothing or too little.
bool options_valid(const CheckOptions& o) {
  static const char* const kParts[] = {"setup",
                                       "launchers",
                                       "partition",
                                       "abc",
                                       "groth16-h",
                                       "g2",
                                       "groth16-streamed",
                                       "msm-edge",
                                       "msm-precomputed",
                                       "msm-tunings",
                                       "ntt",
                                       "h",
                                       "msm",
                                       "msm-streamed",
                                       "msm-streamed-20",
                                       "big",
                                       "bn254-ntt",
                                       "bn254-h",
                                       "bn254-msm-g1",
                                       "bn254-msm-g2",
                                       "bn254-abc",
                                       "bn254-setup",
                                       "bn254-wrong-curve"};
  if (!o.only.empty()) {
    // A misspelt part would otherwise run nothing and pass.
    std::string rest = o.only + ",";
    for (std::size_t start = 0, comma; (comma = rest.find(',', start)) != std::string::npos; start = comma + 1) {
      const auto part = rest.substr(start, comma - start);
      if (std::find(std::begin(kParts), std::end(kParts), part) == std::end(kParts)) {
        std::cerr << "stagehand_kernel_check: --only: no part '" << part << "'" << std::endl;
        return false;
      }
    }
  }
  if (o.bn254_log > 20) {
    std::cerr << "stagehand_kernel_check: --bn254-log must be at most 20 (the CPU references' sizes)" << std::endl;
    return false;
  }
  if (o.streamed_log < 4) {
    std::cerr << "stagehand_kernel_check: --streamed-log must be at least 4" << std::endl;
    return false;
  }
  return true;
}

bool selected(const CheckOptions& o, const char* part) { return o.only.empty() || listed(o.only, part); }

void check_setup(const CheckOptions& o, Result& total) {
  using stagehand::cuda::FixedBaseGroup;
  namespace setup = stagehand::cuda::setup_checks;
  if (selected(o, "setup") && o.setup_log != 0) {
    total.add(setup::check_fixed_base(std::cout, FixedBaseGroup::g1, o.setup_log, o.seed + 960));
    total.add(setup::check_fixed_base(std::cout, FixedBaseGroup::g2, o.setup_log, o.seed + 961));
  }
  if (selected(o, "setup") && (o.setup_bench || o.setup_only)) total.add(setup::bench(std::cout, 20, 24, 20, 22, 3));
}

// The parts after the setup's, in --only's order.
void check_kernels(const CheckOptions& o, Result& total) {
  const auto seed = o.seed;
  const auto run = [&](const char* part) { return selected(o, part); };
  const auto add = [&](const Result& r) { total.add(r); };
  if (run("launchers")) add(check_launchers(std::cout, seed));
  if (run("partition")) {
    add(check_partition_launchers(std::cout, 12, seed + 40));
    add(check_partition_launchers(std::cout, 18, seed + 41));
  }
  if (run("abc")) {
    add(check_abc(std::cout, 1000, seed + 900));
    add(check_abc(std::cout, std::uint64_t{1} << 20, seed + 901));
  }
  if (run("groth16-h")) {
    for (unsigned log : {1u, 10u, 16u}) add(check_groth16_h(std::cout, log, seed + 920 + log));
  }
  if (run("g2") && o.g2_log != 0) add(check_msm_g2(std::cout, o.g2_log, std::min(o.g2_log, 18u), seed + 950));
  if (run("groth16-streamed")) add(check_streamed_groth16_msms(std::cout, seed + 970));
  if (run("msm-edge")) add(check_msm_edge_cases(std::cout, seed));
  if (run("msm-precomputed")) {
    add(check_msm_precomputed(std::cout, seed + 980));
    add(check_precomputed_groth16_msms(std::cout, seed + 990));
  }
  if (run("msm-tunings")) add(check_msm_tunings(std::cout, o.tunings_log, seed + 700));
  if (!o.msm_only) {
    if (run("ntt"))
      for (unsigned log = 1; log <= o.max_log; ++log) add(check_ntt(std::cout, log, seed + log));
    if (run("h"))
      for (unsigned log = 1; log <= o.max_log; ++log) add(check_h(std::cout, log, seed + 100 + log));
  }
  if (run("msm"))
    for (unsigned log = 10; log <= o.max_log; ++log) add(check_msm(std::cout, log, seed + 200 + log, false));
  if (run("msm-streamed")) add(check_msm_streamed(std::cout, o.streamed_log, o.streamed_log - 3, seed + 300));
  if (run("msm-streamed-20")) add(check_msm_streamed(std::cout, 20, 18, seed + 800));
  if (o.big != 0 && run("big")) {
    const auto wanted = [&](const std::string& part) { return listed(o.big_parts, part); };
    if (!o.msm_only && wanted("ntt")) add(check_ntt(std::cout, o.big, seed + 400));
    if (!o.msm_only && wanted("h")) add(check_h(std::cout, o.big, seed + 500));
    if (wanted("msm")) add(check_msm(std::cout, o.big, seed + 600, false));
  }
}

// BN254's parts (bn254_checks.hpp), in --only's order.
void check_bn254(const CheckOptions& o, Result& total) {
  namespace bn254 = stagehand::cuda::bn254_checks;
  const auto seed = o.seed + 5000;
  const auto sweep = [&](const char* part, auto check) {
    if (!selected(o, part)) return;
    for (unsigned log = 1; log <= o.bn254_log; ++log) total.add(check(std::cout, log, seed + 100 * log));
  };
  sweep("bn254-ntt", bn254::check_ntt);
  sweep("bn254-h", bn254::check_h);
  sweep("bn254-msm-g1", bn254::check_msm_g1);
  sweep("bn254-msm-g2", bn254::check_msm_g2);
  if (selected(o, "bn254-abc")) {
    total.add(bn254::check_abc(std::cout, 1000, seed + 1));
    total.add(bn254::check_abc(std::cout, std::uint64_t{1} << 20, seed + 2));
  }
  if (selected(o, "bn254-setup")) {
    for (unsigned log : {1u, 12u, 16u}) total.add(bn254::check_fixed_base(std::cout, log, seed + 10 + log));
  }
  if (selected(o, "bn254-wrong-curve")) total.add(bn254::check_wrong_curve(std::cout));
}

int report(const Result& total) {
  std::cout << "kernel check: " << total.passed << " passed, " << total.failed << " failed" << std::endl;
  return total.failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--probe") return 0;  // the script's "does it start here" test
  const auto options = parse_options(argc, argv);
  if (!options_valid(options)) return 2;
  std::string why;
  if (!gpu_present(why)) {
    std::cout << "stagehand_kernel_check: skipped, " << why << std::endl;
    return 77;
  }
  Result total;
  try {
    check_setup(options, total);
    if (options.setup_only) return report(total);
    check_kernels(options, total);
    check_bn254(options, total);
  } catch (const std::exception& error) {
    std::cout << "FAIL  exception: " << error.what() << std::endl;
    ++total.failed;
  }
  if (total.passed + total.failed == 0) {  // e.g. --only g2 with --g2-log 0: nothing was checked
    std::cout << "FAIL  no check ran" << std::endl;
    ++total.failed;
  }
  return report(total);
}
