// PoRep partitions as timing jobs of the Groth16 program (kind "groth16", key "porep-partition"):
// the partition's sets and witness as the key's, and the configuration errors of such a key.
#define BOOST_TEST_MODULE porep_timing_jobs
#include <boost/test/unit_test.hpp>

#include "config/run_config.hpp"
#include "runner/sim_runner.hpp"
#include "support/policy_run.hpp"

#include <string>

using namespace stagehand;
using namespace stagehand::testing;

// A PoRep partition's key on the Groth16 program: the partition's sets as the key's five (the
// tail's points shared by A, B1 and C), a, b and c from the host (it has no constraint matrix, so
// another a/b/c step is an error naming the key), each partition a job of its proof.
BOOST_AUTO_TEST_CASE(porep_partitions_run_as_jobs_of_the_groth16_program) {
  auto config = parse_run_config(R"([sim]
device_model = "h200-measured"
[gpus]
vram_cap_gib = 16
[workload]
kind = "groth16"
key = "porep-partition"
proofs = 2
partitions_per_proof = 3
domain_log2 = 20
)",
                                 "porep.toml");
  BOOST_TEST((config.groth16.abc_step == groth16::AbcStep::host));
  BOOST_CHECK_EQUAL(config.jobs(), 6);
  const auto jobs = groth16_timing_jobs(config);
  const auto& shape = config.workload.shape;
  const auto& points = jobs.sizes.set_points;
  BOOST_CHECK_EQUAL(points[groth16::kSetH], shape.h_points());
  BOOST_CHECK_EQUAL(points[groth16::kSetB2], shape.b_g2_points());
  BOOST_CHECK_EQUAL(points[groth16::kSetA] + points[groth16::kSetB1] + points[groth16::kSetC],
                    shape.a_points() + shape.b_g1_points() + shape.l_points() + shape.tail_points());
  BOOST_CHECK_GE(points[groth16::kSetA], shape.a_points());
  BOOST_CHECK_GE(points[groth16::kSetB1], shape.b_g1_points());
  BOOST_CHECK_GE(points[groth16::kSetC], shape.l_points());
  for (auto set : {groth16::kSetA, groth16::kSetB1, groth16::kSetB2}) BOOST_CHECK_LE(points[set], jobs.sizes.n_vars);
  BOOST_CHECK_LE(points[groth16::kSetC] + jobs.sizes.n_public + 1, jobs.sizes.n_vars);
  // The witness: B2's scalars bits, and past them as many full scalars over A, B1 and C as the
  // tail has points.
  BOOST_CHECK_EQUAL(jobs.bits_below, points[groth16::kSetB2]);
  BOOST_CHECK_EQUAL(jobs.full_scalars(0, points[groth16::kSetB2]), 0u);
  const auto full = jobs.full_scalars(0, points[groth16::kSetA]) + jobs.full_scalars(0, points[groth16::kSetB1]) +
                    jobs.full_scalars(1 + jobs.sizes.n_public, points[groth16::kSetC]);
  BOOST_CHECK_LE(full > shape.tail_points() ? full - shape.tail_points() : shape.tail_points() - full, 2u);
  const auto report = run(config, Policy::budgeted).report;
  BOOST_CHECK_EQUAL(report.partitions, 6);
  BOOST_CHECK_EQUAL(report.partitions_completed, 6);
  BOOST_CHECK_EQUAL(report.proofs, 2);

  const std::string device_abc = "[workload]\nkind = \"groth16\"\nkey = \"porep-partition\"\nabc = \"device\"\n";
  BOOST_TEST(
      config_error_of(device_abc)
              .find("deploy.toml:4: key 'workload.abc': key = \"porep-partition\" has no constraint matrix") == 0,
      config_error_of(device_abc));
  BOOST_TEST(config_error_of("[workload]\nkind = \"groth16\"\npartitions_per_proof = 3\n")
                 .find("deploy.toml:3: key 'workload.partitions_per_proof'") == 0);
  BOOST_TEST(config_error_of("[workload]\nkind = \"groth16\"\nkey = \"porep\"\n")
                 .find("deploy.toml:3: key 'workload.key': 'porep' is not one of") == 0);
  BOOST_TEST(config_error_of("[workload]\nkind = \"groth16\"\nfull_scalar_share = 1.5\n")
                 .find("deploy.toml:3: key 'workload.full_scalar_share'") == 0);
}
