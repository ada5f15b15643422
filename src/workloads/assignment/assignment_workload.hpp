#pragma once
// Proofs from Filecoin's assignments (groth16/assignment_prover.hpp) as a coordinator Workload:
// each circuit of a call is one job, scheduled like any partition (the policy's locks, VramBudget
// reservations, pinned staging and pre-staging of a, b and c, several workers per GPU).
//
//   set-up   (per GPU) the key's resident sets uploaded from the key's own bytes (they are in the
//                      device layout already); outside the budget's capacity (resident_bytes),
//                      like the Groth16 workload's resident sets
//   prepare  (host)    a, b, c zero-padded to the domain into the staged inputs; the queries'
//                      scalars gathered by the density bitmaps (aux for L, then A's, then B's)
//                      into the job's extra input (JobMemoryPlan::extra_input_bytes), so that the
//                      policy stages and uploads them as it does a, b and c, before the lock;
//                      each MSM launch's count of 0s and 1s; all of it on thread_count threads
//   program  (GPU)     the streamed sets' first batches sent; ntt_domain_init
//                      (ω and g = 7 of bellperson's domain) and h_polynomial_classic on a, b, c
//                      (with late inputs, AssignmentLayout: h_classic_product on a and b, b freed,
//                      c uploaded, h_classic_finish on a and c, the domain freed, the scalars
//                      uploaded): H's coefficients in a; b and c freed; the MSMs H (the first m − 1
//                      coefficients), L (after the scalars' upload), A, B1 (G1) and B2 (G2), each over its resident set
//                      (groth16_msm_g1/_g2) or batch by batch through the stream buffers
//                      (groth16_msm_g1/_g2_batch, then _reduce: workloads/key_streaming.hpp); the
//                      five sums to the host
//   finish   (host)    SupraSeal's assembly (assemble_assignment_proof, the CPU reference's) and,
//                      with `verify`, the pairing check: a proof that does not verify fails its
//                      job and never reaches the handler (the job's error; the caller names the
//                      circuit, the job's index)
//
// Where each set is comes from plan_assignment_placement, the Groth16 program's KeyPlacement::plan
// over the assignment key's sets (h as H, l as C, a as A, b_g1 as B1, b_g2 as B2): resident what
// fits on the smallest device beside the proofs in flight, the rest streamed for each proof, so
// that a key larger than the device's budget is proved as one that fits is, with the same bytes.
//
// Every value is summed by the MSM kernels, 0s and 1s included: gathering the bit values apart
// (batch additions over their points) needs a kernel that gathers resident points by a bitmap,
// which the ABI has not, and is left for later. Each MSM's launch counts its 0 and 1 scalars as
// light units, which the simulator's cost model charges as such (a GPU ignores the count).

#include "coordinator/async_wait.hpp"
#include "coordinator/job.hpp"
#include "device/kernel_abi.hpp"
#include "groth16/assignment_prover.hpp"
#include "groth16/params.hpp"
#include "groth16/prover.hpp"
#include "groth16/verify.hpp"
#include "workloads/groth16/key_placement.hpp"
#include "workloads/host_work.hpp"
#include "workloads/key_streaming.hpp"

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace stagehand::groth16 {

// The assignment key's sets as the Groth16 program's KeySet slots: h as H, a as A, b_g1 as B1,
// b_g2 as B2, and l (over the aux values, the private part) as C.
inline constexpr std::size_t kSetL = kSetC;
class ProgramEvents;  // the events a program makes (assignment_program.cpp)
// The program's MSMs, in order: H first (its scalars, the polynomial a, are then freed), then
// those over the assignment's values.
inline constexpr std::array<std::size_t, kKeySetCount> kAssignmentMsmOrder{kSetH, kSetL, kSetA, kSetB1, kSetB2};
inline constexpr std::array<const char*, kKeySetCount> kAssignmentSetNames{"h", "a", "b_g1", "b_g2", "l"};
// The key's sizes for KeyPlacement: its sets' point counts and its domain.
KeySizes assignment_key_sizes(const ParamsKey& key);
// How the program runs on the devices: where each set is, and whether a proof holds a, b, c and
// the scalars from the start (the inputs all pre-staged by the policy) or, where one proof does
// not fit so, two polynomials at a time (late_inputs: a and b pre-staged; c uploaded by the
// program into b's room once a·b is formed, the scalars once H's coefficients are: the H step
// in two halves, h_classic_product and h_classic_finish).
struct AssignmentLayout {
  KeyPlacement placement;
  bool late_inputs = false;
  bool operator==(const AssignmentLayout&) const = default;
};

// "a, b_g1 resident; h, l, b_g2 streamed (2 x 2.0 KiB buffers)", with the assignment key's names.
std::string describe_assignment_placement(const KeyPlacement& placement);
// The placement's, and "; two polynomials at a time (c and the scalars uploaded in the program)"
// with late inputs.
std::string describe_assignment_layout(const AssignmentLayout& layout);

// Where each of `key`'s sets is on `devices` (KeyPlacement::plan): resident what fits on the
// smallest device, less `held_back` (the safety margin and other residents), beside
// `proofs_in_flight` proofs, the rest streamed through two buffers of at most
// `stream_buffer_bytes`; with late inputs only where one proof with every set streamed does not
// fit otherwise. A device too small for one proof even so is an InputError naming the sizes.
AssignmentLayout plan_assignment_layout(const ParamsKey& key, const std::vector<Device*>& devices, Bytes held_back,
                                        int proofs_in_flight, Bytes stream_buffer_bytes = kGiB);

// A .params key's sets left on the devices between runs, so that the next run of the same key
// starts proving at once (the C ABI keeps one for the key it proved last): each device's resident
// sets, and the registration of the host bytes its streamed sets travel from (pinned once for
// every GPU). A run given one sets a device up only where it holds nothing complete for it, and
// leaves what it set up there at its end; the holder keeps the key alive until release() has
// returned (the registration refers to its bytes), hands the state to one run at a time, and
// releases it before a run whose placement keeps other sets resident (made_for). Without one, a
// run gives everything back at its end.
class AssignmentKeyState {
 public:
  using Sets = std::array<DevicePointer, kKeySetCount>;  // the resident ones (null where streamed)

  AssignmentKeyState() = default;
  AssignmentKeyState(const AssignmentKeyState&) = delete;
  AssignmentKeyState& operator=(const AssignmentKeyState&) = delete;

  // Whether it holds anything to give back: a device's sets (complete or not) or a registration.
  bool holds_anything() const;
  // Whether what it holds was set up for `placement`'s resident sets (true when it holds nothing).
  bool made_for(const KeyPlacement& placement) const;
  // Device set-ups made into it: a second run of the same key on the same devices makes none.
  std::uint64_t set_ups() const;
  // Frees what it holds on every device and gives the registration back (through the device that
  // made it, or where that one is lost through `fallback` or another that held sets).
  asio::awaitable<void> release(Device* fallback = nullptr);

 private:
  friend class AssignmentWorkload;
  struct OnDevice {
    Sets sets{};
    bool complete = false;  // every upload done (a failed set-up leaves it false)
  };
  static asio::awaitable<void> free_sets(Device& device, const Sets& sets);
  // The run's view: the entry of `device` (null where none), a fresh one, its completion.
  OnDevice* entry(const Device& device);
  OnDevice& fresh_entry(Device& device, const KeyPlacement& placement);
  void completed(const Device& device);
  std::optional<OnDevice> take(const Device& device);
  bool holds_devices() const;
  bool pinned(HostRange range) const;
  void add_pinned(HostRange range, Device& through);

  mutable std::mutex mutex_;
  // By device: the same state serves a run on every device and a run on one of them.
  std::map<Device*, OnDevice, std::less<>> devices_;
  // What its entries were made for.
  std::optional<std::array<SetPlacement, kKeySetCount>> placement_;
  std::vector<HostRange> pinned_;     // the streamed sets' host bytes, registered
  Device* pinned_through_ = nullptr;  // the device that registered them
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
  // key_state: where the key's sets stay between runs (null: a private one, freed at the run's end);
  // it must be made_for `placement`.
  // layout: where each set is and whether inputs come late (plan_assignment_layout; by default
  // every set resident, every input pre-staged).
  // host_work: where prepare's host steps run (null: inline, on the coordinator's thread).
  AssignmentWorkload(const ParamsKey& key, std::vector<AssignmentJob> jobs, unsigned thread_count,
                     ProofHandler on_proof, bool verify = true, Bytes safety_margin_bytes = 0,
                     std::shared_ptr<AssignmentKeyState> key_state = nullptr, AssignmentLayout layout = {},
                     HostWork* host_work = nullptr);

  // The key's sets, all of them: what a device keeps with every set resident.
  static Bytes key_bytes(const ParamsKey& key);
  // One proof's device memory at its peak (with late inputs or not), its two stream buffers (each
  // `stream_buffer_bytes`) and the MSM scratch of the largest batch `device` takes with every set
  // streamed included: the least a device must give one proof of the key beside its margin.
  static Bytes streamed_proof_bytes(const ParamsKey& key, const Device& device, Bytes stream_buffer_bytes,
                                    bool late_inputs);
  // The same without the MSM scratch (KeyPlacement::plan adds each placement's).
  static Bytes proof_bytes_before_scratch(const ParamsKey& key, const Device& device, Bytes stream_buffer_bytes,
                                          bool late_inputs);
  const KeyPlacement& placement() const { return placement_; }

  int job_count() const override { return static_cast<int>(jobs_.size()); }
  int proof_count() const override { return job_count(); }
  int proof_of(int job) const override { return job; }
  JobMemoryPlan memory_plan(int job) const override;
  Bytes resident_bytes() const override { return shape_.resident_bytes(); }
  asio::awaitable<void> set_up(Device& device, int device_index) override;
  asio::awaitable<void> tear_down(Device& device, int device_index) override;
  asio::awaitable<void> prepare(int job, Device& device, std::span<const HostRange> inputs) override;
  asio::awaitable<JobTimes> run_program(int job, JobContext& context) override;
  asio::awaitable<void> finish(int job, Device& device) override;
  void abandon(int job) override;

 private:
  // The five sums in the program's results, each at its set's KeySetShape::first_sum_offset:
  // four in G1 (144 bytes each) and B2's in G2 (288).
  static constexpr Bytes kResultBytes = 4 * kernel::kG1JacobianBytes + kernel::kG2JacobianBytes;
  // Of the scalars [first, first + count) of a set, how many are 0 or 1.
  struct LightCount {
    std::uint64_t first = 0;
    std::uint64_t count = 0;
    std::uint64_t light = 0;
  };
  struct JobState {
    // Per set, for each MSM launch: the whole set, and each streamed batch (prepare to program).
    std::array<std::vector<LightCount>, kKeySetCount> light;
    std::vector<std::uint8_t> sums;  // kResultBytes (program to finish)
  };

  // The bytes of a job's device memory beside its inputs (a, b, c and the scalars) and the NTT
  // domain: the results, the MSM scratch, the stream buffers.
  Bytes working_bytes() const;
  // A proof's inputs and NTT domain at their peak (proof_bytes_before_scratch's and memory_plan's).
  static Bytes inputs_peak_bytes(Bytes polynomial, Bytes domain, Bytes scalars, bool late_inputs);
  // The H step: H's coefficients in a, b and c freed (with late inputs c uploaded in between).
  asio::awaitable<void> run_h_step(JobContext& context, DevicePointer domain, ProgramEvents& events) const;
  // With late inputs: `source` (a staged input) into memory of the job's, on the upload stream
  // once the compute stream has reached the allocation; `arrived` (one of `events`) says when it
  // is up.
  asio::awaitable<DevicePointer> upload_late(JobContext& context, HostRange source, ProgramEvents& events,
                                             EventHandle& arrived) const;
  // The device's memory for the NTT domain's table of 2^domain_log2 (what it asks for either
  // kernel that writes one).
  static Bytes domain_bytes_on(const Device& device, std::uint64_t domain_size);
  void check_fits(Device& device) const;
  // The scalars of `set` in the job's scalar buffer (or, for h, the coefficients in a), and of
  // points [first, first + count) those that are 0 or 1 (counted by prepare: count_light).
  DevicePointer set_scalars(std::size_t set, DevicePointer scalars, DevicePointer h_coefficients) const;
  std::uint64_t scalars_offset(std::size_t set) const;  // in scalars, of every set but h
  std::uint64_t light_scalars(const JobState& job_state, std::size_t set, std::uint64_t first,
                              std::uint64_t count) const;
  // prepare's: a, b, c into the staged inputs, and the queries' scalars into the extra one.
  void fill_inputs(const AssignmentView& assignment, std::span<const HostRange> inputs) const;
  // prepare's: each MSM launch's count of light scalars among `scalars` (the job's, gathered).
  void count_light(std::span<const math::Fr> scalars, JobState& job_state) const;
  void launch_msm(JobContext& context, std::size_t set, DevicePointer points, DevicePointer scalars,
                  DevicePointer results, DevicePointer scratch, std::uint64_t light_units) const;
  // The MSM of one set over its resident points or its streamed batches, into its sum's slot.
  asio::awaitable<void> run_set_msm(JobContext& context, KeyStream& stream, const JobState& job_state, std::size_t set,
                                    DevicePointer resident, DevicePointer scalars, DevicePointer results,
                                    DevicePointer scratch) const;
  asio::awaitable<void> upload_key(Device& device, AssignmentKeyState::Sets& sets) const;
  // The streamed sets' host bytes registered as pinned memory, once for every device (the first
  // set-up registers them while the others wait), so that their batches travel at the pinned rate.
  asio::awaitable<void> pin_streamed_sets(Device& device);
  HostRange set_host(std::size_t set) const;
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
  KeyPlacement placement_;
  bool late_inputs_ = false;             // AssignmentLayout's
  HostWork* host_work_;                  // may be null
  KeyProgramShape shape_;                // each set's batches (shape_key_program)
  std::vector<StreamedBatch> streamed_;  // every streamed set's batches, in the MSMs' order
  std::shared_ptr<AssignmentKeyState> key_state_;
  bool keep_key_ = false;  // the caller's state: the sets stay on the devices after the run
  OneAtATime pinning_;     // the streamed sets pinned by one set-up at a time
  std::mutex mutex_;       // states_ (jobs run beside one another on several devices)
  std::map<int, JobState> states_;
};

}  // namespace stagehand::groth16
