#pragma once
// Runs a configured workload under one policy on the simulator, and gathers the report, the
// trace and the checker's findings.

#include "coordinator/coordinator.hpp"
#include "backend/backend.hpp"
#include "config/run_config.hpp"
#include "device/fault_plan.hpp"
#include "sim/sim_device.hpp"
#include "sim/sim_system.hpp"
#include "workloads/groth16/groth16_timing_workload.hpp"

#include <functional>
#include <memory>

namespace stagehand {

struct SimulatedRunOptions {
  bool keep_trace_events = true;
  FaultPlan faults;                // none set: the configuration's (BackendOptions::faults says who injects what)
  bool faults_by_adaptor = false;  // BackendOptions::faults_by_adaptor
  std::function<void(const JobRecord&)> on_job_done;
  // A GPU's budget was created: checkers keep it beside its simulated device.
  std::function<void(int device, const VramBudget&, const sim::SimDevice&)> on_budget;
  // That budget is about to be destroyed (CoordinatorHooks::on_budget_gone): stop reading it.
  std::function<void(int device, const VramBudget&)> on_budget_gone;
  // Called whenever the simulation settles at an instant (see SimSystem::set_settled_observer).
  std::function<void()> on_settled;
  Nanoseconds time_limit_ns = 24 * 3600 * kSecond;
};

struct SimulatedRun {
  RunReport report;
  std::uint64_t trace_hash = 0;
  sim::CheckerReport checker;
  // The simulated machine, kept for its trace and counters (`system` is the backend's).
  std::unique_ptr<Backend> backend;
  sim::SimSystem* system = nullptr;
  // Why the run did not finish (a deadlock, an escaped error); empty when it did.
  std::string error;
};

// The jobs of a groth16 workload (kind = "groth16"), sized by its key shape, with the workload's
// proofs and host steps; host_memory and data are the caller's.
groth16::Groth16TimingJobs groth16_timing_jobs(const RunConfig& config);

// The configured workload (RunConfig::workload_kind) for the simulator's devices; Groth16 timing
// jobs have their sets placed for these devices as `stagehand prove` would.
std::unique_ptr<Workload> simulated_workload(const RunConfig& config, const CoordinatorSettings& settings,
                                             const std::vector<Device*>& devices, sim::SimSystem& system);

// Throws ConfigError for a bad device model; a run that does not finish sets `error`.
SimulatedRun run_on_simulator(const RunConfig& config, Policy policy, SimulatedRunOptions options = {});

}  // namespace stagehand
