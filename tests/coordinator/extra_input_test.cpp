// A job's extra input (JobMemoryPlan::extra_input_bytes) beside a, b and c, through the whole
// coordinator on the functional simulator: under every policy the program finds on the device the
// bytes prepare wrote, with its own upload event where the policy uploads ahead, and the budgeted
// policy pre-stages it before the lock with a, b and c (prestaged_bytes counts it). With late
// inputs (JobMemoryPlan::late_inputs) the budgeted policy uploads a and b only and hands the
// program c's and the extra input's staged host bytes; the other policies upload all four.
#define BOOST_TEST_MODULE extra_input
#include <boost/test/unit_test.hpp>

#include "coordinator/coordinator.hpp"
#include "sim/device_model.hpp"
#include "sim/sim_device.hpp"
#include "support/functional_run.hpp"

#include <array>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

using namespace stagehand;

namespace {

constexpr Bytes kInputBytes = 4096;
constexpr Bytes kExtraBytes = 3000;  // of its own size, unlike a, b and c
constexpr Bytes kWorkingBytes = 1024;
constexpr int kJobs = 4;

// Input `input` (0 to 2: a, b, c; 3: the extra one) of `job`, as prepare writes it.
std::vector<std::byte> expected_bytes(int job, std::size_t input) {
  std::vector<std::byte> bytes(input == 3 ? kExtraBytes : kInputBytes);
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<std::byte>(17 * job + 53 * input + i + (i >> 8));
  return bytes;
}

HostRange range_of(std::vector<std::byte>& bytes) {
  return HostRange{reinterpret_cast<std::uintptr_t>(bytes.data()), bytes.size()};
}

// Writes each job's inputs; its program reads all four back from the device, after their events.
class ExtraInputWorkload final : public Workload {
 public:
  explicit ExtraInputWorkload(bool late_inputs = false) : late_inputs_(late_inputs) {}
  int job_count() const override { return kJobs; }
  int proof_count() const override { return kJobs; }
  int proof_of(int job) const override { return job; }
  JobMemoryPlan memory_plan(int) const override {
    JobMemoryPlan plan;
    plan.input_bytes = kInputBytes;
    plan.extra_input_bytes = kExtraBytes;
    plan.peak_bytes = 3 * kInputBytes + kExtraBytes + kWorkingBytes;
    plan.peak_after_b_and_c_bytes = kInputBytes + kExtraBytes + kWorkingBytes;
    plan.peak_after_a_bytes = kExtraBytes + kWorkingBytes;
    plan.result_bytes = 64;
    plan.late_inputs = late_inputs_;
    return plan;
  }
  asio::awaitable<void> set_up(Device&, int) override { co_return; }
  asio::awaitable<void> tear_down(Device&, int) override { co_return; }

  asio::awaitable<void> prepare(int job, Device&, std::span<const HostRange> inputs) override {
    BOOST_REQUIRE_EQUAL(inputs.size(), 4u);
    for (std::size_t input = 0; input < 4; ++input) {
      const auto bytes = expected_bytes(job, input);
      BOOST_REQUIRE_GE(inputs[input].bytes, bytes.size());
      std::memcpy(inputs[input].data(), bytes.data(), bytes.size());
    }
    co_return;
  }

  asio::awaitable<JobTimes> run_program(int job, JobContext& context) override {
    auto& device = context.device;
    const auto stream = context.compute;
    const auto& inputs = context.inputs;
    const std::array<DevicePointer, 4> pointers{inputs.a, inputs.b, inputs.c, inputs.extra};
    for (const auto event : {inputs.a_uploaded, inputs.b_uploaded, inputs.c_uploaded, inputs.extra_uploaded}) {
      if (event) device.stream_wait_event(stream, event);
    }
    // Working memory beside the inputs, as a program takes it.
    const auto working = co_await context.memory.allocate(kWorkingBytes, stream);
    auto& found = found_[job];
    left_to_program_[job] = !inputs.c;
    for (std::size_t input = 0; input < 4; ++input) {
      found[input].resize(input == 3 ? kExtraBytes : kInputBytes);
      const HostRange staged = input == 2 ? inputs.c_host : input == 3 ? inputs.extra_host : HostRange{};
      if (!pointers[input] && input >= 2) {
        // Left to the program: its staged bytes, exactly the input's size.
        BOOST_REQUIRE(late_inputs_);
        BOOST_REQUIRE_EQUAL(staged.bytes, found[input].size());
        std::memcpy(found[input].data(), staged.data(), staged.bytes);
        continue;
      }
      BOOST_REQUIRE(pointers[input]);
      co_await device.copy_to_host(range_of(found[input]), pointers[input], stream);
    }
    co_await device.synchronize_stream(stream);
    extra_had_event_[job] = static_cast<bool>(inputs.extra_uploaded);
    co_await context.memory.release(working, stream);
    co_await context.memory.release_b_and_c(stream);
    co_await context.memory.release_a(stream);
    co_return JobTimes{};
  }
  asio::awaitable<void> finish(int, Device&) override { co_return; }

  std::map<int, std::array<std::vector<std::byte>, 4>> found_;
  std::map<int, bool> extra_had_event_;
  std::map<int, bool> left_to_program_;  // c and the extra input given as host bytes

 private:
  bool late_inputs_;
};

struct PolicyRun {
  explicit PolicyRun(bool late_inputs = false) : workload(late_inputs) {}
  RunReport report;
  ExtraInputWorkload workload;
  Bytes memory_held = 0;
};

void run_under(Policy policy, PolicyRun& run, HostStagingMode staging = HostStagingMode::pinned_pool) {
  sim::SimOptions options;
  options.functional = true;
  sim::SimSystem system(options);
  auto& device = system.add_device(sim::load_device_model(sim::find_device_model("h200-measured")), {});
  CoordinatorSettings settings;
  settings.policy = policy;
  settings.workers_per_device = 2;
  settings.host_staging = staging;
  run.report = testing::run_functional(system, device, settings, run.workload);
  run.memory_held = device.memory_info().total_bytes - device.memory_info().free_bytes;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_extra_input_reaches_the_program_with_the_bytes_prepare_wrote_under_every_policy) {
  // Budgeted twice: staged in the pinned pool, and in the caller's pageable memory pinned in place.
  const std::vector<std::pair<Policy, HostStagingMode>> runs{{Policy::serial, HostStagingMode::pinned_pool},
                                                             {Policy::prestage, HostStagingMode::pinned_pool},
                                                             {Policy::two_lock, HostStagingMode::pinned_pool},
                                                             {Policy::budgeted, HostStagingMode::pinned_pool},
                                                             {Policy::budgeted, HostStagingMode::register_in_place}};
  for (const auto& [policy, staging] : runs) {
    BOOST_TEST_CONTEXT("policy " << to_string(policy)
                                 << (staging == HostStagingMode::pinned_pool ? "" : ", pinned in place")) {
      PolicyRun run;
      run_under(policy, run, staging);
      BOOST_CHECK_EQUAL(run.report.partitions_completed, kJobs);
      BOOST_REQUIRE_EQUAL(run.workload.found_.size(), static_cast<std::size_t>(kJobs));
      for (const auto& [job, found] : run.workload.found_) {
        BOOST_TEST_CONTEXT("job " << job) {
          for (std::size_t input = 0; input < 4; ++input) BOOST_CHECK(found[input] == expected_bytes(job, input));
          // serial uploads inside the lock on the compute stream: no event; the others one.
          BOOST_CHECK_EQUAL(run.workload.extra_had_event_.at(job), policy != Policy::serial);
        }
      }
      // The extra input freed with the job's memory: nothing is left on the device.
      BOOST_CHECK_EQUAL(run.memory_held, 0u);
    }
  }
}

BOOST_AUTO_TEST_CASE(budgeted_pre_stages_the_extra_input_before_the_lock) {
  PolicyRun run;
  run_under(Policy::budgeted, run);
  BOOST_REQUIRE_EQUAL(run.report.jobs.size(), static_cast<std::size_t>(kJobs));
  constexpr Bytes kAll = 3 * kInputBytes + kExtraBytes;
  int fully_prestaged = 0;
  for (const auto& job : run.report.jobs) {
    BOOST_TEST_CONTEXT("job " << job.index) {
      BOOST_CHECK_LE(job.prestaged_bytes, kAll);
      if (job.prestaged_bytes == kAll) ++fully_prestaged;
    }
  }
  // The first job takes the idle GPU's lock at once and uploads inside it; the second, behind it,
  // uploads all four inputs, the extra one included, while it runs (how much the later ones get
  // across depends on how long the one before them holds the lock).
  BOOST_CHECK_EQUAL(run.report.jobs.front().prestaged_bytes, 0u);
  BOOST_CHECK_GE(fully_prestaged, 1);
}

BOOST_AUTO_TEST_CASE(late_inputs_are_left_to_the_budgeted_program_and_uploaded_by_the_others) {
  for (const auto policy : {Policy::serial, Policy::two_lock, Policy::budgeted}) {
    BOOST_TEST_CONTEXT("policy " << to_string(policy)) {
      PolicyRun run(/*late_inputs=*/true);
      run_under(policy, run);
      BOOST_CHECK_EQUAL(run.report.partitions_completed, kJobs);
      BOOST_REQUIRE_EQUAL(run.workload.found_.size(), static_cast<std::size_t>(kJobs));
      for (const auto& [job, found] : run.workload.found_) {
        BOOST_TEST_CONTEXT("job " << job) {
          for (std::size_t input = 0; input < 4; ++input) BOOST_CHECK(found[input] == expected_bytes(job, input));
          BOOST_CHECK_EQUAL(run.workload.left_to_program_.at(job), policy == Policy::budgeted);
        }
      }
      // Budgeted pre-staged a and b at most: c and the extra input never went up for it.
      for (const auto& job : run.report.jobs) {
        if (policy == Policy::budgeted) BOOST_CHECK_LE(job.prestaged_bytes, 2 * kInputBytes);
      }
      BOOST_CHECK_EQUAL(run.memory_held, 0u);
    }
  }
}
