// The CUDA launcher registry against the kernel ABI (label unit: no GPU needed, nothing is
// launched): every kernel in kernel::kAll has exactly one launcher, the registry names no kernel
// outside kAll, and the lookup finds each table's own entry.
#define BOOST_TEST_MODULE launcher_registry
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>

#include "device/kernel_abi.hpp"
#include "launch/launchers.hpp"

using namespace stagehand::cuda;
namespace kernel = stagehand::kernel;

BOOST_AUTO_TEST_CASE(every_abi_kernel_has_exactly_one_launcher) {
  std::map<std::string_view, int> registered;
  for (std::string_view name : launcher_names()) ++registered[name];
  for (std::string_view name : kernel::kAll) {
    BOOST_TEST(registered[name] == 1, "launchers registered for " << name << ": " << registered[name]);
    BOOST_TEST(find_launcher(name) != nullptr, name);
  }
}

BOOST_AUTO_TEST_CASE(no_launcher_for_a_kernel_outside_the_abi) {
  for (std::string_view name : launcher_names()) BOOST_TEST(kernel::is_known(name), name << " is not in kernel::kAll");
  BOOST_TEST(launcher_names().size() == kernel::kAll.size());
  BOOST_TEST(find_launcher("no_such_kernel") == nullptr);
}

BOOST_AUTO_TEST_CASE(lookup_finds_each_tables_own_entry) {
  for (auto table :
       {core_launchers(), batch_addition_launchers(), partition_launchers(), groth16_launchers(), setup_launchers()}) {
    BOOST_TEST(!table.empty());
    for (const LauncherEntry& entry : table) {
      BOOST_TEST(entry.launcher != nullptr, entry.name);
      BOOST_TEST((find_launcher(entry.name) == &entry.launcher), entry.name);
    }
  }
}
