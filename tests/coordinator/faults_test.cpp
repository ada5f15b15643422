// The one fault vocabulary (device/fault_plan.hpp): its [faults] table's errors name the file, line
// and key (unknown key, wrong type, out of range, unknown kernel, the old [device_faults] name);
// every key reaches its field; each backend injects what it models and refuses what it cannot; and
// the faults both injectors model have the same effect whether SimDevice or FaultyDevice injects
// them.
#define BOOST_TEST_MODULE faults
#include <boost/test/unit_test.hpp>

#include "config/config_table.hpp"
#include "device/busy_wait.hpp"
#include "device/faulty_device.hpp"
#include "device/kernel_abi.hpp"
#include "backend/backend.hpp"
#include "config/run_config.hpp"
#include "support/policy_run.hpp"
#include "support/sim_harness.hpp"

#include <string>
#include <vector>

using namespace stagehand;
using namespace stagehand::testing;

namespace {

bool begins(const std::string& text, const std::string& start) { return text.rfind(start, 0) == 0; }

}  // namespace

BOOST_AUTO_TEST_SUITE(faults_table)

BOOST_AUTO_TEST_CASE(its_errors_name_the_file_line_and_key) {
  BOOST_TEST(config_error_of("[faults]\nfail_kernel_nam = \"ntt\"\n") ==
             "deploy.toml:2: unknown key 'faults.fail_kernel_nam'");
  BOOST_TEST(config_error_of("[faults]\nseed = \"7\"\n") ==
             "deploy.toml:2: key 'faults.seed': expected an integer, found a string");
  BOOST_TEST(config_error_of("[faults]\nkernel_error_probability = 1.5\n") ==
             "deploy.toml:2: key 'faults.kernel_error_probability': 1.5 is out of range [0, 1]");
  BOOST_TEST(config_error_of("[faults]\nfail_kernel_occurrence = 0\n") ==
             "deploy.toml:2: key 'faults.fail_kernel_occurrence': 0 is out of range [1, 9223372036854775807]");
  // A fault's GPU is one of the run's.
  BOOST_TEST(config_error_of("[gpus]\ncount = 2\n[faults]\ndevice = 2\n") ==
             "deploy.toml:4: key 'faults.device': 2 is out of range [-1, 1]");
  const auto unknown_kernel = config_error_of("[faults]\nkernel_error_name = \"nttt\"\n");
  BOOST_TEST(begins(unknown_kernel, "deploy.toml:2: key 'faults.kernel_error_name': 'nttt' is not a kernel"),
             unknown_kernel);
}

// Silently reading nothing from the old name would hide the faults it asks for.
BOOST_AUTO_TEST_CASE(the_old_table_name_is_refused_naming_the_new_one) {
  const auto error = config_error_of("[device_faults]\nkernel_failure_probability = 0.1\n");
  BOOST_TEST(begins(error, "deploy.toml:1: key 'device_faults': this table is now [faults]"), error);
  BOOST_TEST(error.find("kernel_error_name") != std::string::npos, error);
}

BOOST_AUTO_TEST_CASE(every_key_reaches_its_field) {
  const auto config = parse_run_config(R"([gpus]
count = 2
[faults]
device = 1
fail_allocation_number = 3
fail_host_pin_number = 4
fail_kernel_name = "ntt"
fail_kernel_occurrence = 5
lose_device_at_ms = 2.5
lose_device_at_launch = 6
allocation_failure_probability = 0.25
kernel_error_name = "msm_batch"
kernel_error_occurrence = 7
kernel_error_probability = 0.5
seed = 8
copy_delay_ms = 1.5
copy_delay_from_ms = 10
pcie_slowdown_factor = 3
pcie_slowdown_from_ms = 20
)",
                                       "deploy.toml");
  const auto& plan = config.faults;
  BOOST_TEST(plan.device == 1);
  BOOST_TEST(plan.fail_allocation_number == 3u);
  BOOST_TEST(plan.fail_host_pin_number == 4u);
  BOOST_TEST(plan.fail_kernel_name == "ntt");
  BOOST_TEST(plan.fail_kernel_occurrence == 5u);
  BOOST_TEST(plan.lose_device_at_ns == 2500 * kMicrosecond);
  BOOST_TEST(plan.lose_device_at_launch == 6u);
  BOOST_TEST(plan.allocation_failure_probability == 0.25);
  BOOST_TEST(plan.kernel_error_name == "msm_batch");
  BOOST_TEST(plan.kernel_error_occurrence == 7u);
  BOOST_TEST(plan.kernel_error_probability == 0.5);
  BOOST_TEST(plan.seed == 8u);
  BOOST_TEST(plan.copy_delay_ns == 1500 * kMicrosecond);
  BOOST_TEST(plan.copy_delay_from_ns == 10 * kMillisecond);
  BOOST_TEST(plan.pcie_slowdown_factor == 3.0);
  BOOST_TEST(plan.pcie_slowdown_from_ns == 20 * kMillisecond);
  // No table: no faults, and the defaults are the struct's.
  BOOST_TEST(!parse_run_config("", "deploy.toml").faults.any());
  BOOST_TEST((parse_run_config("[faults]\n", "deploy.toml").faults == FaultPlan{}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(backends)

// The slower link is the simulator's alone: a GPU run refuses it, naming the table, before it
// looks for a GPU (so the error is the same in every build).
BOOST_AUTO_TEST_CASE(the_gpu_backend_refuses_a_simulator_only_fault) {
  const auto config =
      parse_run_config("[run]\nbackend = \"cuda\"\n[faults]\npcie_slowdown_factor = 2\n", "deploy.toml");
  try {
    Backend::open(config, {});
    BOOST_ERROR("no error");
  } catch (const ConfigError& error) {
    BOOST_TEST(begins(error.what(), "deploy.toml:3: key 'faults': pcie_slowdown_factor is the simulator's alone"),
               error.what());
  }
}

// On the simulator SimDevice injects what it models and a FaultyDevice around it the rest; a plan
// of simulated faults alone leaves the devices unwrapped.
BOOST_AUTO_TEST_CASE(the_simulator_splits_a_plan_between_its_injectors) {
  auto config = parse_run_config(
      "[gpus]\ncount = 2\n[faults]\ndevice = 1\nfail_host_pin_number = 2\nlose_device_at_launch = 9\n", "deploy.toml");
  auto backend = Backend::open_simulator(config, {});
  BOOST_REQUIRE(backend->devices().size() == 2u);
  BOOST_TEST(dynamic_cast<FaultyDevice*>(backend->devices()[0]) == nullptr);  // the plan is GPU 1's
  const auto* wrapped = dynamic_cast<FaultyDevice*>(backend->devices()[1]);
  BOOST_REQUIRE(wrapped != nullptr);
  BOOST_TEST(wrapped->faults().lose_device_at_launch == 9u);
  BOOST_TEST(wrapped->faults().fail_host_pin_number == 0u);  // SimDevice's

  config.faults.lose_device_at_launch = 0;
  backend = Backend::open_simulator(config, {});
  for (auto* device : backend->devices()) BOOST_TEST(dynamic_cast<FaultyDevice*>(device) == nullptr);
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

std::string outcome_of(const DeviceError& error) { return error.code().message(); }

// Each step of a fixed program on `device`: "ok", or the error it met. The steps cover the faults
// both injectors model: allocations, pinnings, launches, and a long kernel a loss at a time cuts.
asio::awaitable<void> run_steps(Device& device, std::vector<std::string>& seen) {
  StreamHandle stream{};
  try {
    stream = device.create_stream();
  } catch (const DeviceError& error) {
    seen.push_back(outcome_of(error));
    co_return;
  }
  for (int i = 0; i < 3; ++i) {
    try {
      co_await device.allocate(kMiB);
      seen.push_back("ok");
    } catch (const DeviceError& error) {
      seen.push_back(outcome_of(error));
    }
  }
  for (int i = 0; i < 2; ++i) {
    try {
      co_await device.allocate_pinned_host(kMiB);
      seen.push_back("ok");
    } catch (const DeviceError& error) {
      seen.push_back(outcome_of(error));
    }
  }
  for (const auto duration : {kMicrosecond, kMicrosecond, kMicrosecond, 100 * kMillisecond}) {
    try {
      device.launch(busy_wait(duration), stream);
      co_await device.synchronize_stream(stream);
      seen.push_back("ok");
    } catch (const DeviceError& error) {
      seen.push_back(outcome_of(error));
    }
  }
}

// The steps' outcomes with `plan` injected by SimDevice, and by a FaultyDevice around a plain one.
std::pair<std::vector<std::string>, std::vector<std::string>> both_ways(const FaultPlan& plan) {
  std::pair<std::vector<std::string>, std::vector<std::string>> seen;
  SimHarness simulated("h200", {}, plan);
  simulated.run([&](SimHarness& h) -> asio::awaitable<void> { co_await run_steps(h.device, seen.first); });
  SimHarness plain("h200");
  FaultyDevice adaptor(plain.device, plan);
  plain.run([&](SimHarness&) -> asio::awaitable<void> { co_await run_steps(adaptor, seen.second); });
  BOOST_TEST(simulated.device.lost() == adaptor.lost());
  return seen;
}

std::string joined(const std::vector<std::string>& outcomes) {
  std::string text;
  for (const auto& outcome : outcomes) text += (text.empty() ? "" : ", ") + outcome;
  return text;
}

void check_both_ways(const FaultPlan& plan, const std::string& expected) {
  const auto [simulated, adaptor] = both_ways(plan);
  BOOST_TEST(joined(simulated) == expected);
  BOOST_TEST(joined(adaptor) == expected);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(one_plan_either_injector)

BOOST_AUTO_TEST_CASE(the_nth_allocation_fails) {
  FaultPlan plan;
  plan.fail_allocation_number = 2;
  const auto oom = make_error_code(DeviceErrc::out_of_memory).message();
  check_both_ways(plan, "ok, " + oom + ", ok, ok, ok, ok, ok, ok, ok");
}

BOOST_AUTO_TEST_CASE(the_nth_pinning_fails) {
  FaultPlan plan;
  plan.fail_host_pin_number = 2;
  const auto pin = make_error_code(DeviceErrc::host_pin_failed).message();
  check_both_ways(plan, "ok, ok, ok, ok, " + pin + ", ok, ok, ok, ok");
}

// As a faulting kernel loses a CUDA context: the wait on it and every later call fail.
BOOST_AUTO_TEST_CASE(a_faulting_kernel_loses_the_device) {
  FaultPlan plan;
  plan.fail_kernel_name = kernel::busy_wait;
  plan.fail_kernel_occurrence = 2;
  const auto lost = make_error_code(DeviceErrc::device_lost).message();
  check_both_ways(plan, "ok, ok, ok, ok, ok, ok, " + lost + ", " + lost + ", " + lost);
}

// The loss falls inside the long kernel: its wait fails, as every later call would.
BOOST_AUTO_TEST_CASE(the_device_is_lost_at_a_time) {
  FaultPlan plan;
  plan.lose_device_at_ns = 50 * kMillisecond;
  const auto lost = make_error_code(DeviceErrc::device_lost).message();
  check_both_ways(plan, "ok, ok, ok, ok, ok, ok, ok, ok, " + lost);
}

BOOST_AUTO_TEST_SUITE_END()
