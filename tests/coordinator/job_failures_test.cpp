// Failures through the whole coordinator on the simulator: a job that fails half way releases
// everything it held, and a kernel that faults loses its GPU, whose jobs the other GPU takes.
#define BOOST_TEST_MODULE job_failures
#include <boost/test/unit_test.hpp>

#include "device/kernel_abi.hpp"
#include "config/run_config.hpp"
#include "runner/sim_runner.hpp"
#include "support/policy_run.hpp"

#include <fmt/format.h>

using namespace stagehand;
using namespace stagehand::testing;

// The job's own failure, its GPU going on: FaultyDevice's injected kernel failure (a simulated
// kernel that faults loses the GPU instead, as the next test shows).
BOOST_AUTO_TEST_CASE(a_job_failing_half_way_releases_everything_it_held) {
  auto config = load_run_config("config/default.toml");
  config.workload.proofs = 1;
  SimulatedRunOptions options;
  options.faults.kernel_error_name = kernel::msm_batch;
  options.faults.kernel_error_occurrence = 12;  // in the second partition's H MSM
  for (auto policy : {Policy::budgeted, Policy::prestage, Policy::serial}) {
    auto result = run_on_simulator(config, policy, options);
    BOOST_TEST(result.checker.clean(), result.checker.describe());
    BOOST_CHECK_EQUAL(failed(result.report), 1);
    BOOST_TEST(
        result.report.jobs[1].error.find(fmt::format("kernel '{}' failed", kernel::msm_batch)) != std::string::npos,
        result.report.jobs[1].error);
    for (std::size_t device = 0; device < result.system->device_count(); ++device) {
      BOOST_CHECK_EQUAL(result.system->device(device).memory_held_bytes(), 0u);
    }
  }
}

// A kernel that faults loses its GPU, as it loses a CUDA context: its job and the GPU's others go to
// the other GPU, and every partition is made there.
BOOST_AUTO_TEST_CASE(a_faulted_kernel_loses_its_gpu_and_the_other_takes_its_jobs) {
  auto config = load_run_config("config/default.toml");
  config.workload.proofs = 1;
  config.gpus = 2;
  SimulatedRunOptions options;
  options.faults.device = 1;
  options.faults.fail_kernel_name = kernel::msm_batch;
  options.faults.fail_kernel_occurrence = 12;
  auto result = run_on_simulator(config, Policy::budgeted, options);
  BOOST_TEST(result.error.empty(), result.error);
  BOOST_TEST(result.checker.clean(), result.checker.describe());
  BOOST_CHECK_EQUAL(failed(result.report), 0);
  BOOST_CHECK_GE(result.report.jobs_retried, 1);
  BOOST_CHECK(result.system->device(1).lost());
  BOOST_CHECK_EQUAL(result.system->device(0).memory_held_bytes(), 0u);
}
