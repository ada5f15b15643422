// batch_addition_g1/g2 on the GPU against the CPU reference (label gpu), at the quick sizes (the
// 2^20 sweep and the timing are scripts/gpu/batch.sh). Also: both names resolve through
// the launcher table the CUDA Device uses. Without a usable CUDA device the program says so and
// exits 77 before Boost.Test starts: ctest shows "skipped".
#define BOOST_TEST_MODULE gpu_batch_addition
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>

#include "batch_checks.hpp"
#include "device/kernel_abi.hpp"
#include "launch/launchers.hpp"

using namespace stagehand::cuda;
using namespace stagehand::cuda::batch_checks;
namespace kernel = stagehand::kernel;

BOOST_AUTO_TEST_CASE(registered_in_the_launcher_table) {
  for (const char* name : {kernel::batch_addition_g1, kernel::batch_addition_g2}) {
    BOOST_TEST(find_launcher(name) != nullptr, name);
    const auto table = batch_addition_launchers();
    const auto entry =
        std::find_if(table.begin(), table.end(), [name](const LauncherEntry& e) { return e.name == name; });
    BOOST_TEST_REQUIRE((entry != table.end()), name);
    BOOST_TEST((find_launcher(name) == &entry->launcher), name);
    const auto names = launcher_names();
    BOOST_TEST((std::find(names.begin(), names.end(), name) != names.end()), name);
  }
}

BOOST_AUTO_TEST_CASE(g1_matches_reference) {
  std::ostringstream log;
  const Result result = check_batch_addition(log, BatchGroup::g1, 14, 3);
  BOOST_TEST(result.failed == 0, log.str());
  BOOST_TEST(result.passed > 20);
}

BOOST_AUTO_TEST_CASE(g2_matches_reference) {
  std::ostringstream log;
  const Result result = check_batch_addition(log, BatchGroup::g2, 14, 4);
  BOOST_TEST(result.failed == 0, log.str());
  BOOST_TEST(result.passed > 20);
}

int main(int argc, char* argv[]) {
  std::string why;
  if (!gpu_present(why)) {
    std::cout << "gpu_batch_addition_test: skipped, " << why << std::endl;
    return 77;
  }
  return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
