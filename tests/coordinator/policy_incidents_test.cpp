// The incidents of history through the whole coordinator on the simulator: they reproduce
// under the policies that had them (prestage without synchronise-and-trim, two-lock with three
// workers), and budgeted avoids every one.
#define BOOST_TEST_MODULE policy_incidents
#include <boost/test/unit_test.hpp>

#include "config/run_config.hpp"
#include "runner/sim_runner.hpp"
#include "support/policy_run.hpp"

#include <fmt/format.h>

using namespace stagehand;
using namespace stagehand::testing;

namespace {

// The incident's card and sizes: RTX 5070 Ti (16 GiB), domain 2^27 (4 GiB + 8 GiB pre-staged).
RunConfig incident_config(bool synchronize_and_trim) {
  return parse_run_config(fmt::format(R"(
[sim]
device_model = "rtx5070ti-16g"
duration_jitter = 0.02
[gpus]
vram_cap_gib = 0
[workload]
proofs = 1
partitions_per_proof = 10
domain_log2 = 27
[policy.prestage]
synchronize_device = {0}
trim_pool = {0}
)",
                                      synchronize_and_trim),
                          "incident.toml");
}

}  // namespace

BOOST_AUTO_TEST_CASE(prestage_without_synchronise_and_trim_is_the_dual_worker_incident) {
  auto result = run(incident_config(false), Policy::prestage);
  const auto& jobs = result.report.jobs;
  BOOST_CHECK(jobs.front().completed());
  for (std::size_t i = 1; i < jobs.size(); ++i) {
    BOOST_TEST(!jobs[i].completed(), "partition " << i);
    BOOST_TEST(jobs[i].error.find("out of memory") != std::string::npos, jobs[i].error);
    BOOST_CHECK(jobs[i].fell_back);  // ... and its fallback inside the lock ran out of memory too
  }
}

BOOST_AUTO_TEST_CASE(prestage_with_synchronise_and_trim_runs_clean) {
  auto result = run(incident_config(true), Policy::prestage);
  BOOST_CHECK_EQUAL(result.report.oom_count, 0u);
  BOOST_CHECK_EQUAL(failed(result.report), 0);
}

BOOST_AUTO_TEST_CASE(two_lock_with_three_workers_runs_out_of_memory_in_the_compute_phase) {
  auto result = run(incident_config(true), Policy::two_lock);
  BOOST_CHECK_GT(result.report.oom_count, 0u);
  int overtaken = 0;
  for (const auto& job : result.report.jobs) {
    // Its own upload waited for the compute lock: it was overtaken by one that had pre-staged...
    if (!job.completed() && job.fell_back && job.lock_acquired_ns >= 0) ++overtaken;
  }
  BOOST_CHECK_GT(overtaken, 0);
}

BOOST_AUTO_TEST_CASE(budgeted_never_runs_out_of_memory_on_the_incident_card) {
  for (bool synchronize_and_trim : {false, true}) {
    auto config = incident_config(synchronize_and_trim);
    for (int workers : {2, 3}) {
      config.coordinator.workers_per_device = workers;
      auto result = run(config, Policy::budgeted);
      BOOST_CHECK_EQUAL(result.report.oom_count, 0u);
      BOOST_CHECK_EQUAL(failed(result.report), 0);
    }
  }
}
