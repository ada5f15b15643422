// SimDevice's own machinery: determinism, the checker, fault points and functional mode. The
// device-model files, the trace export and the measured facts are simulator_test.cpp's.
#define BOOST_TEST_MODULE simulator_checks
#include <boost/test/unit_test.hpp>

#include "config/config_table.hpp"
#include "contract/device_contract.hpp"
#include "coordinator/async_wait.hpp"
#include "device/kernel_abi.hpp"
#include "support/sim_harness.hpp"
#include "trace/svg_timeline.hpp"

#include <boost/asio/this_coro.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <fstream>
#include <set>
#include <sstream>

using namespace stagehand;
using testing::SimHarness;

namespace {

// A scenario that touches every engine and both allocators: three streams, pinned and pageable
// copies both ways, events between streams, kernels, pool blocks freed on one stream and reused
// on another, synchronous allocations, and host callbacks.
asio::awaitable<void> mixed_scenario(SimHarness& h) {
  auto& device = h.device;
  std::vector<StreamHandle> streams{device.create_stream(), device.create_stream(), device.create_stream()};
  auto event = device.create_event();
  auto host = co_await device.allocate_pinned_host(64 * kMiB);
  auto pageable = h.system.virtual_host_range(16 * kMiB);
  auto fixed = co_await device.allocate(64 * kMiB);
  int callbacks = 0;
  for (int round = 0; round < 20; ++round) {
    auto& upload = streams[round % 3];
    auto& compute = streams[(round + 1) % 3];
    auto block = co_await device.allocate_async(256 * kMiB, upload);
    co_await device.copy_to_device(block, host, upload);
    device.record_event(event, upload);
    device.stream_wait_event(compute, event);
    KernelLaunch kernel = contract::busy_wait((round % 5 + 1) * kMillisecond);
    kernel.reads.push_back(BufferUse{block, 64 * kMiB});
    kernel.writes.push_back(BufferUse{fixed, 64 * kMiB});
    device.launch(kernel, compute);
    device.free_async(block, compute);
    device.host_callback(compute, [&callbacks] { ++callbacks; });
    if (round % 4 == 0) co_await device.copy_to_device(fixed, pageable, compute);
    if (round % 7 == 0) {
      device.record_event(event, compute);
      device.stream_wait_event(upload, event);
      co_await device.copy_to_host(host, fixed, upload);
    }
  }
  co_await device.synchronize_device();
  BOOST_CHECK_EQUAL(callbacks, 20);
  co_await device.free(fixed);
  co_await device.free_pinned_host(host);
  device.destroy_event(event);
  for (auto stream : streams) device.destroy_stream(stream);
}

std::uint64_t mixed_trace_hash(std::uint64_t seed, double jitter) {
  sim::SimOptions options;
  options.seed = seed;
  options.duration_jitter = jitter;
  options.keep_trace_events = false;
  SimHarness harness("h200", options);
  harness.run(mixed_scenario);
  BOOST_REQUIRE(harness.device.check().clean());
  return harness.system.trace().hash();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(determinism)

BOOST_AUTO_TEST_CASE(one_seed_gives_one_trace_hash_over_100_runs) {
  auto first = mixed_trace_hash(7, 0.2);
  for (int run = 1; run < 100; ++run) BOOST_REQUIRE_EQUAL(mixed_trace_hash(7, 0.2), first);
}

BOOST_AUTO_TEST_CASE(other_seeds_with_jitter_give_other_traces) {
  std::set<std::uint64_t> hashes;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) hashes.insert(mixed_trace_hash(seed, 0.2));
  BOOST_CHECK_EQUAL(hashes.size(), 10u);
}

BOOST_AUTO_TEST_CASE(without_jitter_the_seed_changes_only_pool_reuse_choices) {
  // With no jitter the durations are fixed; the trace may differ only where the seed picks which
  // pending block the pool reuses. The same seed still gives the same hash.
  BOOST_CHECK_EQUAL(mixed_trace_hash(3, 0.0), mixed_trace_hash(3, 0.0));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(checker)

BOOST_AUTO_TEST_CASE(reports_a_planted_leak_of_each_kind) {
  SimHarness harness("h200");
  harness.run([](SimHarness& h) -> asio::awaitable<void> {
    auto stream = h.device.create_stream();
    h.device.create_event();
    co_await h.device.allocate(1 * kMiB);
    co_await h.device.allocate_async(2 * kMiB, stream);
    co_await h.device.allocate_pinned_host(4 * kMiB);
    co_await h.device.register_host(h.system.virtual_host_range(8 * kMiB));
    co_await h.device.synchronize_stream(stream);
  });
  auto report = harness.device.check();
  BOOST_TEST_MESSAGE(report.describe());
  BOOST_REQUIRE_EQUAL(report.leaks.size(), 6u);
  auto text = report.describe();
  for (const char* expected :
       {"synchronous device allocation of 1.0 MiB", "stream-ordered device allocation of 2.0 MiB",
        "stream 1 never destroyed", "event 1 never destroyed", "4.0 MiB", "never unregistered"}) {
    BOOST_TEST(text.find(expected) != std::string::npos, "missing: " << expected);
  }
}

BOOST_AUTO_TEST_CASE(a_clean_program_has_a_clean_report) {
  SimHarness harness("h200");
  harness.run(mixed_scenario);
  BOOST_TEST(harness.device.check().clean(), harness.device.check().describe());
}

// Uploads on one stream, computes on another, waiting for the upload as `wait` says.
enum class Wait { none, event, host_synchronize };
sim::CheckerReport upload_then_compute(Wait wait) {
  SimHarness harness("h200");
  harness.run([wait](SimHarness& h) -> asio::awaitable<void> {
    auto& device = h.device;
    auto upload = device.create_stream();
    auto compute = device.create_stream();
    auto uploaded = device.create_event();
    auto host = co_await device.allocate_pinned_host(1 * kGiB);
    auto buffer = co_await device.allocate(1 * kGiB);
    co_await device.copy_to_device(buffer, host, upload);
    device.record_event(uploaded, upload);
    if (wait == Wait::event) device.stream_wait_event(compute, uploaded);
    if (wait == Wait::host_synchronize) co_await device.synchronize_stream(upload);
    auto kernel = contract::busy_wait(1 * kMillisecond);
    kernel.reads.push_back(BufferUse{buffer, 1 * kGiB});
    device.launch(kernel, compute);
    co_await device.synchronize_device();
    co_await device.free(buffer);
    co_await device.free_pinned_host(host);
    device.destroy_event(uploaded);
    device.destroy_stream(upload);
    device.destroy_stream(compute);
  });
  return harness.device.check();
}

BOOST_AUTO_TEST_CASE(catches_a_kernel_that_never_waited_for_its_upload) {
  auto report = upload_then_compute(Wait::none);
  BOOST_REQUIRE_EQUAL(report.unsynchronized_reads.size(), 1u);
  BOOST_TEST(report.unsynchronized_reads[0].find("kernel 'busy_wait'") != std::string::npos);
  BOOST_TEST(report.unsynchronized_reads[0].find("copy to device on stream 1") != std::string::npos);
  BOOST_CHECK(report.leaks.empty());
}

BOOST_AUTO_TEST_CASE(accepts_an_event_wait_or_a_host_synchronise) {
  BOOST_TEST(upload_then_compute(Wait::event).clean(), upload_then_compute(Wait::event).describe());
  BOOST_TEST(upload_then_compute(Wait::host_synchronize).clean());
}

BOOST_AUTO_TEST_CASE(rejects_use_of_a_freed_pointer) {
  SimHarness harness("h200");
  BOOST_CHECK_EXCEPTION(harness.run([](SimHarness& h) -> asio::awaitable<void> {
    auto stream = h.device.create_stream();
    auto block = co_await h.device.allocate_async(1 * kMiB, stream);
    h.device.free_async(block, stream);
    h.device.memset_async(block, 0, 1 * kMiB, stream);
  }),
                        DeviceError, [](const DeviceError& error) {
                          return error.errc() == DeviceErrc::invalid_value &&
                                 std::string(error.what()).find("not in a live allocation") != std::string::npos;
                        });
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(faults)

BOOST_AUTO_TEST_CASE(fails_the_nth_allocation) {
  FaultPlan faults;
  faults.fail_allocation_number = 3;
  SimHarness harness("h200", {}, faults);
  int succeeded = 0;
  BOOST_CHECK_EXCEPTION(harness.run([&](SimHarness& h) -> asio::awaitable<void> {
    auto stream = h.device.create_stream();
    for (int i = 0; i < 5; ++i) {
      co_await h.device.allocate_async(1 * kMiB, stream);
      ++succeeded;
    }
  }),
                        DeviceError,
                        [](const DeviceError& error) { return error.errc() == DeviceErrc::out_of_memory; });
  BOOST_CHECK_EQUAL(succeeded, 2);
  BOOST_CHECK_EQUAL(harness.device.stats().out_of_memory_count, 1u);
}

BOOST_AUTO_TEST_CASE(fails_host_pinning) {
  FaultPlan faults;
  faults.fail_host_pin_number = 1;
  SimHarness harness("h200", {}, faults);
  BOOST_CHECK_EXCEPTION(harness.run([](SimHarness& h) -> asio::awaitable<void> {
    co_await h.device.register_host(h.system.virtual_host_range(1 * kGiB));
  }),
                        DeviceError,
                        [](const DeviceError& error) { return error.errc() == DeviceErrc::host_pin_failed; });
  BOOST_CHECK(harness.device.check().leaks.empty());  // nothing was pinned
}

// The plan's failed kernel loses the device when it ends, as a kernel that faults loses a CUDA
// context: the wait names the kernel, and the kernel queued behind it never runs. (Every later call
// failing is the Device contract's fact a_failed_kernel_loses_the_device_for_every_later_call.)
BOOST_AUTO_TEST_CASE(a_planned_kernel_fault_loses_the_device_when_the_kernel_ends) {
  FaultPlan faults;
  faults.fail_kernel_name = kernel::busy_wait;
  faults.fail_kernel_occurrence = 2;
  SimHarness harness("h200", {}, faults);
  std::string message;
  harness.run([&](SimHarness& h) -> asio::awaitable<void> {
    auto stream = h.device.create_stream();
    for (int i = 0; i < 3; ++i) h.device.launch(contract::busy_wait(kMillisecond), stream);
    try {
      co_await h.device.synchronize_stream(stream);
    } catch (const DeviceError& error) {
      if (error.errc() == DeviceErrc::device_lost) message = error.what();
    }
  });
  BOOST_TEST(message.find("kernel 'busy_wait' failed") != std::string::npos, message);
  BOOST_CHECK(harness.device.lost());
  BOOST_CHECK_EQUAL(harness.device.counters().kernels, 2u);  // the third never ran
}

BOOST_AUTO_TEST_CASE(a_lost_device_fails_every_waiter_and_every_later_call) {
  FaultPlan faults;
  faults.lose_device_at_ns = 50 * kMillisecond;
  SimHarness harness("h200", {}, faults);
  bool later_call_failed = false;
  Nanoseconds failed_at_ns = -1;
  BOOST_CHECK_EXCEPTION(harness.run([&](SimHarness& h) -> asio::awaitable<void> {
    auto stream = h.device.create_stream();
    h.device.launch(contract::busy_wait(200 * kMillisecond), stream);
    try {
      co_await h.device.synchronize_stream(stream);
    } catch (const DeviceError&) {
      failed_at_ns = h.device.now();
      try {
        h.device.create_stream();
      } catch (const DeviceError& error) {
        later_call_failed = error.errc() == DeviceErrc::device_lost;
      }
      throw;
    }
  }),
                        DeviceError, [](const DeviceError& error) { return error.errc() == DeviceErrc::device_lost; });
  BOOST_CHECK(later_call_failed);
  BOOST_CHECK_EQUAL(failed_at_ns, 50 * kMillisecond);
}

BOOST_AUTO_TEST_CASE(a_slow_link_slows_copies_by_its_factor) {
  auto time_upload = [](double factor) {
    FaultPlan faults;
    faults.pcie_slowdown_factor = factor;
    SimHarness harness("h200", {}, faults);
    Nanoseconds elapsed = 0;
    harness.run([&](SimHarness& h) -> asio::awaitable<void> {
      auto stream = h.device.create_stream();
      auto host = co_await h.device.allocate_pinned_host(1 * kGiB);
      auto buffer = co_await h.device.allocate(1 * kGiB);
      auto start = h.device.now();
      co_await h.device.copy_to_device(buffer, host, stream);
      co_await h.device.synchronize_stream(stream);
      elapsed = h.device.now() - start;
    });
    return static_cast<double>(elapsed);
  };
  BOOST_CHECK_CLOSE(time_upload(4.0) / time_upload(1.0), 4.0, 0.1);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(functional_mode)

BOOST_AUTO_TEST_CASE(kernels_run_their_host_function_on_device_memory) {
  sim::SimOptions options;
  options.functional = true;
  SimHarness harness("h200", options);
  harness.system.register_kernel("add", [](sim::KernelContext& context) {
    auto input = context.read(0);
    auto output = context.write(0);
    for (std::size_t i = 0; i < input.size(); ++i) {
      output[i] = std::byte(static_cast<std::uint8_t>(std::to_integer<std::uint8_t>(input[i]) + context.argument(0)));
    }
  });
  std::vector<std::uint8_t> result(1000);
  harness.run([&](SimHarness& h) -> asio::awaitable<void> {
    auto& device = h.device;
    auto stream = device.create_stream();
    auto host = co_await device.allocate_pinned_host(1000);
    for (std::size_t i = 0; i < 1000; ++i) host.data()[i] = std::byte(static_cast<std::uint8_t>(i));
    auto input = co_await device.allocate_async(1000, stream);
    auto output = co_await device.allocate_async(1000, stream);
    co_await device.copy_to_device(input, host, stream);
    device.launch(KernelLaunch{"add", 1000, {3}, {{input, 1000}}, {{output, 1000}}}, stream);
    co_await device.copy_to_host(host, output, stream);
    co_await device.synchronize_stream(stream);
    std::memcpy(result.data(), host.data(), 1000);
    device.free_async(input, stream);
    device.free_async(output, stream);
    co_await device.free_pinned_host(host);
    device.destroy_stream(stream);
  });
  for (std::size_t i = 0; i < 1000; ++i) BOOST_REQUIRE_EQUAL(result[i], static_cast<std::uint8_t>(i + 3));
}

BOOST_AUTO_TEST_CASE(an_unknown_kernel_is_an_error_at_launch) {
  SimHarness harness("h200");
  BOOST_CHECK_EXCEPTION(harness.run([](SimHarness& h) -> asio::awaitable<void> {
    h.device.launch(KernelLaunch{"no_such_kernel", 1, {}, {}, {}}, h.device.create_stream());
    co_return;
  }),
                        DeviceError,
                        [](const DeviceError& error) { return error.errc() == DeviceErrc::unknown_kernel; });
}

// A launch names its curve: a device without that curve's instantiation refuses it, naming both,
// rather than running the other curve's kernel over its bytes.
BOOST_AUTO_TEST_CASE(a_launch_over_a_curve_without_the_kernel_is_refused_naming_both) {
  SimHarness harness("h200");
  std::string message;
  try {
    harness.run([](SimHarness& h) -> asio::awaitable<void> {
      KernelLaunch launch{kernel::busy_wait, 1, {}, {}, {}};
      launch.curve = kernel::Curve::bn254;
      h.device.launch(launch, h.device.create_stream());
      co_return;
    });
  } catch (const DeviceError& error) {
    BOOST_TEST((error.errc() == DeviceErrc::unknown_kernel));
    message = error.what();
  }
  BOOST_TEST(message.find("'busy_wait'") != std::string::npos, message);
  BOOST_TEST(message.find("bn254") != std::string::npos, message);
}

BOOST_AUTO_TEST_SUITE_END()
