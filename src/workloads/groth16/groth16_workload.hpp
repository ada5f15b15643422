#pragma once
// Groth16 proofs of a snarkjs circuit as a coordinator Workload: one job per witness, scheduled
// like any partition (the policy's locks, VramBudget reservations, pinned staging and
// pre-staging of the job's inputs, several workers per GPU).
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
// The program's kernels (device/kernel_abi.hpp) run in the simulator's functional mode as host
// functions on the CPU reference (sim/kernels/groth16_kernels.hpp), and on a GPU through
// CudaDevice's launchers of the same names (cuda/kernels/launch/).
// Their conventions are in device/kernel_abi.hpp.

#include "coordinator/async_wait.hpp"
#include "coordinator/job.hpp"
#include "workloads/host_work.hpp"
#include "workloads/groth16/key_placement.hpp"
#include "workloads/groth16/device_key_state.hpp"
#include "groth16/constraint_matrix.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/verify.hpp"
#include "groth16/zkey.hpp"

#include <array>
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

// One proof to make.
struct ProofJob {
  std::filesystem::path wtns;
  ProofRandomness randomness;
  // The .wtns file's bytes, where the caller has them in memory (a service's request): prepare
  // parses these instead of reading `wtns`, which then only names them in messages.
  std::shared_ptr<const std::vector<std::uint8_t>> wtns_bytes = nullptr;
};

// What is checked around each proof.
struct ProofChecks {
  bool verify = true;            // the pairing check of every proof before it is handed out
  const R1cs* r1cs = nullptr;    // also the witness against every constraint (in prepare)
  std::filesystem::path r1cs_path;  // for the messages
};
// check_constraint_system (groth16/verify.hpp): the constraint system against the key.

// Where the a/b/c step runs. On the device the key's constraint matrix stays resident beside its
// points and each job uploads only its witness; streamed, the step runs on the device too but the
// matrix goes up for each proof in chunks (MatrixChunk) through the proof's two stream buffers,
// ahead of the streamed sets' batches, each chunk's a/b/c computed as the next one travels (a
// matrix that does not fit beside the proofs: 6.2 GiB at 2^26 on a 16 GiB card); on the host each
// job's prepare computes a, b and c over the same matrix (threaded by rows) and uploads all
// three. The host's step takes seconds a proof at 2^26 where the device's takes milliseconds.
enum class AbcStep { device, streamed, host };
std::string_view to_string(AbcStep step);  // "device", "streamed", "host"
std::optional<AbcStep> parse_abc_step(std::string_view text);  // nullopt for anything else ("auto")
// Where it runs, in words: "on the device", "on the device, its matrix streamed", "on the host".
std::string describe(AbcStep step);
// What a --abc option or an abc key accepts: every step's name, "auto" first where asked.
std::vector<std::string> abc_step_choices(bool with_auto = false);
constexpr bool abc_on_device(AbcStep step) { return step != AbcStep::host; }

// Proofs of a key's sizes alone: no key, no witness and no proof; the host steps last the
// modelled times and the GPU program is the same. The simulator's timing mode runs them on virtual
// memory; `bench policies` runs them on a GPU over synthetic bytes (SyntheticData), so that the
// program's kernels compute on values of the right kind.
struct Groth16TimingJobs {
  KeySizes sizes;
  int proofs = 1;
  // Jobs per proof: the partitions of one proof (a PoRep proof's ten), each a proof of the program.
  int jobs_per_proof = 1;
  Nanoseconds host_prepare_ns = 0;
  Nanoseconds host_finish_ns = 0;
  // The witness's kinds of scalars: from index `bits_below` on, a share full_scalar_share of them
  // full, the rest (and all below) 0 or 1. What its MSMs cost on the simulator (their launches'
  // light_units) and, with `data`, what the synthetic witness holds.
  double full_scalar_share = 1.0;
  std::uint64_t bits_below = 0;
  // The full scalars to expect among witness indices [first, first + count).
  std::uint64_t full_scalars(std::uint64_t first, std::uint64_t count) const;
  // Host memory the uploads come from without `data` (the simulator's virtual ranges, never
  // touched).
  std::function<HostRange(Bytes)> host_memory;
  // On a GPU: the bytes the kernels compute on, the caller's, kept while the workload lives. Each
  // key set's points in the device layout (set_point_bytes each), in place of host_memory's; every
  // prepare copies `polynomial` into a, b and c (the step lasts host_prepare_ns or the copy, the
  // longer); every proof uploads `witness` (n_vars Montgomery scalars). Only with the a/b/c step
  // on the host: there is no constraint matrix to compute from.
  struct SyntheticData {
    std::array<HostRange, kKeySetCount> sets{};
    std::span<const std::byte> polynomial;
    std::span<const std::byte> witness;
    HostWork* host_work = nullptr;
    // Each job's five MSM sums as its finish finds them (H's over the H step's evaluations), for a
    // check against the CPU's; on the run's executor.
    std::function<void(int job, const MsmResults& sums)> on_sums;
  };
  std::optional<SyntheticData> data;
  int jobs() const { return proofs * jobs_per_proof; }
};

class Groth16Workload final : public Workload {
 public:
  // Called once per proof made (from the coordinator's thread), with w[1..nPublic].
  using ProofHandler = std::function<void(int job, const Proof& proof, const std::vector<math::Fr>& public_signals)>;

  // `host_work` runs the CPU math (threaded on a GPU, inline on the simulator); thread_count is
  // what each step's math may use (0 = every hardware thread). With `device_state` the key's
  // set-up is kept there at the run's end (and found there at its start, where an earlier run
  // left it); without, the run sets the devices up and frees them itself. `sizes`: the key's
  // KeySizes::of where the caller keeps them (computing them reads every coefficient record: about
  // 12 ms at 2^20 on the H200 machine, where four a batch made the engine's step before a run 55 ms).
  Groth16Workload(const ProvingKey& key, std::filesystem::path zkey_path, std::vector<ProofJob> jobs, HostWork& host_work,
                  unsigned thread_count, ProofHandler on_proof, ProofChecks checks = {}, AbcStep abc_step = AbcStep::device,
                  KeyPlacement placement = {}, std::shared_ptr<DeviceKeyState> device_state = nullptr,
                  const KeySizes* sizes = nullptr);
  Groth16Workload(Groth16TimingJobs timing, AbcStep abc_step, KeyPlacement placement);

  // The constraint matrix's bytes on each device with the a/b/c step there (0 on the host).
  static Bytes matrix_bytes(const KeySizes& key, AbcStep abc_step);
  // A proof's device memory at its peak without the key's sets and the kernels' scratch (to plan
  // before the devices are set up): the polynomials, the witness, the stream buffers.
  static Bytes proof_bytes_before_scratch(const KeySizes& key, Bytes stream_buffer_bytes);
  // One job's memory plan from the key's sizes, its layout and shape, the stream buffers' bytes
  // and the kernels' scratch (memory_plan's, and proof_device_bytes's before any set-up).
  static JobMemoryPlan plan_memory(const KeySizes& sizes, AbcStep abc_step, const KeyPlacement& placement, const KeyProgramShape& shape,
                                   Bytes stream_buffer_bytes, Bytes msm_scratch_bytes, Bytes h_scratch_bytes);
  AbcStep abc_step() const { return abc_step_; }
  const KeyPlacement& placement() const { return placement_; }

  // The wall seconds each device's set-up took (the key's points and matrix encoded and uploaded,
  // precomputed bases computed; next to none where the device state held them), and each device's counters when it ended (what the proofs'
  // figures count from: the set-up's kernels are not theirs).
  const std::map<int, double>& set_up_seconds() const { return set_up_seconds_; }
  const std::map<int, DeviceCounters>& counters_after_set_up() const { return counters_after_set_up_; }
  // The seconds the proof check of a finished job took (0 when it did not run).
  double check_seconds(int job) const { return check_seconds_.at(static_cast<std::size_t>(job)); }

  int job_count() const override { return timing_ ? timing_->jobs() : static_cast<int>(jobs_.size()); }
  // A proof that joins the workload (and, through a JobFeed, its run) after it was made: its job
  // index. On the run's executor, like every other call.
  int add_job(ProofJob job);
  int proof_count() const override { return timing_ ? timing_->proofs : job_count(); }
  int proof_of(int job) const override { return timing_ ? job / timing_->jobs_per_proof : job; }
  JobMemoryPlan memory_plan(int job) const override;
  Bytes resident_bytes() const override;

  asio::awaitable<void> set_up(Device& device, int device_index) override;
  asio::awaitable<void> tear_down(Device& device, int device_index) override;
  asio::awaitable<void> prepare(int job, Device& device, std::span<const HostRange> abc) override;
  asio::awaitable<JobTimes> run_program(int job, JobContext& context) override;
  asio::awaitable<void> finish(int job, Device& device) override;
  void abandon(int job) override;

  // The kernels' scratch per proof, known once a device is set up (0 on the simulator).
  Bytes msm_scratch_bytes() const { return msm_scratch_bytes_; }
  Bytes h_scratch_bytes() const { return h_scratch_bytes_; }
  // The sums the program returns (one per batch of each set, Jacobian: 144 bytes in G1, 288 in G2).
  Bytes result_bytes() const { return shape_.result_bytes; }

 private:
  // What the run uses on a device: the key's (from device_state_) and its own side streams.
  struct KeyOnDevice {
    std::array<DevicePointer, kKeySetCount> sets{};  // the resident ones
    DevicePointer matrix;
    std::vector<StreamHandle> idle_side_streams;  // for the witness's copy beside the program
  };
  struct JobState {
    std::vector<math::Fr> witness;  // all of it (a/b/c on the host), or w[0..nPublic]
    std::vector<std::byte> sums;
  };
  // A proof's point sets on the device for its MSMs: resident, fetched, or the stream buffers.
  struct ProofPoints;
  struct Scratch {
    DevicePointer h, msm;
  };
  JobState& state(int job);
  MsmResults msm_sums(const JobState& job_state) const;
  struct Polynomials {
    DevicePointer a, b, c;
  };
  void launch_abc(JobContext& context, DevicePointer witness, DevicePointer matrix, const MatrixChunk* chunk,
                  const Polynomials& polynomials) const;
  asio::awaitable<void> run_abc(JobContext& context, ProofPoints& points, DevicePointer witness, const Polynomials& polynomials) const;
  HostRange matrix_host() const;
  // `uploaded`: the events each of a, b, c's upload records, where the step must still wait for it.
  void launch_h(JobContext& context, const Polynomials& polynomials, const Scratch& scratch,
                const std::array<EventHandle, 3>& uploaded) const;
  void launch_msm(JobContext& context, std::size_t set, DevicePointer bases, DevicePointer scalars, DevicePointer results,
                  const Scratch& scratch) const;
  void launch_msm_batch(JobContext& context, std::size_t set, DevicePointer bases, std::uint64_t first, std::uint64_t count,
                        bool add, DevicePointer scalars, const Scratch& scratch) const;
  void launch_msm_reduce(JobContext& context, std::size_t set, DevicePointer results, const Scratch& scratch) const;
  // Of `set`'s points [first, first + count), those whose scalars timing jobs declare 0 or 1
  // (KernelLaunch::light_units).
  std::uint64_t light_points(std::size_t set, std::uint64_t first, std::uint64_t count) const;
  asio::awaitable<void> enqueue_batch(JobContext& context, ProofPoints& points) const;
  asio::awaitable<void> start_point_uploads(JobContext& context, ProofPoints& points) const;
  asio::awaitable<void> run_set_msms(JobContext& context, ProofPoints& points, std::size_t set, DevicePointer scalars,
                                     DevicePointer results, const Scratch& scratch) const;
  class SideCopy;
  asio::awaitable<JobTimes> run_steps(int job, JobContext& context, SideCopy& witness_copy);
  HostRange set_host(std::size_t set) const;
  asio::awaitable<void> pin_key_sets(Device& device);
  OneAtATime pinning_;  // the key's travelling sets pinned by one set-up at a time (pin_key_sets)
  asio::awaitable<void> upload_key(Device& device, DeviceKeyState::OnDevice& entry);

  const ProvingKey* key_ = nullptr;  // none for timing jobs
  std::optional<Groth16TimingJobs> timing_;
  std::array<HostRange, kKeySetCount> timing_sets_{};  // the timing jobs' stand-ins for the key's bytes
  HostRange timing_matrix_{};
  HostRange timing_witness_{};  // what every timing proof uploads as its witness
  KeySizes sizes_;
  std::filesystem::path zkey_path_;
  std::deque<ProofJob> jobs_;  // a deque: jobs join a run (add_job) while others are in hand
  HostWork* host_work_ = nullptr;
  unsigned thread_count_;
  ProofHandler on_proof_;
  ProofChecks checks_;
  AbcStep abc_step_;
  KeyPlacement placement_;
  KeyProgramShape shape_;
  std::shared_ptr<DeviceKeyState> device_state_;
  bool owns_device_state_ = false;  // a private one: given back at the run's end
  const ConstraintMatrix* matrix_ = nullptr;  // the host's, from device_state_ at the first set_up
  // Streamed a/b/c: the matrix's chunks (cut once, by the first set_up, as the matrix is built
  // then; from the sizes for timing jobs), each at most stream_buffer_bytes_; and each stream
  // buffer's bytes, the placement's where no set streams.
  std::vector<MatrixChunk> matrix_chunks_;
  std::once_flag matrix_cut_;
  void cut_matrix(std::vector<MatrixChunk> chunks);
  Bytes stream_buffer_bytes_ = 0;
  std::optional<ProofVerifier> verifier_;
  std::deque<double> check_seconds_;  // by job, written by finish
  Bytes h_scratch_bytes_ = 0;
  Bytes msm_scratch_bytes_ = 0;
  std::map<int, KeyOnDevice> keys_;  // by device index
  std::map<int, double> set_up_seconds_;  // by device index
  std::map<int, DeviceCounters> counters_after_set_up_;  // by device index
  std::mutex states_mutex_;
  std::map<int, JobState> states_;  // jobs between prepare and finish
  // Whole witnesses of finished jobs (a/b/c on the host), for the next jobs to parse into: a fresh
  // vector of 2^26 values is zeroed and faulted in on one thread first (about 1 s per proof).
  static constexpr std::size_t kSpareWitnesses = 2;
  std::vector<std::vector<math::Fr>> spare_witnesses_;
  std::vector<math::Fr> take_witness_buffer();
};

// Where a run's a/b/c step runs and its key's sets are, chosen before the run from the devices'
// memory (each less `held_back`: the safety margin and other residents) and `proofs_in_flight`
// proofs' room: the a/b/c step on the device where its matrix fits beside a proof per worker with
// every set streamed, then KeyPlacement::plan. `abc` and `sets` force a choice (nullopt: auto);
// `precompute_bases` lets the plan precompute resident sets (PlacementBudget::precompute).
struct ProofLayout {
  AbcStep abc_step = AbcStep::device;
  KeyPlacement placement;
  std::string reason;  // why the a/b/c step is where it is, for the run's log
};
ProofLayout plan_proof_layout(const KeySizes& key, const std::vector<Device*>& devices, Bytes held_back, int proofs_in_flight,
                              std::optional<AbcStep> abc, std::optional<SetPlacement> sets, Bytes stream_buffer_bytes = kGiB,
                              bool precompute_bases = false);

// The bytes one proof of a key needs on a device in `layout`, besides the safety margin and other
// residents: the key's resident sets and constraint matrix, and one proof's peak (its memory plan
// before any device is set up: the kernels' scratch comes on top). The one answer to "does a
// proof of this key fit", for a configured cap, the engine's keys side by side and a run's log.
Bytes proof_device_bytes(const KeySizes& key, const ProofLayout& layout);

}  // namespace stagehand::groth16
