#pragma once
// The engine's inside, shared by its four files: engine.cpp (the public calls, keys, submits,
// status), engine_proofs.cpp (a proof's end, its timings, request ids, deadlines, device samples),
// engine_runs.cpp (the dispatcher and its runs: proof batches, EngineBatch their listener) and
// engine_params.cpp (Filecoin .params keys: their loading, witnesses and runs).
// Not part of the engine's API.

#include "engine/engine.hpp"

#include "engine/proof_queue.hpp"

#include "coordinator/async_wait.hpp"
#include "coordinator/coordinator.hpp"
#include "coordinator/pageable_arena.hpp"
#include "device/format.hpp"
#include "groth16/circuit_assignment.hpp"
#include "groth16/errors.hpp"
#include "groth16/params.hpp"
#include "groth16/prover.hpp"
#include "groth16/witness.hpp"
#include "groth16/zkey.hpp"
#include "proving/assignment_batch.hpp"
#include "proving/batch_trace.hpp"
#include "proving/proof_batch.hpp"
#include "util/assert.hpp"
#include "workloads/groth16/groth16_workload.hpp"
#include "workloads/host_work.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

namespace stagehand::engine {

using Clock = std::chrono::steady_clock;

namespace {
inline double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Finished proofs kept for find() (a service's GET of a proof after it ended); older ones are
// forgotten so that a long-lived engine's memory stays bounded.
constexpr std::size_t kFinishedKept = 4096;

// Upper bounds of the seconds-per-proof histogram.
const std::vector<double> kHistogramBounds{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 60, 150, 600};
// Upper bounds of the timing histograms: a part of a proof's life may be a millisecond (a check
// at 2^10) or minutes (a queue wait).
const std::vector<double> kTimingBounds{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                        1,     2.5,   5,    10,    25,   60,  150,  600};
// ProofTimings' parts in the order of TimingHistogram::part's names.
constexpr std::array<const char*, 7> kTimingParts{"queue",      "setup", "host_before", "gpu",
                                                  "host_after", "check", "total"};
inline std::array<double, 7> timing_parts(const ProofTimings& t) {
  return {t.queue_s, t.setup_s, t.host_before_s, t.gpu_s, t.host_after_s, t.check_s, t.total_s};
}
// The longest request id: long enough for any scheduler's job names, short enough to index.
constexpr std::size_t kRequestIdBytes = 256;
}  // namespace

namespace detail {

// One accepted proof. Its outcome is guarded by its own mutex, so that a handle can wait on it
// without the engine; `cancel_requested` is read by the dispatcher's workload between steps.
struct ProofRecord {
  std::uint64_t id = 0;
  std::string key;
  Priority priority = Priority::normal;
  std::string request_id;
  std::optional<Clock::time_point> deadline;
  std::shared_ptr<const std::vector<std::uint8_t>> wtns;
  std::string
      name;  // what names its witness in messages: "proof N (key K)", or the caller's (SubmitOptions::witness_name)
  std::uint64_t seed_index =
      0;  // [engine] seed plus this gives its r and s (SubmitOptions::seed_index, or its id less one)
  Clock::time_point submitted;
  EngineClock::time_point submitted_on_clock;  // the same on the engine's clock, which its deadline is on
  std::atomic<bool> cancel_requested{false};
  int gpu = -1;  // where it runs (engine mutex)

  mutable std::mutex mutex;
  std::condition_variable ended;
  ProofResult result;  // state queued until it runs
  // Each accepted submit's callback (the first, and those of submits that repeated its request
  // id) and each ProofHandle::on_end's: called once, when the proof ends.
  std::vector<ProofCallback> on_done;
  // The instants that divide its life into ProofTimings' parts, as it reaches them: it left the
  // queue, its run was ready for it (set up on its GPU), its host step began, its GPU program
  // began and ended (the last attempt's, for a proof moved off a lost GPU).
  std::optional<Clock::time_point> taken, ready, prepared, program_started, program_ended;
  double check_seconds = 0;

  bool finished_locked() const {
    return result.state == ProofState::done || result.state == ProofState::failed ||
           result.state == ProofState::cancelled;
  }
};

}  // namespace detail

using detail::ProofRecord;

// A Filecoin .params key as the engine holds it: the key, and the constraint system each
// witness's assignment is made from.
struct ParamsHeld {
  groth16::ParamsKey key;
  groth16::R1cs r1cs;
  std::filesystem::path r1cs_path;
};
// A witness submitted for a .params key: a .wtns with the circuit's wires (InputError naming the
// witness and the constraint system otherwise); the rest is checked when its assignment is made.
void check_params_witness(const ParamsHeld& held, std::span<const std::uint8_t> wtns, const std::string& name,
                          unsigned threads);

struct Engine::Impl {
  struct Key {
    AnyKeyPointer key;
    std::shared_ptr<const groth16::KeySizes> sizes;  // KeySizes::of(*key), once (it reads every coefficient)
    std::filesystem::path path;
    std::uint64_t host_bytes = 0;
    double read_seconds = 0;
    std::string layout;                   // as planned at load: "a/b/c on the device; H, A, B1, C, B2 resident"
    groth16::ProofLayout planned_layout;  // the same plan
    // Each witness also checked against this constraint system (null: none).
    AnyR1csPointer r1cs;
    std::filesystem::path r1cs_path;
    Bytes proof_bytes = 0;  // one proof's device memory with the key set up, as planned at load
    // What its runs leave set up on the devices for the next one (the dispatcher's thread only
    // sets it up and releases it; status() reads it).
    std::shared_ptr<groth16::DeviceKeyState> device_state = std::make_shared<groth16::DeviceKeyState>();
    // A .params key's key and constraint system (null for a .zkey key; `key` is null for a
    // .params key), and where its sets stay on the devices between its runs.
    std::shared_ptr<const ParamsHeld> params;
    std::shared_ptr<groth16::AssignmentKeyState> assignment_state = std::make_shared<groth16::AssignmentKeyState>();
    std::uint64_t last_batch = 0;  // the engine's count of batches when its last one began
    std::size_t queued = 0;
    std::size_t running = 0;
    bool unloading = false;
  };
  struct Gpu {
    int running = 0;
    std::uint64_t done = 0;
    std::uint64_t capacity = 0;
    std::uint64_t reserved = 0;
    std::uint64_t used = 0;
    std::uint64_t pinned_kept = 0;         // kept_pinned's bytes for it
    std::uint64_t pinned_allocations = 0;  // its device's pinned_host_allocations, when last sampled
    double busy_seconds = 0;
    Clock::time_point busy_since;
    bool lost = false;  // its device answered device_lost: it answers nothing any more
  };

  Impl(EngineConfig engine_config, EngineHooks engine_hooks)
      : config(std::move(engine_config)),
        hooks(std::move(engine_hooks)),
        clock(hooks.clock != nullptr ? hooks.clock : steady_engine_clock()),
        queue(std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::duration<double>(config.engine.promote_after_s))) {}

  EngineConfig config;
  EngineHooks hooks;
  std::shared_ptr<EngineClock> clock;  // the queue's time: deadlines, promotion, the linger
  std::unique_ptr<Backend> backend;
  Clock::time_point started = Clock::now();

  mutable std::mutex mutex;
  std::condition_variable work;       // the dispatcher: something queued, or stopping
  std::condition_variable space;      // submitters waiting for room in the queue
  std::condition_variable key_gone;   // wait_key_gone
  std::condition_variable deadlines;  // the deadline watcher: a deadline queued, proofs expired, or stopping
  ProofQueue queue;
  // Proofs whose deadline passed while queued, out of the queue and not yet failed: the deadline
  // watcher fails them (outside the engine mutex, as every proof's end is).
  std::vector<std::shared_ptr<ProofRecord>> expired;
  bool watcher_stopping = false;
  // Proofs by their callers' request ids, and the ended ones' ids in the order they ended (each
  // forgotten request_id_retention_s after its proof's end).
  std::map<std::string, std::shared_ptr<ProofRecord>, std::less<>> requests;
  std::deque<std::pair<Clock::time_point, std::shared_ptr<ProofRecord>>> requests_ended;
  // The timing histograms by key and priority (a key's go with it): per part, counts per bucket
  // of kTimingBounds (the last: +Inf) and the sum.
  struct PartHistogram {
    std::vector<std::uint64_t> counts = std::vector<std::uint64_t>(kTimingBounds.size() + 1, 0);
    double sum = 0;
  };
  std::map<std::pair<std::string, Priority>, std::array<PartHistogram, kTimingParts.size()>> timings;
  std::map<std::string, Key, std::less<>> keys;
  // Keys gone (unloaded) whose device state the dispatcher has still to give back; each holds
  // its key's host bytes until then (the pinned registration refers to them).
  struct Retired {
    std::string name;
    AnyKeyPointer key;
    std::shared_ptr<groth16::DeviceKeyState> device_state;
    std::shared_ptr<const ParamsHeld> params;  // a .params key's (its state's registration refers to its bytes)
    std::shared_ptr<groth16::AssignmentKeyState> assignment_state;
  };
  std::vector<Retired> retired;
  // Each GPU's pinned staging and result buffers kept between batches (CoordinatorHooks::keep_pinned),
  // freed when a key is unloaded and when the engine stops (the dispatcher's thread only;
  // Gpu::pinned_kept mirrors their bytes for status()).
  std::map<int, KeptPinned> kept_pinned;
  std::map<std::uint64_t, std::shared_ptr<ProofRecord>> proofs;  // unfinished and the last finished
  std::deque<std::uint64_t> finished_order;
  std::vector<Gpu> gpus;
  std::size_t running = 0;
  std::uint64_t next_id = 1;
  std::uint64_t accepted = 0, done = 0, failed = 0, cancelled = 0, batches = 0;
  std::vector<std::uint64_t> histogram = std::vector<std::uint64_t>(kHistogramBounds.size() + 1, 0);
  double histogram_sum = 0;
  bool stopping = false;
  Drain drain = Drain::finish;
  std::thread dispatcher;
  std::thread deadline_watcher;
  // While a run is open to proofs that join it (run_batch), what wakes its feeder from any thread:
  // called (engine mutex held) wherever the dispatcher would be woken.
  std::function<void()> wake_open_run;
  void wake_dispatcher_locked() {
    work.notify_all();
    if (wake_open_run) wake_open_run();
  }
  // Takes up to `most` of `name`'s queued proofs into a run, best first (engine mutex held): a
  // new run's batch (ProofQueue::take_batch), or with `leading_only` those at the queue's front
  // (a run that proofs join lets no later proof overtake another key's). They are running from
  // here on. Proofs whose deadline has passed go to the deadline watcher first, never to a run.
  // `now` is on the engine's clock.
  std::vector<std::shared_ptr<ProofRecord>> take_queued_locked(const std::string& name, std::size_t most,
                                                               bool leading_only, Clock::time_point now);
  // A run whose proofs have all ended and whose key has none queued: waits up to [engine]
  // linger_ms for one of its key at the queue's front (engine mutex held by `lock`, released
  // while it waits) and takes up to `room` of them; none when the time passes, another key's
  // proof is queued first, a key is retired or the engine stops, so that neither the next key nor
  // stopping waits for the linger.
  std::vector<std::shared_ptr<ProofRecord>> linger_locked(std::unique_lock<std::mutex>& lock, const std::string& name,
                                                          std::size_t room);
  // Takes the queued proofs whose deadline has passed out of the queue, for the deadline watcher
  // to fail (engine mutex held).
  void expire_locked(Clock::time_point now);
  void watch_deadlines();  // the deadline watcher's thread
  // The proof a submit's request id names, or null (engine mutex held); request ids of proofs
  // ended more than the retention ago are forgotten first. EngineError request_conflict when it
  // names another key's proof.
  std::shared_ptr<ProofRecord> find_request_locked(const std::string& key, const std::string& request_id);
  // The answer to a submit that repeated a request id: its callback joins the proof's, or runs
  // now when the proof has ended. No lock held.
  static ProofHandle repeat(const std::shared_ptr<ProofRecord>& record, ProofCallback on_done);
  // The key a new proof may be queued for (engine mutex held). EngineError: stopped, no_gpu,
  // unknown_key (also while it is being unloaded).
  Key& usable_key_locked(const std::string& name) {
    if (stopping) throw EngineError(ErrorKind::stopped, "the engine is shutting down: no new proofs");
    if (const auto lost = every_gpu_lost_locked(); !lost.empty()) throw EngineError(ErrorKind::no_gpu, lost);
    auto found = keys.find(name);
    if (found == keys.end() || found->second.unloading) {
      throw EngineError(ErrorKind::unknown_key, fmt::format("no key named '{}' is loaded{}", name,
                                                            found == keys.end() ? "" : " (it is being unloaded)"));
    }
    return found->second;
  }
  // A key of that name may be loaded (engine mutex held; check_loadable takes it). EngineError:
  // bad_key for an empty name, stopped, key_exists.
  void check_loadable_locked(const std::string& name) const {
    if (name.empty()) throw EngineError(ErrorKind::bad_key, "a key needs a name");
    if (stopping) throw EngineError(ErrorKind::stopped, "the engine is shutting down");
    if (keys.count(name) != 0)
      throw EngineError(ErrorKind::key_exists, fmt::format("a key named '{}' is loaded already", name));
  }
  void check_loadable(const std::string& name) const {
    std::lock_guard lock(mutex);
    check_loadable_locked(name);
  }
  // Queues a checked proof once there is room (or refuses it, as `when_full` says), unless a
  // submit of its request id got in first: then that proof is the answer.
  ProofHandle enqueue(const std::shared_ptr<ProofRecord>& record, WhenFull when_full);
  // Why no proof can run any more (engine mutex held): every GPU is lost, which a CUDA context
  // does not recover from. Empty while one is left. Such an engine refuses new proofs and fails
  // its queued ones at once rather than trying each on a dead device.
  std::string every_gpu_lost_locked() const {
    if (gpus.empty() || std::any_of(gpus.begin(), gpus.end(), [](const Gpu& gpu) { return !gpu.lost; })) return {};
    return fmt::format("{} lost: no proof can run until the engine is restarted",
                       gpus.size() == 1 ? std::string("the engine's only GPU is")
                                        : fmt::format("all {} of the engine's GPUs are", gpus.size()));
  }
  // Ends every queued proof with `error` (engine mutex held by `lock`, released meanwhile).
  void fail_queued(std::unique_lock<std::mutex>& lock, const std::string& error, bool engine_stopped) {
    const auto left = queue.take_all();
    for (const auto& proof : left) key_proof_left(proof.key, false);
    check_counts_locked();
    space.notify_all();
    lock.unlock();
    for (const auto& proof : left) {
      if (engine_stopped) {
        std::lock_guard record_lock(proof.record->mutex);
        proof.record->result.engine_stopped = true;
      }
      end_proof(proof.record, ProofState::failed, error);
    }
  }
  // The most proofs a run holds unended: as many as its workers can use, two a worker (one on or
  // waiting for the GPU, one in its host step after it). The rest stay queued, so that the
  // queue's capacity still holds submitters back and a queued proof is still cancelled at once.
  std::size_t run_room() const {
    return 2 * static_cast<std::size_t>(std::max(1, config.run.coordinator.workers_per_device)) *
           std::max<std::size_t>(1, backend->devices().size());
  }

  // Ends a proof: its outcome and timings, the counters, then its waiters and its callbacks
  // (outside every lock). The caller holds no lock.
  void end_proof(const std::shared_ptr<ProofRecord>& record, ProofState state, std::string error,
                 std::string proof = {}, std::string public_signals = {});
  // The ended proof's figures (engine mutex held): the outcome counters, the histograms, the
  // finished proofs kept for find() and the request ids kept for repeats.
  void count_ended_locked(const std::shared_ptr<ProofRecord>& record, ProofState state, const ProofTimings& timings,
                          Clock::time_point end);

  // A proof of `key` left the queue or the GPUs (engine mutex held): the key goes once it has no
  // proofs left and is being unloaded.
  void key_proof_left(const std::string& name, bool was_running) {
    auto found = keys.find(name);
    if (found == keys.end()) return;
    auto& key = found->second;
    auto& count = was_running ? key.running : key.queued;
    STAGEHAND_ASSERT(count > 0, "a {} proof of key {} left with none counted", was_running ? "running" : "queued",
                     name);
    count -= 1;
    if (key.unloading && key.queued == 0 && key.running == 0) retire_key(found);
  }

  // The key goes (engine mutex held); what it left on the devices goes with the dispatcher's next
  // look, and wait_key_gone returns once it has.
  void retire_key(std::map<std::string, Key, std::less<>>::iterator found) {
    std::erase_if(timings, [&](const auto& entry) { return entry.first.first == found->first; });
    const auto& key = found->second;
    if (key.device_state->holds_anything() || key.assignment_state->holds_anything()) {
      retired.push_back(Retired{found->first, key.key, key.device_state, key.params, key.assignment_state});
      wake_dispatcher_locked();
    } else {
      key_gone.notify_all();
    }
    keys.erase(found);
  }
  bool key_gone_locked(std::string_view name) const {
    return keys.count(name) == 0 &&
           std::none_of(retired.begin(), retired.end(), [&](const Retired& r) { return r.name == name; });
  }

  void gpu_started(int index) {  // engine mutex held
    auto& gpu = gpus.at(static_cast<std::size_t>(index));
    if (gpu.running++ == 0) gpu.busy_since = Clock::now();
    check_counts_locked();
  }
  // A proof left the GPU: it ended there, or (not done) it moved to another when this one was lost.
  void gpu_left(int index) {  // engine mutex held
    auto& gpu = gpus.at(static_cast<std::size_t>(index));
    STAGEHAND_ASSERT(gpu.running > 0, "a proof left GPU {} with none running there", index);
    if (--gpu.running == 0) gpu.busy_seconds += seconds_between(gpu.busy_since, Clock::now());
  }
  // The counts add up (engine mutex held, between changes): the keys' queued proofs are the
  // queue's, their running ones the engine's, and the GPUs run no more than are running (a
  // running proof is on one GPU at most, or on none before its host step).
  void check_counts_locked() const {
    std::size_t queued_of_keys = 0, running_of_keys = 0, on_gpus = 0;
    for (const auto& [name, key] : keys) {
      queued_of_keys += key.queued;
      running_of_keys += key.running;
    }
    for (const auto& gpu : gpus) on_gpus += static_cast<std::size_t>(gpu.running);
    STAGEHAND_ASSERT(queued_of_keys == queue.size() && running_of_keys == running && on_gpus <= running,
                     "the keys count {} queued and {} running, the engine {} queued and {} running, the GPUs {}",
                     queued_of_keys, running_of_keys, queue.size(), running, on_gpus);
  }
  void gpu_ended(int index) {  // engine mutex held
    ++gpus.at(static_cast<std::size_t>(index)).done;
    gpu_left(index);
  }

  void dispatch();
  // Takes the queue's front proof's key's batch and runs it (engine mutex held by `lock`, released).
  void run_front(std::unique_lock<std::mutex>& lock);
  // On the dispatcher's thread: gives back what these states hold on the devices, then samples
  // the devices' memory. with_kept_staging: the pinned staging and result buffers kept between
  // batches go too (a key unloaded, the engine stopping); not when states only make room for a
  // batch (called before every batch, mostly with none): the buffers would be made again for that
  // very batch. A .params key's kept sets (`assignment_states`) go the same way.
  void release_device_states(const std::vector<std::shared_ptr<groth16::DeviceKeyState>>& states,
                             bool with_kept_staging = false,
                             const std::vector<std::shared_ptr<groth16::AssignmentKeyState>>& assignment_states = {});
  void give_back_retired();      // the retired keys' states (engine mutex not held)
  std::uint64_t batch_number();  // the engine's count of batches (engine mutex not held)
  // [engine] trace_dir: the batch's trace and picture, the oldest beyond trace_runs removed.
  void write_run_trace(const Trace& trace, const RunReport& report, const std::string& key_name, std::size_t proofs,
                       bool on_gpu);
  // Each GPU's memory in use, and the budgets' reservations where a run has them (engine mutex held).
  void sample_devices(const std::map<int, const VramBudget*>& budgets);
  // The a/b/c step and the key's sets placed as `stagehand prove` places them (a key larger than
  // the card streams its sets), or as [engine] asks.
  groth16::ProofLayout proof_layout(const groth16::KeySizes& sizes, const CoordinatorSettings& settings) const {
    return groth16::plan_proof_layout(sizes, backend->devices(), settings.safety_margin_bytes + settings.resident_bytes,
                                      settings.workers_per_device, config.engine.abc_step, config.engine.key_sets,
                                      config.engine.stream_buffer_bytes, config.engine.precompute_bases);
  }
  // How many of the other keys' device states, oldest batch first with the device bytes each
  // holds, a batch of a key gives back before it runs: the fewest from the oldest such that the
  // rest, held back from its budget, leave its layout as planned with the devices to itself and a
  // proof of it (`proof_bytes`, Key::proof_bytes: planned so at load) still fits the smallest device.
  std::size_t states_to_give_back(const groth16::KeySizes& sizes, Bytes proof_bytes,
                                  const std::vector<Bytes>& held_oldest_first) const;
  // A batch's settings keep each GPU's pinned staging pool and result buffers in kept_pinned
  // between batches.
  void keep_staging(proving::BatchSettings& settings);
  // The engine's own steps before a run (the batch's first proof queued, the dispatch) in its trace.
  void trace_dispatch(Trace& trace, Clock::time_point first_submitted, Clock::time_point dispatched);
  // Runs one key's batch as a proving::ProofBatch and ends each of its proofs, also when the run fails.
  // What a batch needs of its key, taken under the engine mutex when the batch is dispatched.
  struct BatchOf {
    std::string name;
    AnyKeyPointer key;
    std::shared_ptr<const groth16::KeySizes> sizes;
    std::filesystem::path path;
    AnyR1csPointer r1cs;
    std::filesystem::path r1cs_path;
    std::shared_ptr<groth16::DeviceKeyState> device_state;
    std::shared_ptr<const ParamsHeld> params;  // a .params key's (then `key` is null)
    std::shared_ptr<groth16::AssignmentKeyState> assignment_state;
  };
  void run_batch(const BatchOf& of, Bytes held_by_others, std::vector<std::shared_ptr<ProofRecord>> batch,
                 Clock::time_point dispatched);
  // The batch's settings (engine mutex not held): the coordinator's, the layout, the checks, the
  // kept staging; the key's kept state given back first where this layout keeps other sets.
  proving::BatchSettings batch_settings(const BatchOf& of, Bytes held_by_others);
  // What the other keys keep on the devices that a batch of `of` gives back before it runs (engine
  // mutex held by `lock`, released on return): for a .params key's batch every other key's state,
  // for a .zkey key's the .params keys' and the oldest .zkey keys' as states_to_give_back says
  // (the bytes of those left beside it in `held_by_others`).
  struct GiveBack {
    std::vector<std::shared_ptr<groth16::DeviceKeyState>> states;
    std::vector<std::shared_ptr<groth16::AssignmentKeyState>> assignment_states;
    Bytes held_by_others = 0;
  };
  GiveBack others_to_give_back(std::unique_lock<std::mutex>& lock, const BatchOf& of, Bytes proof_bytes);
  // A .params key's batch (engine_params.cpp): each witness's assignment made, then one run of
  // the assignment workload over those made; a witness whose assignment cannot be made fails its
  // own proof only.
  void run_params_batch(const BatchOf& of, std::vector<std::shared_ptr<ProofRecord>> batch);
  void prove_params_batch(const BatchOf& of, const std::vector<std::shared_ptr<ProofRecord>>& records,
                          const std::vector<groth16::CircuitAssignment>& assignments);
  // The end of every run (engine mutex not held): the devices sampled, then EngineHooks::on_run_end.
  void run_ended();
};

// A batch of one key's proofs as the engine runs it (proving::ProofBatch, or a .params key's run of
// the assignment workload, which no proof joins): its proofs by job index; each one's instants
// and GPU as it reaches them, a cancelled one stopped before its next step; each one's end,
// counted, then answered; and the proofs of its key that join it while it runs. On the run's
// thread, but for end_rest (after the run).
class EngineBatch final : public proving::BatchListener {
 public:
  EngineBatch(Engine::Impl& engine, std::string key_name, const std::vector<std::shared_ptr<ProofRecord>>& batch)
      : engine_(engine),
        key_name_(std::move(key_name)),
        proofs_(batch.begin(), batch.end()),
        ended_(batch.size(), false),
        set_up_ended_(engine.backend->devices().size()) {}

  // The jobs of the proofs it began with.
  std::vector<proving::BatchJob> jobs() const {
    std::vector<proving::BatchJob> jobs;
    for (const auto& record : proofs_) jobs.push_back(proof_job(*record));
    return jobs;
  }
  const ProofRecord& first() const { return *proofs_.front(); }
  std::vector<std::uint64_t> ids() const {
    std::vector<std::uint64_t> ids;
    for (const auto& record : proofs_) ids.push_back(record->id);
    return ids;
  }

  void set_up_ended(int device) override { set_up_ended_.at(static_cast<std::size_t>(device)) = Clock::now(); }
  void step(int job, proving::BatchStep step, int device) override;
  void ended(const proving::ProofEnd& end) override;
  void sample(const std::map<int, const VramBudget*>& budgets) override {
    std::lock_guard lock(engine_.mutex);
    engine_.sample_devices(budgets);
  }
  void open(std::function<void()> wake) override {
    std::lock_guard lock(engine_.mutex);
    STAGEHAND_ASSERT(!engine_.wake_open_run, "a run of key {} opens while another is open", key_name_);
    engine_.wake_open_run = std::move(wake);
  }
  proving::Joining join(std::size_t jobs, std::size_t unended) override;
  void closed() override {
    std::lock_guard lock(engine_.mutex);
    engine_.wake_open_run = nullptr;
  }
  bool lost(int device) override {
    std::lock_guard lock(engine_.mutex);
    return static_cast<std::size_t>(device) < engine_.gpus.size() &&
           engine_.gpus[static_cast<std::size_t>(device)].lost;
  }
  // Ends, with `error`, each proof the batch did not: taken, and it never got the proof's job.
  void end_rest(const std::string& error) {
    for (std::size_t i = 0; i < proofs_.size(); ++i) {
      if (!ended_[i]) end(i, ProofState::failed, error);
    }
  }

 private:
  proving::BatchJob proof_job(const ProofRecord& record) const;
  void end(std::size_t index, ProofState state, std::string error, std::string proof = {},
           std::string public_signals = {});

  Engine::Impl& engine_;
  const std::string key_name_;
  std::deque<std::shared_ptr<ProofRecord>> proofs_;  // by job index (a deque: proofs join while others are in hand)
  std::deque<bool> ended_;
  std::vector<std::optional<Clock::time_point>> set_up_ended_;  // by device index
};

}  // namespace stagehand::engine
