// The simulator's kernels against the kernel ABI (src/device/kernel_abi.hpp): the functional
// simulator's host functions name only kernels of kernel::kAll and cover the two families it
// claims (the Groth16 program's groth16_* kernels, the setup's setup_* and the assignment program's
// ntt_domain_init, h_polynomial_classic and its two halves), over BN254 exactly kernel::kBn254Kernels, and every
// shipped device model times only kernels of kAll.
#define BOOST_TEST_MODULE sim_kernel_registry
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <set>
#include <string>
#include <string_view>

#include "device/kernel_abi.hpp"
#include "sim/device_model.hpp"
#include "sim/kernels/functional_kernels.hpp"
#include "sim/sim_system.hpp"

namespace sim = stagehand::sim;
namespace kernel = stagehand::kernel;

namespace {

bool claimed_by_the_functional_simulator(std::string_view name) {
  return name.starts_with("groth16_") || name.starts_with("setup_") || name == kernel::ntt_domain_init ||
         name == kernel::h_polynomial_classic || name == kernel::h_classic_product || name == kernel::h_classic_finish;
}

}  // namespace

BOOST_AUTO_TEST_CASE(functional_kernels_match_the_abi) {
  sim::SimSystem system(sim::SimOptions{.functional = true});
  sim::register_functional_kernels(system);
  const auto names = system.kernel_function_names();
  const std::set<std::string> registered(names.begin(), names.end());
  BOOST_TEST(registered.size() == names.size());
  for (const std::string& name : registered) {
    BOOST_TEST(kernel::is_known(name), name << " is not in kernel::kAll");
    BOOST_TEST(claimed_by_the_functional_simulator(name), name << " is outside the families the simulator claims");
  }
  for (std::string_view name : kernel::kAll) {
    if (!claimed_by_the_functional_simulator(name)) continue;
    BOOST_TEST(registered.contains(std::string(name)), name << " has no host function in the functional simulator");
  }
}

// Over BN254 the host functions are exactly the kernels the ABI instantiates for it
// (kernel::kBn254Kernels: the Groth16 program's and the setup's).
BOOST_AUTO_TEST_CASE(bn254_host_functions_are_the_abis_bn254_kernels) {
  sim::SimSystem system(sim::SimOptions{.functional = true});
  sim::register_functional_kernels(system);
  const auto names = system.kernel_function_names(kernel::Curve::bn254);
  const std::set<std::string> registered(names.begin(), names.end());
  const std::set<std::string> declared(kernel::kBn254Kernels.begin(), kernel::kBn254Kernels.end());
  BOOST_TEST(registered == declared, registered.size() << " registered, " << declared.size() << " declared");
  for (std::string_view name : kernel::kAll) {
    BOOST_TEST(kernel::has_instance(name, kernel::Curve::bn254) == declared.contains(std::string(name)), name);
  }
}

BOOST_AUTO_TEST_CASE(shipped_device_models_time_only_abi_kernels) {
  int models = 0;
  for (const auto& file : std::filesystem::directory_iterator(STAGEHAND_SOURCE_DIR "/config/devices")) {
    if (file.path().extension() != ".toml") continue;
    const sim::DeviceModel model = sim::load_device_model(file.path());
    ++models;
    BOOST_TEST(!model.kernels.empty(), file.path());
    for (const auto& [name, cost] : model.kernels) BOOST_TEST(kernel::is_known(name), name << " in " << file.path());
  }
  BOOST_TEST(models > 0);
}
