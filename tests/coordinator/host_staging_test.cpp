// Host staging sized from the key, and the budget that bounds workers x staging ([host_staging]
// host_budget_gib): `stagehand prove --workers 64` on a 2^10 key stages kilobytes a worker, and a
// worker count the budget cannot hold is refused before the run, naming the key and the figures.
#define BOOST_TEST_MODULE host_staging
#include <boost/test/unit_test.hpp>

#include "coordinator/host_staging.hpp"
#include "device/format.hpp"
#include "groth16/setup.hpp"
#include "groth16/synthetic_circuit.hpp"
#include "config/run_config.hpp"
#include "runner/sim_runner.hpp"
#include "workloads/groth16/groth16_workload.hpp"
#include "workloads/host_work.hpp"

#include <fmt/format.h>

#include <string>

using namespace stagehand;

namespace {

// A 2^10 key, as `stagehand_make_circuit --domain-log2 10` and `stagehand setup` make one.
const groth16::ProvingKey& key_2_10() {
  static const groth16::ProvingKey key = [] {
    groth16::SetupOptions options;
    options.seed = 42;
    options.thread_count = 1;
    const auto circuit = groth16::make_synthetic_circuit(groth16::synthetic_constraints_for_domain(10), 7, false);
    return groth16::setup_from_r1cs(circuit.r1cs, options);
  }();
  return key;
}

// The sizes as the file formats have them, not as the workload computes them: an Fr is 32 bytes,
// an Fq 48; a Jacobian sum has three coordinates, in G2 each of two Fq.
constexpr Bytes kFr = 32;
constexpr Bytes kG1Sum = 3 * 48;
constexpr Bytes kG2Sum = 3 * 2 * 48;
// The program's results: one sum of each of the key's five MSMs (H, A, B1 and C in G1, B2 in G2).
constexpr Bytes kResults = 4 * kG1Sum + kG2Sum;

std::string staging_config(int workers, double budget_gib) {
  return fmt::format(
      "[gpus]\nworkers_per_device = {}\n[host_staging]\nhost_budget_gib = {}\n"
      "[workload]\nkind = \"groth16\"\ndomain_log2 = 10\nproofs = 2\n[sim]\ndevice_model = \"h200-measured\"\n",
      workers, budget_gib);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_2_10_keys_staging_per_worker_is_sized_from_the_key) {
  const auto& key = key_2_10();
  BOOST_REQUIRE_EQUAL(key.domain_size, 1024u);
  HostWork host_work(0);
  for (auto abc : {groth16::AbcStep::device, groth16::AbcStep::host}) {
    groth16::Groth16Workload workload(key, "2_10.zkey", {}, host_work, 1, nullptr, {}, abc);
    const auto plan = workload.memory_plan(0);
    // The a/b/c step on the device uploads the witness alone; on the host, a, b and c.
    const Bytes inputs = abc == groth16::AbcStep::device ? kFr * key.n_vars : 3 * kFr * key.domain_size;
    BOOST_TEST_CONTEXT("a/b/c " << groth16::describe(abc)) {
      BOOST_CHECK_EQUAL(plan.result_bytes, kResults);
      BOOST_CHECK_EQUAL(worker_staging_bytes(plan), inputs + 2 * kResults);
      BOOST_CHECK_LT(worker_staging_bytes(plan), 100 * kKiB);  // kilobytes, whatever the worker count
    }
  }
}

// The run's own check, through the configuration: 64 workers refused where the budget holds fewer,
// the count it names accepted and run to the end.
BOOST_AUTO_TEST_CASE(a_worker_count_the_budget_cannot_hold_is_refused_naming_the_key_and_the_figures) {
  const Bytes each = kFr * groth16::KeySizes::synthetic(10).n_vars + 2 * kResults;
  const double budget_gib = 0.001;
  const auto refused =
      run_on_simulator(parse_run_config(staging_config(64, budget_gib), "staging.toml"), Policy::budgeted);
  const auto budget =
      parse_run_config(staging_config(64, budget_gib), "staging.toml").coordinator.host_staging_budget_bytes;
  const auto fit = budget / each;
  BOOST_REQUIRE_LT(fit, 64u);
  const auto expected = fmt::format(
      "staging.toml:4: key 'host_staging.host_budget_gib': 64 workers stage {} of host memory "
      "per GPU, {} each (a job's inputs 1 x {}, two result buffers of {}), more than the budget "
      "of {} per GPU: at most {} workers per GPU fit",
      format_bytes(64 * each), format_bytes(each), format_bytes(each - 2 * kResults), format_bytes(kResults),
      format_bytes(budget), fit);
  BOOST_TEST(refused.error == expected);
  BOOST_TEST(refused.report.jobs.empty());  // refused before any job ran

  const auto accepted = run_on_simulator(
      parse_run_config(staging_config(static_cast<int>(fit), budget_gib), "staging.toml"), Policy::budgeted);
  BOOST_TEST(accepted.error.empty(), accepted.error);
  BOOST_CHECK_EQUAL(accepted.report.jobs.size(), 2u);
  for (const auto& job : accepted.report.jobs) BOOST_TEST(job.completed(), job.error);
}

// Each GPU has the budget to itself, as the pinned pool's: two GPUs of as many workers as one GPU's
// budget holds run, though together they stage more than one budget.
BOOST_AUTO_TEST_CASE(each_gpu_has_the_budget_to_itself) {
  auto config = parse_run_config(staging_config(64, 0.001), "staging.toml");
  const Bytes each = kFr * groth16::KeySizes::synthetic(10).n_vars + 2 * kResults;
  const auto fit = config.coordinator.host_staging_budget_bytes / each;
  config.coordinator.workers_per_device = static_cast<int>(fit);
  config.gpus = 2;
  BOOST_REQUIRE_GT(2 * fit * each, config.coordinator.host_staging_budget_bytes);
  const auto two = run_on_simulator(config, Policy::budgeted);
  BOOST_TEST(two.error.empty(), two.error);
  BOOST_CHECK_EQUAL(two.report.jobs.size(), 2u);
}

BOOST_AUTO_TEST_CASE(the_refusal_says_which_count_fits_or_that_none_does) {
  JobMemoryPlan plan;
  plan.input_bytes = kMiB;
  plan.input_count = 3;
  plan.result_bytes = kKiB;
  const Bytes each = 3 * kMiB + 2 * kKiB;
  BOOST_CHECK_NO_THROW(check_workers_staging_fit(4, plan, 4 * each, "key 'k'"));
  const auto starts = fmt::format(
      "key 'k': 5 workers stage {} of host memory per GPU, {} each (a job's inputs 3 x 1.0 MiB, "
      "two result buffers of 1.0 KiB)",
      format_bytes(5 * each), format_bytes(each));
  BOOST_CHECK_EXCEPTION(
      check_workers_staging_fit(5, plan, 4 * each, "key 'k'"), std::invalid_argument, [&](const auto& error) {
        const std::string what = error.what();
        return what.find(starts) == 0 && what.find("at most 4 workers per GPU fit") != std::string::npos;
      });
  BOOST_CHECK_EXCEPTION(
      check_workers_staging_fit(1, plan, each - 1, "key 'k'"), std::invalid_argument,
      [](const auto& error) { return std::string(error.what()).find("not one worker fits") != std::string::npos; });
}

// A job's extra input (an assignment's query scalars) is staged beside a, b and c: counted in a
// worker's staging and named in the refusal.
BOOST_AUTO_TEST_CASE(the_extra_input_is_counted_and_named) {
  JobMemoryPlan plan;
  plan.input_bytes = kMiB;
  plan.input_count = 3;
  plan.extra_input_bytes = 2 * kMiB;
  plan.result_bytes = kKiB;
  const Bytes each = 3 * kMiB + 2 * kMiB + 2 * kKiB;
  BOOST_CHECK_EQUAL(worker_staging_bytes(plan), each);
  BOOST_CHECK((staged_input_sizes(plan) == std::vector<Bytes>{kMiB, kMiB, kMiB, 2 * kMiB}));
  BOOST_CHECK_NO_THROW(check_workers_staging_fit(2, plan, 2 * each, "key 'k'"));
  const auto starts = fmt::format(
      "key 'k': 3 workers stage {} of host memory per GPU, {} each (a job's inputs 3 x 1.0 MiB and 2.0 MiB extra, "
      "two result buffers of 1.0 KiB)",
      format_bytes(3 * each), format_bytes(each));
  BOOST_CHECK_EXCEPTION(check_workers_staging_fit(3, plan, 2 * each, "key 'k'"), std::invalid_argument,
                        [&](const auto& error) { return std::string(error.what()).find(starts) == 0; });
}
