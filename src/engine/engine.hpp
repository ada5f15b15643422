#pragma once
// stagehand::Engine: a long-lived prover. It opens the devices once (backend/backend.hpp), keeps
// proving keys of either curve (BLS12-381, BN254: the .zkey's primes choose) by name in host
// memory (each .zkey read once), and accepts proofs from any thread.
//
// Scheduling: one dispatcher thread takes what is queued for one key (the key of the oldest
// queued proof, at most `max_batch` of its proofs, in order) and runs it as one coordinator run
// of a Groth16Workload on the engine's devices (a proving::ProofBatch: proving/proof_batch.hpp).
// Proofs of that key submitted meanwhile join the run (coordinator.hpp's JobFeed) while they are
// at the queue's head and the run holds fewer than two unended proofs a worker (the rest stay
// queued: the queue's capacity still holds submitters back), so that under load the GPUs go from proof to proof; the run ends once its proofs have all ended with none of its key at the
// head, at `max_batch` proofs, or when the engine stops or a key's state is to be given back.
// The key stays set up on the devices between its runs (its resident sets, precomputed copies
// and constraint matrix, and the registration of the bytes its streamed sets travel from:
// groth16::DeviceKeyState). Several keys stay set up while they fit: a run of another key keeps
// them beside it, held back from its budget, as long as that leaves its own layout as it would be
// with the devices to itself and a proof of it still fits; otherwise it gives back the least
// recently proved first. Unloading a key and shutdown give its state back. What each run still costs beyond its proofs: its streams,
// events and pinned staging buffers are set up again, and the GPUs drain at its end.
//
// The queue orders proofs by priority class, then arrival, across keys (engine/proof_queue.hpp);
// a queued proof's class rises once every [engine] promote_after_s, so that a low one is not
// starved. A proof of the running run's key joins it at its next free place when it is the
// queue's front; kernels are not preempted, so a critical proof of another key waits for the
// run's unended proofs (at most run_room: two a worker) to end, then for its own key's set-up.
// A caller's request id names a proof: submitting it again returns the same proof while it is
// queued, running, or ended within [engine] request_id_retention_s. A proof with a deadline that
// has not left the queue by then fails, saying so, without running.
//
// A Filecoin .params key (load_params_key) is kept beside the .zkey keys, in the same queue. Its
// proofs run as one coordinator run of the assignment workload (proving/assignment_batch.hpp) per
// batch: proofs submitted while it runs do not join it but wait for the next run. Its sets stay on
// the devices between its runs (groth16::AssignmentKeyState); a run of any other key gives them
// back first, and its own run gives back every other key's state (one .params key's sets set up
// at a time, none beside a .zkey key's). Every proof of it is pairing-checked, whatever [engine]
// verify says, and its trace is not written ([engine] trace_dir) nor reported (EngineHooks::on_run).
//
// Every accepted proof ends done, failed or cancelled, and its handle says which: a bad witness
// or a device error fails its own proof only (the coordinator records each job's error), and
// shutdown either finishes every queued proof or fails each with a message saying so.

#include "engine/engine_clock.hpp"
#include "engine/engine_config.hpp"
#include "groth16/binfile.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/zkey.hpp"
#include "proving/proof_batch.hpp"
#include "backend/backend.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace stagehand::engine {

enum class ProofState { queued, running, done, failed, cancelled };
const char* to_string(ProofState state);

// What went wrong, for callers that map errors to their own codes (HTTP statuses, C codes).
enum class ErrorKind {
  unknown_key,       // no key of that name (or it is being unloaded)
  key_exists,        // a key of that name is loaded already
  bad_key,           // the .zkey cannot be read or does not fit the devices
  bad_witness,       // the .wtns is malformed or not for this key
  queue_full,        // the queue is at its capacity and the caller chose not to wait
  unknown_proof,     // no proof of that id (or it was forgotten)
  stopped,           // the engine is shutting down
  no_gpu,            // every GPU of the engine is lost: no proof can run until it is restarted
  bad_request,       // a submit option is invalid (an empty or too long request id)
  deadline_passed,   // the proof's deadline is already past at submit
  request_conflict,  // the request id names a proof of another key
};
const char* to_string(ErrorKind kind);

class EngineError : public std::runtime_error {
 public:
  EngineError(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// A proof's priority class: the queue takes a higher class first, then the earlier arrival.
enum class Priority { low, normal, high, critical };
const char* to_string(Priority priority);
// "critical", "high", "normal" or "low"; nothing for any other text.
std::optional<Priority> priority_from_string(std::string_view text);

// Where a proof's time went, from its submit to its end, in consecutive parts that add up to
// total_s (a part it never reached is 0; the part it ended in runs to its end).
struct ProofTimings {
  double queue_s = 0;        // in the engine's queue, then in its run until a worker took it
  double setup_s = 0;        // its run's start: other keys' device state given back, its key set up on its GPU
  double host_before_s = 0;  // its host step before the GPU, its uploads and the wait for the GPU's compute lock
  double gpu_s = 0;          // its GPU program, with the compute lock held
  double host_after_s = 0;   // the proof's assembly on the host after the GPU, and its hand-over
  double check_s = 0;        // the pairing check (0 with [engine] verify = false; a .params key's is in host_after_s)
  double total_s = 0;
};

struct ProofResult {
  ProofState state = ProofState::queued;
  std::string proof_json;        // snarkjs's proof.json (done)
  std::string public_json;       // snarkjs's public.json (done)
  std::string error;             // why it failed or was cancelled
  bool engine_stopped = false;   // failed because the engine shut down before it ran
  bool deadline_missed = false;  // failed because its deadline passed while it was queued
  double seconds = 0;            // from submit to its end
  ProofTimings timings;          // once it has ended
  int gpu = -1;                  // the GPU it ended on (-1: it never reached one)
};

namespace detail {
struct ProofRecord;
}

// An accepted proof; copies refer to the same proof, and a handle stays valid after the engine
// is gone (by then every proof has ended).
class ProofHandle {
 public:
  ProofHandle() = default;
  explicit ProofHandle(std::shared_ptr<detail::ProofRecord> record, bool repeated = false)
      : record_(std::move(record)), repeated_(repeated) {}

  std::uint64_t id() const;
  const std::string& key() const;
  Priority priority() const;              // as submitted
  const std::string& request_id() const;  // empty: none
  // This handle came from a submit that repeated an earlier one's request id: no new proof.
  bool repeated() const { return repeated_; }
  ProofState state() const;
  bool finished() const;
  // Blocks until the proof has ended.
  ProofResult wait() const;
  // Nothing when it has not ended within `timeout`.
  std::optional<ProofResult> wait_for(std::chrono::milliseconds timeout) const;
  // The result so far (state queued or running: no texts yet).
  ProofResult result() const;
  // Calls `callback` once when the proof ends, on the thread that ends it (as SubmitOptions::on_done:
  // keep it short), or at once on this thread where it has ended already. For a caller that waits
  // without a thread (the service's GET ?wait=); a callback whose caller stopped waiting stays
  // until the proof ends.
  void on_end(std::function<void(const ProofHandle&)> callback) const;

 private:
  std::shared_ptr<detail::ProofRecord> record_;
  bool repeated_ = false;
};

enum class WhenFull { refuse, wait };

// Called once when a proof ends, on the engine's dispatcher thread (the caller's, for a proof
// cancelled or refused while queued or a submit repeating an ended proof's request id; the
// deadline watcher's, for a proof whose deadline passed in the queue): keep it short, it holds
// up the next proofs.
using ProofCallback = std::function<void(const ProofHandle&)>;

struct SubmitOptions {
  Priority priority = Priority::normal;
  // The caller's name for the proof (1 to 256 bytes; empty: none). Submitted again while the
  // proof is queued, running or ended within [engine] request_id_retention_s, it returns the same
  // proof (ProofHandle::repeated) and queues nothing; for another key it is refused.
  std::string request_id;
  // The proof must leave the queue before this, or it fails without running; a deadline already
  // past is refused at submit (deadline_passed). On the engine's clock (EngineHooks::clock).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  WhenFull when_full = WhenFull::refuse;
  // What names the witness in the proof's messages (`stagehand prove`: its file); empty:
  // "proof N (key K)".
  std::string witness_name;
  // With [engine] seed: the number its r and s are derived from (seed plus it), where the caller
  // numbers its own proofs (`stagehand prove`: its witnesses from 0, refused ones included);
  // nothing: the proof's id less one.
  std::optional<std::uint64_t> seed_index;
  // Called once when the proof ends, also for a submit that repeats a request id (at once, on the
  // caller's thread, when the proof has ended already).
  ProofCallback on_done;
};

// The deadline `ms` milliseconds from now (zero or less: already past), as HTTP's deadline_ms and
// the C ABI's take it. EngineError bad_request beyond kDeadlineMostMs either way.
constexpr std::int64_t kDeadlineMostMs = 10'000'000'000;  // about 115 days
std::chrono::steady_clock::time_point deadline_in(std::int64_t ms);

// Timing histograms of ended proofs (done or failed) by key, priority and part of their life.
struct TimingHistogram {
  std::string key;
  Priority priority = Priority::normal;
  std::string part;                   // "queue", "setup", "host_before", "gpu", "host_after", "check", "total"
  std::vector<std::uint64_t> counts;  // cumulative, per EngineStatus::timing_bounds; last = +Inf
  double sum = 0;
};

struct GpuStatus {
  int index = 0;
  int running = 0;         // proofs between prepare and their end on this GPU
  std::uint64_t done = 0;  // proofs that ended on it (any outcome)
  std::uint64_t vram_capacity_bytes = 0;
  std::uint64_t vram_reserved_bytes = 0;       // the budget's reservations, when last sampled
  std::uint64_t device_used_bytes = 0;         // what the device reports in use, when last sampled
  std::uint64_t pinned_host_budget_bytes = 0;  // the configured cap on pinned staging memory
  std::uint64_t pinned_host_kept_bytes = 0;    // pinned staging and result buffers kept for the next batch
  std::uint64_t pinned_host_allocations = 0;   // pinned host buffers made since the engine started, when last sampled
  double busy_seconds = 0;                     // wall time with at least one proof running on it
  bool lost = false;                           // the device was lost: its proofs go to the other GPUs
};

struct KeyStatus {
  std::string name;
  std::string path;
  std::string format = "zkey";  // "zkey" (snarkjs's), or "params" (Filecoin's .params, proved with r1cs_path)
  std::string r1cs_path;        // the constraint system its witnesses are checked against (empty: none)
  groth16::Curve curve = groth16::Curve::bls12_381;  // the key's (snarkjs_curve_name names it as proof.json does)
  std::uint64_t host_bytes = 0;
  // "host", and "gpu0", ... where it is set up on that GPU; a .params key's: "host", and "gpus" while
  // its sets are kept on the devices (device_bytes and planned_layout stay empty for it).
  std::vector<std::string> resident;
  std::uint64_t device_set_ups = 0;  // device set-ups made of it (uploads of its sets and matrix) since it was loaded
  std::uint64_t device_bytes = 0;    // what it holds set up on a GPU (the most on any one): 0 when it is not
  std::uint64_t proof_bytes =
      0;  // one proof's device memory, the key's set-up included (planned at load; margins and kernel scratch on top)
  std::size_t queued = 0;
  std::size_t running = 0;
  bool unloading = false;
  double read_seconds = 0;
  std::string
      layout;  // where its proofs' a/b/c step runs and its sets live: "a/b/c on the device; H, A, B1, C, B2 resident"
  groth16::ProofLayout planned_layout;  // the same as planned at load, with why the a/b/c step is where it is
};

struct EngineStatus {
  std::string backend;
  bool on_gpu = false;  // a GPU, not the simulator
  std::size_t queued = 0;
  std::array<std::size_t, 4> queued_by_priority{};  // by the class submitted, indexed by Priority
  std::size_t queue_capacity = 0;
  std::size_t running = 0;
  // The witnesses' bytes the engine holds for its queued and running proofs (each goes when its
  // proof ends; a run's own copy with the run).
  std::uint64_t witness_bytes = 0;
  std::uint64_t accepted = 0, done = 0, failed = 0, cancelled = 0;
  std::uint64_t batches = 0;
  double uptime_seconds = 0;
  std::vector<GpuStatus> gpus;
  std::vector<KeyStatus> keys;
  // Seconds from submit to the end of each finished proof (done or failed): counts per upper bound.
  std::vector<double> histogram_bounds;
  std::vector<std::uint64_t> histogram_counts;  // cumulative, as Prometheus has them; last = +Inf
  double histogram_sum = 0;
  std::vector<double> timing_bounds;  // the upper bounds of every TimingHistogram's buckets
  std::vector<TimingHistogram> timing_histograms;
  bool stopping = false;
};

// A key of either curve, and a constraint system of either (null: none).
using AnyKeyPointer =
    std::variant<std::shared_ptr<const groth16::ProvingKey>, std::shared_ptr<const groth16::bn254::ProvingKey>>;
using AnyR1csPointer = std::variant<std::shared_ptr<const groth16::R1cs>, std::shared_ptr<const groth16::bn254::R1cs>>;
groth16::Curve curve_of(const AnyKeyPointer& key);
// What a batch takes of them (proving/proof_batch.hpp).
proving::AnyKey batch_key_of(const AnyKeyPointer& key);
proving::AnyR1cs batch_r1cs_of(const AnyR1csPointer& r1cs);
// The constraints of a constraint system of either curve, none where it is null.
std::size_t constraint_count(const AnyR1csPointer& r1cs);

// A key already in memory for Engine::load_key (`stagehand prove` reads its .zkey itself and
// reports the read; `stagehand bench prove` makes one). Of either curve: its witnesses must be too.
struct KeyInMemory {
  AnyKeyPointer key;
  std::filesystem::path path;  // the .zkey it was read from, or what names it, in messages
  double read_seconds = 0;     // how long it took to read, for status
  // Each witness is also checked against every constraint of this system, the first it does not
  // satisfy named (null: none); its wires and public signals must be the key's (bad_key).
  AnyR1csPointer r1cs;  // of the key's curve (bad_key naming both otherwise)
  std::filesystem::path r1cs_path;
};

// One coordinator run's figures, for a caller that reports them (`stagehand prove`): valid during
// EngineHooks::on_run only.
struct RunSummary {
  std::string key;
  std::uint64_t batch = 0;               // the engine's count of batches, this one's
  std::vector<std::uint64_t> proof_ids;  // the run's proofs by job index
  const proving::BatchFigures* figures = nullptr;
  const Trace* trace = nullptr;  // the run's trace (EngineHooks::trace_runs, [engine] trace_dir), or null
  bool on_gpu = false;
};

struct EngineHooks {
  // Called at each run's end, on the dispatcher's thread, once the run's proofs have been answered.
  std::function<void(const RunSummary&)> on_run;
  // Each run's coordinator rows (and on a GPU its kernels) go to the backend's own trace, where the
  // simulator records its devices' work, and reach on_run; kept where the backend keeps its events
  // (BackendOptions::keep_trace_events). [engine] trace_dir's own trace of each run comes first.
  bool trace_runs = false;
  // Called once a run is over, on the dispatcher's thread, with its batch number: after its proofs
  // have been answered, its trace written, its staging pool kept and the devices' memory sampled
  // (what status() shows of it from then on).
  std::function<void(std::uint64_t batch)> on_run_end;
  // Called on a submitter's thread when a WhenFull::wait submit finds the queue full and begins
  // to wait for room, with the engine's mutex held: it must not call the engine.
  std::function<void()> on_wait_for_room;
  // What the queue's deadlines, promotion and the linger go by (engine_clock.hpp); null: the
  // steady clock, which SubmitOptions::deadline and deadline_in are on.
  std::shared_ptr<EngineClock> clock;
};

enum class Drain {
  finish,       // every queued proof is made before the engine stops
  fail_queued,  // the running ones finish; each queued one fails, saying the engine stopped
};

class Engine {
 public:
  // Opens the devices (a GPU where the configuration and the machine have one, otherwise the
  // simulator's functional mode, as `stagehand prove` does) and starts the dispatcher.
  explicit Engine(EngineConfig config, BackendOptions options = default_backend_options(), EngineHooks hooks = {});
  // shutdown(Drain::finish) where not already shut down.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  static BackendOptions default_backend_options();

  // Reads the .zkey once and keeps it under `name`. EngineError: key_exists, bad_key, stopped.
  void load_key(const std::string& name, const std::filesystem::path& zkey_path);
  // The same from a .zkey already open (the service's, once it has checked where it lies).
  void load_key(const std::string& name, groth16::InputFile zkey);
  // The same for a key in memory. EngineError also bad_key where its constraint system is another circuit's.
  void load_key(const std::string& name, KeyInMemory key);
  // Reads a Filecoin .params key (bellperson's, BLS12-381) and its circuit's .r1cs once and keeps
  // both under `name`, beside the .zkey keys: a witness alone cannot make the assignment's a, b
  // and c, the constraint system does. A .wtns submitted for it is made into the circuit's
  // assignment (groth16::circuit_assignment) and proved as bellperson proves it, snarkjs's JSON
  // out as for a .zkey key. EngineError: key_exists, bad_key (a file that cannot be read, a
  // constraint system whose wires, public inputs, A or B columns or domain disagree with the
  // key's, naming both files, a key no device can prove), stopped.
  void load_params_key(const std::string& name, const std::filesystem::path& params_path,
                       const std::filesystem::path& r1cs_path);
  // The same from files already open (the service's, once it has checked where they lie).
  void load_params_key(const std::string& name, groth16::InputFile params, groth16::InputFile r1cs);
  // New proofs for it are refused at once; the key goes once its queued and running proofs have
  // ended. Returns how many that is (0: gone now). EngineError unknown_key.
  std::size_t unload_key(const std::string& name);
  // Blocks until no key of that name is loaded.
  void wait_key_gone(const std::string& name);
  bool has_key(const std::string& name) const;

  // Accepts one proof from the bytes of a .wtns file, checked against the key at once.
  // EngineError: unknown_key, bad_witness, queue_full (WhenFull::refuse), stopped.
  ProofHandle submit(const std::string& key, std::vector<std::uint8_t> wtns, WhenFull when_full = WhenFull::refuse,
                     ProofCallback on_done = {});
  // The same with a priority, a request id and a deadline. EngineError also bad_request,
  // deadline_passed, request_conflict.
  ProofHandle submit(const std::string& key, std::vector<std::uint8_t> wtns, SubmitOptions options);
  // The same from bytes the caller shares (one witness for many proofs), held until the proof ends.
  ProofHandle submit(const std::string& key, std::shared_ptr<const std::vector<std::uint8_t>> wtns,
                     SubmitOptions options);
  // A queued proof is cancelled at once; a running one before its next step (prepare, the GPU
  // program, the host step after it), unless it ends first. False when it has already ended.
  // EngineError unknown_proof.
  bool cancel(std::uint64_t id);
  // The proof of that id, while the engine remembers it (every unfinished one, and the last
  // finished ones). EngineError unknown_proof.
  ProofHandle find(std::uint64_t id) const;

  EngineStatus status() const;
  const EngineConfig& config() const;

  // Refuses new proofs, then ends every accepted one as `drain` says and stops the dispatcher.
  // Returns once every proof has ended. Idempotent.
  void shutdown(Drain drain = Drain::finish);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace stagehand::engine
