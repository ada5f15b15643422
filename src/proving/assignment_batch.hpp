#pragma once
// Proofs from Filecoin's assignments on devices: one coordinator run of the assignment workload
// (workloads/assignment/assignment_workload.hpp), one job per circuit. SupraSeal C2's C ABI proves
// through it where the library runs on a device; groth16::AssignmentProver is the CPU reference
// whose bytes it gives.

#include "coordinator/coordinator.hpp"
#include "groth16/assignment_prover.hpp"
#include "groth16/params.hpp"
#include "backend/backend.hpp"
#include "workloads/assignment/assignment_workload.hpp"

#include <filesystem>
#include <memory>
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
};

// The run's proofs (every circuit's, in order), where the key's sets were, and its report.
struct AssignmentBatchResult {
  std::vector<groth16::Proof> proofs;
  groth16::KeyPlacement placement;
  RunReport report;
};

// On the devices' executor: checks every assignment against the key (InputError naming the
// circuit and the field), places the key's sets by the devices' memory (plan_assignment_placement:
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
