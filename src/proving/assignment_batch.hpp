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

#include <memory>
#include <span>
#include <vector>

namespace stagehand::proving {

struct AssignmentBatchSettings {
  CoordinatorSettings coordinator;
  bool verify = true;    // every proof pairing-checked against the key's verifying key
  unsigned threads = 0;  // each host function's CPU math in the simulator (0: every hardware thread)
  // Where the key's sets stay on the devices after the run (null: freed at its end); its holder
  // keeps the key alive until it has released it (AssignmentKeyState).
  std::shared_ptr<groth16::AssignmentKeyState> key_state;
};

// The run's proofs (every circuit's, in order) and its report.
struct AssignmentBatchResult {
  std::vector<groth16::Proof> proofs;
  RunReport report;
};

// On the devices' executor: checks every assignment against the key (InputError naming the
// circuit and the field), proves them all, and throws InputError naming the first circuit that
// failed, with its error (a proof that does not verify, a key too large for the device).
asio::awaitable<AssignmentBatchResult> run_assignment_batch(std::vector<Device*> devices, const groth16::ParamsKey& key,
                                                            std::span<const groth16::AssignmentView> assignments,
                                                            std::span<const groth16::ProofRandomness> randomness,
                                                            AssignmentBatchSettings settings);

// The same on `backend`, to its end: the proofs.
std::vector<groth16::Proof> prove_assignments(Backend& backend, const groth16::ParamsKey& key,
                                              std::span<const groth16::AssignmentView> assignments,
                                              std::span<const groth16::ProofRandomness> randomness,
                                              const AssignmentBatchSettings& settings);

}  // namespace stagehand::proving
