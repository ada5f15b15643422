#include "runner/sim_runner.hpp"

#include "workloads/porep/porep_as_groth16.hpp"

#include <stdexcept>

namespace stagehand {

groth16::Groth16TimingJobs groth16_timing_jobs(const RunConfig& config) {
  groth16::Groth16TimingJobs jobs;
  if (config.groth16.key == Groth16KeyShape::porep_partition) {
    jobs = porep_timing_jobs(config.workload);
  } else {
    jobs.sizes =
        groth16::KeySizes::synthetic(static_cast<unsigned>(config.workload.shape.domain_log2), config.groth16.curve);
    jobs.proofs = config.workload.proofs;
    jobs.host_prepare_ns = config.workload.shape.host_prepare_ns();
    jobs.host_finish_ns = config.workload.shape.host_finish_ns();
  }
  if (config.groth16.full_scalar_share) {  // the whole witness's share, in place of the key shape's
    jobs.full_scalar_share = *config.groth16.full_scalar_share;
    jobs.bits_below = 0;
  }
  return jobs;
}

std::unique_ptr<Workload> simulated_workload(const RunConfig& config, const CoordinatorSettings& settings,
                                             const std::vector<Device*>& devices, sim::SimSystem& system) {
  if (config.workload_kind == WorkloadKind::porep) return std::make_unique<PoRepWorkload>(config.workload);
  // Jobs of the key's shape, placed as `stagehand prove` places a real key's sets.
  auto jobs = groth16_timing_jobs(config);
  jobs.host_memory = [&system](Bytes bytes) { return system.virtual_host_range(bytes); };
  const auto& groth16 = config.groth16;
  const auto layout = groth16::plan_proof_layout(
      jobs.sizes, devices, settings.safety_margin_bytes + settings.resident_bytes, settings.workers_per_device,
      groth16.abc_step, groth16.key_sets, groth16.stream_buffer_bytes, groth16.precompute_bases);
  return std::make_unique<groth16::Groth16TimingWorkload>(std::move(jobs), layout.abc_step, layout.placement);
}

SimulatedRun run_on_simulator(const RunConfig& config, Policy policy, SimulatedRunOptions options) {
  SimulatedRun result;
  BackendOptions simulator;
  simulator.keep_trace_events = options.keep_trace_events;
  simulator.faults = options.faults;
  simulator.faults_by_adaptor = options.faults_by_adaptor;
  result.backend = Backend::open_simulator(config, simulator);
  result.system = result.backend->simulator();
  auto& system = *result.system;
  CoordinatorHooks hooks;
  hooks.on_job_done = options.on_job_done;
  hooks.pageable_memory = [&system](Bytes bytes) { return system.virtual_host_range(bytes); };
  if (options.on_budget) {
    hooks.on_budget = [&](int device, const VramBudget& budget) {
      options.on_budget(device, budget, system.device(static_cast<std::size_t>(device)));
    };
  }
  hooks.on_budget_gone = options.on_budget_gone;
  if (options.on_settled) system.set_settled_observer(options.on_settled);
  try {
    result.backend->run(
        [&]() -> asio::awaitable<void> {
          const auto settings = settings_for(config, policy);
          auto workload = simulated_workload(config, settings, result.backend->devices(), system);
          result.report =
              co_await run_coordinator(result.backend->devices(), settings, *workload, system.trace(), hooks);
        }(),
        options.time_limit_ns);
  } catch (const std::exception& error) {
    result.error = error.what();
  }
  for (std::size_t i = 0; i < system.device_count(); ++i) {
    auto report = system.device(i).check();
    result.checker.leaks.insert(result.checker.leaks.end(), report.leaks.begin(), report.leaks.end());
    result.checker.unsynchronized_reads.insert(result.checker.unsynchronized_reads.end(),
                                               report.unsynchronized_reads.begin(), report.unsynchronized_reads.end());
  }
  result.trace_hash = system.trace().hash();
  return result;
}

}  // namespace stagehand
