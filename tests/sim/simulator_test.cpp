// SimDevice beyond the measured facts: determinism, the checker, fault points, functional mode,
// device-model files, and the trace export.
#define BOOST_TEST_MODULE simulator
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
  for (const char* expected : {"synchronous device allocation of 1.0 MiB", "stream-ordered device allocation of 2.0 MiB",
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
                        DeviceError, [](const DeviceError& error) { return error.errc() == DeviceErrc::out_of_memory; });
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
                        DeviceError, [](const DeviceError& error) { return error.errc() == DeviceErrc::host_pin_failed; });
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
                        DeviceError, [](const DeviceError& error) { return error.errc() == DeviceErrc::unknown_kernel; });
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(device_models)

std::string error_of(const std::string& text) {
  try {
    sim::parse_device_model(text, "bad.toml");
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "no error";
}

std::string valid_model() {
  std::ifstream in(sim::find_device_model("h200"));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

BOOST_AUTO_TEST_CASE(the_shipped_models_load) {
  auto h200 = sim::load_device_model(sim::find_device_model("h200"));
  BOOST_CHECK_EQUAL(h200.async_engine_count(), 3);
  BOOST_CHECK(h200.malloc_reclaims_idle_pool);
  auto rtx = sim::load_device_model(sim::find_device_model("rtx5070ti-16g"));
  BOOST_CHECK(!rtx.malloc_reclaims_idle_pool);
  BOOST_CHECK_LE(rtx.memory_bytes, 16 * kGiB);
}

BOOST_AUTO_TEST_CASE(an_unknown_key_names_file_line_and_key) {
  auto text = valid_model();
  auto at = text.find("[pcie]\n") + 7;
  text.insert(at, "pageable_gbs = 8.5\n");
  int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
  auto error = error_of(text);
  BOOST_TEST(error == "bad.toml:" + std::to_string(line) + ": unknown key 'pcie.pageable_gbs'", error);
}

BOOST_AUTO_TEST_CASE(a_wrong_type_names_the_line_and_the_key) {
  auto text = valid_model();
  auto line_start = text.find("memory_gib");
  text.replace(line_start, text.find('\n', line_start) - line_start, "memory_gib = \"lots\"");
  auto error = error_of(text);
  int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(line_start), '\n'));
  BOOST_TEST(error.find("bad.toml:" + std::to_string(line) + ": key 'device.memory_gib': expected a number, found a string") == 0, error);
}

BOOST_AUTO_TEST_CASE(a_missing_key_out_of_range_value_and_syntax_error_are_named) {
  auto text = valid_model();
  auto missing = text;
  auto at = missing.find("malloc_reclaims_idle_pool");
  missing.erase(at, missing.find('\n', at) - at);
  BOOST_TEST(error_of(missing).find("'memory.malloc_reclaims_idle_pool': missing") != std::string::npos, error_of(missing));
  auto negative = text;
  at = negative.find("register_ms_per_gib = ");
  negative.replace(at, negative.find('\n', at) - at, "register_ms_per_gib = -3");
  BOOST_TEST(error_of(negative).find("'host.register_ms_per_gib': -3 is out of range") != std::string::npos, error_of(negative));
  BOOST_TEST(error_of("[device\nname = 1").find("bad.toml:1:") == 0, error_of("[device\nname = 1"));
}

BOOST_AUTO_TEST_CASE(an_unknown_kernel_name_is_refused_naming_file_line_and_kernel) {
  auto text = valid_model();
  const std::string table = std::string("[kernels.") + kernel::msm_batch + "]";
  auto at = text.find(table);
  BOOST_REQUIRE(at != std::string::npos);
  text.insert(at + table.size() - 1, "h");  // [kernels.msm_batchh]
  int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
  auto path = std::filesystem::temp_directory_path() / "stagehand-misspelt-kernel.toml";
  std::ofstream(path) << text;
  std::string error = "no error";
  try {
    sim::load_device_model(path);
  } catch (const ConfigError& caught) {
    error = caught.what();
  }
  std::filesystem::remove(path);
  BOOST_TEST(error.find(path.string() + ":" + std::to_string(line) + ":") == 0, error);
  BOOST_TEST(error.find("msm_batchh") != std::string::npos, error);
  BOOST_TEST(error.find("unknown kernel") != std::string::npos, error);
}

BOOST_AUTO_TEST_CASE(every_kernel_of_the_shipped_models_is_a_known_kernel) {
  for (const auto* model : {"h200", "h200-measured", "rtx5070ti-16g"}) {
    for (const auto& [name, cost] : sim::load_device_model(sim::find_device_model(model)).kernels) {
      BOOST_TEST(kernel::is_known(name), model << ": " << name);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(trace)

BOOST_AUTO_TEST_CASE(exports_chrome_trace_json_with_named_tracks_and_dependencies) {
  SimHarness harness("rtx5070ti-16g");
  harness.run([](SimHarness& h) -> asio::awaitable<void> {
    auto first = h.device.create_stream();
    auto second = h.device.create_stream();
    auto block = co_await h.device.allocate_async(12 * kGiB, first);
    h.device.launch(contract::busy_wait(500 * kMillisecond), first);
    h.device.free_async(block, first);
    auto reused = co_await h.device.allocate_async(8 * kGiB, second);
    h.device.free_async(reused, second);
    co_await h.device.synchronize_device();
    h.device.destroy_stream(first);
    h.device.destroy_stream(second);
  });
  std::stringstream out;
  harness.system.trace().write_chrome_json(out);
  auto json = nlohmann::json::parse(out.str());
  int kernels = 0;
  int flow_starts = 0;
  int hidden = 0;
  std::set<std::string> thread_names;
  for (const auto& event : json["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "thread_name") thread_names.insert(event["args"]["name"]);
    if (event["ph"] == "X" && event["name"] == kernel::busy_wait) {
      ++kernels;
      BOOST_CHECK_CLOSE(event["dur"].get<double>(), 500'000.0, 0.001);  // microseconds
    }
    if (event["ph"] == "s") ++flow_starts;
    if (event["name"] == "hidden dependency (pool reuse)") ++hidden;
  }
  BOOST_CHECK_EQUAL(kernels, 1);
  BOOST_CHECK_EQUAL(flow_starts, 1);
  BOOST_CHECK_EQUAL(hidden, 1);
  BOOST_CHECK(thread_names.contains("stream 1") && thread_names.contains("stream 2") && thread_names.contains("host calls"));

  // The same trace as a picture: one bar for the kernel on the compute engine's row.
  auto svg_path = std::filesystem::temp_directory_path() / "stagehand-trace-test.svg";
  write_svg_timeline(harness.system.trace(), svg_path, "test");
  std::ifstream svg_file(svg_path);
  std::stringstream svg;
  svg << svg_file.rdbuf();
  std::filesystem::remove(svg_path);
  BOOST_TEST(svg.str().find("<svg") == 0);
  BOOST_TEST(svg.str().find("<title>busy_wait</title>") != std::string::npos);
  BOOST_TEST(svg.str().find("GPU 0 compute engine</text>") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

// config/devices/h200-measured.toml queues host-blocking calls as CudaDevice does (one host
// worker per GPU); h200.toml lets them run side by side, as the production engine's threads did.
BOOST_AUTO_TEST_CASE(host_calls_queue_where_the_model_says_so) {
  for (const auto* model : {"h200", "h200-measured"}) {
    SimHarness h(model);
    const bool queues = std::string(model) == "h200-measured";
    Nanoseconds first_done = 0, second_done = 0;
    h.run([&](SimHarness& harness) -> asio::awaitable<void> {
      auto& device = harness.device;
      const auto a = harness.system.virtual_host_range(2 * kGiB);
      const auto b = harness.system.virtual_host_range(2 * kGiB);
      // Two workers pin at the same instant; a second is far longer than both calls.
      auto pin = [&](HostRange range, Nanoseconds& at) -> asio::awaitable<void> {
        co_await device.register_host(range);
        at = device.now();
      };
      asio::co_spawn(device.executor(), pin(a, first_done), asio::detached);
      asio::co_spawn(device.executor(), pin(b, second_done), asio::detached);
      co_await device.sleep_for(kSecond);
      BOOST_REQUIRE(first_done > 0 && second_done > 0);
      co_await device.unregister_host(a);
      co_await device.unregister_host(b);
    });
    const double one = static_cast<double>(std::min(first_done, second_done));
    const double other = static_cast<double>(std::max(first_done, second_done));
    BOOST_TEST_CONTEXT(model) {
      if (queues) {
        BOOST_CHECK_CLOSE(other, 2 * one, 1.0);  // the second waited for the first
      } else {
        BOOST_CHECK_CLOSE(other, one, 1.0);  // side by side
      }
    }
  }
}

namespace {

// A kernel launched while `pin` (a host call that pins memory, on a coroutine of its own) is under
// way: on the measured model it starts when that call ends, as the H200's driver holds the GPU's
// other calls (bench/pinning_stalls.cu); on h200.toml at once. `release` undoes the pinning.
void check_pinning_holds_a_launch(const std::function<asio::awaitable<void>(SimHarness&)>& pin,
                                  const std::function<asio::awaitable<void>(SimHarness&)>& release) {
  for (const auto* model : {"h200", "h200-measured"}) {
    SimHarness h(model);
    const bool holds = std::string(model) == "h200-measured";
    Nanoseconds pinned = 0, kernel_done = 0;
    h.run([&](SimHarness& harness) -> asio::awaitable<void> {
      auto& device = harness.device;
      auto pinning = [&]() -> asio::awaitable<void> {
        co_await pin(harness);
        pinned = device.now();
      };
      asio::co_spawn(device.executor(), pinning(), asio::detached);
      co_await device.sleep_for(kMillisecond);  // the pinning call is under way
      const auto stream = device.create_stream();
      device.launch(contract::busy_wait(10 * kMillisecond), stream);
      co_await device.synchronize_stream(stream);
      kernel_done = device.now();
      co_await device.sleep_for(2 * kSecond);
      co_await release(harness);
    });
    BOOST_TEST_CONTEXT(model) {
      BOOST_REQUIRE(pinned > 20 * kMillisecond);
      if (holds) {
        BOOST_CHECK_EQUAL(kernel_done, pinned + 10 * kMillisecond);  // started when the call ended
      } else {
        BOOST_CHECK_EQUAL(kernel_done, 11 * kMillisecond);  // started at once
      }
    }
  }
}

}  // namespace

// cudaHostRegister of 6 GiB (2026-11-30: a launch waited 290-380 ms).
BOOST_AUTO_TEST_CASE(pinning_holds_launches_where_the_model_says_so) {
  HostRange range;
  check_pinning_holds_a_launch(
      [&](SimHarness& harness) -> asio::awaitable<void> {
        range = harness.system.virtual_host_range(6 * kGiB);
        co_await harness.device.register_host(range);
      },
      [&](SimHarness& harness) -> asio::awaitable<void> { co_await harness.device.unregister_host(range); });
}

// A pinned allocation of 2 GiB (2026-12-04: a copy issued during a cudaHostAlloc waited its whole
// 1.05-1.29 s; CudaDevice now maps, writes and registers, and registering holds calls too).
BOOST_AUTO_TEST_CASE(a_pinned_allocation_holds_launches_where_the_model_says_so) {
  HostRange host;
  check_pinning_holds_a_launch(
      [&](SimHarness& harness) -> asio::awaitable<void> { host = co_await harness.device.allocate_pinned_host(2 * kGiB); },
      [&](SimHarness& harness) -> asio::awaitable<void> { co_await harness.device.free_pinned_host(host); });
}

// The measured model's pinned staging buffers cost what the H200 machine measured in a 2^26
// stream's trace (2026-12-04): two 2 GiB buffers made in 137 and 231 ms (pages mapped, written and
// registered), each freed in 46 ms.
BOOST_AUTO_TEST_CASE(the_measured_model_makes_and_frees_pinned_buffers_at_the_measured_cost) {
  SimHarness h("h200-measured");
  Nanoseconds made = 0, freed = 0;
  h.run([&](SimHarness& harness) -> asio::awaitable<void> {
    auto& device = harness.device;
    const auto start = device.now();
    const auto host = co_await device.allocate_pinned_host(2 * kGiB);
    made = device.now() - start;
    co_await device.free_pinned_host(host);
    freed = device.now() - start - made;
  });
  const auto ms = [](Nanoseconds t) { return static_cast<double>(t) / kMillisecond; };
  BOOST_CHECK_CLOSE(ms(made), 184.0, 10.0);
  BOOST_CHECK_CLOSE(ms(freed), 46.0, 10.0);
}

// Issue 22, 9: a program that deadlocks leaves its coroutines suspended for good, each owned by a
// Completion in a wait list inside another suspended frame. run_to_completion must report the
// deadlock and destroy those frames (LeakSanitizer found them leaked).
namespace {

struct Alive {
  int* count;
  explicit Alive(int* c) : count(c) { ++*count; }
  ~Alive() { --*count; }
};

asio::awaitable<void> wait_forever(AsyncWaitList& never, int* alive) {
  Alive guard(alive);
  co_await never.wait();
}

// The parent owns the wait list its children wait on, and waits on one of its own: the cycle.
asio::awaitable<void> deadlocked_parent(int* alive) {
  Alive guard(alive);
  auto never = std::make_unique<AsyncWaitList>();
  auto executor = co_await asio::this_coro::executor;
  for (int i = 0; i < 3; ++i) asio::co_spawn(executor, wait_forever(*never, alive), asio::detached);
  AsyncWaitList own;
  co_await own.wait();
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_deadlock_is_reported_and_its_suspended_frames_destroyed) {
  int alive = 0;
  {
    sim::SimSystem system;
    BOOST_CHECK_EXCEPTION(sim::run_to_completion(system, deadlocked_parent(&alive)), std::runtime_error,
                          [](const std::runtime_error& error) { return std::string(error.what()).find("deadlock") == 0; });
    BOOST_TEST(alive == 0, alive << " frames of the deadlocked program are still alive");
  }
  BOOST_TEST(alive == 0);
}
