#pragma once
// The Groth16 proof's GPU program as a coordinator Workload, whatever its bytes are: the key's
// set-up on each device (its resident sets and, with the a/b/c step there, its constraint
// matrix), each job's memory plan, and the program itself (the a/b/c step, the H step, the five
// MSMs over the key's sets wherever KeyPlacement put them, their sums to the host). It is written
// once for its two data sources, each a class of its own that says where the bytes come from and
// what the host does before and after the GPU:
//   Groth16Workload        (groth16_workload.hpp)         real proofs: a key, witnesses, checks
//   Groth16TimingWorkload  (groth16_timing_workload.hpp)  a key's sizes alone: modelled host
//                          times on virtual memory, or synthetic bytes on a GPU
//
// The program's kernels (device/kernel_abi.hpp) run in the simulator's functional mode as host
// functions on the CPU reference (sim/kernels/groth16_kernels.hpp), and on a GPU through
// CudaDevice's launchers of the same names (cuda/kernels/launch/).

#include "coordinator/async_wait.hpp"
#include "coordinator/job.hpp"
#include "groth16/constraint_matrix.hpp"
#include "groth16/prover.hpp"
#include "workloads/groth16/device_key_state.hpp"
#include "workloads/groth16/key_placement.hpp"
#include "workloads/host_work.hpp"

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace stagehand::groth16 {

// Where the a/b/c step runs. On the device the key's constraint matrix stays resident beside its
// points and each job uploads only its witness; streamed, the step runs on the device too but the
// matrix goes up for each proof in chunks (MatrixChunk) through the proof's two stream buffers,
// ahead of the streamed sets' batches, each chunk's a/b/c computed as the next one travels (a
// matrix that does not fit beside the proofs: 6.2 GiB at 2^26 on a 16 GiB card); on the host each
// job's prepare computes a, b and c over the same matrix (threaded by rows) and uploads all
// three. The host's step takes seconds a proof at 2^26 where the device's takes milliseconds.
enum class AbcStep { device, streamed, host };
std::string_view to_string(AbcStep step);                      // "device", "streamed", "host"
std::optional<AbcStep> parse_abc_step(std::string_view text);  // nullopt for anything else ("auto")
// Where it runs, in words: "on the device", "on the device, its matrix streamed", "on the host".
std::string describe(AbcStep step);
// What a --abc option or an abc key accepts: every step's name, "auto" first where asked.
std::vector<std::string> abc_step_choices(bool with_auto = false);
constexpr bool abc_on_device(AbcStep step) { return step != AbcStep::host; }

// The program and the key's set-up; the jobs' count, their host steps and their bytes are the
// data source's (the protected interface below). Every job goes prepare, run_program, finish
// (or abandon anywhere on the way); the hand-offs are checked (STAGEHAND_ASSERT): a job index in
// range, a program run only on a prepared job, a finish only after its program and only once.
class Groth16Program : public Workload {
 public:
  // The constraint matrix's bytes on each device with the a/b/c step there (0 on the host).
  static Bytes matrix_bytes(const KeySizes& key, AbcStep abc_step);
  // A proof's device memory at its peak without the key's sets and the kernels' scratch (to plan
  // before the devices are set up): the polynomials, the witness, the stream buffers.
  static Bytes proof_bytes_before_scratch(const KeySizes& key, Bytes stream_buffer_bytes);
  // One job's memory plan from the key's sizes, its layout and shape, the stream buffers' bytes
  // and the kernels' scratch (memory_plan's, and proof_device_bytes's before any set-up).
  static JobMemoryPlan plan_memory(const KeySizes& sizes, AbcStep abc_step, const KeyPlacement& placement,
                                   const KeyProgramShape& shape, Bytes stream_buffer_bytes, Bytes msm_scratch_bytes,
                                   Bytes h_scratch_bytes);
  // Each of a proof's two stream buffers: the streamed sets' (0 where none streams), at least the
  // placement's where the matrix streams through them (which it does before H: a placement with
  // its MSM memory after H has no buffers then, and is refused).
  static Bytes stream_buffer_bytes(const KeyProgramShape& shape, const KeyPlacement& placement, AbcStep abc_step);
  AbcStep abc_step() const { return abc_step_; }
  const KeyPlacement& placement() const { return placement_; }

  // The wall seconds each device's set-up took (the key's points and matrix encoded and uploaded,
  // precomputed bases computed; next to none where the device state held them), and each device's counters when it ended (what the proofs'
  // figures count from: the set-up's kernels are not theirs).
  const std::map<int, double>& set_up_seconds() const { return set_up_seconds_; }
  const std::map<int, DeviceCounters>& counters_after_set_up() const { return counters_after_set_up_; }

  JobMemoryPlan memory_plan(int job) const override;
  Bytes resident_bytes() const override;

  asio::awaitable<void> set_up(Device& device, int device_index) override;
  asio::awaitable<void> tear_down(Device& device, int device_index) override;
  asio::awaitable<void> prepare(int job, Device& device, std::span<const HostRange> abc) final;
  asio::awaitable<JobTimes> run_program(int job, JobContext& context) final;
  asio::awaitable<void> finish(int job, Device& device) final;
  void abandon(int job) final;

  // The kernels' scratch per proof, known once a device is set up (0 on the simulator).
  Bytes msm_scratch_bytes() const { return msm_scratch_bytes_; }
  Bytes h_scratch_bytes() const { return h_scratch_bytes_; }
  // The sums the program returns (one per set, Jacobian: set_sum_bytes of the key's curve).
  Bytes result_bytes() const { return shape_.result_bytes; }

 protected:
  // `host_work`: the pool the set-up's uploads go through pinned staging on (none: the uploads'
  // host ranges stand in for bytes that do not exist, and go up as pageable copies).
  // `thread_count`: what the kernels' host functions may use (0 = every hardware thread).
  // `source_name`: the data's name in messages (the key's file).
  // Without `device_state` the run sets the devices up and frees them itself.
  Groth16Program(const KeySizes& sizes, AbcStep abc_step, KeyPlacement placement,
                 std::shared_ptr<DeviceKeyState> device_state, HostWork* host_work, unsigned thread_count,
                 std::string source_name);

  // The data source's part.
  // Host work before the GPU: fills the staged inputs (the witness with the a/b/c step on the
  // device, else a, b and c).
  virtual asio::awaitable<void> prepare_job(int job, Device& device, std::span<const HostRange> abc) = 0;
  // Host work after the GPU, its sums on the host (msm_sums); the job's state is dropped after it
  // either way.
  virtual asio::awaitable<void> finish_job(int job, Device& device) = 0;
  // What the source kept for a job that ends (finished or failed); the program's own is dropped.
  virtual void forget_job(int /*job*/) {}
  // The host bytes of a key set (its points in the device layout) and of the constraint matrix.
  virtual HostRange set_host(std::size_t set) const = 0;
  virtual HostRange matrix_host() const = 0;
  // With the a/b/c step on the host: the witness the program uploads for `job`.
  virtual HostRange witness_host(int job) const = 0;
  // Of `set`'s points [first, first + count), those whose scalars are declared 0 or 1
  // (KernelLaunch::light_units; 0 where the scalars are not known in advance).
  virtual std::uint64_t light_points(std::size_t /*set*/, std::uint64_t /*first*/, std::uint64_t /*count*/) const {
    return 0;
  }
  // Whether the result buffers the sums land in are real host memory (the simulator's timing
  // runs land them in virtual ranges: there is nothing to read).
  virtual bool sums_readable() const { return true; }
  // At the start of each device's set-up, before anything goes up (every device's at once).
  virtual void before_set_up() {}

  // For the sources.
  static HostRange host_range(const void* data, std::size_t bytes) {
    return HostRange{reinterpret_cast<std::uintptr_t>(data), bytes};
  }
  const KeySizes& sizes() const { return sizes_; }
  const KeyProgramShape& shape() const { return shape_; }
  DeviceKeyState& device_state() const { return *device_state_; }
  HostWork* host_work() const { return host_work_; }
  unsigned thread_count() const { return thread_count_; }
  Bytes stream_buffer_size() const { return stream_buffer_bytes_; }
  // The streamed matrix's chunks, each at most a stream buffer; cut once, whoever calls first.
  void cut_matrix(std::vector<MatrixChunk> chunks);
  // One sum per set of a job whose program ran (sums_readable sources only), in the key's curve:
  // MsmResults or bn254::MsmResults (their sums' layout is the program's KeySizes::curve's).
  template <class Results>
  Results msm_sums(int job);

 private:
  // What the run uses on a device: the key's (from device_state_) and its own side streams.
  struct KeyOnDevice {
    std::array<DevicePointer, kKeySetCount> sets{};  // the resident ones
    DevicePointer matrix;
    std::vector<StreamHandle> idle_side_streams;  // for the witness's copy beside the program
  };
  // A job in hand, from its prepare to its end.
  enum class Stage { prepared, ran };
  struct JobState {
    Stage stage = Stage::prepared;
    std::vector<std::byte> sums;
  };
  // A proof's point sets on the device for its MSMs: the fetched copies and the stream buffers.
  struct ProofPoints;
  struct Scratch {
    DevicePointer h, msm;
  };
  struct Polynomials {
    DevicePointer a, b, c;
  };
  // One run of the program: what run_steps' parts hand each other.
  struct ProgramRun;
  class SideCopy;
  void check_job(int job, const char* step) const;
  JobState& state(int job, Stage expected, const char* step);
  void launch_abc(JobContext& context, DevicePointer witness, DevicePointer matrix, const MatrixChunk* chunk,
                  const Polynomials& polynomials) const;
  asio::awaitable<void> run_abc(JobContext& context, ProofPoints& points, DevicePointer witness,
                                const Polynomials& polynomials) const;
  // `uploaded`: the events each of a, b, c's upload records, where the step must still wait for it.
  void launch_h(JobContext& context, const Polynomials& polynomials, const Scratch& scratch,
                const std::array<EventHandle, 3>& uploaded) const;
  void launch_msm(JobContext& context, std::size_t set, DevicePointer bases, DevicePointer scalars,
                  DevicePointer results, const Scratch& scratch) const;
  void launch_msm_batch(JobContext& context, std::size_t set, DevicePointer bases, std::uint64_t first,
                        std::uint64_t count, bool add, DevicePointer scalars, const Scratch& scratch) const;
  void launch_msm_reduce(JobContext& context, std::size_t set, DevicePointer results, const Scratch& scratch) const;
  asio::awaitable<void> start_point_uploads(JobContext& context, ProofPoints& points) const;
  asio::awaitable<void> run_set_msms(JobContext& context, ProofPoints& points, std::size_t set, DevicePointer scalars,
                                     DevicePointer results, const Scratch& scratch) const;
  asio::awaitable<JobTimes> run_steps(int job, JobContext& context, SideCopy& witness_copy,
                                      std::vector<std::byte>& sums);
  asio::awaitable<void> allocate_working_memory(ProgramRun& run);
  asio::awaitable<void> take_msm_memory(ProgramRun& run);
  std::shared_ptr<Nanoseconds> wait_for_first_inputs(ProgramRun& run, std::array<EventHandle, 3>& still_uploading);
  asio::awaitable<void> run_h_and_msms(ProgramRun& run, const std::array<EventHandle, 3>& still_uploading);
  asio::awaitable<void> land_sums(ProgramRun& run, std::vector<std::byte>& sums);
  JobTimes describe_run(const ProgramRun& run, Nanoseconds waited) const;
  asio::awaitable<void> pin_key_sets(Device& device);
  OneAtATime pinning_;  // the key's travelling sets pinned by one set-up at a time (pin_key_sets)
  asio::awaitable<void> upload_key(Device& device, DeviceKeyState::OnDevice& entry);

  KeySizes sizes_;
  AbcStep abc_step_;
  KeyPlacement placement_;
  KeyProgramShape shape_;
  std::shared_ptr<DeviceKeyState> device_state_;
  bool owns_device_state_ = false;  // a private one: given back at the run's end
  HostWork* host_work_ = nullptr;
  unsigned thread_count_ = 0;
  std::string source_name_;
  // Streamed a/b/c: the matrix's chunks (cut_matrix), each at most stream_buffer_bytes_; and
  // each stream buffer's bytes, the placement's where no set streams.
  std::vector<MatrixChunk> matrix_chunks_;
  std::once_flag matrix_cut_;
  Bytes stream_buffer_bytes_ = 0;
  Bytes h_scratch_bytes_ = 0;
  Bytes msm_scratch_bytes_ = 0;
  std::map<int, KeyOnDevice> keys_;                      // by device index
  std::map<int, double> set_up_seconds_;                 // by device index
  std::map<int, DeviceCounters> counters_after_set_up_;  // by device index
  std::mutex states_mutex_;
  std::map<int, JobState> states_;  // jobs in hand (between prepare and their end)
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
ProofLayout plan_proof_layout(const KeySizes& key, const std::vector<Device*>& devices, Bytes held_back,
                              int proofs_in_flight, std::optional<AbcStep> abc, std::optional<SetPlacement> sets,
                              Bytes stream_buffer_bytes = kGiB, bool precompute_bases = false);

// The bytes one proof of a key needs on a device in `layout`, besides the safety margin and other
// residents: the key's resident sets and constraint matrix, and one proof's peak (its memory plan
// before any device is set up: the kernels' scratch comes on top). The one answer to "does a
// proof of this key fit", for a configured cap, the engine's keys side by side and a run's log.
Bytes proof_device_bytes(const KeySizes& key, const ProofLayout& layout);

}  // namespace stagehand::groth16
