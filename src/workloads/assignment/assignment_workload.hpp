#pragma once
// Proofs from Filecoin's assignments (groth16/assignment_prover.hpp) as a coordinator Workload:
// each circuit of a call is one job, scheduled like any partition (the policy's locks, VramBudget
// reservations, pinned staging and pre-staging of a, b and c, several workers per GPU).
//
//   set-up   (per GPU) the key's sets h, l, a, b_g1 and b_g2 resident, uploaded from the key's
//                      own bytes (they are in the device layout already); outside the budget's
//                      capacity (resident_bytes), like the Groth16 workload's resident sets
//   prepare  (host)    a, b, c zero-padded to the domain into the staged inputs; the queries'
//                      scalars gathered by the density bitmaps (aux for L, then A's, then B's)
//   program  (GPU)     the scalars uploaded; ntt_domain_init (ω and g = 7 of bellperson's domain)
//                      and h_polynomial_classic on a, b, c: H's coefficients in a; b and c freed;
//                      the MSMs H (the first m − 1 coefficients), L, A, B1 (groth16_msm_g1) and
//                      B2 (groth16_msm_g2); the five sums to the host
//   finish   (host)    SupraSeal's assembly (assemble_assignment_proof, the CPU reference's) and,
//                      with `verify`, the pairing check: a proof that does not verify fails its
//                      job and never reaches the handler (the job's error; the caller names the
//                      circuit, the job's index)
//
// Every value is summed by the MSM kernels, 0s and 1s included: gathering the bit values apart
// (batch additions over their points) needs a kernel that gathers resident points by a bitmap,
// which the ABI has not, and is left for later. Each MSM's launch counts its 0 and 1 scalars as
// light units, which the simulator's cost model charges as such (a GPU ignores the count). A key whose sets do not fit the device
// beside one job is refused at set-up with an error naming both sizes: streaming its sets is left
// for later too.

#include "coordinator/job.hpp"
#include "device/kernel_abi.hpp"
#include "groth16/assignment_prover.hpp"
#include "groth16/params.hpp"
#include "groth16/prover.hpp"
#include "groth16/verify.hpp"

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace stagehand::groth16 {

// A .params key's sets left on the devices between runs, so that the next run of the same key
// starts proving at once (the C ABI keeps one for the key it proved last). A run given one sets
// a device up only where it holds nothing complete for it, and leaves its sets there at its end;
// the holder keeps the key alive until release() has returned, hands the state to one run at a
// time, and counts device_bytes() out of other keys' runs' budgets. Without one, a run frees its
// sets at its end.
class AssignmentKeyState {
 public:
  struct Sets {
    DevicePointer h, l, a, b_g1, b_g2;
  };

  AssignmentKeyState() = default;
  AssignmentKeyState(const AssignmentKeyState&) = delete;
  AssignmentKeyState& operator=(const AssignmentKeyState&) = delete;

  bool holds_anything() const;
  // Device set-ups made into it: a second run of the same key on the same devices makes none.
  std::uint64_t set_ups() const;
  // Frees what it holds on every device.
  asio::awaitable<void> release();

 private:
  friend class AssignmentWorkload;
  struct OnDevice {
    Device* device = nullptr;
    Sets sets;
    bool complete = false;  // every upload done (a failed set-up leaves it false)
  };
  static asio::awaitable<void> free_sets(Device& device, const Sets& sets);
  // The run's view: the entry of device `index` (null where none), a fresh one, its completion.
  OnDevice* entry(int index);
  OnDevice& fresh_entry(int index, Device& device);
  void completed(int index);
  std::optional<OnDevice> take(int index);

  mutable std::mutex mutex_;
  std::map<int, OnDevice> devices_;
  std::uint64_t set_ups_ = 0;
};

// One circuit to prove: its assignment (the caller keeps the values alive while the run lasts).
struct AssignmentJob {
  AssignmentView assignment;
  ProofRandomness randomness;
};

class AssignmentWorkload final : public Workload {
 public:
  using ProofHandler = std::function<void(int job, const Proof& proof)>;

  // The key must outlive the workload; every assignment must pass check_assignment against it.
  // thread_count: what each MSM's host function may use in the simulator (0: every hardware thread).
  // safety_margin_bytes: what the budget keeps free on each device (CoordinatorSettings's), for
  // set_up's check that the key fits beside one job.
  // key_state: where the key's sets stay between runs (null: a private one, freed at the run's end).
  AssignmentWorkload(const ParamsKey& key, std::vector<AssignmentJob> jobs, unsigned thread_count,
                     ProofHandler on_proof, bool verify = true, Bytes safety_margin_bytes = 0,
                     std::shared_ptr<AssignmentKeyState> key_state = nullptr);

  // The key's sets on one device: the bytes set_up keeps resident.
  static Bytes key_bytes(const ParamsKey& key);

  int job_count() const override { return static_cast<int>(jobs_.size()); }
  int proof_count() const override { return job_count(); }
  int proof_of(int job) const override { return job; }
  JobMemoryPlan memory_plan(int job) const override;
  Bytes resident_bytes() const override { return key_bytes(key_); }
  asio::awaitable<void> set_up(Device& device, int device_index) override;
  asio::awaitable<void> tear_down(Device& device, int device_index) override;
  asio::awaitable<void> prepare(int job, Device& device, std::span<const HostRange> abc) override;
  asio::awaitable<JobTimes> run_program(int job, JobContext& context) override;
  asio::awaitable<void> finish(int job, Device& device) override;
  void abandon(int job) override;

 private:
  // The five sums in the program's results: H, L, A, B1 (144 bytes each), then B2 (288).
  static constexpr Bytes kResultBytes = 4 * kernel::kG1JacobianBytes + kernel::kG2JacobianBytes;
  struct JobState {
    std::vector<math::Fr> scalars;         // aux (L), the A query's, the B queries' (prepare to program)
    std::array<std::uint64_t, 3> light{};  // the 0 and 1 scalars of each of those three
    std::vector<std::uint8_t> sums;        // kResultBytes (program to finish)
  };

  // The bytes of a job's device memory beside its three inputs: the domain, the scalars, the
  // results, the MSM scratch.
  Bytes working_bytes() const;
  void check_fits(Device& device) const;
  void launch_msm(JobContext& context, const char* kernel, DevicePointer points, DevicePointer scalars,
                  std::uint64_t count, DevicePointer result, DevicePointer scratch,
                  std::uint64_t light_units = 0) const;
  asio::awaitable<void> upload_key(Device& device, AssignmentKeyState::Sets& sets) const;
  JobState& state(int job);

  const ParamsKey& key_;
  std::vector<AssignmentJob> jobs_;
  unsigned thread_count_;
  ProofHandler on_proof_;
  bool verify_;
  Bytes safety_margin_bytes_;
  unsigned domain_log2_;
  std::uint64_t scalar_count_;                   // aux + A query + B query, the same for every job of the key
  std::vector<std::uint64_t> domain_arguments_;  // ntt_domain_init's: bellperson's ω and g = 7
  Bytes domain_bytes_ = 0;                       // the device's NTT domain (set_up: the device says)
  Bytes msm_scratch_bytes_ = 0;
  ProvingKey verifier_key_;                // the verifying key in the form ProofVerifier takes
  std::optional<ProofVerifier> verifier_;  // over verifier_key_
  std::shared_ptr<AssignmentKeyState> key_state_;
  bool keep_key_ = false;  // the caller's state: the sets stay on the devices after the run
  std::mutex mutex_;       // states_ (jobs run beside one another on several devices)
  std::map<int, JobState> states_;
};

}  // namespace stagehand::groth16
