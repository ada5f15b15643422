// FaultyDevice (src/device/faulty_device.hpp): the simulator's fault points on any backend. Each
// fault on SimDevice directly, then the whole coordinator under budgeted with the adaptor over
// every GPU: exactly the affected jobs fail, each with an error that says what was injected, and
// nothing is left allocated. Also the budget's end hook (issue 22, 8): a checker hears of each
// budget before it is destroyed, and it then holds nothing.
#define BOOST_TEST_MODULE fault_adaptor
#include <boost/test/unit_test.hpp>

#include "device/faulty_device.hpp"
#include "device/kernel_abi.hpp"
#include "config/run_config.hpp"
#include "runner/sim_runner.hpp"
#include "support/sim_harness.hpp"

#include <fmt/format.h>

#include <string>

using namespace stagehand;
using testing::SimHarness;

namespace {

bool says(const std::exception& error, const std::string& what) {
  std::string message = error.what();
  return message.find(what) != std::string::npos && message.find("[injected fault]") != std::string::npos;
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// The dual-worker case under budgeted (fixtures/09): 16 GiB card, ten 2^27 partitions.
RunConfig budgeted_config() {
  return parse_run_config(R"(
[sim]
device_model = "rtx5070ti-16g"
duration_jitter = 0.02
[gpus]
vram_cap_gib = 0
[workload]
proofs = 1
partitions_per_proof = 10
domain_log2 = 27
)",
                          "fault-adaptor.toml");
}

SimulatedRun run_with(const FaultPlan& faults) {
  SimulatedRunOptions options;
  options.keep_trace_events = false;
  options.faults = faults;
  options.faults_by_adaptor = true;
  auto result = run_on_simulator(budgeted_config(), Policy::budgeted, options);
  BOOST_TEST(result.error.empty(), result.error);
  BOOST_TEST(result.checker.clean(), result.checker.describe());
  for (std::size_t i = 0; i < result.system->device_count(); ++i) {
    BOOST_TEST(result.system->device(i).memory_held_bytes() == 0u, "GPU " << i << " still holds memory");
  }
  return result;
}

// FaultPlan with what `set` sets (designated initialisers warn of the members left out).
template <class Set>
FaultPlan faults(Set set) {
  FaultPlan f;
  set(f);
  return f;
}

std::string errors(const std::vector<const JobRecord*>& jobs) {
  std::string text;
  for (const auto* job : jobs) text += fmt::format("\n  partition {}: {}", job->index, job->error);
  return text;
}

std::vector<const JobRecord*> failed_jobs(const RunReport& report) {
  std::vector<const JobRecord*> failed;
  for (const auto& job : report.jobs) {
    if (!job.completed()) failed.push_back(&job);
  }
  return failed;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(on_sim_device)

BOOST_AUTO_TEST_CASE(fails_the_nth_allocation_and_allocates_nothing_for_it) {
  SimHarness h("h200");
  FaultyDevice device(h.device, faults([&](FaultPlan& f) { f.fail_allocation_number = 2; }));
  h.run([&](SimHarness&) -> asio::awaitable<void> {
    auto stream = device.create_stream();
    auto first = co_await device.allocate(kMiB);
    BOOST_CHECK_EXCEPTION(co_await device.allocate_async(kMiB, stream), DeviceError, [](const DeviceError& e) {
      return e.errc() == DeviceErrc::out_of_memory && says(e, "allocation 2");
    });
    auto third = co_await device.allocate_async(kMiB, stream);
    device.free_async(third, stream);
    co_await device.free(first);
    co_await device.synchronize_stream(stream);
    device.destroy_stream(stream);
  });
  BOOST_TEST(device.injected_count() == 1u);
  BOOST_TEST(h.device.memory_held_bytes() == 0u);
  BOOST_TEST(h.device.check().clean());
}

// Drawn failures hit stream-ordered allocations (a job's memory), never plain ones (a key set up
// once for the run).
BOOST_AUTO_TEST_CASE(fails_allocations_with_a_probability_the_same_way_for_a_seed) {
  auto failures = [](std::uint64_t seed) {
    SimHarness h("h200");
    FaultyDevice device(h.device, faults([&](FaultPlan& f) {
                          f.allocation_failure_probability = 0.3;
                          f.seed = seed;
                        }));
    std::string pattern;
    h.run([&](SimHarness&) -> asio::awaitable<void> {
      auto stream = device.create_stream();
      for (int i = 0; i < 40; ++i) {
        auto plain = co_await device.allocate(kMiB);  // never drawn
        co_await device.free(plain);
        try {
          auto pointer = co_await device.allocate_async(kMiB, stream);
          device.free_async(pointer, stream);
          pattern += '.';
        } catch (const DeviceError&) {
          pattern += 'x';
        }
      }
      co_await device.synchronize_stream(stream);
      device.destroy_stream(stream);
    });
    return pattern;
  };
  auto a = failures(1);
  BOOST_TEST(a == failures(1));
  BOOST_TEST(a != failures(2));
  BOOST_TEST(has(a, "x"));
  BOOST_TEST(has(a, "."));
}

BOOST_AUTO_TEST_CASE(fails_the_nth_pinning) {
  SimHarness h("h200");
  FaultyDevice device(h.device, faults([&](FaultPlan& f) { f.fail_host_pin_number = 1; }));
  h.run([&](SimHarness&) -> asio::awaitable<void> {
    BOOST_CHECK_EXCEPTION(co_await device.allocate_pinned_host(kMiB), DeviceError, [](const DeviceError& e) {
      return e.errc() == DeviceErrc::host_pin_failed && says(e, "allocate_pinned_host");
    });
    auto pinned = co_await device.allocate_pinned_host(kMiB);
    co_await device.free_pinned_host(pinned);
  });
  BOOST_TEST(h.device.check().clean());
}

BOOST_AUTO_TEST_CASE(fails_a_named_kernel_at_its_streams_waits_until_synchronised) {
  SimHarness h("h200");
  FaultyDevice device(h.device, faults([&](FaultPlan& f) {
                        f.kernel_error_name = std::string(kernel::busy_wait);
                        f.kernel_error_occurrence = 2;
                      }));
  h.run([&](SimHarness&) -> asio::awaitable<void> {
    auto stream = device.create_stream();
    auto buffer = co_await device.allocate_async(kMiB, stream);
    KernelLaunch launch{std::string(kernel::busy_wait), 1024, {}, {}, {{buffer, kMiB}}};
    device.launch(launch, stream);
    co_await device.synchronize_stream(stream);  // the first launch is fine
    device.launch(launch, stream);
    auto event = device.create_event();
    device.record_event(event, stream);
    // Every wait on the stream's work sees the failure (a budget's watcher as much as the program),
    // until the stream is synchronised, which reports it a last time and clears it.
    for (int wait = 0; wait < 2; ++wait) {
      BOOST_CHECK_EXCEPTION(co_await device.wait_event(event), DeviceError, [](const DeviceError& e) {
        return e.errc() == DeviceErrc::kernel_failed && says(e, "busy_wait");
      });
    }
    BOOST_CHECK_EXCEPTION(co_await device.synchronize_stream(stream), DeviceError,
                          [](const DeviceError& e) { return e.errc() == DeviceErrc::kernel_failed; });
    co_await device.synchronize_stream(stream);  // cleared
    device.launch(launch, stream);
    co_await device.synchronize_stream(stream);  // the third launch is fine
    device.free_async(buffer, stream);
    co_await device.synchronize_stream(stream);
    device.destroy_event(event);
    device.destroy_stream(stream);
  });
  BOOST_TEST(h.device.memory_held_bytes() == 0u);
}

BOOST_AUTO_TEST_CASE(delays_copies_from_a_time_on) {
  auto copy_ns = [](Nanoseconds delay) {
    SimHarness h("h200");
    FaultyDevice device(h.device, faults([&](FaultPlan& f) { f.copy_delay_ns = delay; }));
    Nanoseconds took = 0;
    h.run([&](SimHarness&) -> asio::awaitable<void> {
      auto stream = device.create_stream();
      auto host = co_await device.allocate_pinned_host(64 * kMiB);
      auto buffer = co_await device.allocate(64 * kMiB);
      auto began = device.now();
      co_await device.copy_to_device(buffer, host, stream);
      co_await device.synchronize_stream(stream);
      took = device.now() - began;
      co_await device.free(buffer);
      co_await device.free_pinned_host(host);
      device.destroy_stream(stream);
    });
    return took;
  };
  auto plain = copy_ns(0);
  BOOST_TEST(copy_ns(5 * kMillisecond) == plain + 5 * kMillisecond);
}

BOOST_AUTO_TEST_CASE(a_lost_device_fails_every_call_that_works_and_still_takes_frees) {
  SimHarness h("h200");
  FaultyDevice device(h.device, faults([&](FaultPlan& f) { f.lose_device_at_ns = 10 * kMillisecond; }));
  h.run([&](SimHarness&) -> asio::awaitable<void> {
    auto stream = device.create_stream();
    auto buffer = co_await device.allocate(kMiB);
    co_await device.sleep_for(20 * kMillisecond);
    BOOST_TEST(device.lost());
    BOOST_CHECK_EXCEPTION(co_await device.allocate(kMiB), DeviceError, [](const DeviceError& e) {
      return e.errc() == DeviceErrc::device_lost && says(e, "allocate");
    });
    BOOST_CHECK_EXCEPTION(co_await device.synchronize_stream(stream), DeviceError,
                          [](const DeviceError& e) { return e.errc() == DeviceErrc::device_lost; });
    co_await device.free(buffer);
    device.destroy_stream(stream);
  });
  BOOST_TEST(h.device.memory_held_bytes() == 0u);
  BOOST_TEST(h.device.check().clean());
}

// Lost at its third launch, whenever that comes: that launch fails and so does all work after it.
BOOST_AUTO_TEST_CASE(a_device_lost_at_its_nth_launch_fails_that_launch_and_all_work_after) {
  SimHarness h("h200");
  FaultyDevice device(h.device, faults([&](FaultPlan& f) { f.lose_device_at_launch = 3; }));
  h.run([&](SimHarness&) -> asio::awaitable<void> {
    auto stream = device.create_stream();
    auto buffer = co_await device.allocate_async(kMiB, stream);
    KernelLaunch launch{std::string(kernel::busy_wait), 1024, {}, {}, {{buffer, kMiB}}};
    device.launch(launch, stream);
    device.launch(launch, stream);
    co_await device.synchronize_stream(stream);
    BOOST_TEST(!device.lost());
    BOOST_CHECK_EXCEPTION(device.launch(launch, stream), DeviceError, [](const DeviceError& e) {
      return e.errc() == DeviceErrc::device_lost && says(e, "kernel launch 3");
    });
    BOOST_TEST(device.lost());
    BOOST_CHECK_EXCEPTION(co_await device.allocate(kMiB), DeviceError,
                          [](const DeviceError& e) { return e.errc() == DeviceErrc::device_lost; });
    device.free_async(buffer, stream);
    co_await h.device.synchronize_stream(stream);  // behind the lost adaptor, the device still runs
    device.destroy_stream(stream);
  });
  BOOST_TEST(h.device.memory_held_bytes() == 0u);
  BOOST_TEST(h.device.counters().kernels == 2u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(coordinator_under_budgeted)

BOOST_AUTO_TEST_CASE(without_faults_every_partition_completes) {
  auto result =
      run_with(faults([&](FaultPlan& f) { f.copy_delay_ns = 1; }));  // the adaptor in place, a negligible delay
  BOOST_TEST(failed_jobs(result.report).empty());
}

BOOST_AUTO_TEST_CASE(a_failed_allocation_fails_exactly_its_job) {
  for (std::uint64_t n : {6, 15, 30}) {
    auto result = run_with(faults([&](FaultPlan& f) { f.fail_allocation_number = n; }));
    auto failed = failed_jobs(result.report);
    BOOST_TEST_CONTEXT("allocation " << n) {
      BOOST_TEST_REQUIRE(failed.size() == 1u, errors(failed));
      BOOST_TEST(has(failed[0]->error, fmt::format("allocation {} out of memory [injected fault]", n)),
                 failed[0]->error);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_failed_pinning_fails_exactly_its_job_or_names_itself) {
  auto result = run_with(faults([&](FaultPlan& f) { f.fail_host_pin_number = 3; }));
  for (const auto* job : failed_jobs(result.report)) BOOST_TEST(has(job->error, "[injected fault]"), job->error);
}

BOOST_AUTO_TEST_CASE(a_failed_kernel_fails_exactly_its_job) {
  auto result = run_with(faults([&](FaultPlan& f) {
    f.kernel_error_name = std::string(kernel::msm_reduce);
    f.kernel_error_occurrence = 3;
  }));
  auto failed = failed_jobs(result.report);
  BOOST_TEST_REQUIRE(failed.size() == 1u, errors(failed));
  BOOST_TEST(has(failed[0]->error, "kernel 'msm_reduce' failed [injected fault]"), failed[0]->error);
}

BOOST_AUTO_TEST_CASE(a_lost_device_fails_every_job_not_done_and_leaks_nothing) {
  auto whole = run_with(faults([&](FaultPlan& f) { f.copy_delay_ns = 1; }));
  auto lose_at = whole.report.makespan_ns / 2;
  auto result = run_with(faults([&](FaultPlan& f) { f.lose_device_at_ns = lose_at; }));
  auto failed = failed_jobs(result.report);
  BOOST_TEST(!failed.empty());
  BOOST_TEST(failed.size() < result.report.jobs.size());
  for (const auto* job : failed) BOOST_TEST(has(job->error, "lost"), job->error);
}

BOOST_AUTO_TEST_CASE(a_checker_hears_of_each_budget_before_it_goes_and_it_holds_nothing) {
  SimulatedRunOptions options;
  options.keep_trace_events = false;
  int budgets = 0, gone = 0;
  Bytes held = 1;
  options.on_budget = [&](int, const VramBudget&, const sim::SimDevice&) { ++budgets; };
  options.on_budget_gone = [&](int, const VramBudget& budget) {
    ++gone;
    held = budget.held_bytes();
  };
  auto config = budgeted_config();
  config.gpus = 2;
  auto result = run_on_simulator(config, Policy::budgeted, options);
  BOOST_TEST(result.error.empty(), result.error);
  BOOST_TEST(budgets == 2);
  BOOST_TEST(gone == 2);
  BOOST_TEST(held == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
