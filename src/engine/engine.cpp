// stagehand::Engine's public calls: keys, submits, cancels, status (engine_impl.hpp says where the rest is).
#include "engine/engine_impl.hpp"

#include <span>
#include <type_traits>

namespace stagehand::engine {

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
    throw EngineError(ErrorKind::bad_request,
                      fmt::format("a deadline {} ms from now: at most {} ms either way", ms, kDeadlineMostMs));
  }
  return Clock::now() + std::chrono::milliseconds(ms);
}

std::optional<Priority> priority_from_string(std::string_view text) {
  for (const auto priority : {Priority::low, Priority::normal, Priority::high, Priority::critical}) {
    if (text == to_string(priority)) return priority;
  }
  return std::nullopt;
}

groth16::Curve curve_of(const AnyKeyPointer& key) {
  return std::visit([](const auto& held) { return std::remove_cvref_t<decltype(*held)>::curve; }, key);
}

proving::AnyKey batch_key_of(const AnyKeyPointer& key) {
  return std::visit([](const auto& held) { return proving::AnyKey(held.get()); }, key);
}

proving::AnyR1cs batch_r1cs_of(const AnyR1csPointer& r1cs) {
  return std::visit([](const auto& held) { return proving::AnyR1cs(held.get()); }, r1cs);
}

std::size_t constraint_count(const AnyR1csPointer& r1cs) {
  return std::visit([](const auto& held) { return held ? held->constraints.size() : std::size_t{0}; }, r1cs);
}

namespace {
template <class Key>
std::uint64_t key_host_bytes(const Key& key) {
  return key.a.bytes().size() + key.b1.bytes().size() + key.b2.bytes().size() + key.c.bytes().size() +
         key.h.bytes().size() + key.ic.size() * sizeof(key.ic[0]) +
         key.coefficients.size() * sizeof(key.coefficients[0]);
}

// The constraint system checked against its key: of the key's curve (bad_key naming both
// otherwise), with the key's wires and public signals.
template <class Key>
void check_key_r1cs(const KeyInMemory& in_memory, const Key& key) {
  const auto* r1cs = proving::r1cs_of_curve<Key>(batch_r1cs_of(in_memory.r1cs), in_memory.r1cs_path, in_memory.path);
  if (r1cs != nullptr) groth16::check_constraint_system(*r1cs, in_memory.r1cs_path, key, in_memory.path);
}

// The witness's bytes checked against its key: a witness of the other curve than the key's is
// refused naming both (the curve's reader's CurveError), one of another circuit naming both files.
void check_submitted_witness(const AnyKeyPointer& key, std::span<const std::uint8_t> wtns, const std::string& name,
                             const std::filesystem::path& key_path, unsigned threads) {
  std::visit(
      [&](const auto& held) {
        using Key = std::remove_cvref_t<decltype(*held)>;
        std::uint32_t count = 0;
        if constexpr (Key::curve == groth16::Curve::bn254) {
          count = groth16::bn254::check_wtns(wtns, name, threads);
        } else {
          count = groth16::check_wtns(wtns, name, threads);
        }
        check_witness_count(*held, count, key_path, name);
      },
      key);
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
void ProofHandle::on_end(std::function<void(const ProofHandle&)> callback) const {
  STAGEHAND_ASSERT(callback != nullptr, "proof {}: an empty on_end callback", record_->id);
  {
    std::lock_guard lock(record_->mutex);
    if (!record_->finished_locked()) {
      record_->on_done.push_back(std::move(callback));
      return;
    }
  }
  callback(*this);
}

BackendOptions Engine::default_backend_options() {
  BackendOptions options;
  options.functional = true;          // without a GPU, the simulator computes real proofs
  options.keep_trace_events = false;  // a long-lived engine keeps only the trace's hash and count
  return options;
}

Engine::Engine(EngineConfig config, BackendOptions options, EngineHooks hooks)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(hooks))) {
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
  impl_->check_loadable(name);
  const auto start = Clock::now();
  KeyInMemory key;
  try {
    // The header's primes choose the curve; a key of neither is refused naming the file.
    key.key = std::visit(
        [](auto&& read) {
          using Key = std::remove_cvref_t<decltype(read)>;
          return AnyKeyPointer(std::make_shared<const Key>(std::move(read)));
        },
        groth16::read_any_zkey(std::move(zkey)));
  } catch (const std::exception& error) {
    throw EngineError(ErrorKind::bad_key, error.what());
  }
  key.path = zkey_path;
  key.read_seconds = seconds_between(start, Clock::now());
  load_key(name, std::move(key));
}

void Engine::load_key(const std::string& name, KeyInMemory in_memory) {
  impl_->check_loadable(name);
  STAGEHAND_ASSERT(std::visit([](const auto& key) { return key != nullptr; }, in_memory.key),
                   "key '{}' ({}) loaded without its key", name, in_memory.path.string());
  Impl::Key entry;
  try {
    std::visit(
        [&](const auto& key) {
          check_key_r1cs(in_memory, *key);
          entry.sizes = std::make_shared<const groth16::KeySizes>(groth16::KeySizes::of(*key));
          entry.host_bytes = key_host_bytes(*key);
        },
        in_memory.key);
    // A cap too small for one proof is the configuration's mistake: say so now, naming the key,
    // rather than fail every proof of it (the kernels' scratch, known on the devices, comes on top).
    const auto settings = settings_for(impl_->config.run, impl_->config.engine.policy);
    entry.planned_layout = impl_->proof_layout(*entry.sizes, settings);
    const auto& layout = entry.planned_layout;
    entry.layout = fmt::format("a/b/c {}; {}", groth16::describe(layout.abc_step), layout.placement.describe());
    entry.proof_bytes = groth16::proof_device_bytes(*entry.sizes, layout);
    const Bytes margins = settings.safety_margin_bytes + settings.resident_bytes;
    check_vram_cap_fits(
        impl_->config.run, entry.proof_bytes + margins,
        fmt::format("a proof of {} (domain 2^{}) ({} with the key's resident sets and matrix, {} safety margin "
                    "and residents; key sets streamed keep less on the device)",
                    in_memory.path.string(), entry.sizes->domain_log2, format_bytes(entry.proof_bytes),
                    format_bytes(margins)));
  } catch (const std::exception& error) {
    throw EngineError(ErrorKind::bad_key, error.what());
  }
  entry.key = std::move(in_memory.key);
  entry.path = std::move(in_memory.path);
  entry.read_seconds = in_memory.read_seconds;
  entry.r1cs = std::move(in_memory.r1cs);
  entry.r1cs_path = std::move(in_memory.r1cs_path);
  std::lock_guard lock(impl_->mutex);
  impl_->check_loadable_locked(name);
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

ProofHandle Engine::submit(const std::string& key_name, std::vector<std::uint8_t> wtns, WhenFull when_full,
                           ProofCallback on_done) {
  SubmitOptions options;
  options.when_full = when_full;
  options.on_done = std::move(on_done);
  return submit(key_name, std::move(wtns), std::move(options));
}

namespace {
// Refuses a deadline that has passed: the proof could not start in time.
void check_deadline(const std::optional<Clock::time_point>& deadline, Clock::time_point now,
                    const std::string& key_name, const char* when) {
  if (!deadline || *deadline > now) return;
  throw EngineError(ErrorKind::deadline_passed,
                    fmt::format("a proof of key '{}': its deadline passed {:.3f} s before it {}: it is not queued",
                                key_name, seconds_between(*deadline, now), when));
}
}  // namespace

ProofHandle Engine::submit(const std::string& key_name, std::vector<std::uint8_t> wtns, SubmitOptions options) {
  return submit(key_name, std::make_shared<const std::vector<std::uint8_t>>(std::move(wtns)), std::move(options));
}

ProofHandle Engine::submit(const std::string& key_name, std::shared_ptr<const std::vector<std::uint8_t>> wtns,
                           SubmitOptions options) {
  STAGEHAND_ASSERT(wtns != nullptr, "a proof of key {} submitted without its witness's bytes", key_name);
  if (options.request_id.size() > kRequestIdBytes) {
    throw EngineError(ErrorKind::bad_request,
                      fmt::format("a request id of {} bytes: at most {}", options.request_id.size(), kRequestIdBytes));
  }
  AnyKeyPointer key;
  std::shared_ptr<const ParamsHeld> params;
  std::filesystem::path key_path;
  std::uint64_t id = 0;
  {
    std::unique_lock lock(impl_->mutex);
    // A repeat is answered with its proof whatever has happened since: the key unloaded, the queue full.
    if (auto earlier = impl_->find_request_locked(key_name, options.request_id)) {
      lock.unlock();
      return Impl::repeat(earlier, std::move(options.on_done));
    }
    check_deadline(options.deadline, impl_->clock->now(), key_name, "was submitted");
    const auto& found = impl_->usable_key_locked(key_name);
    key = found.key;
    params = found.params;
    key_path = found.path;
    id = impl_->next_id++;
  }
  // The witness is checked here, on the caller's thread, so that a malformed one is refused at
  // once (a service answers 400) instead of failing later; prepare parses it into the proof's
  // own buffer. Checked, not converted: converting 2^20 values into a fresh vector here was a
  // third of the server's time for a lone request. On the engine's threads.
  const std::string name =
      options.witness_name.empty() ? fmt::format("proof {} (key {})", id, key_name) : options.witness_name;
  try {
    if (params) {
      check_params_witness(*params, *wtns, name, impl_->config.engine.threads);
    } else {
      check_submitted_witness(key, *wtns, name, key_path, impl_->config.engine.threads);
    }
  } catch (const std::exception& error) {
    throw EngineError(ErrorKind::bad_witness, error.what());
  }

  auto record = std::make_shared<ProofRecord>();
  record->id = id;
  record->key = key_name;
  record->priority = options.priority;
  record->request_id = options.request_id;
  record->deadline = options.deadline;
  record->wtns = std::move(wtns);
  record->name = name;
  record->seed_index = options.seed_index.value_or(id - 1);
  record->on_done.push_back(std::move(options.on_done));
  record->submitted = Clock::now();
  record->submitted_on_clock = impl_->clock->now();
  return impl_->enqueue(record, options.when_full);
}

ProofHandle Engine::Impl::enqueue(const std::shared_ptr<ProofRecord>& record, WhenFull when_full) {
  {
    std::unique_lock lock(mutex);
    if (when_full == WhenFull::wait) {
      const auto has_room = [&] { return stopping || queue.size() < config.engine.queue_capacity; };
      if (!has_room() && hooks.on_wait_for_room) hooks.on_wait_for_room();
      space.wait(lock, has_room);
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
    check_deadline(record->deadline, clock->now(), record->key, "found room in the queue");
    usable_key_locked(record->key).queued += 1;  // it may have been unloaded, or the engine stopped, while we waited
    // Its class rises with its time in the queue (a wait for room is outside it).
    queue.push(QueuedProof{record, record->key, record->priority, clock->now(), record->deadline});
    check_counts_locked();
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
    impl_->check_counts_locked();
    impl_->space.notify_all();
  }
  impl_->end_proof(record, ProofState::cancelled, "cancelled while queued");
  return true;
}

ProofHandle Engine::find(std::uint64_t id) const {
  std::lock_guard lock(impl_->mutex);
  auto found = impl_->proofs.find(id);
  if (found == impl_->proofs.end())
    throw EngineError(ErrorKind::unknown_proof, fmt::format("no proof {} (unknown or forgotten)", id));
  return ProofHandle(found->second);
}

namespace {
KeyStatus key_status(const std::string& name, const Engine::Impl::Key& key) {
  KeyStatus out;
  out.name = name;
  out.path = key.path.string();
  out.curve = curve_of(key.key);
  out.host_bytes = key.host_bytes;
  out.format = key.params ? "params" : "zkey";
  out.r1cs_path = key.r1cs_path.string();
  out.resident.push_back("host");
  for (const int gpu : key.device_state->device_indices()) out.resident.push_back(fmt::format("gpu{}", gpu));
  out.device_set_ups = key.device_state->set_ups();
  if (key.params) {
    // The assignment key's state tells what it holds, not where: "gpus" while it holds anything.
    if (key.assignment_state->holds_anything()) out.resident.push_back("gpus");
    out.device_set_ups = key.assignment_state->set_ups();
  }
  out.device_bytes = key.device_state->device_bytes();
  out.proof_bytes = key.proof_bytes;
  out.queued = key.queued;
  out.running = key.running;
  out.unloading = key.unloading;
  out.read_seconds = key.read_seconds;
  out.layout = key.layout;
  out.planned_layout = key.planned_layout;
  return out;
}
}  // namespace

EngineStatus Engine::status() const {
  EngineStatus status;
  status.backend = impl_->backend->describe();
  status.on_gpu = impl_->backend->on_gpu();
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
  for (const auto& [name, key] : impl_->keys) status.keys.push_back(key_status(name, key));
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

}  // namespace stagehand::engine
