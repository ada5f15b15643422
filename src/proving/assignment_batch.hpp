#pragma once
// Proofs from Filecoin's assignments on devices: one coordinator run of the assignment workload
// (workloads/assignment/assignment_workload.hpp), one job per circuit. SupraSeal C2's C ABI proves
// through it where the library runs on a device; groth16::AssignmentProver is the CPU reference
// whose bytes it gives.

#include "coordinator/coordinator.hpp"
#include "groth16/assignment_prover.hpp"
#include "groth16/params.hpp"
#include "backend/backend.hpp"
#include "proving/proof_batch.hpp"
#include "workloads/assignment/assignment_workload.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace stagehand::proving {

struct AssignmentBatchSettings {
  CoordinatorSettings coordinator;
  bool verify = true;    // every proof pairing-checked against the key's verifying key
  unsigned threads = 0;  // each host function's CPU math in the simulator (0: every hardware thread)
  // Where the key's sets stay on the devices after the run (null: freed at its end); its holder
  // keeps the key alive until it has released it (AssignmentKeyState). One made for another
  // placement is released before the run.
  std::shared_ptr<groth16::AssignmentKeyState> key_state;
  // Each of a proof's two buffers for the sets that do not stay resident (a set smaller than this
  // takes one buffer of its own size).
  Bytes stream_buffer_bytes = kGiB;
  // Where not empty: the run's trace written there and its picture beside (.svg), for a benchmark.
  std::filesystem::path trace_file;
  // The circuits' host steps (a, b, c into the pinned buffers, the scalars' gathers) on threads of
  // their own, off the coordinator's: on a GPU, so that one job's steps do not hold back the other
  // workers (the lock's hand-over among them); never on the simulator, whose clock stands still
  // while the host computes.
  bool host_steps_off_thread = false;
  // Where not null (run_assignment_jobs only): each circuit's steps and each device's set-up, and
  // each circuit's end as it ends, its proof.json and public.json where made (the engine's runs).
  BatchListener* listener = nullptr;
};

// The run's proofs (every circuit's, in order), where the key's sets were, and its report.
struct AssignmentBatchResult {
  std::vector<groth16::Proof> proofs;
  groth16::AssignmentLayout layout;
  RunReport report;
};

// Each circuit's proof, none where its job failed (the report's record says why), where the
// key's sets were, and the run's report.
struct AssignmentJobsResult {
  std::vector<std::optional<groth16::Proof>> proofs;
  groth16::AssignmentLayout layout;
  RunReport report;
};

// On the devices' executor: places the key's sets as run_assignment_batch does and proves every
// assignment, a failure ending its own circuit only. The assignments must have passed
// check_assignment. Throws where the run fails as a whole (a device too small for one proof).
asio::awaitable<AssignmentJobsResult> run_assignment_jobs(std::vector<Device*> devices, const groth16::ParamsKey& key,
                                                          std::span<const groth16::AssignmentView> assignments,
                                                          std::span<const groth16::ProofRandomness> randomness,
                                                          AssignmentBatchSettings settings);

// On the devices' executor: checks every assignment against the key (InputError naming the
// circuit and the field), places the key's sets by the devices' memory (plan_assignment_layout:
// resident what fits beside the workers' proofs, the rest streamed), proves them all, and throws
// InputError naming the first circuit that failed, with its error (a proof that does not verify),
// or a device too small for one proof even with every set streamed.
asio::awaitable<AssignmentBatchResult> run_assignment_batch(std::vector<Device*> devices, const groth16::ParamsKey& key,
                                                            std::span<const groth16::AssignmentView> assignments,
                                                            std::span<const groth16::ProofRandomness> randomness,
                                                            AssignmentBatchSettings settings);

// The same on `backend`, to its end: the proofs. `devices`: those of the backend's to prove on
// (empty: every one).
std::vector<groth16::Proof> prove_assignments(Backend& backend, const groth16::ParamsKey& key,
                                              std::span<const groth16::AssignmentView> assignments,
                                              std::span<const groth16::ProofRandomness> randomness,
                                              const AssignmentBatchSettings& settings,
                                              std::vector<Device*> devices = {});

}  // namespace stagehand::proving
