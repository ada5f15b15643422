// SimDevice's device-model files, the trace export, the measured facts of the H200 it charges
// (host calls, pinning) and its deadlock report. Determinism, the checker, fault points and
// functional mode are simulator_checks_test.cpp's.
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
  BOOST_TEST(error.find("bad.toml:" + std::to_string(line) +
                        ": key 'device.memory_gib': expected a number, found a string") == 0,
             error);
}

BOOST_AUTO_TEST_CASE(a_missing_key_out_of_range_value_and_syntax_error_are_named) {
  auto text = valid_model();
  auto missing = text;
  auto at = missing.find("malloc_reclaims_idle_pool");
  missing.erase(at, missing.find('\n', at) - at);
  BOOST_TEST(error_of(missing).find("'memory.malloc_reclaims_idle_pool': missing") != std::string::npos,
             error_of(missing));
  auto negative = text;
  at = negative.find("register_ms_per_gib = ");
  negative.replace(at, negative.find('\n', at) - at, "register_ms_per_gib = -3");
  BOOST_TEST(error_of(negative).find("'host.register_ms_per_gib': -3 is out of range") != std::string::npos,
             error_of(negative));
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

// The h200 model with two Groth16 MSMs: G1 with a BN254 time of its own, G2 without.
std::string model_with_a_bn254_time(const std::string& bn254_table_extra = "") {
  return valid_model() +
         "\n[kernels.groth16_msm_g1]\nfixed_ns = 1000\nns_per_unit = 8\nns_per_light_unit = 1\nscratch_fixed_mib = 2\n"
         "[kernels.groth16_msm_g1.bn254]\nfixed_ns = 500\nns_per_unit = 3\n" +
         bn254_table_extra + "[kernels.groth16_msm_g2]\nfixed_ns = 2000\nns_per_unit = 30\n";
}

// A BN254 launch is charged its kernel's [kernels.NAME.bn254] time, a BLS12-381 launch the
// kernel's own; a kernel without a BN254 time charges BN254 launches its own; scratch is the
// kernel's own for both.
BOOST_AUTO_TEST_CASE(a_bn254_launch_is_charged_its_kernels_bn254_time_where_there_is_one) {
  const auto model = sim::parse_device_model(model_with_a_bn254_time(), "bn254.toml");
  using kernel::Curve;
  BOOST_CHECK_EQUAL(model.kernel_ns(kernel::groth16_msm_g1, Curve::bn254, 100), 500 + 3 * 100);
  BOOST_CHECK_EQUAL(model.kernel_ns(kernel::groth16_msm_g1, Curve::bls12_381, 100), 1000 + 8 * 100);
  // Light points: the BN254 table gives none, so they cost its full points'; the own table's 1 ns stays BLS12-381's.
  BOOST_CHECK_EQUAL(model.kernel_ns(kernel::groth16_msm_g1, Curve::bn254, 100, 40), 500 + 3 * 100);
  BOOST_CHECK_EQUAL(model.kernel_ns(kernel::groth16_msm_g1, Curve::bls12_381, 100, 40), 1000 + 8 * 60 + 40);
  BOOST_CHECK_EQUAL(model.kernel_ns(kernel::groth16_msm_g2, Curve::bn254, 100), 2000 + 30 * 100);
  BOOST_CHECK_EQUAL(model.kernel_ns(kernel::groth16_msm_g2, Curve::bls12_381, 100), 2000 + 30 * 100);
  BOOST_CHECK_EQUAL(model.kernel_scratch_bytes(kernel::groth16_msm_g1, 100), 2 * kMiB);
  BOOST_CHECK(!model.bn254_kernels.contains(kernel::groth16_msm_g2));
}

BOOST_AUTO_TEST_CASE(a_bad_bn254_table_names_file_line_and_key) {
  auto misspelt = model_with_a_bn254_time("ns_per_unt = 4\n");
  const auto line = [](const std::string& text, const std::string& what) {
    const auto at = text.find(what);
    BOOST_REQUIRE(at != std::string::npos);
    return std::to_string(1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
  };
  BOOST_TEST(error_of(misspelt) ==
                 "bad.toml:" + line(misspelt, "ns_per_unt") + ": unknown key 'kernels.groth16_msm_g1.bn254.ns_per_unt'",
             error_of(misspelt));
  auto scratch = model_with_a_bn254_time("scratch_bytes_per_unit = 40\n");
  BOOST_TEST(error_of(scratch).find("bad.toml:" + line(scratch, "scratch_bytes_per_unit = 40") +
                                    ": key 'kernels.groth16_msm_g1.bn254.scratch_bytes_per_unit': scratch is the "
                                    "kernel's own") == 0,
             error_of(scratch));
  auto negative = model_with_a_bn254_time("ns_per_light_unit = -1\n");
  BOOST_TEST(error_of(negative).find("'kernels.groth16_msm_g1.bn254.ns_per_light_unit': -1 is out of range") !=
                 std::string::npos,
             error_of(negative));
  // A kernel with no BN254 instance (kernel_abi.hpp) has no BN254 time to give.
  auto bls_only = valid_model() + "\n[kernels.msm_batch.bn254]\nns_per_unit = 1\n";
  BOOST_TEST(error_of(bls_only).find("key 'kernels.msm_batch.bn254': kernel 'msm_batch' has no bn254 instance") !=
                 std::string::npos,
             error_of(bls_only));
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
  BOOST_CHECK(thread_names.contains("stream 1") && thread_names.contains("stream 2") &&
              thread_names.contains("host calls"));

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
// worker per GPU); h200.toml lets them run side by side, as the production prover's threads did.
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
      [&](SimHarness& harness) -> asio::awaitable<void> {
        host = co_await harness.device.allocate_pinned_host(2 * kGiB);
      },
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
    BOOST_CHECK_EXCEPTION(
        sim::run_to_completion(system, deadlocked_parent(&alive)), std::runtime_error,
        [](const std::runtime_error& error) { return std::string(error.what()).find("deadlock") == 0; });
    BOOST_TEST(alive == 0, alive << " frames of the deadlocked program are still alive");
  }
  BOOST_TEST(alive == 0);
}
