#include "proving/assignment_batch.hpp"

#include "coordinator/pageable_arena.hpp"
#include "groth16/json.hpp"
#include "proving/batch_trace.hpp"
#include "proving/listened_workload.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace stagehand::proving {

namespace {

// A circuit's end for the settings' listener: its proof's snarkjs texts where it was made.
ProofEnd circuit_end(const JobRecord& record, const std::optional<groth16::Proof>& proof,
                     const groth16::AssignmentView& assignment) {
  ProofEnd end;
  end.job = record.index;
  end.record = &record;
  if (record.completed() && proof) {
    end.made = true;
    end.proof_json = groth16::proof_json(*proof);
    end.public_json = groth16::public_json(assignment.inputs.subspan(1));
  } else {
    end.error = record.completed() ? "the run ended without a proof for it" : record.error;
  }
  return end;
}

}  // namespace

asio::awaitable<AssignmentJobsResult> run_assignment_jobs(std::vector<Device*> devices, const groth16::ParamsKey& key,
                                                          std::span<const groth16::AssignmentView> assignments,
                                                          std::span<const groth16::ProofRandomness> randomness,
                                                          AssignmentBatchSettings settings) {
  if (assignments.size() != randomness.size()) {
    throw groth16::InputError(
        fmt::format("{} assignments but {} pairs of r and s", assignments.size(), randomness.size()));
  }
  std::vector<groth16::AssignmentJob> jobs;
  for (std::size_t circuit = 0; circuit < assignments.size(); ++circuit) {
    jobs.push_back({assignments[circuit], randomness[circuit]});
  }
  const auto& coordinator = settings.coordinator;
  AssignmentJobsResult result;
  result.layout =
      groth16::plan_assignment_layout(key, devices, coordinator.safety_margin_bytes + coordinator.resident_bytes,
                                      coordinator.workers_per_device, settings.stream_buffer_bytes);
  if (settings.key_state && !settings.key_state->made_for(result.layout.placement))
    co_await settings.key_state->release();
  result.proofs.resize(jobs.size());
  auto& made = result.proofs;
  HostWork host_work(settings.host_steps_off_thread ? host_work_threads(coordinator.workers_per_device, devices.size())
                                                    : 0);
  groth16::AssignmentWorkload workload(
      key, std::move(jobs), settings.threads,
      [&made](int job, const groth16::Proof& proof) { made.at(static_cast<std::size_t>(job)) = proof; },
      settings.verify, coordinator.safety_margin_bytes, settings.key_state, result.layout, &host_work);
  std::optional<ListenedWorkload> listened;
  if (settings.listener != nullptr) listened.emplace(workload, *settings.listener, devices);
  PageableArena pageable;
  CoordinatorHooks hooks;
  hooks.pageable_memory = [&pageable](Bytes bytes) { return pageable.take(bytes); };
  if (auto* listener = settings.listener) {
    hooks.on_job_done = [listener, &made, assignments](const JobRecord& record) {
      const auto job = static_cast<std::size_t>(record.index);
      STAGEHAND_ASSERT(job < made.size(), "the coordinator reported circuit {} of {}", record.index, made.size());
      listener->ended(circuit_end(record, made[job], assignments[job]));
    };
  }
  Trace trace(!settings.trace_file.empty());
  Workload& run = listened ? static_cast<Workload&>(*listened) : workload;
  // A copy: the listened workload tells the devices apart by this list.
  result.report = co_await run_coordinator(devices, settings.coordinator, run, trace, hooks);
  if (!settings.trace_file.empty()) {
    auto picture = settings.trace_file;
    write_batch_trace(trace, result.report, {settings.trace_file, picture.replace_extension(".svg")},
                      fmt::format("{} circuits from Filecoin assignments, {}", assignments.size(),
                                  to_string(settings.coordinator.policy)));
  }
  STAGEHAND_ASSERT(result.proofs.size() == assignments.size());
  co_return result;
}

asio::awaitable<AssignmentBatchResult> run_assignment_batch(std::vector<Device*> devices, const groth16::ParamsKey& key,
                                                            std::span<const groth16::AssignmentView> assignments,
                                                            std::span<const groth16::ProofRandomness> randomness,
                                                            AssignmentBatchSettings settings) {
  settings.listener = nullptr;
  auto jobs = co_await run_assignment_jobs(std::move(devices), key, assignments, randomness, std::move(settings));
  for (const auto& record : jobs.report.jobs) {
    if (!record.completed()) throw groth16::InputError(fmt::format("circuit {}: {}", record.index, record.error));
  }
  AssignmentBatchResult result;
  for (std::size_t circuit = 0; circuit < jobs.proofs.size(); ++circuit) {
    if (!jobs.proofs[circuit]) throw groth16::InputError(fmt::format("circuit {}: no proof was made", circuit));
    result.proofs.push_back(*jobs.proofs[circuit]);
  }
  result.layout = jobs.layout;
  result.report = std::move(jobs.report);
  STAGEHAND_ASSERT(result.proofs.size() == assignments.size());
  co_return result;
}

std::vector<groth16::Proof> prove_assignments(Backend& backend, const groth16::ParamsKey& key,
                                              std::span<const groth16::AssignmentView> assignments,
                                              std::span<const groth16::ProofRandomness> randomness,
                                              const AssignmentBatchSettings& settings, std::vector<Device*> devices) {
  if (devices.empty()) devices = backend.devices();
  for (const auto* device : devices) {
    STAGEHAND_ASSERT(std::ranges::find(backend.devices(), device) != backend.devices().end(),
                     "prove_assignments: a device that is not the backend's");
  }
  AssignmentBatchResult result;
  auto on_backend = settings;
  on_backend.host_steps_off_thread = backend.on_gpu();
  backend.run([&]() -> asio::awaitable<void> {
    result = co_await run_assignment_batch(devices, key, assignments, randomness, on_backend);
  }());
  return std::move(result.proofs);
}

}  // namespace stagehand::proving
