#pragma once
// What the tests of the policies through the whole coordinator share (tests/coordinator's
// policy_*, job_failures, run_config_errors, porep_timing_jobs and h200_model tests): a run on the
// simulator whose checker finds nothing, the partitions it failed, and the error a configuration's
// text makes.

#include "config/run_config.hpp"
#include "runner/sim_runner.hpp"

#include <boost/test/unit_test.hpp>

#include <exception>
#include <string>

namespace stagehand::testing {

inline SimulatedRun run(const RunConfig& config, Policy policy) {
  SimulatedRunOptions options;
  options.keep_trace_events = false;
  auto result = run_on_simulator(config, policy, options);
  BOOST_TEST(result.checker.clean(), to_string(policy) << ": " << result.checker.describe());
  return result;
}

inline int failed(const RunReport& report) { return report.partitions - report.partitions_completed; }

// The error a configuration's text ("deploy.toml") makes, or "no error".
inline std::string config_error_of(const std::string& text) {
  try {
    parse_run_config(text, "deploy.toml");
  } catch (const std::exception& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace stagehand::testing
