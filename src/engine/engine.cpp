#include "engine/engine.hpp"

#include "engine/proof_queue.hpp"

#include "coordinator/async_wait.hpp"
#include "coordinator/coordinator.hpp"
#include "coordinator/pageable_arena.hpp"
#include "device/format.hpp"
#include "groth16/errors.hpp"
#include "groth16/json.hpp"
#include "groth16/prover.hpp"
#include "groth16/witness.hpp"
#include "groth16/zkey.hpp"
#include "runner/report.hpp"
#include "util/assert.hpp"
#include "trace/svg_timeline.hpp"
#include "workloads/groth16/groth16_workload.hpp"
#include "workloads/host_work.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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
double seconds_between(Clock::time_point from, Clock::time_point to) { return std::chrono::duration<double>(to - from).count(); }

// Finished proofs kept for find() (a service's GET of a proof after it ended); older ones are
// forgotten so that a long-lived engine's memory stays bounded.
constexpr std::size_t kFinishedKept = 4096;

// Upper bounds of the seconds-per-proof histogram.
const std::vector<double> kHistogramBounds{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 60, 150, 600};
// Upper bounds of the timing histograms: a part of a proof's life may be a millisecond (a check
// at 2^10) or minutes (a queue wait).
const std::vector<double> kTimingBounds{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 60, 150, 600};
// ProofTimings' parts in the order of TimingHistogram::part's names.
constexpr std::array<const char*, 7> kTimingParts{"queue", "setup", "host_before", "gpu", "host_after", "check", "total"};
std::array<double, 7> timing_parts(const ProofTimings& t) {
  return {t.queue_s, t.setup_s, t.host_before_s, t.gpu_s, t.host_after_s, t.check_s, t.total_s};
}
// The longest request id: long enough for any scheduler's job names, short enough to index.
constexpr std::size_t kRequestIdBytes = 256;
}  // namespace

const char* to_string(ProofState state) {
  switch (state) {
    case ProofState::queued: return "queued";
    case ProofState::running: return "running";
    case ProofState::done: return "done";
    case ProofState::failed: return "failed";
    case ProofState::cancelled: return "cancelled";
  }
  return "?";
}

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::unknown_key: return "unknown_key";
    case ErrorKind::key_exists: return "key_exists";
    case ErrorKind::bad_key: return "bad_key";
    case ErrorKind::bad_witness: return "bad_witness";
    case ErrorKind::queue_full: return "queue_full";
    case ErrorKind::unknown_proof: return "unknown_proof";
    case ErrorKind::stopped: return "stopped";
    case ErrorKind::no_gpu: return "no_gpu";
    case ErrorKind::bad_request: return "bad_request";
    case ErrorKind::deadline_passed: return "deadline_passed";
    case ErrorKind::request_conflict: return "request_conflict";
  }
  return "?";
}

const char* to_string(Priority priority) {
  switch (priority) {
    case Priority::low: return "low";
    case Priority::normal: return "normal";
    case Priority::high: return "high";
    case Priority::critical: return "critical";
  }
  return "?";
}

Clock::time_point deadline_in(std::int64_t ms) {
  if (ms > kDeadlineMostMs || ms < -kDeadlineMostMs) {
    throw EngineError(ErrorKind::bad_request, fmt::format("a deadline {} ms from now: at most {} ms either way", ms, kDeadlineMostMs));
  }
  return Clock::now() + std::chrono::milliseconds(ms);
}

std::optional<Priority> priority_from_string(std::string_view text) {
  for (const auto priority : {Priority::low, Priority::normal, Priority::high, Priority::critical}) {
    if (text == to_string(priority)) return priority;
  }
  return std::nullopt;
}

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
  Clock::time_point submitted;
  std::atomic<bool> cancel_requested{false};
  int gpu = -1;  // where it runs (engine mutex)

  mutable std::mutex mutex;
  std::condition_variable ended;
  ProofResult result;  // state queued until it runs
  // Each accepted submit's callback: the first, and those of submits that repeated its request id.
  std::vector<ProofCallback> on_done;
  // The instants that divide its life into ProofTimings' parts, as it reaches them: it left the
  // queue, its run was ready for it (set up on its GPU), its host step began, its GPU program
  // began and ended (the last attempt's, for a proof moved off a lost GPU).
  std::optional<Clock::time_point> taken, ready, prepared, program_started, program_ended;
  double check_seconds = 0;

  bool finished_locked() const {
    return result.state == ProofState::done || result.state == ProofState::failed || result.state == ProofState::cancelled;
  }
};

}  // namespace detail

using detail::ProofRecord;

namespace {

// The parts of a proof's life that ended at `end` (record mutex held). An instant it never
// reached is the next one it did, so the part it ended in runs to its end; each instant is at
// least the one before, so the parts telescope to the total.
ProofTimings timings_of(const ProofRecord& record, Clock::time_point end) {
  std::array<std::optional<Clock::time_point>, 7> at{record.submitted, record.taken,         record.ready, record.prepared,
                                                     record.program_started, record.program_ended, end};
  for (std::size_t i = at.size() - 1; i-- > 1;) {
    if (!at[i]) at[i] = at[i + 1];
  }
  for (std::size_t i = 1; i < at.size(); ++i) at[i] = std::max(*at[i], *at[i - 1]);
  const auto seconds = [&](std::size_t from, std::size_t to) { return seconds_between(*at[from], *at[to]); };
  ProofTimings timings;
  // Waiting for a worker of its run is waiting in a queue too: the run's own.
  timings.queue_s = seconds(0, 1) + seconds(2, 3);
  timings.setup_s = seconds(1, 2);
  timings.host_before_s = seconds(3, 4);
  timings.gpu_s = seconds(4, 5);
  const double after = seconds(5, 6);
  timings.check_s = std::clamp(record.check_seconds, 0.0, after);
  timings.host_after_s = after - timings.check_s;
  timings.total_s = seconds(0, 6);
  return timings;
}

}  // namespace

std::uint64_t ProofHandle::id() const { return record_->id; }
const std::string& ProofHandle::key() const { return record_->key; }
Priority ProofHandle::priority() const { return record_->priority; }
const std::string& ProofHandle::request_id() const { return record_->request_id; }
ProofState ProofHandle::state() const {
  std::lock_guard lock(record_->mutex);
  return record_->result.state;
}
bool ProofHandle::finished() const {
  std::lock_guard lock(record_->mutex);
  return record_->finished_locked();
}
ProofResult ProofHandle::wait() const {
  std::unique_lock lock(record_->mutex);
  record_->ended.wait(lock, [&] { return record_->finished_locked(); });
  return record_->result;
}
std::optional<ProofResult> ProofHandle::wait_for(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(record_->mutex);
  if (!record_->ended.wait_for(lock, timeout, [&] { return record_->finished_locked(); })) return std::nullopt;
  return record_->result;
}
ProofResult ProofHandle::result() const {
  std::lock_guard lock(record_->mutex);
  return record_->result;
}

struct Engine::Impl {
  struct Key {
    std::shared_ptr<const groth16::ProvingKey> key;
    std::shared_ptr<const groth16::KeySizes> sizes;  // KeySizes::of(*key), once (it reads every coefficient)
    std::filesystem::path path;
    std::uint64_t host_bytes = 0;
    double read_seconds = 0;
    std::string layout;  // as planned at load: "a/b/c on the device; H, A, B1, C, B2 resident"
    Bytes proof_bytes = 0;  // one proof's device memory with the key set up, as planned at load
    // What its runs leave set up on the devices for the next one (the dispatcher's thread only
    // sets it up and releases it; status() reads it).
    std::shared_ptr<groth16::DeviceKeyState> device_state = std::make_shared<groth16::DeviceKeyState>();
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
    std::uint64_t pinned_kept = 0;  // kept_pinned's bytes for it
    std::uint64_t pinned_allocations = 0;  // its device's pinned_host_allocations, when last sampled
    double busy_seconds = 0;
    Clock::time_point busy_since;
    bool lost = false;  // its device answered device_lost: it answers nothing any more
  };

  explicit Impl(EngineConfig engine_config)
      : config(std::move(engine_config)),
        queue(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(config.engine.promote_after_s))) {}

  EngineConfig config;
  std::unique_ptr<Backend> backend;
  Clock::time_point started = Clock::now();

  mutable std::mutex mutex;
  std::condition_variable work;     // the dispatcher: something queued, or stopping
  std::condition_variable space;    // submitters waiting for room in the queue
  std::condition_variable key_gone; // wait_key_gone
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
    std::shared_ptr<const groth16::ProvingKey> key;
    std::shared_ptr<groth16::DeviceKeyState> device_state;
  };
  std::vector<Retired> retired;
  // Each GPU's pinned staging buffers kept between batches (CoordinatorHooks::keep_pinned), freed
  // when a key is unloaded and when the engine stops (the dispatcher's thread only; Gpu::pinned_kept
  // mirrors their bytes for status()).
  std::map<int, std::vector<HostRange>> kept_pinned;
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
  std::vector<std::shared_ptr<ProofRecord>> take_queued_locked(const std::string& name, std::size_t most, bool leading_only,
                                                               Clock::time_point now);
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
      throw EngineError(ErrorKind::unknown_key,
                        fmt::format("no key named '{}' is loaded{}", name, found == keys.end() ? "" : " (it is being unloaded)"));
    }
    return found->second;
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
                       gpus.size() == 1 ? std::string("the engine's only GPU is") : fmt::format("all {} of the engine's GPUs are", gpus.size()));
  }
  // Ends every queued proof with `error` (engine mutex held by `lock`, released meanwhile).
  void fail_queued(std::unique_lock<std::mutex>& lock, const std::string& error, bool engine_stopped) {
    const auto left = queue.take_all();
    for (const auto& proof : left) key_proof_left(proof.key, false);
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
    return 2 * static_cast<std::size_t>(std::max(1, config.run.coordinator.workers_per_device)) * std::max<std::size_t>(1, backend->devices().size());
  }

  // Ends a proof: its outcome and timings, the counters, then its waiters and its callbacks
  // (outside every lock). The caller holds no lock.
  void end_proof(const std::shared_ptr<ProofRecord>& record, ProofState state, std::string error, std::string proof = {},
                 std::string public_signals = {});
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
    (was_running ? key.running : key.queued) -= 1;
    if (key.unloading && key.queued == 0 && key.running == 0) retire_key(found);
  }

  // The key goes (engine mutex held); what it left on the devices goes with the dispatcher's next
  // look, and wait_key_gone returns once it has.
  void retire_key(std::map<std::string, Key, std::less<>>::iterator found) {
    std::erase_if(timings, [&](const auto& entry) { return entry.first.first == found->first; });
    if (found->second.device_state->holds_anything()) {
      retired.push_back(Retired{found->first, found->second.key, found->second.device_state});
      wake_dispatcher_locked();
    } else {
      key_gone.notify_all();
    }
    keys.erase(found);
  }
  bool key_gone_locked(std::string_view name) const {
    return keys.count(name) == 0 && std::none_of(retired.begin(), retired.end(), [&](const Retired& r) { return r.name == name; });
  }

  void gpu_started(int index) {  // engine mutex held
    auto& gpu = gpus.at(static_cast<std::size_t>(index));
    if (gpu.running++ == 0) gpu.busy_since = Clock::now();
  }
  // A proof left the GPU: it ended there, or (not done) it moved to another when this one was lost.
  void gpu_left(int index) {  // engine mutex held
    auto& gpu = gpus.at(static_cast<std::size_t>(index));
    if (--gpu.running == 0) gpu.busy_seconds += seconds_between(gpu.busy_since, Clock::now());
  }
  void gpu_ended(int index) {  // engine mutex held
    ++gpus.at(static_cast<std::size_t>(index)).done;
    gpu_left(index);
  }

  void dispatch();
  // Takes the queue's front proof's key's batch and runs it (engine mutex held by `lock`, released).
  void run_front(std::unique_lock<std::mutex>& lock);
  // On the dispatcher's thread: gives back what these states hold on the devices, then samples
  // the devices' memory. with_kept_staging: the pinned staging buffers kept between batches go
  // too (a key unloaded, the engine stopping); not when states only make room for a batch (called
  // before every batch, mostly with none): the buffers would be made again for that very batch.
  void release_device_states(const std::vector<std::shared_ptr<groth16::DeviceKeyState>>& states,
                             bool with_kept_staging = false);
  void give_back_retired();  // the retired keys' states (engine mutex not held)
  // [engine] trace_dir: the batch's trace and picture, the oldest beyond trace_runs removed.
  void write_run_trace(const Trace& trace, const RunReport& report, const std::string& key_name, std::size_t proofs, bool on_gpu);
  // Each GPU's memory in use, and the budgets' reservations where a run has them (engine mutex held).
  void sample_devices(const std::map<int, const VramBudget*>& budgets);
  // The a/b/c step and the key's sets placed as `stagehand prove` places them (a key larger than
  // the card streams its sets), or as [engine] asks.
  groth16::ProofLayout proof_layout(const groth16::KeySizes& sizes, const CoordinatorSettings& settings) const {
    return groth16::plan_proof_layout(sizes, backend->devices(), settings.safety_margin_bytes + settings.resident_bytes,
                                      settings.workers_per_device, config.engine.abc_step, config.engine.key_sets,
                                      config.engine.stream_buffer_bytes, config.engine.precompute_bases);
  }
  // What one proof of `key` in `layout` needs on a device besides the margins: the key's
  // resident sets and matrix and one proof's peak (the kernels' scratch comes on top).
  static Bytes proof_bytes(const groth16::ProvingKey& key, const groth16::KeySizes& sizes, const std::filesystem::path& key_path,
                           const groth16::ProofLayout& layout) {
    HostWork host_work(0);
    groth16::ProofChecks no_checks;
    no_checks.verify = false;
    groth16::Groth16Workload sizing(key, key_path, {}, host_work, 0, {}, no_checks, layout.abc_step, layout.placement, nullptr, &sizes);
    return sizing.memory_plan(0).peak_bytes + sizing.resident_bytes();
  }
  // How many of the other keys' device states, oldest batch first with the device bytes each
  // holds, a batch of a key gives back before it runs: the fewest from the oldest such that the
  // rest, held back from its budget, leave its layout as planned with the devices to itself and a
  // proof of it (`proof_bytes`, Key::proof_bytes: planned so at load) still fits the smallest device.
  std::size_t states_to_give_back(const groth16::KeySizes& sizes, Bytes proof_bytes, const std::vector<Bytes>& held_oldest_first) const;
  void run_batch(const std::string& key_name, const std::shared_ptr<const groth16::ProvingKey>& key,
                 const groth16::KeySizes& sizes, const std::filesystem::path& key_path, const std::shared_ptr<groth16::DeviceKeyState>& device_state,
                 Bytes held_by_others, std::vector<std::shared_ptr<ProofRecord>> batch, Clock::time_point dispatched);
};

namespace {

// The Groth16 workload with the engine's checks between steps: a cancelled proof stops before
// its next step, each proof's GPU is noted when its host step begins (again on the GPU it moves
// to when its first one is lost), and the instants of its timings are marked as it reaches them.
class EngineWorkload final : public Workload {
 public:
  EngineWorkload(groth16::Groth16Workload& inner, const std::deque<std::shared_ptr<ProofRecord>>& batch, Engine::Impl& engine,
                 const std::vector<Device*>& devices)
      : inner_(inner), batch_(batch), engine_(engine), devices_(devices), set_up_ended_(devices.size()) {}

  int job_count() const override { return inner_.job_count(); }
  int proof_count() const override { return inner_.proof_count(); }
  int proof_of(int job) const override { return inner_.proof_of(job); }
  JobMemoryPlan memory_plan(int job) const override { return inner_.memory_plan(job); }
  Bytes resident_bytes() const override { return inner_.resident_bytes(); }
  asio::awaitable<void> set_up(Device& device, int device_index) override {
    co_await inner_.set_up(device, device_index);
    set_up_ended_.at(static_cast<std::size_t>(device_index)) = Clock::now();
  }
  asio::awaitable<void> tear_down(Device& device, int device_index) override { return inner_.tear_down(device, device_index); }

  asio::awaitable<void> prepare(int job, Device& device, std::span<const HostRange> abc) override {
    auto& record = *batch_.at(static_cast<std::size_t>(job));
    const auto where = std::find(devices_.begin(), devices_.end(), &device);
    const int gpu = where != devices_.end() ? static_cast<int>(where - devices_.begin()) : -1;
    {
      // Its run was ready for it once its GPU was set up, or when it joined a run already set up.
      const auto now = Clock::now();
      const auto set_up = gpu >= 0 ? set_up_ended_.at(static_cast<std::size_t>(gpu)) : std::nullopt;
      std::lock_guard lock(record.mutex);
      STAGEHAND_ASSERT(record.taken.has_value(), "proof {} reached its host step without leaving the queue", record.id);
      if (!record.prepared) {
        record.ready = std::clamp(set_up.value_or(*record.taken), *record.taken, now);
        record.prepared = now;
      }
    }
    check_cancelled(job);
    {
      std::lock_guard lock(engine_.mutex);
      if (gpu >= 0 && record.gpu != gpu) {
        if (record.gpu >= 0) engine_.gpu_left(record.gpu);  // its first GPU was lost under it
        record.gpu = gpu;
        engine_.gpu_started(gpu);
      }
    }
    co_await inner_.prepare(job, device, abc);
  }
  asio::awaitable<JobTimes> run_program(int job, JobContext& context) override {
    auto& record = *batch_.at(static_cast<std::size_t>(job));
    {
      // A proof moved off a lost GPU runs its program again: this attempt's instants count.
      std::lock_guard lock(record.mutex);
      record.program_started = Clock::now();
      record.program_ended.reset();
    }
    check_cancelled(job);
    auto times = co_await inner_.run_program(job, context);
    std::lock_guard lock(record.mutex);
    record.program_ended = Clock::now();
    co_return times;
  }
  asio::awaitable<void> finish(int job, Device& device) override {
    check_cancelled(job);
    return inner_.finish(job, device);
  }
  void abandon(int job) override { inner_.abandon(job); }

 private:
  void check_cancelled(int job) const {
    if (batch_.at(static_cast<std::size_t>(job))->cancel_requested.load()) throw std::runtime_error("cancelled while running");
  }

  groth16::Groth16Workload& inner_;
  const std::deque<std::shared_ptr<ProofRecord>>& batch_;
  Engine::Impl& engine_;
  const std::vector<Device*>& devices_;
  std::vector<std::optional<Clock::time_point>> set_up_ended_;  // by device index (the run's thread only)
};

std::uint64_t key_host_bytes(const groth16::ProvingKey& key) {
  return key.a.bytes().size() + key.b1.bytes().size() + key.b2.bytes().size() + key.c.bytes().size() + key.h.bytes().size() +
         key.ic.size() * sizeof(math::G1Affine) + key.coefficients.size() * sizeof(groth16::Coefficient);
}

}  // namespace

void Engine::Impl::end_proof(const std::shared_ptr<ProofRecord>& record, ProofState state, std::string error, std::string proof,
                             std::string public_signals) {
  const auto end = Clock::now();
  std::vector<ProofCallback> callbacks;
  {
    // Both locks (the engine's first, as everywhere): whoever sees the proof ended finds it
    // counted too, and its request id among the ended ones.
    std::lock_guard lock(mutex);
    ProofTimings timings;
    {
      std::lock_guard record_lock(record->mutex);
      if (record->finished_locked()) return;
      timings = timings_of(*record, end);
      record->result.state = state;
      record->result.error = std::move(error);
      record->result.proof_json = std::move(proof);
      record->result.public_json = std::move(public_signals);
      record->result.seconds = timings.total_s;
      record->result.timings = timings;
      callbacks = std::move(record->on_done);
      record->on_done.clear();
    }
    count_ended_locked(record, state, timings, end);
  }
  record->ended.notify_all();
  for (const auto& callback : callbacks) {
    if (!callback) continue;
    try {
      callback(ProofHandle(record));
    } catch (...) {
      // A caller's callback must not take the engine down; what it does with its error is its own.
    }
  }
}

void Engine::Impl::count_ended_locked(const std::shared_ptr<ProofRecord>& record, ProofState state, const ProofTimings& timings,
                                      Clock::time_point end) {
  // The record stays for find() among the last kFinishedKept; its witness (32 MiB at 2^20)
  // must not: kept, a service's memory grew by a witness a proof until 4,096 were held.
  record->wtns.reset();
  (state == ProofState::done ? done : state == ProofState::failed ? failed : cancelled) += 1;
  if (state != ProofState::cancelled) {
    const auto bucket = std::lower_bound(kHistogramBounds.begin(), kHistogramBounds.end(), timings.total_s) - kHistogramBounds.begin();
    ++histogram[static_cast<std::size_t>(bucket)];
    histogram_sum += timings.total_s;
    // A key's histograms go with it: a proof that ends after its key has gone adds to none.
    if (keys.count(record->key) != 0) {
      auto& parts = this->timings[{record->key, record->priority}];
      const auto values = timing_parts(timings);
      for (std::size_t i = 0; i < values.size(); ++i) {
        const auto at = std::lower_bound(kTimingBounds.begin(), kTimingBounds.end(), values[i]) - kTimingBounds.begin();
        ++parts[i].counts[static_cast<std::size_t>(at)];
        parts[i].sum += values[i];
      }
    }
  }
  finished_order.push_back(record->id);
  while (finished_order.size() > kFinishedKept) {
    proofs.erase(finished_order.front());
    finished_order.pop_front();
  }
  if (!record->request_id.empty()) requests_ended.emplace_back(end, record);
}

std::shared_ptr<ProofRecord> Engine::Impl::find_request_locked(const std::string& key, const std::string& request_id) {
  const auto retention = std::chrono::duration<double>(config.engine.request_id_retention_s);
  const auto now = Clock::now();
  while (!requests_ended.empty() && now - requests_ended.front().first >= retention) {
    const auto& gone = requests_ended.front().second;
    const auto found = requests.find(gone->request_id);
    if (found != requests.end() && found->second == gone) requests.erase(found);
    requests_ended.pop_front();
  }
  if (request_id.empty()) return nullptr;
  const auto found = requests.find(request_id);
  if (found == requests.end()) return nullptr;
  if (found->second->key != key) {
    throw EngineError(ErrorKind::request_conflict, fmt::format("request id '{}' names proof {} of key '{}', not a proof of key '{}'",
                                                               request_id, found->second->id, found->second->key, key));
  }
  return found->second;
}

ProofHandle Engine::Impl::repeat(const std::shared_ptr<ProofRecord>& record, ProofCallback on_done) {
  {
    std::lock_guard lock(record->mutex);
    if (!record->finished_locked()) {
      record->on_done.push_back(std::move(on_done));
      return ProofHandle(record, true);
    }
  }
  if (on_done) on_done(ProofHandle(record, true));
  return ProofHandle(record, true);
}

void Engine::Impl::expire_locked(Clock::time_point now) {
  const auto gone = queue.take_expired(now);
  if (gone.empty()) return;
  for (const auto& proof : gone) {
    key_proof_left(proof.key, false);
    expired.push_back(proof.record);
  }
  space.notify_all();
  deadlines.notify_all();
}

void Engine::Impl::watch_deadlines() {
  std::unique_lock lock(mutex);
  for (;;) {
    expire_locked(Clock::now());
    if (!expired.empty()) {
      const auto gone = std::exchange(expired, {});
      lock.unlock();
      for (const auto& record : gone) {
        STAGEHAND_ASSERT(record->deadline.has_value(), "proof {} expired without a deadline", record->id);
        const double allowed = seconds_between(record->submitted, *record->deadline);
        {
          std::lock_guard record_lock(record->mutex);
          record->result.deadline_missed = true;
        }
        end_proof(record, ProofState::failed,
                  fmt::format("its deadline ({:.3f} s after its submit) passed while it was queued: it was not run", allowed));
      }
      lock.lock();
      continue;
    }
    if (watcher_stopping) return;
    if (const auto earliest = queue.earliest_deadline()) {
      deadlines.wait_until(lock, *earliest);
    } else {
      deadlines.wait(lock);
    }
  }
}

void Engine::Impl::sample_devices(const std::map<int, const VramBudget*>& budgets) {
  const auto& devices = backend->devices();
  for (std::size_t i = 0; i < devices.size() && i < gpus.size(); ++i) {
    if (gpus[i].lost) continue;
    try {
      const auto info = devices[i]->memory_info();
      gpus[i].used = info.total_bytes - info.free_bytes;
    } catch (const DeviceError& error) {
      if (error.errc() != DeviceErrc::device_lost) throw;
      gpus[i].lost = true;  // its proofs go to the other GPUs (the coordinator moves them)
      continue;
    }
    gpus[i].pinned_allocations = devices[i]->counters().pinned_host_allocations;
    auto found = budgets.find(static_cast<int>(i));
    gpus[i].reserved = found == budgets.end() ? 0 : found->second->held_bytes();
  }
}

void Engine::Impl::release_device_states(const std::vector<std::shared_ptr<groth16::DeviceKeyState>>& states,
                                         bool with_kept_staging) {
  if (states.empty() && !(with_kept_staging && !kept_pinned.empty())) return;
  try {
    backend->run([&]() -> asio::awaitable<void> {
      for (const auto& state : states) co_await state->release();
      if (!with_kept_staging) co_return;
      auto buffers = std::exchange(kept_pinned, {});
      const auto& devices = backend->devices();
      for (const auto& [index, ranges] : buffers) {
        for (const auto& range : ranges) {
          try {
            co_await devices.at(static_cast<std::size_t>(index))->free_pinned_host(range);
          } catch (const DeviceError&) {
            // A lost device: the host memory goes with the process.
          }
        }
      }
    }());
  } catch (const std::exception&) {
    // release() swallows a lost device's errors; anything else leaves the memory to the process's end.
  }
  std::lock_guard lock(mutex);
  if (with_kept_staging) {
    for (auto& gpu : gpus) gpu.pinned_kept = 0;
  }
  sample_devices({});
}

void Engine::Impl::give_back_retired() {
  // The retired keys stay listed until their memory is given back: wait_key_gone's predicate
  // reads the list, and a key taken off it before the release would let a waiter return while
  // the key's sets or the kept staging were still held.
  std::vector<Retired> gone;
  {
    std::lock_guard lock(mutex);
    gone = retired;
  }
  if (gone.empty()) return;
  std::vector<std::shared_ptr<groth16::DeviceKeyState>> states;
  for (const auto& entry : gone) states.push_back(entry.device_state);
  release_device_states(states, true);
  std::lock_guard lock(mutex);
  std::erase_if(retired, [&](const Retired& entry) {
    return std::any_of(gone.begin(), gone.end(), [&](const Retired& given) { return given.device_state == entry.device_state; });
  });
  gone.clear();  // the keys' host bytes, now that nothing refers to them
  key_gone.notify_all();
}

void Engine::Impl::dispatch() {
  for (;;) {
    give_back_retired();
    std::unique_lock lock(mutex);
    work.wait(lock, [&] { return !queue.empty() || stopping || !retired.empty(); });
    if (!retired.empty()) continue;
    expire_locked(Clock::now());
    if (queue.empty()) {
      if (!stopping) continue;  // what was queued had expired
      // Stopping, nothing left: every key's device state goes back before the devices close.
      std::vector<std::shared_ptr<groth16::DeviceKeyState>> states;
      for (const auto& [name, key] : keys) states.push_back(key.device_state);
      lock.unlock();
      release_device_states(states, true);
      give_back_retired();  // those retired meanwhile (a state emptied since goes at once: retire_key)
      return;
    }
    if (stopping && drain == Drain::fail_queued) {
      fail_queued(lock, "the engine shut down before this proof ran", true);
      continue;
    }
    if (const auto lost = every_gpu_lost_locked(); !lost.empty()) {
      fail_queued(lock, lost, false);
      continue;
    }
    run_front(lock);
  }
}

void Engine::Impl::run_front(std::unique_lock<std::mutex>& lock) {
  // The front proof's key, and its proofs best first, up to a batch, all judged at one instant.
  const auto dispatched = Clock::now();
  expire_locked(dispatched);
  if (queue.empty()) return;
  const std::string name = queue.front(dispatched)->key;
  auto batch = take_queued_locked(name, std::min(config.engine.max_batch, run_room()), false, dispatched);
  STAGEHAND_ASSERT(!batch.empty(), "the queue's front proof (key {}) was not taken into its run", name);
  auto& key = keys.at(name);
  ++batches;
  const auto proving_key = key.key;
  const auto sizes = key.sizes;
  const Bytes proof_bytes = key.proof_bytes;
  const auto key_path = key.path;
  const auto device_state = key.device_state;
  key.last_batch = batches;
  // The other keys set up on the devices stay there while this batch loses nothing by it
  // (states_to_give_back); the least recently proved go first.
  std::vector<std::pair<std::uint64_t, std::shared_ptr<groth16::DeviceKeyState>>> others;
  for (const auto& [other_name, other] : keys) {
    if (other_name != name && other.device_state->holds_anything()) others.emplace_back(other.last_batch, other.device_state);
  }
  std::sort(others.begin(), others.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  lock.unlock();
  std::vector<Bytes> held;
  for (const auto& other : others) held.push_back(other.second->device_bytes());
  const std::size_t give_back = states_to_give_back(*sizes, proof_bytes, held);
  std::vector<std::shared_ptr<groth16::DeviceKeyState>> given_back;
  Bytes held_by_others = 0;
  for (std::size_t i = 0; i < others.size(); ++i) {
    if (i < give_back) {
      given_back.push_back(others[i].second);
    } else {
      held_by_others += held[i];
    }
  }
  release_device_states(given_back);
  run_batch(name, proving_key, *sizes, key_path, device_state, held_by_others, std::move(batch), dispatched);
}

std::vector<std::shared_ptr<ProofRecord>> Engine::Impl::take_queued_locked(const std::string& name, std::size_t most,
                                                                           bool leading_only, Clock::time_point now) {
  std::vector<std::shared_ptr<ProofRecord>> taken;
  auto key = keys.find(name);
  if (key == keys.end()) return taken;
  expire_locked(now);
  for (auto& proof : leading_only ? queue.take_leading(name, most, now) : queue.take_batch(name, most, now)) {
    taken.push_back(std::move(proof.record));
  }
  key->second.queued -= taken.size();
  key->second.running += taken.size();
  running += taken.size();
  for (const auto& record : taken) {
    std::lock_guard record_lock(record->mutex);
    record->result.state = ProofState::running;
    record->taken = now;
  }
  if (!taken.empty()) space.notify_all();
  return taken;
}

std::size_t Engine::Impl::states_to_give_back(const groth16::KeySizes& sizes, Bytes proof_bytes,
                                              const std::vector<Bytes>& held_oldest_first) const {
  if (held_oldest_first.empty()) return 0;
  const auto settings = settings_for(config.run, config.engine.policy);
  const auto alone = proof_layout(sizes, settings);
  const Bytes needed = proof_bytes + settings.safety_margin_bytes + settings.resident_bytes;
  Bytes smallest = ~Bytes{0};
  for (const auto* device : backend->devices()) smallest = std::min(smallest, device->properties().total_memory_bytes);
  Bytes held = 0;
  for (const Bytes bytes : held_oldest_first) held += bytes;
  for (std::size_t first = 0; first < held_oldest_first.size(); held -= held_oldest_first[first++]) {
    auto beside = settings;
    beside.resident_bytes += held;
    const auto layout = proof_layout(sizes, beside);
    if (needed + held <= smallest && layout.abc_step == alone.abc_step && layout.placement == alone.placement) return first;
  }
  return held_oldest_first.size();
}

void Engine::Impl::run_batch(const std::string& key_name, const std::shared_ptr<const groth16::ProvingKey>& key,
                             const groth16::KeySizes& sizes, const std::filesystem::path& key_path, const std::shared_ptr<groth16::DeviceKeyState>& device_state,
                             Bytes held_by_others, std::vector<std::shared_ptr<ProofRecord>> batch, Clock::time_point dispatched) {
  // The run's proofs by job index: the batch, then those that join while it runs (deques: the
  // run's callbacks hold elements while others join).
  std::deque<std::shared_ptr<ProofRecord>> run_proofs(batch.begin(), batch.end());
  std::deque<std::optional<std::pair<std::string, std::string>>> texts(batch.size());
  std::deque<bool> ended(batch.size(), false);
  // What wakes the feeder below: the engine's news (posted from any thread) and each proof's end.
  const auto news = std::make_shared<AsyncWaitList>();
  auto finish = [&](std::size_t index, ProofState state, std::string error) {
    if (ended[index]) return;
    ended[index] = true;
    const auto& record = run_proofs[index];
    {
      std::lock_guard lock(mutex);
      if (record->gpu >= 0) gpu_ended(record->gpu);
      --running;
      key_proof_left(key_name, true);
    }
    if (state == ProofState::done) {
      end_proof(record, state, {}, std::move(texts[index]->first), std::move(texts[index]->second));
    } else {
      end_proof(record, state, std::move(error));
    }
  };
  auto proof_job = [&](const ProofRecord& record) {
    groth16::ProofJob job;
    job.wtns = fmt::format("proof {} (key {})", record.id, key_name);
    job.randomness = config.engine.seed ? groth16::ProofRandomness::from_seed(*config.engine.seed + record.id)
                                        : groth16::ProofRandomness::from_system();
    job.wtns_bytes = record.wtns;
    return job;
  };

  try {
    std::vector<groth16::ProofJob> jobs;
    for (const auto& record : batch) jobs.push_back(proof_job(*record));
    const auto& devices = backend->devices();
    const bool on_gpu = backend->on_gpu();
    auto settings = settings_for(config.run, config.engine.policy);
    HostWork host_work(on_gpu ? host_work_threads(settings.workers_per_device, devices.size()) : 0);
    groth16::ProofChecks checks;
    checks.verify = config.engine.verify;
    auto on_proof = [&](int job, const groth16::Proof& proof, const std::vector<math::Fr>& signals) {
      texts.at(static_cast<std::size_t>(job)).emplace(groth16::proof_json(proof), groth16::public_json(signals));
    };
    const auto layout = proof_layout(sizes, settings);
    // The other keys kept set up are outside this run's budget (their layout left this one's as
    // it is alone: states_to_give_back).
    settings.resident_bytes += held_by_others;
    // The key stays set up between its runs unless this one keeps other sets there (a GPU lost
    // since makes the plan smaller).
    if (!device_state->made_for(layout.abc_step == groth16::AbcStep::device, layout.placement)) release_device_states({device_state});
    groth16::Groth16Workload proofs_workload(*key, key_path, std::move(jobs), host_work, config.engine.threads, on_proof, checks,
                                             layout.abc_step, layout.placement,
                                             config.engine.keep_key_on_device ? device_state : nullptr, &sizes);
    EngineWorkload workload(proofs_workload, run_proofs, *this, devices);

    std::map<int, const VramBudget*> budgets;  // the coordinator's thread only
    auto sample = [&] {
      std::lock_guard lock(mutex);
      sample_devices(budgets);
    };
    CoordinatorHooks hooks;
    if (config.engine.keep_key_on_device) {
      // The pinned staging pool stays for the next batch, as the key does.
      auto count = [this](int device) {
        Bytes bytes = 0;
        for (const auto& range : kept_pinned[device]) bytes += range.bytes;
        std::lock_guard lock(mutex);
        if (static_cast<std::size_t>(device) < gpus.size()) gpus[static_cast<std::size_t>(device)].pinned_kept = bytes;
      };
      hooks.kept_pinned = [this, count](int device) {
        auto buffers = std::exchange(kept_pinned[device], {});
        count(device);
        return buffers;
      };
      hooks.keep_pinned = [this, count](int device, std::vector<HostRange> buffers) {
        auto& kept = kept_pinned[device];
        kept.insert(kept.end(), buffers.begin(), buffers.end());
        count(device);
      };
    }
    PageableArena pageable;
    hooks.pageable_memory = [&pageable](Bytes bytes) { return pageable.take(bytes); };
    hooks.on_budget = [&](int device, const VramBudget& budget) { budgets[device] = &budget; };
    hooks.on_budget_gone = [&](int device, const VramBudget&) {
      budgets.erase(device);
      sample();
    };
    hooks.on_job_done = [&](const JobRecord& record) {
      sample();
      const auto index = static_cast<std::size_t>(record.index);
      auto& proof = *run_proofs.at(index);
      {
        std::lock_guard lock(proof.mutex);
        proof.check_seconds = proofs_workload.check_seconds(record.index);
      }
      if (record.completed() && texts.at(index)) {
        finish(index, ProofState::done, {});
      } else if (proof.cancel_requested.load()) {
        finish(index, ProofState::cancelled, record.completed() ? "cancelled" : record.error);
      } else {
        finish(index, ProofState::failed, record.completed() ? "the run ended without a proof for it" : record.error);
      }
      news->notify_all();
    };
    // The run's own trace where [engine] trace_dir asks for one (the backend's keeps only a hash).
    std::optional<Trace> run_trace;
    if (!config.engine.trace_dir.empty()) run_trace.emplace(true);
    const KernelTraceScope kernels_traced(*backend, run_trace && on_gpu ? &*run_trace : nullptr);
    if (run_trace && on_gpu && !devices.empty()) {
      // The engine's own steps before the run, on the device's clock (a GPU's is the host's
      // steady clock; the simulator's is its own, which the engine's steps do not advance).
      const Nanoseconds now_ns = devices.front()->now();
      const auto at = [&](Clock::time_point t) {
        return now_ns - std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
      };
      const auto track = run_trace->track("engine", "dispatcher");
      run_trace->span(track, "queued (the batch's first proof)", "engine", at(batch.front()->submitted), at(dispatched));
      run_trace->span(track, "dispatch: other keys' states, the layout, the workload", "engine", at(dispatched), now_ns);
    }

    // Proofs of the key that arrive while the run goes on join it, so that the GPUs go from one
    // proof to the next without a run's end and the next one's start between them (under load the
    // drain between batches cost about a tenth of the throughput). Only those at the queue's front
    // join (by class, then arrival: none overtakes another key's proof, which runs next), and only
    // while the run has room (run_room). The run takes no more, and ends once its proofs have,
    // when they have all ended with none of its key at the queue's head within [engine] linger_ms
    // (linger_locked), when a key's device state waits to be given back, when the engine stops, or
    // at max_batch proofs. So a critical proof of this key takes the run's next free place, once
    // one of its proofs ends; kernels are not preempted, so one of another key waits for the run's
    // unended proofs (at most run_room) and then its own key's set-up, and no longer.
    JobFeed feed;
    bool run_over = false;  // run_coordinator has returned
    bool feeder_done = false;
    AsyncWaitList feeder_ended;
    // The feeder waits for news only while some of the run's proofs are unended (with none, it
    // closes the feed): their work keeps the backend's run() going (a GPU's operations are tracked
    // work, the simulator's are its events), so a run that can no longer go on still ends (on the
    // simulator: as a deadlock) instead of waiting for news for ever.
    auto feed_run = [&]() -> asio::awaitable<void> {
      try {
        for (;;) {
          std::vector<std::shared_ptr<ProofRecord>> joining;
          bool close = run_over;
          if (!close) {
            std::unique_lock lock(mutex);
            // Set under the lock of the first look at the queue: nothing queued before it is missed.
            if (!wake_open_run) wake_open_run = [this, news] { backend->post_from_outside([news] { news->notify_all(); }); };
            close = stopping || !retired.empty() || run_proofs.size() >= config.engine.max_batch;
            if (!close) {
              const auto unended = static_cast<std::size_t>(std::count(ended.begin(), ended.end(), false));
              const std::size_t room = std::min(config.engine.max_batch - run_proofs.size(), run_room() - std::min(run_room(), unended));
              joining = take_queued_locked(key_name, room, true, Clock::now());
              if (joining.empty() && unended == 0) joining = linger_locked(lock, key_name, room);
              close = joining.empty() && unended == 0;
            }
          }
          for (const auto& record : joining) {
            const int job = proofs_workload.add_job(proof_job(*record));
            run_proofs.push_back(record);
            texts.emplace_back();
            ended.push_back(false);
            if (!feed.add()) {
              finish(static_cast<std::size_t>(job), ProofState::failed, "the run ended before this proof could join it");
            }
          }
          if (close) break;
          co_await news->wait();
        }
      } catch (...) {
        // Nothing above throws but an allocation; the run then takes no more and ends as it is.
      }
      feed.close();
      {
        std::lock_guard lock(mutex);
        wake_open_run = nullptr;
      }
      feeder_done = true;
      feeder_ended.notify_all();
    };

    RunReport report;
    backend->run([&]() -> asio::awaitable<void> {
      asio::co_spawn(co_await asio::this_coro::executor, feed_run(), asio::detached);
      std::exception_ptr failure;
      try {
        report = co_await run_coordinator(devices, settings, workload, run_trace ? *run_trace : backend->trace(), hooks, &feed);
      } catch (...) {
        failure = std::current_exception();
      }
      run_over = true;
      news->notify_all();
      while (!feeder_done) co_await feeder_ended.wait();
      if (failure) std::rethrow_exception(failure);
      // A GPU lost in the run keeps nothing that could be freed: its part of the state goes.
      for (std::size_t i = 0; i < devices.size(); ++i) {
        bool lost = false;
        {
          std::lock_guard lock(mutex);
          lost = i < gpus.size() && gpus[i].lost;
        }
        if (lost) co_await device_state->release_device(static_cast<int>(i));
      }
    }());
    if (run_trace) write_run_trace(*run_trace, report, key_name, run_proofs.size(), on_gpu);
  } catch (const std::exception& error) {
    for (std::size_t i = 0; i < run_proofs.size(); ++i) finish(i, ProofState::failed, fmt::format("the run failed: {}", error.what()));
  }
  // The coordinator reports every job; a proof it did not report still gets an answer.
  for (std::size_t i = 0; i < run_proofs.size(); ++i) finish(i, ProofState::failed, "the run ended without reporting this proof");
  std::lock_guard lock(mutex);
  sample_devices({});  // what the run left on the devices (the key, where it stays set up)
}

std::vector<std::shared_ptr<ProofRecord>> Engine::Impl::linger_locked(std::unique_lock<std::mutex>& lock, const std::string& name,
                                                                      std::size_t room) {
  STAGEHAND_ASSERT(lock.owns_lock() && room > 0, "a run lingers for key {} with the engine unlocked or no room", name);
  std::vector<std::shared_ptr<ProofRecord>> joining;
  if (config.engine.linger_ms <= 0) return joining;
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(config.engine.linger_ms));
  // The wait blocks the run's thread instead of waiting on the backend's loop: with none of the
  // run's proofs unended nothing else in the run can go on, and the simulator takes a program
  // that waits for news with no work of its own for a deadlock (backend.hpp). Submits, retiring a
  // key and stopping all notify `work` (wake_dispatcher_locked).
  while (work.wait_until(lock, until, [&] { return stopping || !retired.empty() || !queue.empty(); })) {
    if (stopping || !retired.empty()) break;
    const auto now = Clock::now();
    expire_locked(now);
    if (queue.empty()) continue;  // what came had expired: the linger goes on
    if (queue.front(now)->key != name) break;  // another key's proof runs next
    joining = take_queued_locked(name, room, true, now);
    break;
  }
  STAGEHAND_ASSERT(joining.size() <= room, "a lingering run of key {} took {} proofs for {} places", name, joining.size(), room);
  return joining;
}

void Engine::Impl::write_run_trace(const Trace& trace, const RunReport& report, const std::string& key_name, std::size_t proofs,
                                   bool on_gpu) {
  std::uint64_t number = 0;
  {
    std::lock_guard lock(mutex);
    number = batches;
  }
  const auto& dir = config.engine.trace_dir;
  auto file = [&](std::uint64_t n, const char* extension) { return dir / fmt::format("run-{:06}{}", n, extension); };
  try {
    trace.write_chrome_json(file(number, ".trace.json"));
    PictureOptions options;
    options.worker_rows = true;
    options.job_rows = true;
    options.job_word = "proof";
    // The batch's own window: the engine's device clocks count from its start.
    options.from_ns = std::numeric_limits<Nanoseconds>::max();
    for (const auto& event : trace.events()) {
      options.from_ns = std::min(options.from_ns, event.start_ns);
      options.to_ns = std::max(options.to_ns, event.end_ns);
    }
    write_svg_picture({PictureLane{report.policy, headline_figures(report), &trace}}, file(number, ".svg"),
                      fmt::format("stagehand engine: batch {}, {} proof{} of key {}, {}", number, proofs, proofs == 1 ? "" : "s",
                                  key_name, on_gpu ? "CUDA" : "simulator (the coordinator's rows)"),
                      options);
    if (number > config.engine.trace_runs) {
      std::error_code ignored;
      std::filesystem::remove(file(number - config.engine.trace_runs, ".trace.json"), ignored);
      std::filesystem::remove(file(number - config.engine.trace_runs, ".svg"), ignored);
    }
  } catch (const std::exception& error) {
    // The proofs are made and answered; a trace that cannot be written is said, not fatal.
    fmt::print(stderr, "stagehand engine: batch {}'s trace not written: {}\n", number, error.what());
  }
}

BackendOptions Engine::default_backend_options() {
  BackendOptions options;
  options.functional = true;          // without a GPU, the simulator computes real proofs
  options.keep_trace_events = false;  // a long-lived engine keeps only the trace's hash and count
  return options;
}

Engine::Engine(EngineConfig config, BackendOptions options) : impl_(std::make_unique<Impl>(std::move(config))) {
  impl_->backend = Backend::open(impl_->config.run, std::move(options));
  for (auto* device : impl_->backend->devices()) {
    Impl::Gpu gpu;
    gpu.capacity = device->memory_info().total_bytes;
    impl_->gpus.push_back(gpu);
  }
  impl_->dispatcher = std::thread([impl = impl_.get()] { impl->dispatch(); });
  impl_->deadline_watcher = std::thread([impl = impl_.get()] { impl->watch_deadlines(); });
}

Engine::~Engine() { shutdown(Drain::finish); }

const EngineConfig& Engine::config() const { return impl_->config; }

void Engine::load_key(const std::string& name, const std::filesystem::path& zkey_path) {
  groth16::InputFile zkey;
  try {
    zkey = groth16::open_zkey(zkey_path);
  } catch (const std::exception& error) {
    throw EngineError(ErrorKind::bad_key, error.what());
  }
  load_key(name, std::move(zkey));
}

void Engine::load_key(const std::string& name, groth16::InputFile zkey) {
  const auto zkey_path = zkey.name;
  if (name.empty()) throw EngineError(ErrorKind::bad_key, "a key needs a name");
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopping) throw EngineError(ErrorKind::stopped, "the engine is shutting down");
    if (impl_->keys.count(name) != 0) throw EngineError(ErrorKind::key_exists, fmt::format("a key named '{}' is loaded already", name));
  }
  const auto start = Clock::now();
  std::shared_ptr<const groth16::ProvingKey> key;
  try {
    key = std::make_shared<const groth16::ProvingKey>(groth16::read_zkey(std::move(zkey)));
  } catch (const std::exception& error) {
    throw EngineError(ErrorKind::bad_key, error.what());
  }
  const double read_seconds = seconds_between(start, Clock::now());
  // A cap too small for one proof is the configuration's mistake: say so now, naming the key,
  // rather than fail every proof of it (the kernels' scratch, known on the devices, comes on top).
  std::string layout_text;
  Bytes proof_bytes = 0;
  std::shared_ptr<const groth16::KeySizes> sizes;
  {
    const auto settings = settings_for(impl_->config.run, impl_->config.engine.policy);
    sizes = std::make_shared<const groth16::KeySizes>(groth16::KeySizes::of(*key));
    const auto layout = impl_->proof_layout(*sizes, settings);
    layout_text = fmt::format("a/b/c {}; {}", groth16::describe(layout.abc_step), layout.placement.describe());
    proof_bytes = Impl::proof_bytes(*key, *sizes, zkey_path, layout);
    try {
      check_vram_cap_fits(impl_->config.run, proof_bytes + settings.safety_margin_bytes + settings.resident_bytes,
                          fmt::format("a proof of {} (domain 2^{})", zkey_path.string(), key->domain_log2));
    } catch (const std::exception& error) {
      throw EngineError(ErrorKind::bad_key, error.what());
    }
  }
  std::lock_guard lock(impl_->mutex);
  if (impl_->stopping) throw EngineError(ErrorKind::stopped, "the engine is shutting down");
  if (impl_->keys.count(name) != 0) throw EngineError(ErrorKind::key_exists, fmt::format("a key named '{}' is loaded already", name));
  Impl::Key entry;
  entry.host_bytes = key_host_bytes(*key);
  entry.key = std::move(key);
  entry.sizes = std::move(sizes);
  entry.path = zkey_path;
  entry.read_seconds = read_seconds;
  entry.layout = std::move(layout_text);
  entry.proof_bytes = proof_bytes;
  impl_->keys.emplace(name, std::move(entry));
}

std::size_t Engine::unload_key(const std::string& name) {
  std::lock_guard lock(impl_->mutex);
  auto found = impl_->keys.find(name);
  if (found == impl_->keys.end() || found->second.unloading) {
    throw EngineError(ErrorKind::unknown_key, fmt::format("no key named '{}' is loaded", name));
  }
  auto& key = found->second;
  const std::size_t left = key.queued + key.running;
  if (left == 0) {
    impl_->retire_key(found);
  } else {
    key.unloading = true;
  }
  return left;
}

void Engine::wait_key_gone(const std::string& name) {
  std::unique_lock lock(impl_->mutex);
  impl_->key_gone.wait(lock, [&] { return impl_->key_gone_locked(name); });
}

bool Engine::has_key(const std::string& name) const {
  std::lock_guard lock(impl_->mutex);
  auto found = impl_->keys.find(name);
  return found != impl_->keys.end() && !found->second.unloading;
}

ProofHandle Engine::submit(const std::string& key_name, std::vector<std::uint8_t> wtns, WhenFull when_full, ProofCallback on_done) {
  SubmitOptions options;
  options.when_full = when_full;
  options.on_done = std::move(on_done);
  return submit(key_name, std::move(wtns), std::move(options));
}

namespace {
// Refuses a deadline that has passed: the proof could not start in time.
void check_deadline(const std::optional<Clock::time_point>& deadline, Clock::time_point now, const std::string& key_name,
                    const char* when) {
  if (!deadline || *deadline > now) return;
  throw EngineError(ErrorKind::deadline_passed,
                    fmt::format("a proof of key '{}': its deadline passed {:.3f} s before it {}: it is not queued", key_name,
                                seconds_between(*deadline, now), when));
}
}  // namespace

ProofHandle Engine::submit(const std::string& key_name, std::vector<std::uint8_t> wtns, SubmitOptions options) {
  if (options.request_id.size() > kRequestIdBytes) {
    throw EngineError(ErrorKind::bad_request, fmt::format("a request id of {} bytes: at most {}", options.request_id.size(), kRequestIdBytes));
  }
  std::shared_ptr<const groth16::ProvingKey> key;
  std::filesystem::path key_path;
  std::uint64_t id = 0;
  {
    std::unique_lock lock(impl_->mutex);
    // A repeat is answered with its proof whatever has happened since: the key unloaded, the queue full.
    if (auto earlier = impl_->find_request_locked(key_name, options.request_id)) {
      lock.unlock();
      return Impl::repeat(earlier, std::move(options.on_done));
    }
    check_deadline(options.deadline, Clock::now(), key_name, "was submitted");
    const auto& found = impl_->usable_key_locked(key_name);
    key = found.key;
    key_path = found.path;
    id = impl_->next_id++;
  }
  // The witness is checked here, on the caller's thread, so that a malformed one is refused at
  // once (a service answers 400) instead of failing later; prepare parses it into the proof's
  // own buffer. Checked, not converted: converting 2^20 values into a fresh vector here was a
  // third of the server's time for a lone request. On the engine's threads.
  const std::string name = fmt::format("proof {} (key {})", id, key_name);
  try {
    groth16::check_witness_count(*key, groth16::check_wtns(wtns, name, impl_->config.engine.threads), key_path, name);
  } catch (const std::exception& error) {
    throw EngineError(ErrorKind::bad_witness, error.what());
  }

  auto record = std::make_shared<ProofRecord>();
  record->id = id;
  record->key = key_name;
  record->priority = options.priority;
  record->request_id = options.request_id;
  record->deadline = options.deadline;
  record->wtns = std::make_shared<const std::vector<std::uint8_t>>(std::move(wtns));
  record->on_done.push_back(std::move(options.on_done));
  record->submitted = Clock::now();
  return impl_->enqueue(record, options.when_full);
}

ProofHandle Engine::Impl::enqueue(const std::shared_ptr<ProofRecord>& record, WhenFull when_full) {
  {
    std::unique_lock lock(mutex);
    if (when_full == WhenFull::wait) {
      space.wait(lock, [&] { return stopping || queue.size() < config.engine.queue_capacity; });
    } else if (queue.size() >= config.engine.queue_capacity) {
      throw EngineError(ErrorKind::queue_full,
                        fmt::format("the queue is full ({} proofs waiting, engine.queue_capacity = {})", queue.size(),
                                    config.engine.queue_capacity));
    }
    // A submit of the same request id may have got in first: its proof is the one.
    if (auto earlier = find_request_locked(record->key, record->request_id)) {
      lock.unlock();
      return repeat(earlier, std::move(record->on_done.front()));
    }
    check_deadline(record->deadline, Clock::now(), record->key, "found room in the queue");
    usable_key_locked(record->key).queued += 1;  // it may have been unloaded, or the engine stopped, while we waited
    // Its class rises with its time in the queue (a wait for room is outside it).
    queue.push(QueuedProof{record, record->key, record->priority, Clock::now(), record->deadline});
    proofs.emplace(record->id, record);
    if (!record->request_id.empty()) requests.emplace(record->request_id, record);
    ++accepted;
    wake_dispatcher_locked();
    if (record->deadline) deadlines.notify_all();
  }
  return ProofHandle(record);
}

bool Engine::cancel(std::uint64_t id) {
  std::shared_ptr<ProofRecord> record;
  {
    std::lock_guard lock(impl_->mutex);
    auto found = impl_->proofs.find(id);
    if (found == impl_->proofs.end()) throw EngineError(ErrorKind::unknown_proof, fmt::format("no proof {}", id));
    record = found->second;
    {
      std::lock_guard record_lock(record->mutex);
      if (record->finished_locked()) return false;
    }
    record->cancel_requested = true;
    // Running (the workload stops it before its next step), or expired (the watcher fails it).
    if (!impl_->queue.remove(record.get())) return true;
    impl_->key_proof_left(record->key, false);
    impl_->space.notify_all();
  }
  impl_->end_proof(record, ProofState::cancelled, "cancelled while queued");
  return true;
}

ProofHandle Engine::find(std::uint64_t id) const {
  std::lock_guard lock(impl_->mutex);
  auto found = impl_->proofs.find(id);
  if (found == impl_->proofs.end()) throw EngineError(ErrorKind::unknown_proof, fmt::format("no proof {} (unknown or forgotten)", id));
  return ProofHandle(found->second);
}

EngineStatus Engine::status() const {
  EngineStatus status;
  status.backend = impl_->backend->describe();
  const auto now = Clock::now();
  std::lock_guard lock(impl_->mutex);
  status.queued = impl_->queue.size();
  for (const auto priority : {Priority::low, Priority::normal, Priority::high, Priority::critical}) {
    status.queued_by_priority[static_cast<std::size_t>(priority)] = impl_->queue.size(priority);
  }
  status.queue_capacity = impl_->config.engine.queue_capacity;
  status.running = impl_->running;
  status.accepted = impl_->accepted;
  status.done = impl_->done;
  status.failed = impl_->failed;
  status.cancelled = impl_->cancelled;
  status.batches = impl_->batches;
  status.stopping = impl_->stopping;
  status.uptime_seconds = seconds_between(impl_->started, now);
  for (const auto& [id, record] : impl_->proofs) {
    if (record->wtns) status.witness_bytes += record->wtns->size();
  }
  for (std::size_t i = 0; i < impl_->gpus.size(); ++i) {
    const auto& gpu = impl_->gpus[i];
    GpuStatus out;
    out.index = static_cast<int>(i);
    out.running = gpu.running;
    out.done = gpu.done;
    out.vram_capacity_bytes = gpu.capacity;
    out.vram_reserved_bytes = gpu.reserved;
    out.device_used_bytes = gpu.used;
    out.pinned_host_budget_bytes = impl_->config.run.coordinator.pinned_host_budget_bytes;
    out.pinned_host_kept_bytes = gpu.pinned_kept;
    out.pinned_host_allocations = gpu.pinned_allocations;
    out.busy_seconds = gpu.busy_seconds + (gpu.running > 0 ? seconds_between(gpu.busy_since, now) : 0.0);
    out.lost = gpu.lost;
    status.gpus.push_back(out);
  }
  for (const auto& [name, key] : impl_->keys) {
    KeyStatus out;
    out.name = name;
    out.path = key.path.string();
    out.host_bytes = key.host_bytes;
    out.resident.push_back("host");
    for (const int gpu : key.device_state->device_indices()) out.resident.push_back(fmt::format("gpu{}", gpu));
    out.device_set_ups = key.device_state->set_ups();
    out.device_bytes = key.device_state->device_bytes();
    out.proof_bytes = key.proof_bytes;
    out.queued = key.queued;
    out.running = key.running;
    out.unloading = key.unloading;
    out.read_seconds = key.read_seconds;
    out.layout = key.layout;
    status.keys.push_back(out);
  }
  status.histogram_bounds = kHistogramBounds;
  std::uint64_t cumulative = 0;
  for (auto count : impl_->histogram) status.histogram_counts.push_back(cumulative += count);
  status.histogram_sum = impl_->histogram_sum;
  status.timing_bounds = kTimingBounds;
  for (const auto& [key_and_priority, parts] : impl_->timings) {
    for (std::size_t i = 0; i < parts.size(); ++i) {
      TimingHistogram out{key_and_priority.first, key_and_priority.second, kTimingParts[i], {}, parts[i].sum};
      cumulative = 0;
      for (const auto count : parts[i].counts) out.counts.push_back(cumulative += count);
      status.timing_histograms.push_back(std::move(out));
    }
  }
  return status;
}

void Engine::shutdown(Drain drain) {
  {
    std::lock_guard lock(impl_->mutex);
    if (!impl_->stopping) {
      impl_->stopping = true;
      impl_->drain = drain;
    }
    impl_->wake_dispatcher_locked();
  }
  impl_->space.notify_all();
  if (impl_->dispatcher.joinable()) impl_->dispatcher.join();
  // The queue is empty now; proofs it expired meanwhile are failed before the watcher ends.
  {
    std::lock_guard lock(impl_->mutex);
    impl_->watcher_stopping = true;
    impl_->deadlines.notify_all();
  }
  if (impl_->deadline_watcher.joinable()) impl_->deadline_watcher.join();
}

std::string status_json(const EngineStatus& status) {
  nlohmann::json out;
  out["backend"] = status.backend;
  out["uptime_seconds"] = status.uptime_seconds;
  out["stopping"] = status.stopping;
  nlohmann::json by_priority;
  for (const auto priority : {Priority::low, Priority::normal, Priority::high, Priority::critical}) {
    by_priority[to_string(priority)] = status.queued_by_priority[static_cast<std::size_t>(priority)];
  }
  out["queue"] = {{"queued", status.queued},
                  {"queued_by_priority", by_priority},
                  {"capacity", status.queue_capacity},
                  {"running", status.running},
                  {"witness_bytes", status.witness_bytes}};
  out["proofs"] = {{"accepted", status.accepted}, {"done", status.done}, {"failed", status.failed}, {"cancelled", status.cancelled},
                   {"batches", status.batches}};
  out["gpus"] = nlohmann::json::array();
  for (const auto& gpu : status.gpus) {
    out["gpus"].push_back({{"index", gpu.index},
                           {"running", gpu.running},
                           {"proofs_ended", gpu.done},
                           {"vram_capacity_bytes", gpu.vram_capacity_bytes},
                           {"vram_reserved_bytes", gpu.vram_reserved_bytes},
                           {"device_used_bytes", gpu.device_used_bytes},
                           {"pinned_host_budget_bytes", gpu.pinned_host_budget_bytes},
                           {"pinned_host_kept_bytes", gpu.pinned_host_kept_bytes},
                           {"pinned_host_allocations", gpu.pinned_host_allocations},
                           {"busy_seconds", gpu.busy_seconds},
                           {"lost", gpu.lost}});
  }
  out["keys"] = nlohmann::json::array();
  for (const auto& key : status.keys) {
    out["keys"].push_back({{"name", key.name},
                           {"path", key.path},
                           {"host_bytes", key.host_bytes},
                           {"resident", key.resident},
                           {"queued", key.queued},
                           {"running", key.running},
                           {"unloading", key.unloading},
                           {"read_seconds", key.read_seconds},
                           {"device_set_ups", key.device_set_ups},
                           {"device_bytes", key.device_bytes},
                           {"proof_bytes", key.proof_bytes},
                           {"layout", key.layout}});
  }
  return out.dump();
}

}  // namespace stagehand::engine
