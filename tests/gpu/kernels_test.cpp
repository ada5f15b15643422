// The GPU kernels against the CPU reference (label gpu). The sizes here are the quick ones (the
// full sweep to 2^22 and the 2^26 runs are scripts/gpu/kernels.sh). Without a usable
// CUDA device the program says so and exits 77 before Boost.Test starts: ctest shows "skipped".
#define BOOST_TEST_MODULE gpu_kernels
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include <iostream>
#include <sstream>
#include <string>

#include "bn254_checks.hpp"
#include "kernel_checks.hpp"
#include "setup_checks.hpp"

using namespace stagehand::cuda::checks;

namespace {
void expect_clean(const Result& result, const std::string& log) {
  BOOST_TEST(result.failed == 0, log);
  BOOST_TEST(result.passed > 0);
}
}  // namespace

BOOST_AUTO_TEST_CASE(launchers_resolve_and_run) {
  std::ostringstream log;
  expect_clean(check_launchers(log, 1), log.str());
  expect_clean(check_partition_launchers(log, 12, 2), log.str());
}

BOOST_AUTO_TEST_CASE(ntt_matches_reference_2_to_16) {
  for (unsigned log_size = 1; log_size <= 16; ++log_size) {
    std::ostringstream log;
    expect_clean(check_ntt(log, log_size, 10 + log_size), log.str());
  }
}

BOOST_AUTO_TEST_CASE(h_polynomial_matches_reference_2_to_14) {
  for (unsigned log_size = 1; log_size <= 14; ++log_size) {
    std::ostringstream log;
    expect_clean(check_h(log, log_size, 40 + log_size), log.str());
  }
}

BOOST_AUTO_TEST_CASE(msm_matches_reference_2_10_to_2_14) {
  for (unsigned log_size = 10; log_size <= 14; ++log_size) {
    std::ostringstream log;
    expect_clean(check_msm(log, log_size, 70 + log_size, true), log.str());
  }
}

BOOST_AUTO_TEST_CASE(msm_edge_cases) {
  std::ostringstream log;
  expect_clean(check_msm_edge_cases(log, 5), log.str());
}

BOOST_AUTO_TEST_CASE(msm_tunings_and_heavy_buckets) {
  std::ostringstream log;
  expect_clean(check_msm_tunings(log, 12, 11), log.str());
}

BOOST_AUTO_TEST_CASE(msm_streamed_batches) {
  std::ostringstream log;
  expect_clean(check_msm_streamed(log, 14, 11, 9), log.str());
}

BOOST_AUTO_TEST_CASE(setup_fixed_base_matches_reference) {
  for (auto group : {stagehand::cuda::FixedBaseGroup::g1, stagehand::cuda::FixedBaseGroup::g2}) {
    std::ostringstream log;
    expect_clean(stagehand::cuda::setup_checks::check_fixed_base(log, group, 10, 13), log.str());
  }
}

// BN254's instances at the quick sizes (the sweep to 2^20 is scripts/gpu/bn254.sh).
BOOST_AUTO_TEST_CASE(bn254_kernels_match_reference) {
  namespace bn254 = stagehand::cuda::bn254_checks;
  for (unsigned log_size = 1; log_size <= 12; ++log_size) {
    std::ostringstream log;
    Result result;
    result.add(bn254::check_ntt(log, log_size, 100 + log_size));
    result.add(bn254::check_h(log, log_size, 200 + log_size));
    result.add(bn254::check_msm_g1(log, log_size, 300 + log_size));
    result.add(bn254::check_msm_g2(log, log_size, 400 + log_size));
    expect_clean(result, log.str());
  }
  std::ostringstream log;
  Result result;
  result.add(bn254::check_abc(log, 1000, 500));
  result.add(bn254::check_fixed_base(log, 10, 600));
  result.add(bn254::check_wrong_curve(log));
  expect_clean(result, log.str());
}

int main(int argc, char* argv[]) {
  std::string why;
  if (!gpu_present(why)) {
    std::cout << "gpu_kernels_test: skipped, " << why << std::endl;
    return 77;
  }
  return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
