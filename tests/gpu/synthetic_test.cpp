// The synthetic proving-key generator on the GPU against the CPU reference (label gpu), at the
// quick sizes (the 2^20 checks and the timing are scripts/gpu/synthetic.sh). Without a
// usable CUDA device the program says so and exits 77 before Boost.Test starts: ctest shows
// "skipped".
#define BOOST_TEST_MODULE gpu_synthetic
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include <iostream>
#include <sstream>
#include <string>

#include "synthetic_checks.hpp"

using namespace stagehand::cuda;
using namespace stagehand::cuda::synthetic_checks;

namespace {
void expect_clean(const Result& result, const std::ostringstream& log, int at_least) {
  BOOST_TEST(result.failed == 0, log.str());
  BOOST_TEST(result.passed >= at_least);
}
}  // namespace

BOOST_AUTO_TEST_CASE(g1_points) {
  std::ostringstream log;
  expect_clean(check_points(log, SyntheticGroup::g1, 14), log, 50);
}

BOOST_AUTO_TEST_CASE(g2_points) {
  std::ostringstream log;
  expect_clean(check_points(log, SyntheticGroup::g2, 12), log, 50);
}

BOOST_AUTO_TEST_CASE(scalars) {
  std::ostringstream log;
  expect_clean(check_scalars(log, 16), log, 30);
}

BOOST_AUTO_TEST_CASE(tail_items) {
  std::ostringstream log;
  expect_clean(check_tail_items(log, 14), log, 10);
}

BOOST_AUTO_TEST_CASE(arguments) {
  std::ostringstream log;
  expect_clean(check_arguments(log), log, 9);
}

int main(int argc, char* argv[]) {
  std::string why;
  if (!gpu_present(why)) {
    std::cout << "gpu_synthetic_test: skipped, " << why << std::endl;
    return 77;
  }
  return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
