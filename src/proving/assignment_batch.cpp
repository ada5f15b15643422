#include "proving/assignment_batch.hpp"

#include "coordinator/pageable_arena.hpp"
#include "proving/batch_trace.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace stagehand::proving {

asio::awaitable<AssignmentBatchResult> run_assignment_batch(std::vector<Device*> devices, const groth16::ParamsKey& key,
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
  const auto placement =
      groth16::plan_assignment_placement(key, devices, coordinator.safety_margin_bytes + coordinator.resident_bytes,
                                         coordinator.workers_per_device, settings.stream_buffer_bytes);
  if (settings.key_state && !settings.key_state->made_for(placement)) co_await settings.key_state->release();
  std::vector<std::optional<groth16::Proof>> made(jobs.size());
  groth16::AssignmentWorkload workload(
      key, std::move(jobs), settings.threads,
      [&made](int job, const groth16::Proof& proof) { made.at(static_cast<std::size_t>(job)) = proof; },
      settings.verify, coordinator.safety_margin_bytes, settings.key_state, placement);
  PageableArena pageable;
  CoordinatorHooks hooks;
  hooks.pageable_memory = [&pageable](Bytes bytes) { return pageable.take(bytes); };
  Trace trace(!settings.trace_file.empty());
  AssignmentBatchResult result;
  result.placement = placement;
  result.report = co_await run_coordinator(std::move(devices), settings.coordinator, workload, trace, hooks);
  if (!settings.trace_file.empty()) {
    auto picture = settings.trace_file;
    write_batch_trace(trace, result.report, {settings.trace_file, picture.replace_extension(".svg")},
                      fmt::format("{} circuits from Filecoin assignments, {}", assignments.size(),
                                  to_string(settings.coordinator.policy)));
  }
  for (const auto& record : result.report.jobs) {
    if (!record.completed()) throw groth16::InputError(fmt::format("circuit {}: {}", record.index, record.error));
  }
  for (std::size_t circuit = 0; circuit < made.size(); ++circuit) {
    if (!made[circuit]) throw groth16::InputError(fmt::format("circuit {}: no proof was made", circuit));
    result.proofs.push_back(*made[circuit]);
  }
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
  backend.run([&]() -> asio::awaitable<void> {
    result = co_await run_assignment_batch(devices, key, assignments, randomness, settings);
  }());
  return std::move(result.proofs);
}

}  // namespace stagehand::proving
