// Several GPUs in one host, on the simulator: N GPUs give N times one GPU's throughput, each job
// goes to the GPU that can take it soonest (never all to one), and a GPU lost mid-run takes
// nothing down with it: its running jobs fail with the device's error and go once to another
// GPU, its share of the queue goes to the others, the run finishes and no card holds anything.
#define BOOST_TEST_MODULE multi_gpu
#include <boost/test/unit_test.hpp>

#include "device/faulty_device.hpp"
#include "config/run_config.hpp"
#include "runner/sim_runner.hpp"

#include <fmt/format.h>

#include <string>

using namespace stagehand;

namespace {

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// The default workload (PoRep-shaped partitions at 2^26 on a 16 GiB H200) with `proofs_per_gpu`
// proofs for each of `gpus`: the same stream per GPU, so throughputs compare.
RunConfig porep_config(int gpus, int proofs_per_gpu) {
  return parse_run_config(fmt::format(R"(
[sim]
device_model = "h200"
duration_jitter = 0.02
[gpus]
count = {}
vram_cap_gib = 16
[workload]
proofs = {}
partitions_per_proof = 10
domain_log2 = 26
)",
                                      gpus, gpus * proofs_per_gpu),
                          "multi-gpu.toml");
}

// Real-shaped Groth16 proofs (timing jobs of the synthetic circuit) on the measured H200 model
// under a 16 GiB cap, as config/h200-proofs.toml; by default at 2^24 with every key set streamed.
RunConfig groth16_config(int gpus, int proofs_per_gpu, int domain_log2 = 24, const char* key_sets = "streamed") {
  return parse_run_config(fmt::format(R"(
[sim]
device_model = "h200-measured"
duration_jitter = 0.02
[gpus]
count = {}
vram_cap_gib = 16
[workload]
kind = "groth16"
proofs = {}
domain_log2 = {}
abc = "host"
key_sets = "{}"
host_prepare_ns_per_element = 85
host_finish_ns_per_element = 1.6
)",
                                      gpus, gpus * proofs_per_gpu, domain_log2, key_sets),
                          "multi-gpu-groth16.toml");
}

SimulatedRun run(const RunConfig& config, SimulatedRunOptions options = {}) {
  options.keep_trace_events = false;
  auto result = run_on_simulator(config, Policy::budgeted, options);
  BOOST_TEST(result.error.empty(), result.error);
  BOOST_TEST(result.checker.clean(), result.checker.describe());
  // Nothing left on any card the run could still reach: the healthy ones, and one the fault
  // adaptor lost (its frees still reach the device behind). A GPU the simulator lost took its
  // memory with its context, as a real one does.
  for (std::size_t i = 0; i < result.system->device_count(); ++i) {
    if (options.faults.lose_device_at_ns >= 0 && options.faults.applies_to(static_cast<int>(i))) continue;
    BOOST_TEST(result.system->device(i).memory_held_bytes() == 0u, "GPU " << i << " still holds memory");
  }
  return result;
}

int failed(const RunReport& report) { return report.partitions - report.partitions_completed; }

// Each GPU did its share of the jobs: within `slack` of an even split.
void check_even_split(const RunReport& report, double slack) {
  const double fair = static_cast<double>(report.partitions) / static_cast<double>(report.per_device.size());
  for (const auto& device : report.per_device) {
    BOOST_TEST_CONTEXT("GPU " << device.device) {
      BOOST_TEST(device.jobs_completed >= fair * (1 - slack), device.jobs_completed << " of " << report.partitions);
      BOOST_TEST(device.jobs_completed <= fair * (1 + slack), device.jobs_completed << " of " << report.partitions);
      BOOST_TEST(device.failure.empty(), device.failure);
    }
  }
}

// Half the makespan of the same run without faults: a time when every GPU is mid-stream.
Nanoseconds middle_of(const RunConfig& config) { return run(config).report.makespan_ns / 2; }

// `config` run with GPU `gpu` (-1: every GPU) lost by the simulator half way through.
SimulatedRun run_losing(const RunConfig& config, int gpu) {
  SimulatedRunOptions options;
  options.faults.device = gpu;
  options.faults.lose_device_at_ns = middle_of(config);
  return run(config, options);
}

// What a run that lost GPU `lost` must show: every job completed, at least one moved, each moved
// job's first attempt on the lost GPU with its error kept, the lost GPU named in the report.
void check_lost_gpu_run(const RunReport& report, int lost) {
  BOOST_TEST(failed(report) == 0);
  BOOST_TEST(report.jobs_retried >= 1);
  for (const auto& job : report.jobs) {
    if (job.attempts < 2) continue;
    BOOST_TEST_CONTEXT("job " << job.index) {
      BOOST_TEST(job.attempts == 2);
      BOOST_TEST(job.first_device == lost);
      BOOST_TEST(job.device != lost);
      BOOST_TEST(has(job.retried_after, fmt::format("GPU {}: ", lost)), job.retried_after);
      BOOST_TEST(has(job.retried_after, "lost"), job.retried_after);
    }
  }
  BOOST_REQUIRE(report.per_device.size() > static_cast<std::size_t>(lost));
  const auto& gone = report.per_device[static_cast<std::size_t>(lost)];
  BOOST_TEST(has(gone.failure, "lost"), gone.failure);
  BOOST_TEST(gone.jobs_moved_away == report.jobs_retried);
  for (const auto& device : report.per_device) {
    if (device.device != lost) BOOST_TEST(device.failure.empty(), device.failure);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(throughput)

// Within 3% of N times one GPU's jobs per second for 2 and 4 GPUs, each GPU taking its share
// (within `split_slack` of an even split), no OOM.
template <class ConfigFor>
void check_scaling(ConfigFor config_for, double split_slack) {
  const auto one = run(config_for(1)).report;
  BOOST_TEST_REQUIRE(failed(one) == 0);
  for (int gpus : {2, 4}) {
    BOOST_TEST_CONTEXT(gpus << " GPUs") {
      const auto many = run(config_for(gpus)).report;
      BOOST_TEST(failed(many) == 0);
      const double scaling = many.partitions_per_second / one.partitions_per_second;
      BOOST_TEST_MESSAGE(fmt::format("{} GPUs: {:.3f} jobs/s against one GPU's {:.3f}: {:.3f} x", gpus,
                                     many.partitions_per_second, one.partitions_per_second, scaling));
      BOOST_TEST(scaling >= 0.97 * gpus, "throughput " << scaling << " x one GPU's");
      BOOST_TEST(scaling <= 1.01 * gpus, "throughput " << scaling << " x one GPU's");
      check_even_split(many, split_slack);
      BOOST_TEST(many.oom_count == 0u);
    }
  }
}

BOOST_AUTO_TEST_CASE(n_simulated_h200s_give_n_times_one_gpus_throughput) {
  check_scaling([](int gpus) { return porep_config(gpus, 4); }, 0.1);
}

// Eight proofs per GPU: with four, the first proof's ramp and the last GPU's tail took 2.5-3%.
BOOST_AUTO_TEST_CASE(real_shaped_proofs_scale_the_same_way) {
  check_scaling([](int gpus) { return groth16_config(gpus, 8); }, 0.25);
}

// A GPU whose link runs four times slower comes back for work less often: the other takes more
// of the stream, and the two together still beat the fast one alone.
BOOST_AUTO_TEST_CASE(jobs_go_where_they_can_run_soonest) {
  const auto alone = run(porep_config(1, 4)).report;
  SimulatedRunOptions options;
  options.faults.device = 1;
  options.faults.pcie_slowdown_factor = 4;
  const auto config = porep_config(2, 2);
  const auto report = run(config, options).report;
  BOOST_TEST(failed(report) == 0);
  BOOST_REQUIRE(report.per_device.size() == 2u);
  BOOST_TEST(report.per_device[0].jobs_completed > report.per_device[1].jobs_completed + 2,
             report.per_device[0].jobs_completed << " against " << report.per_device[1].jobs_completed);
  BOOST_TEST(report.per_device[1].jobs_completed > 0);
  BOOST_TEST(report.makespan_ns < alone.makespan_ns);
}

// Every GPU is set up at once: with each key set's bases precomputed (seconds of kernels on each
// GPU), two GPUs start proving as soon as one does, not a whole set-up later; and the key's sets
// that travel are registered once for both (the simulator refuses a second registration of
// memory being registered, as the driver does).
BOOST_AUTO_TEST_CASE(every_gpu_is_set_up_at_once) {
  const auto first_start = [](const RunReport& report) {
    Nanoseconds first = report.jobs.front().started_ns;
    for (const auto& job : report.jobs) first = std::min(first, job.started_ns);
    return first;
  };
  const auto alone = run(groth16_config(1, 1, 20, "precomputed")).report;
  const auto both = run(groth16_config(2, 1, 20, "precomputed")).report;
  BOOST_TEST(failed(both) == 0);
  BOOST_TEST(first_start(alone) > 500 * kMillisecond, "a set-up of " << first_start(alone) << " ns");
  BOOST_TEST(first_start(both) < first_start(alone) * 5 / 4, first_start(both) << " ns against " << first_start(alone));
  const auto streamed = run(groth16_config(2, 2, 22, "streamed")).report;
  BOOST_TEST(failed(streamed) == 0);
  for (const auto& device : streamed.per_device) BOOST_TEST(device.failure.empty(), device.failure);
}

// One job on two idle GPUs goes to the GPU offered it first (CoordinatorSettings::first_device),
// either one.
BOOST_AUTO_TEST_CASE(a_lone_job_goes_to_the_gpu_offered_it_first) {
  for (const int first : {0, 1}) {
    auto config = porep_config(2, 1);
    config.workload.proofs = 1;
    config.workload.partitions_per_proof = 1;
    config.coordinator.first_device = first;
    const auto report = run(config).report;
    BOOST_TEST(failed(report) == 0);
    BOOST_REQUIRE(report.per_device.size() == 2u);
    BOOST_TEST(report.per_device[static_cast<std::size_t>(first)].jobs_completed == 1, "first device " << first);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(lost_gpu)

BOOST_AUTO_TEST_CASE(a_lost_gpus_jobs_finish_on_the_others) {
  for (int gpus : {2, 4}) {
    BOOST_TEST_CONTEXT(gpus << " GPUs") { check_lost_gpu_run(run_losing(porep_config(gpus, 2), 1).report, 1); }
  }
}

BOOST_AUTO_TEST_CASE(a_lost_gpus_proofs_finish_on_the_other) {
  check_lost_gpu_run(run_losing(groth16_config(2, 3), 1).report, 1);
}

// The GPU that registered the key's sets for all the others is the one lost: they are
// unregistered through another, and no registration is left on the host. (The pinned buffers
// allocated through the lost GPU went with its context; the simulator still lists them.)
BOOST_AUTO_TEST_CASE(the_key_registered_through_a_lost_gpu_is_unregistered_through_another) {
  const auto result = run_losing(groth16_config(2, 3), 0);
  check_lost_gpu_run(result.report, 0);
  std::vector<std::string> left;
  for (int gpu = 0; gpu < 2; ++gpu) result.system->pinned_host().report_leaks(gpu, left);
  for (const auto& line : left) BOOST_TEST(!has(line, "never unregistered"), line);
}

// The same loss through the fault adaptor, which wraps CudaDevice on real hardware the same way.
BOOST_AUTO_TEST_CASE(the_fault_adaptor_loses_one_gpu_as_a_real_one_would_be_lost) {
  const auto config = porep_config(2, 2);
  SimulatedRunOptions options;
  options.faults.device = 0;
  options.faults.lose_device_at_ns = middle_of(config);
  options.faults_by_adaptor = true;
  const auto report = run(config, options).report;
  check_lost_gpu_run(report, 0);
  for (const auto& job : report.jobs) {
    if (job.attempts > 1) BOOST_TEST(has(job.retried_after, "[injected fault]"), job.retried_after);
  }
}

// With no GPU left, the jobs still queued fail with what happened to each GPU; the run ends.
BOOST_AUTO_TEST_CASE(losing_every_gpu_fails_what_is_left_and_says_why) {
  const auto report = run_losing(porep_config(2, 2), -1).report;  // every GPU
  BOOST_TEST(report.partitions_completed > 0);
  BOOST_TEST(failed(report) > 0);
  int not_run = 0;
  for (const auto& job : report.jobs) {
    if (job.completed()) continue;
    BOOST_TEST(has(job.error, "lost"), "job " << job.index << ": " << job.error);
    if (has(job.error, "not run: no GPU could take it")) {
      ++not_run;
      BOOST_TEST(job.device == -1);
      BOOST_TEST((has(job.error, "GPU 0 lost") && has(job.error, "GPU 1 lost")), job.error);
    }
  }
  BOOST_TEST(not_run > 0);
  for (const auto& device : report.per_device) BOOST_TEST(has(device.failure, "lost"), device.failure);
}

// A GPU that cannot hold the key takes no jobs, and the run goes on the others.
BOOST_AUTO_TEST_CASE(a_gpu_that_cannot_be_set_up_leaves_its_jobs_to_the_others) {
  const auto config = groth16_config(2, 2, 20, "resident");
  SimulatedRunOptions options;
  options.faults.device = 1;
  options.faults.fail_allocation_number = 1;  // the first allocation of its set-up: a key set
  const auto report = run(config, options).report;
  BOOST_TEST(failed(report) == 0);
  BOOST_REQUIRE(report.per_device.size() == 2u);
  BOOST_TEST(report.per_device[0].jobs_completed == report.partitions);
  BOOST_TEST(report.per_device[1].jobs_completed == 0);
  BOOST_TEST(has(report.per_device[1].failure, "could not be set up"), report.per_device[1].failure);
  BOOST_TEST(has(report.per_device[1].failure, "[injected fault]"), report.per_device[1].failure);
}

BOOST_AUTO_TEST_SUITE_END()
