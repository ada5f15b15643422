// Pinned host memory a caller keeps for each GPU between its runs (CoordinatorHooks::kept_pinned,
// as the engine keeps it): the workers' result buffers are kept with the staging pool, so that a
// run like the last pins nothing on a GPU that proves or on one that stays idle, a run whose
// results are larger grows them, and none of a GPU lost in a run is kept. Counted on the
// simulator's devices (DeviceCounters::pinned_host_allocations), its checker finding no leak once
// the caller frees what it kept.
#define BOOST_TEST_MODULE kept_pinned
#include <boost/test/unit_test.hpp>

#include "coordinator/result_buffers.hpp"
#include "config/run_config.hpp"
#include "runner/sim_runner.hpp"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <string>

using namespace stagehand;

namespace {

// `proofs` 2^10 proofs (timing jobs; lone ones by default) on `gpus` simulated H200s, one worker each.
RunConfig lone_proofs(int gpus, int proofs = 1) {
  return parse_run_config(fmt::format(R"(
[sim]
device_model = "h200-measured"
[gpus]
count = {}
workers_per_device = 1
[workload]
kind = "groth16"
proofs = {}
domain_log2 = 10
)",
                                      gpus, proofs),
                          "kept-pinned.toml");
}

// Runs on one simulated machine, keeping each GPU's pinned buffers between runs as the engine does
// (or, without keep, keeping none).
class KeepingCaller {
 public:
  KeepingCaller(const RunConfig& config, bool keep, FaultPlan faults = {})
      : config_(config), keep_(keep), backend_(Backend::open_simulator(config, BackendOptions{.faults = faults})) {}

  // One run of the configured proofs over `curve`, its jobs offered to `first_device` first.
  RunReport run(kernel::Curve curve, int first_device) {
    auto settings = settings_for(config_, Policy::budgeted);
    settings.first_device = first_device;
    auto jobs = groth16_timing_jobs(config_);
    jobs.sizes = groth16::KeySizes::synthetic(10, curve);
    auto& system = *backend_->simulator();
    jobs.host_memory = [&system](Bytes bytes) { return system.virtual_host_range(bytes); };
    const auto& groth16 = config_.groth16;
    const auto layout = groth16::plan_proof_layout(jobs.sizes, backend_->devices(), settings.safety_margin_bytes,
                                                   settings.workers_per_device, groth16.abc_step, groth16.key_sets,
                                                   groth16.stream_buffer_bytes, groth16.precompute_bases);
    groth16::Groth16TimingWorkload workload(std::move(jobs), layout.abc_step, layout.placement);
    result_bytes_ = workload.memory_plan(0).result_bytes;
    RunReport report;
    backend_->run([&]() -> asio::awaitable<void> {
      report = co_await run_coordinator(backend_->devices(), settings, workload, system.trace(), hooks());
    }());
    for (const auto& job : report.jobs) BOOST_TEST(job.completed(), job.error);
    return report;
  }

  std::uint64_t pinned_allocations(std::size_t gpu) const {
    return backend_->devices().at(gpu)->counters().pinned_host_allocations;
  }
  const KeptPinned& kept(int gpu) { return kept_[gpu]; }
  Bytes last_result_bytes() const { return result_bytes_; }

  // Frees what is kept, as the engine does when a key is unloaded, and says what the simulator's
  // checker finds left on each GPU.
  std::string free_kept_and_check() {
    backend_->run([&]() -> asio::awaitable<void> {
      for (const auto& [gpu, kept] : std::exchange(kept_, {})) {
        for (const auto* buffers : {&kept.staging, &kept.results}) {
          for (const auto& buffer : *buffers) co_await backend_->devices().at(gpu)->free_pinned_host(buffer);
        }
      }
    }());
    std::string found;
    for (std::size_t i = 0; i < backend_->simulator()->device_count(); ++i) {
      const auto report = backend_->simulator()->device(i).check();
      if (!report.clean()) found += fmt::format("GPU {}: {}\n", i, report.describe());
    }
    return found;
  }

 private:
  CoordinatorHooks hooks() {
    CoordinatorHooks hooks;
    auto& system = *backend_->simulator();
    hooks.pageable_memory = [&system](Bytes bytes) { return system.virtual_host_range(bytes); };
    if (!keep_) return hooks;
    hooks.kept_pinned = [this](int gpu) { return std::exchange(kept_[gpu], {}); };
    hooks.keep_pinned = [this](int gpu, KeptPinned buffers) {
      auto& kept = kept_[gpu];
      kept.staging.insert(kept.staging.end(), buffers.staging.begin(), buffers.staging.end());
      kept.results.insert(kept.results.end(), buffers.results.begin(), buffers.results.end());
    };
    return hooks;
  }

  RunConfig config_;
  bool keep_;
  std::unique_ptr<Backend> backend_;
  std::map<int, KeptPinned> kept_;
  Bytes result_bytes_ = 0;
};

}  // namespace

// Two GPUs, a lone proof a run, offered to GPU 0, then GPU 1, then GPU 0 again: the first run pins
// both GPUs' result buffers (the idle GPU's worker makes its own too), the second only GPU 1's
// staging buffer (its first proof), the third nothing on either. A caller that keeps nothing pins
// every GPU's result buffers again in every run: what the count above would have seen.
BOOST_AUTO_TEST_CASE(a_run_like_the_last_pins_no_result_buffer_on_a_busy_or_an_idle_gpu) {
  KeepingCaller caller(lone_proofs(2), true);
  std::vector<std::vector<std::uint64_t>> made;  // by run, by GPU
  for (const int first : {0, 1, 0}) {
    const auto report = caller.run(kernel::Curve::bls12_381, first);
    BOOST_REQUIRE_EQUAL(report.jobs.size(), 1u);
    BOOST_CHECK_EQUAL(report.jobs[0].device, first);
    made.push_back({caller.pinned_allocations(0), caller.pinned_allocations(1)});
    for (int gpu = 0; gpu < 2; ++gpu) {
      BOOST_TEST_CONTEXT("GPU " << gpu << " after run " << made.size()) {
        const auto& results = caller.kept(gpu).results;
        BOOST_REQUIRE_EQUAL(results.size(), ResultBuffers::kPerWorker);
        for (const auto& buffer : results) BOOST_CHECK_GE(buffer.bytes, caller.last_result_bytes());
      }
    }
  }
  BOOST_CHECK_GE(made[0][1], ResultBuffers::kPerWorker);  // GPU 1 idle, its result buffers made
  BOOST_CHECK_EQUAL(made[1][0], made[0][0]);              // GPU 0 idle: nothing new
  BOOST_CHECK_EQUAL(made[1][1], made[0][1] + 1);          // GPU 1's first proof: its staging buffer alone
  BOOST_CHECK_EQUAL(made[2][0], made[1][0]);
  BOOST_CHECK_EQUAL(made[2][1], made[1][1]);
  const auto left = caller.free_kept_and_check();
  BOOST_TEST(left.empty(), left);

  KeepingCaller forgetful(lone_proofs(2), false);
  forgetful.run(kernel::Curve::bls12_381, 0);
  const std::vector<std::uint64_t> first{forgetful.pinned_allocations(0), forgetful.pinned_allocations(1)};
  forgetful.run(kernel::Curve::bls12_381, 0);
  BOOST_CHECK_EQUAL(forgetful.pinned_allocations(0), first[0] + ResultBuffers::kPerWorker + 1);
  BOOST_CHECK_EQUAL(forgetful.pinned_allocations(1), first[1] + ResultBuffers::kPerWorker);
  BOOST_TEST(forgetful.kept(0).empty());
  const auto forgetful_left = forgetful.free_kept_and_check();
  BOOST_TEST(forgetful_left.empty(), forgetful_left);
}

// A BN254 key's results (G1 sums of 96 bytes) and then a BLS12-381 key's (144): the second run
// grows each kept result buffer, pinning two new ones and nothing else; a BN254 run after it fits
// in them and pins nothing.
BOOST_AUTO_TEST_CASE(a_run_whose_results_are_larger_grows_the_kept_result_buffers) {
  KeepingCaller caller(lone_proofs(1), true);
  caller.run(kernel::Curve::bn254, 0);
  const auto small = caller.last_result_bytes();
  const auto after_small = caller.pinned_allocations(0);
  const auto staging = caller.kept(0).staging.size();
  caller.run(kernel::Curve::bls12_381, 0);
  const auto large = caller.last_result_bytes();
  BOOST_REQUIRE_GT(large, small);
  BOOST_CHECK_EQUAL(caller.kept(0).staging.size(), staging);  // the witness is as large on both curves
  BOOST_CHECK_EQUAL(caller.pinned_allocations(0), after_small + ResultBuffers::kPerWorker);
  BOOST_REQUIRE_EQUAL(caller.kept(0).results.size(), ResultBuffers::kPerWorker);
  for (const auto& buffer : caller.kept(0).results) BOOST_CHECK_EQUAL(buffer.bytes, large);

  const auto after_large = caller.pinned_allocations(0);
  caller.run(kernel::Curve::bn254, 0);
  BOOST_CHECK_EQUAL(caller.pinned_allocations(0), after_large);
  for (const auto& buffer : caller.kept(0).results) BOOST_CHECK_EQUAL(buffer.bytes, large);
  const auto left = caller.free_kept_and_check();
  BOOST_TEST(left.empty(), left);
}

// GPU 1 lost at its first kernel, under the first of two proofs (its jobs offered to GPU 1 first):
// the proof is made on GPU 0, which keeps its buffers; GPU 1 keeps none, its result buffers freed
// at the run's end.
BOOST_AUTO_TEST_CASE(nothing_of_a_gpu_lost_in_the_run_is_kept) {
  FaultPlan faults;
  faults.device = 1;
  faults.lose_device_at_launch = 1;
  KeepingCaller caller(lone_proofs(2, 2), true, faults);
  const auto report = caller.run(kernel::Curve::bls12_381, 1);
  BOOST_REQUIRE_EQUAL(report.jobs.size(), 2u);
  BOOST_CHECK_EQUAL(report.jobs_retried, 1);
  BOOST_TEST(report.per_device.at(1).failure.find("lost") == 0u, report.per_device.at(1).failure);
  BOOST_CHECK_EQUAL(caller.kept(0).results.size(), ResultBuffers::kPerWorker);
  BOOST_CHECK_GE(caller.pinned_allocations(1), ResultBuffers::kPerWorker);  // it had made its own
  BOOST_TEST(caller.kept(1).empty());
  const auto left = caller.free_kept_and_check();
  BOOST_TEST(left.empty(), left);
}
