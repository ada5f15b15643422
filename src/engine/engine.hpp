#pragma once
// stagehand::Engine: a long-lived prover. It opens the devices once (runner/backend.hpp), keeps
// proving keys by name in host memory (each .zkey read once), and accepts proofs from any thread.
//
// Scheduling: one dispatcher thread takes what is queued for one key (the key of the oldest
// queued proof, at most `max_batch` of its proofs, in order) and runs it as one coordinator run
// of a Groth16Workload on the engine's devices. Proofs of that key submitted meanwhile join the
// run (coordinator.hpp's JobFeed) while they are at the queue's head and the run holds fewer than
// two unended proofs a worker (the rest stay queued: the queue's capacity still holds submitters
// back), so that under load the GPUs go from proof to proof; the run ends once its proofs have all ended with none of its key at the
// head, at `max_batch` proofs, or when the engine stops or a key's state is to be given back.
// The key stays set up on the devices between its runs (its resident sets, precomputed copies
// and constraint matrix, and the registration of the bytes its streamed sets travel from:
// groth16::DeviceKeyState). Several keys stay set up while they fit: a run of another key keeps
// them beside it, held back from its budget, as long as that leaves its own layout as it would be
// with the devices to itself and a proof of it still fits; otherwise it gives back the least
// recently proved first. Unloading a key and shutdown give its state back. What each run still costs beyond its proofs: its streams,
// events and pinned staging buffers are set up again, and the GPUs drain at its end.
//
// Every accepted proof ends done, failed or cancelled, and its handle says which: a bad witness
// or a device error fails its own proof only (the coordinator records each job's error), and
// shutdown either finishes every queued proof or fails each with a message saying so.

#include "engine/engine_config.hpp"
#include "runner/backend.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace stagehand::engine {

enum class ProofState { queued, running, done, failed, cancelled };
const char* to_string(ProofState state);

// What went wrong, for callers that map errors to their own codes (HTTP statuses, C codes).
enum class ErrorKind {
  unknown_key,   // no key of that name (or it is being unloaded)
  key_exists,    // a key of that name is loaded already
  bad_key,       // the .zkey cannot be read or does not fit the devices
  bad_witness,   // the .wtns is malformed or not for this key
  queue_full,    // the queue is at its capacity and the caller chose not to wait
  unknown_proof, // no proof of that id (or it was forgotten)
  stopped,       // the engine is shutting down
  no_gpu,        // every GPU of the engine is lost: no proof can run until it is restarted
};
const char* to_string(ErrorKind kind);

class EngineError : public std::runtime_error {
 public:
  EngineError(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

struct ProofResult {
  ProofState state = ProofState::queued;
  std::string proof_json;   // snarkjs's proof.json (done)
  std::string public_json;  // snarkjs's public.json (done)
  std::string error;        // why it failed or was cancelled
  bool engine_stopped = false;  // failed because the engine shut down before it ran
  double seconds = 0;       // from submit to its end
};

namespace detail {
struct ProofRecord;
}

// An accepted proof; copies refer to the same proof, and a handle stays valid after the engine
// is gone (by then every proof has ended).
class ProofHandle {
 public:
  ProofHandle() = default;
  explicit ProofHandle(std::shared_ptr<detail::ProofRecord> record) : record_(std::move(record)) {}

  std::uint64_t id() const;
  const std::string& key() const;
  ProofState state() const;
  bool finished() const;
  // Blocks until the proof has ended.
  ProofResult wait() const;
  // Nothing when it has not ended within `timeout`.
  std::optional<ProofResult> wait_for(std::chrono::milliseconds timeout) const;
  // The result so far (state queued or running: no texts yet).
  ProofResult result() const;

 private:
  std::shared_ptr<detail::ProofRecord> record_;
};

enum class WhenFull { refuse, wait };

// Called once when a proof ends, on the engine's dispatcher thread (or the caller's, for a
// proof cancelled or refused while queued): keep it short, it holds up the next proofs.
using ProofCallback = std::function<void(const ProofHandle&)>;

struct GpuStatus {
  int index = 0;
  int running = 0;                    // proofs between prepare and their end on this GPU
  std::uint64_t done = 0;             // proofs that ended on it (any outcome)
  std::uint64_t vram_capacity_bytes = 0;
  std::uint64_t vram_reserved_bytes = 0;  // the budget's reservations, when last sampled
  std::uint64_t device_used_bytes = 0;    // what the device reports in use, when last sampled
  std::uint64_t pinned_host_budget_bytes = 0;  // the configured cap on pinned staging memory
  std::uint64_t pinned_host_kept_bytes = 0;    // pinned staging buffers kept for the next batch
  std::uint64_t pinned_host_allocations = 0;   // pinned staging buffers made since the engine started, when last sampled
  double busy_seconds = 0;            // wall time with at least one proof running on it
  bool lost = false;                  // the device was lost: its proofs go to the other GPUs
};

struct KeyStatus {
  std::string name;
  std::string path;
  std::uint64_t host_bytes = 0;
  std::vector<std::string> resident;  // "host", and "gpu0", ... where it is set up on that GPU
  std::uint64_t device_set_ups = 0;   // device set-ups made of it (uploads of its sets and matrix) since it was loaded
  std::uint64_t device_bytes = 0;     // what it holds set up on a GPU (the most on any one): 0 when it is not
  std::uint64_t proof_bytes = 0;      // one proof's device memory, the key's set-up included (planned at load; margins and kernel scratch on top)
  std::size_t queued = 0;
  std::size_t running = 0;
  bool unloading = false;
  double read_seconds = 0;
  std::string layout;  // where its proofs' a/b/c step runs and its sets live: "a/b/c on the device; H, A, B1, C, B2 resident"
};

struct EngineStatus {
  std::string backend;
  std::size_t queued = 0;
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
  bool stopping = false;
};
std::string status_json(const EngineStatus& status);

enum class Drain {
  finish,       // every queued proof is made before the engine stops
  fail_queued,  // the running ones finish; each queued one fails, saying the engine stopped
};

class Engine {
 public:
  // Opens the devices (a GPU where the configuration and the machine have one, otherwise the
  // simulator's functional mode, as `stagehand prove` does) and starts the dispatcher.
  explicit Engine(EngineConfig config, BackendOptions options = default_backend_options());
  // shutdown(Drain::finish) where not already shut down.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  static BackendOptions default_backend_options();

  // Reads the .zkey once and keeps it under `name`. EngineError: key_exists, bad_key, stopped.
  void load_key(const std::string& name, const std::filesystem::path& zkey_path);
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
