#pragma once
// Groth16 proofs of a snarkjs circuit as a coordinator Workload: one job per witness, scheduled
// like any partition (the policy's locks, VramBudget reservations, pinned staging and
// pre-staging of the job's inputs, several workers per GPU). Over either curve: the workload is a
// template over the key (Groth16Workload for BLS12-381's, bn254::Groth16Workload for BN254's),
// the program one, its kernels launched over the key's curve in its layout.
//
//   prepare  (host)  read the .wtns, check it against the key; then either the witness into the
//                    staged input (a/b/c on the device: the job's one input) or the a/b/c step
//                    into the staged a, b, c (a/b/c on the host)
//   program  (GPU)   [groth16_abc: a, b, c from the witness and the key's constraint matrix];
//                    the H step on a, b, c (groth16_h_evaluate on each as it arrives, then
//                    groth16_h_combine); b and c freed; the H MSM over the H evaluations; a
//                    freed; the MSMs of A, B1, B2 (in G2) over the witness and C over its private
//                    signals; the sums to the host (one per batch of a streamed set)
//   finish   (host)  the blinding and the assembly of the proof, then its check
//                    (groth16/verify.hpp: the pairing equation against the key's verification
//                    key): a proof that does not verify fails its job ("the proof does not
//                    verify: ...") and never reaches the ProofHandler
//
// With a constraint system (ProofChecks::r1cs) prepare also checks the witness against every
// constraint and fails the job naming the first one it does not satisfy.
//
// Each of the proving key's point sets (A, B1, B2, C, H) is resident, fetched ahead or streamed
// (key_placement.hpp: KeyPlacement::plan decides from the device's memory); resident sets and,
// with a/b/c on the device, the constraint matrix (groth16/constraint_matrix.hpp) stay on each
// device for the whole run, outside the budget's capacity, and after it where the run was given
// its holder's DeviceKeyState (device_key_state.hpp: the engine's, so that its next run of the
// key starts proving at once). The fetched sets, the stream buffers
// and the kernels' scratch, where the device needs one (Device::kernel_scratch_bytes: the GPU's
// launchers do, the simulator's host functions not), are the job's memory like the rest.
//
// The GPU program and the key's set-up are Groth16Program's (groth16_program.hpp); the kernels'
// conventions are in device/kernel_abi.hpp.

#include "workloads/groth16/groth16_program.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/verify.hpp"
#include "groth16/zkey.hpp"

#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace stagehand::groth16 {

// What a workload of either curve's key proves with: its field, proof, randomness and constraint
// system, and the readers and checks of its witness that are not found by the key's type.
template <class Key>
struct CurveProofTypes;
template <>
struct CurveProofTypes<ProvingKey> {
  using Fr = math::Fr;
  using Proof = groth16::Proof;
  using Randomness = ProofRandomness;
  using R1csType = R1cs;
  using MsmResultsType = MsmResults;
  using Verifier = ProofVerifier;
};
template <>
struct CurveProofTypes<bn254::ProvingKey> {
  using Fr = math::bn254::Fr;
  using Proof = bn254::Proof;
  using Randomness = bn254::ProofRandomness;
  using R1csType = bn254::R1cs;
  using MsmResultsType = bn254::MsmResults;
  using Verifier = bn254::ProofVerifier;
};

// One proof to make.
template <class Randomness>
struct BasicProofJob {
  std::filesystem::path wtns;
  Randomness randomness;
  // The .wtns file's bytes, where the caller has them in memory (a service's request): prepare
  // parses these instead of reading `wtns`, which then only names them in messages.
  std::shared_ptr<const std::vector<std::uint8_t>> wtns_bytes = nullptr;
};
using ProofJob = BasicProofJob<ProofRandomness>;

// What is checked around each proof.
template <class R1csType>
struct BasicProofChecks {
  bool verify = true;               // the pairing check of every proof before it is handed out
  const R1csType* r1cs = nullptr;   // also the witness against every constraint (in prepare)
  std::filesystem::path r1cs_path;  // for the messages
};
using ProofChecks = BasicProofChecks<R1cs>;
// check_constraint_system (groth16/verify.hpp): the constraint system against the key.

// The workload of a key of either curve (ProvingKey, bn254::ProvingKey): one program, whose
// launches and layouts follow KeySizes::curve, and the curve's own host steps.
template <class Key>
class BasicGroth16Workload final : public Groth16Program {
 public:
  using Types = CurveProofTypes<Key>;
  using Fr = typename Types::Fr;
  using Proof = typename Types::Proof;
  using Job = BasicProofJob<typename Types::Randomness>;
  using Checks = BasicProofChecks<typename Types::R1csType>;
  // Called once per proof made (from the coordinator's thread), with w[1..nPublic].
  using ProofHandler = std::function<void(int job, const Proof& proof, const std::vector<Fr>& public_signals)>;

  // `host_work` runs the CPU math (threaded on a GPU, inline on the simulator); thread_count is
  // what each step's math may use (0 = every hardware thread). With `device_state` the key's
  // set-up is kept there at the run's end (and found there at its start, where an earlier run
  // left it); without, the run sets the devices up and frees them itself. `sizes`: the key's
  // KeySizes::of where the caller keeps them (computing them reads every coefficient record, and
  // on the H200 machine four a batch were most of the engine's step before a run at 2^20;
  // bench/journal/2026-12-02.md).
  BasicGroth16Workload(const Key& key, std::filesystem::path zkey_path, std::vector<Job> jobs, HostWork& host_work,
                       unsigned thread_count, ProofHandler on_proof, Checks checks = {},
                       AbcStep abc_step = AbcStep::device, KeyPlacement placement = {},
                       std::shared_ptr<DeviceKeyState> device_state = nullptr, const KeySizes* sizes = nullptr);

  // The seconds the proof check of a finished job took (0 when it did not run).
  double check_seconds(int job) const { return check_seconds_.at(static_cast<std::size_t>(job)); }

  int job_count() const override { return static_cast<int>(jobs_.size()); }
  // A proof that joins the workload (and, through a JobFeed, its run) after it was made: its job
  // index. On the run's executor, like every other call.
  int add_job(Job job);
  int proof_count() const override { return job_count(); }
  int proof_of(int job) const override { return job; }

 private:
  asio::awaitable<void> prepare_job(int job, Device& device, std::span<const HostRange> abc) override;
  asio::awaitable<void> finish_job(int job, Device& device) override;
  void forget_job(int job) override;
  HostRange set_host(std::size_t set) const override;
  HostRange matrix_host() const override;
  HostRange witness_host(int job) const override;
  void before_set_up() override;
  std::vector<Fr>& witness(int job);  // made on first use (prepare)

  const Key& key_;
  std::filesystem::path zkey_path_;
  std::deque<Job> jobs_;  // a deque: jobs join a run (add_job) while others are in hand
  ProofHandler on_proof_;
  Checks checks_;
  const ConstraintMatrix* matrix_ = nullptr;  // the host's, from the device state at the first set_up
  std::optional<typename Types::Verifier> verifier_;
  std::deque<double> check_seconds_;  // by job, written by finish
  // Each job's witness between prepare and its end: all of it (a/b/c on the host), or w[0..nPublic].
  mutable std::mutex witnesses_mutex_;
  std::map<int, std::vector<Fr>> witnesses_;
  // Whole witnesses of finished jobs (a/b/c on the host), for the next jobs to parse into: a fresh
  // vector of 2^26 values is zeroed and faulted in on one thread first, a cost every proof would
  // pay again.
  static constexpr std::size_t kSpareWitnesses = 2;
  std::vector<std::vector<Fr>> spare_witnesses_;
  std::vector<Fr> take_witness_buffer();
};

extern template class BasicGroth16Workload<ProvingKey>;
extern template class BasicGroth16Workload<bn254::ProvingKey>;
using Groth16Workload = BasicGroth16Workload<ProvingKey>;

namespace bn254 {
using ProofJob = BasicProofJob<ProofRandomness>;
using ProofChecks = BasicProofChecks<R1cs>;
using Groth16Workload = BasicGroth16Workload<ProvingKey>;
}  // namespace bn254

}  // namespace stagehand::groth16
