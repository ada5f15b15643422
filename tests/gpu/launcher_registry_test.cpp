// The CUDA launcher registry against the kernel ABI (label unit: no GPU needed, nothing is
// launched): every kernel in kernel::kAll has exactly one BLS12-381 launcher, the BN254 launchers
// cover the core kernels, the Groth16 program's and the setup's, once each, the registry names no
// kernel outside kAll, the lookup finds each table's own entry for its curve, and a curve's
// launcher refuses a launch over the other.
#define BOOST_TEST_MODULE launcher_registry
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>
#include <string>
#include <string_view>

#include "device/kernel_abi.hpp"
#include "launch/launchers.hpp"

using namespace stagehand::cuda;
namespace kernel = stagehand::kernel;
using kernel::Curve;

BOOST_AUTO_TEST_CASE(every_abi_kernel_has_exactly_one_bls12_381_launcher) {
  std::map<std::string_view, int> registered;
  for (std::string_view name : launcher_names(Curve::bls12_381)) ++registered[name];
  for (std::string_view name : kernel::kAll) {
    BOOST_TEST(registered[name] == 1, "BLS12-381 launchers registered for " << name << ": " << registered[name]);
    BOOST_TEST(find_launcher(name, Curve::bls12_381) != nullptr, name);
    BOOST_TEST((find_launcher(name) == find_launcher(name, Curve::bls12_381)), name << ": BLS12-381 is the default");
  }
}

BOOST_AUTO_TEST_CASE(bn254_launchers_cover_the_groth16_program_and_the_setup) {
  std::map<std::string_view, int> registered;
  for (std::string_view name : launcher_names(Curve::bn254)) ++registered[name];
  std::string listed;
  for (const auto& [name, count] : registered) {
    BOOST_TEST(count == 1, "BN254 launchers registered for " << name << ": " << count);
    listed += " " + std::string(name);
  }
  BOOST_TEST_MESSAGE("kernels with a BN254 launcher:" << listed);
  const char* const required[] = {kernel::ntt_domain_init,
                                  kernel::ntt_forward,
                                  kernel::ntt_inverse,
                                  kernel::coset_ntt,
                                  kernel::coset_intt,
                                  kernel::h_pointwise,
                                  kernel::h_polynomial_snarkjs,
                                  kernel::h_polynomial_classic,
                                  kernel::h_classic_product,
                                  kernel::h_classic_finish,
                                  kernel::msm_g1,
                                  kernel::groth16_h_evaluate,
                                  kernel::groth16_h_combine,
                                  kernel::groth16_msm_g1,
                                  kernel::groth16_msm_g2,
                                  kernel::groth16_msm_g1_batch,
                                  kernel::groth16_msm_g2_batch,
                                  kernel::groth16_msm_g1_reduce,
                                  kernel::groth16_msm_g2_reduce,
                                  kernel::groth16_precompute_g1,
                                  kernel::groth16_precompute_g2,
                                  kernel::groth16_msm_g1_precomputed,
                                  kernel::groth16_msm_g2_precomputed,
                                  kernel::groth16_abc,
                                  kernel::setup_fixed_base_g1,
                                  kernel::setup_fixed_base_g2};
  for (std::string_view name : required) {
    BOOST_TEST(registered.count(name) == 1, name << " has no BN254 launcher");
    BOOST_TEST(find_launcher(name, Curve::bn254) != nullptr, name);
    BOOST_TEST((find_launcher(name, Curve::bn254) != find_launcher(name, Curve::bls12_381)),
               name << ": BN254's launcher is its own");
  }
  // The partition program's kernels are BLS12-381's alone: a BN254 launch of them finds nothing.
  BOOST_TEST(find_launcher(kernel::ntt, Curve::bn254) == nullptr);
  BOOST_TEST(find_launcher(kernel::msm_batch, Curve::bn254) == nullptr);
}

BOOST_AUTO_TEST_CASE(no_launcher_for_a_kernel_outside_the_abi) {
  for (const Curve curve : {Curve::bls12_381, Curve::bn254}) {
    for (std::string_view name : launcher_names(curve)) {
      BOOST_TEST(kernel::is_known(name), name << " (" << kernel::curve_name(curve) << ") is not in kernel::kAll");
    }
    BOOST_TEST(find_launcher("no_such_kernel", curve) == nullptr);
  }
  BOOST_TEST(launcher_names(Curve::bls12_381).size() == kernel::kAll.size());
}

BOOST_AUTO_TEST_CASE(lookup_finds_each_tables_own_entry) {
  for (auto table :
       {core_launchers(), batch_addition_launchers(), partition_launchers(), groth16_launchers(), setup_launchers()}) {
    BOOST_TEST(!table.empty());
    for (const LauncherEntry& entry : table) {
      BOOST_TEST(entry.launcher != nullptr, entry.name);
      BOOST_TEST((find_launcher(entry.name, entry.curve) == &entry.launcher),
                 entry.name << " (" << kernel::curve_name(entry.curve) << ")");
    }
  }
}

// A curve's launcher refuses a launch over the other curve before it reads anything (its bytes are
// laid out for the other curve): every kernel with an instance for both curves, both ways.
BOOST_AUTO_TEST_CASE(a_launcher_refuses_a_launch_over_the_other_curve) {
  int checked = 0;
  for (std::string_view name : launcher_names(Curve::bn254)) {
    for (const auto [own, other] :
         {std::pair{Curve::bls12_381, Curve::bn254}, std::pair{Curve::bn254, Curve::bls12_381}}) {
      stagehand::KernelLaunch launch{std::string(name), 1, {}, {}, {}};
      launch.curve = other;
      BOOST_CHECK_THROW((*find_launcher(name, own))(launch, nullptr), std::invalid_argument);
      ++checked;
    }
  }
  BOOST_TEST(checked == 2 * 26);
}
