// A run configuration's errors name the file, the line and the key: unknown keys and values, values
// out of range, more partitions than a run may hold, a directory, a VRAM cap the work cannot meet.
#define BOOST_TEST_MODULE run_config_errors
#include <boost/test/unit_test.hpp>

#include "config/config_table.hpp"
#include "config/run_config.hpp"
#include "support/policy_run.hpp"

#include <filesystem>
#include <string>

using namespace stagehand;
using namespace stagehand::testing;

BOOST_AUTO_TEST_CASE(bad_configuration_names_the_file_line_and_key) {
  BOOST_TEST(config_error_of("[gpus]\nworkers_per_devices = 2\n") ==
             "deploy.toml:2: unknown key 'gpus.workers_per_devices'");
  BOOST_TEST(config_error_of("[run]\npolicies = [\"fifo\"]\n")
                     .find("deploy.toml:2: key 'run.policies': unknown policy 'fifo'") == 0,
             config_error_of("[run]\npolicies = [\"fifo\"]\n"));
  BOOST_TEST(config_error_of("[workload]\ndomain_log2 = 30\n") ==
             "deploy.toml:2: key 'workload.domain_log2': 30 is out of range [10, 27]");
  BOOST_TEST(config_error_of("[host_staging]\nmode = \"mmap\"\n") ==
             "deploy.toml:2: key 'host_staging.mode': 'mmap' is not one of: pinned-pool, register");
  BOOST_TEST(config_error_of("[host_staging]\nhost_budget_gib = 0\n") ==
             "deploy.toml:2: key 'host_staging.host_budget_gib': 0 is out of range [0.001, 1048576]");
  BOOST_TEST(config_error_of("[sim]\nfunctional = 1\n") ==
             "deploy.toml:2: key 'sim.functional': expected true or false, found an integer");
  BOOST_TEST(config_error_of("[gpus]\noverlap_finish = \"yes\"\n") ==
             "deploy.toml:2: key 'gpus.overlap_finish': expected true or false, found a string");
}

// The synthetic circuit's curve: BLS12-381's or BN254's; a PoRep partition's key is BLS12-381's alone.
BOOST_AUTO_TEST_CASE(a_groth16_workloads_curve_is_one_of_the_two_and_bls12_381_for_porep_partitions) {
  const std::string groth16 = "[workload]\nkind = \"groth16\"\n";
  BOOST_TEST((parse_run_config(groth16, "deploy.toml").groth16.curve == kernel::Curve::bls12_381));
  BOOST_TEST((parse_run_config(groth16 + "curve = \"bn254\"\n", "deploy.toml").groth16.curve == kernel::Curve::bn254));
  BOOST_TEST(config_error_of(groth16 + "curve = \"bn128\"\n") ==
             "deploy.toml:3: key 'workload.curve': 'bn128' is not one of: bls12_381, bn254");
  const auto porep = groth16 + "key = \"porep-partition\"\ncurve = \"bn254\"\n";
  BOOST_TEST(config_error_of(porep).find("deploy.toml:4: key 'workload.curve': key = \"porep-partition\"") == 0,
             config_error_of(porep));
}

// Regression: proofs x partitions_per_proof overflowed the int that counts the jobs (UBSan in
// run_command.cpp and porep_workload.hpp); 2e9 jobs ended in bad_alloc naming nothing.
BOOST_AUTO_TEST_CASE(too_many_partitions_are_an_error_naming_the_key) {
  BOOST_TEST(config_error_of("[workload]\nproofs = 100000\npartitions_per_proof = 100000\n") ==
             "deploy.toml:3: key 'workload.partitions_per_proof': 100000 proofs x 100000 partitions = 10000000000 "
             "partitions, more "
             "than the 100000 a run may hold");
  BOOST_TEST(config_error_of("[workload]\nproofs = 50000\n")
                     .find("deploy.toml:2: key 'workload.proofs': 50000 proofs x 10 partitions") == 0,
             config_error_of("[workload]\nproofs = 50000\n"));
  BOOST_TEST(config_error_of("[workload]\nproofs = 1000\npartitions_per_proof = 100\n") == "no error");
}

// Regression: `--config DIR` was read as an empty configuration.
BOOST_AUTO_TEST_CASE(a_directory_as_the_configuration_is_an_error_naming_it) {
  const auto dir = std::filesystem::temp_directory_path();
  try {
    load_run_config(dir);
    BOOST_ERROR("no error");
  } catch (const ConfigError& error) {
    BOOST_TEST(std::string(error.what()) == dir.string() + ": is a directory, not a TOML file");
  }
}

// Regression: a cap too small for the work is an error naming the file, line and key (a cap
// above the card: tests/backend/backend_open_test.cpp).
BOOST_AUTO_TEST_CASE(a_vram_cap_the_work_cannot_meet_names_the_key) {
  auto config = parse_run_config("[gpus]\nvram_cap_gib = 0.5\n", "deploy.toml");
  BOOST_CHECK_NO_THROW(check_vram_cap_fits(config, kGiB / 2, "a proof"));
  try {
    check_vram_cap_fits(config, kGiB, "a proof");
    BOOST_ERROR("no error");
  } catch (const ConfigError& error) {
    BOOST_TEST(std::string(error.what()) ==
                   "deploy.toml:2: key 'gpus.vram_cap_gib': a cap of 512.0 MiB is too small: a proof needs 1.00 GiB "
                   "of device memory",
               error.what());
  }
}
