// stagehand::Engine on the functional simulator: proofs from several threads, the bounded queue,
// cancellation, unload while proofs run, shutdown with proofs queued, a bad witness and an
// injected device fault each failing only their own proof.
//
// Each proof is compared with the CPU reference prover (groth16::prove_on_cpu) given the same
// randomness (the engine's seed plus the proof's id less one, as `stagehand prove --seed` counts its
// witnesses from 0), an oracle independent of the device path.
// Where a test needs proofs to sit in the queue, a gate holds the dispatcher: the callback of a
// first proof runs on the dispatcher's thread and blocks there until the test opens the gate
// (declared before the engine, so that it outlives the callback's last look at it).
#define BOOST_TEST_MODULE engine
#include <boost/test/unit_test.hpp>

#include "engine/engine.hpp"
#include "engine/proof_queue.hpp"

#include "groth16/encoding.hpp"
#include "groth16/json.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "support/multiplier_circuit.hpp"
#include "groth16/setup.hpp"
#include "groth16/witness.hpp"
#include "groth16/zkey.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace stagehand;
using namespace stagehand::engine;
using math::Fr;

namespace {

constexpr std::uint64_t kSeed = 1000;

std::vector<Fr> witness(std::uint64_t x, std::uint64_t y) {
  const Fr fx = Fr::from_uint64(x), fy = Fr::from_uint64(y);
  return {Fr::one(), fx * fy, fx, fy, fx + Fr::from_uint64(3) * fy};
}

std::vector<std::uint8_t> load(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// A key and witnesses on disk for the whole suite.
struct Files {
  fs::path dir = fs::temp_directory_path() / ("stagehand_engine_test_" + std::to_string(::getpid()));
  fs::path zkey = dir / "small.zkey";
  groth16::ProvingKey key;
  Files() {
    fs::create_directories(dir);
    groth16::SetupOptions options;
    options.seed = 42;
    options.thread_count = 1;
    key = groth16::setup_from_r1cs(testing::multiplier_circuit(), options);
    groth16::write_zkey(zkey, key);
  }
  ~Files() { fs::remove_all(dir); }
  std::vector<std::uint8_t> wtns(std::uint64_t x, std::uint64_t y) const {
    const auto path = dir / fmt::format("w_{}_{}_{}.wtns", x, y, std::hash<std::thread::id>{}(std::this_thread::get_id()));
    groth16::write_wtns(path, witness(x, y));
    auto bytes = load(path);
    fs::remove(path);
    return bytes;
  }
  // What the CPU reference makes for proof `id` of witness (x, y): the engine's proof ids count from
  // 1, its seeds (as prove's) from 0.
  std::string expected_proof(std::uint64_t id, std::uint64_t x, std::uint64_t y) const {
    return groth16::proof_json(groth16::prove_on_cpu(key, witness(x, y), groth16::ProofRandomness::from_seed(kSeed + id - 1), 1));
  }
};

const Files& files() {
  static Files instance;
  return instance;
}

EngineConfig config(std::size_t queue_capacity = 64, std::size_t max_batch = 16, int workers = 2) {
  EngineConfig config;
  config.run.backend = BackendKind::simulator;
  config.run.coordinator.workers_per_device = workers;
  config.engine.queue_capacity = queue_capacity;
  config.engine.max_batch = max_batch;
  config.engine.seed = kSeed;
  config.engine.threads = 1;
  // The tests count runs: each ends as soon as its key's queue is empty (the linger's own tests
  // set one).
  config.engine.linger_ms = 0;
  return config;
}

// At most the kernel launches of a run's first proof of the test key on the simulator, and more
// than a proof's launches without the key's set-up: a device lost two launches later is lost
// inside the run's second proof. (If the program's launches change, the test's first checks say
// which way: the first proof fails, or the second does not.)
constexpr std::uint64_t kLaunchesOfTheFirstProof = 12;

// Holds the dispatcher in a proof's callback until opened.
class Gate {
 public:
  ProofCallback callback() {
    return [this](const ProofHandle&) {
      std::unique_lock lock(mutex_);
      entered_ = true;
      changed_.notify_all();
      changed_.wait(lock, [&] { return open_; });
    };
  }
  void wait_entered() {
    std::unique_lock lock(mutex_);
    BOOST_REQUIRE(changed_.wait_for(lock, std::chrono::seconds(60), [&] { return entered_; }));
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool entered_ = false;
  bool open_ = false;
};

// A first proof whose callback holds the dispatcher; returns once it does.
ProofHandle hold_dispatcher(Engine& engine, Gate& gate) {
  auto handle = engine.submit("small", files().wtns(2, 3), WhenFull::refuse, gate.callback());
  gate.wait_entered();
  return handle;
}

void check_done(const ProofHandle& handle, std::uint64_t x, std::uint64_t y) {
  const auto result = handle.wait();
  BOOST_REQUIRE_MESSAGE(result.state == ProofState::done, "proof " << handle.id() << ": " << to_string(result.state) << ": " << result.error);
  BOOST_CHECK_EQUAL(result.proof_json, files().expected_proof(handle.id(), x, y));
  BOOST_CHECK_EQUAL(result.public_json, groth16::public_json(std::vector<Fr>{Fr::from_uint64(x * y), Fr::from_uint64(x)}));
}

template <class Action>
ErrorKind error_kind_of(Action&& action, std::string* message = nullptr) {
  try {
    action();
  } catch (const EngineError& error) {
    if (message != nullptr) *message = error.what();
    return error.kind();
  }
  BOOST_FAIL("no EngineError");
  return ErrorKind::stopped;
}

// Whether `condition` holds within 30 s: what the engine does after a batch's last proof has
// answered (its run's end) shows a little later.
template <class Condition>
bool eventually(Condition condition) {
  for (int i = 0; i < 3000; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Whether every GPU's memory in use, as the engine last sampled it, comes down to 0 within 30 s
// (it samples after each run ends and after it gives a key's device state back, which may be
// just after the last proof's handle has answered).
bool gpu_memory_comes_back(const Engine& engine) {
  return eventually([&] {
    const auto gpus = engine.status().gpus;
    return std::all_of(gpus.begin(), gpus.end(), [](const GpuStatus& gpu) { return gpu.device_used_bytes == 0; });
  });
}

// A key's status by name, and whether it is set up on GPU 0.
KeyStatus key_status(const Engine& engine, const std::string& name) {
  for (const auto& key : engine.status().keys) {
    if (key.name == name) return key;
  }
  BOOST_FAIL("no key " << name);
  return KeyStatus{};
}

bool on_gpu(const KeyStatus& key) { return std::find(key.resident.begin(), key.resident.end(), "gpu0") != key.resident.end(); }

}  // namespace

BOOST_AUTO_TEST_CASE(proofs_from_several_threads_match_the_cpu_reference) {
  Engine engine(config());
  engine.load_key("small", files().zkey);
  constexpr int kThreads = 4, kEach = 3;
  std::vector<std::vector<std::pair<ProofHandle, std::uint64_t>>> handles(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const std::uint64_t x = 10 + static_cast<std::uint64_t>(t * kEach + i);
        handles[static_cast<std::size_t>(t)].emplace_back(engine.submit("small", files().wtns(x, 5), WhenFull::wait), x);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& list : handles) {
    for (const auto& [handle, x] : list) check_done(handle, x, 5);
  }
  const auto status = engine.status();
  BOOST_CHECK_EQUAL(status.done, static_cast<std::uint64_t>(kThreads * kEach));
  BOOST_CHECK_EQUAL(status.failed, 0u);
  BOOST_REQUIRE_EQUAL(status.keys.size(), 1u);
  BOOST_CHECK_EQUAL(status.keys[0].name, "small");
  BOOST_CHECK_EQUAL(status.histogram_counts.back(), static_cast<std::uint64_t>(kThreads * kEach));
  BOOST_CHECK(status_json(status).find("\"done\":12") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_full_queue_refuses_or_waits_and_cancel_takes_a_queued_proof_out) {
  Gate gate;
  Engine engine(config(2, 16));
  engine.load_key("small", files().zkey);
  auto first = hold_dispatcher(engine, gate);
  const auto witness_size = files().wtns(4, 5).size();
  auto second = engine.submit("small", files().wtns(4, 5));
  auto third = engine.submit("small", files().wtns(6, 7));
  // The two queued proofs' witnesses; the first's went when it ended (its callback holds the gate).
  BOOST_CHECK_EQUAL(engine.status().witness_bytes, 2 * witness_size);
  std::string message;
  BOOST_CHECK(error_kind_of([&] { engine.submit("small", files().wtns(1, 1)); }, &message) == ErrorKind::queue_full);
  BOOST_CHECK(message.find("queue_capacity = 2") != std::string::npos);
  // A waiting submitter gets in once a place is free: here, when the third is cancelled.
  std::atomic<bool> accepted{false};
  ProofHandle waited;
  std::thread waiter([&] {
    waited = engine.submit("small", files().wtns(8, 9), WhenFull::wait);
    accepted = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  BOOST_CHECK(!accepted.load());
  BOOST_CHECK(engine.cancel(third.id()));
  waiter.join();
  BOOST_CHECK(accepted.load());
  const auto cancelled = third.wait();
  BOOST_CHECK(cancelled.state == ProofState::cancelled);
  BOOST_CHECK_EQUAL(cancelled.error, "cancelled while queued");
  BOOST_CHECK(!engine.cancel(third.id()));  // it has ended
  BOOST_CHECK_EQUAL(engine.status().witness_bytes, 2 * witness_size);  // the second's and the waiter's
  gate.open();
  check_done(first, 2, 3);
  check_done(second, 4, 5);
  check_done(waited, 8, 9);
  // Ended proofs stay findable, without their witnesses.
  BOOST_CHECK_EQUAL(engine.status().witness_bytes, 0u);
  BOOST_CHECK(status_json(engine.status()).find("\"witness_bytes\":0") != std::string::npos);
  BOOST_CHECK_EQUAL(engine.status().cancelled, 1u);
  BOOST_CHECK(error_kind_of([&] { engine.cancel(999999); }) == ErrorKind::unknown_proof);
}

BOOST_AUTO_TEST_CASE(a_running_proof_is_cancelled_before_its_next_step) {
  // One worker: a run holds two of its proofs at a time (Engine::Impl::run_room) and makes them
  // one after another, so the second has joined the run but not begun when the first one's
  // callback cancels it; the third waits in the queue meanwhile and is made after.
  Gate gate;
  Engine engine(config(64, 16, 1));
  engine.load_key("small", files().zkey);
  auto holder = hold_dispatcher(engine, gate);
  ProofHandle second;
  std::mutex second_mutex;
  // Boost.Test's checks are for the test's thread: the callback notes, the test checks.
  std::atomic<bool> second_was_running{false}, cancel_taken{false};
  auto first = engine.submit("small", files().wtns(3, 3), WhenFull::refuse, [&](const ProofHandle&) {
    std::lock_guard lock(second_mutex);
    second_was_running = second.state() == ProofState::running;
    cancel_taken = engine.cancel(second.id());
  });
  {
    std::lock_guard lock(second_mutex);
    second = engine.submit("small", files().wtns(5, 5));
  }
  auto third = engine.submit("small", files().wtns(4, 4));
  gate.open();
  check_done(holder, 2, 3);
  check_done(first, 3, 3);
  check_done(third, 4, 4);
  const auto result = second.wait();
  BOOST_CHECK(second_was_running.load());
  BOOST_CHECK(cancel_taken.load());
  BOOST_CHECK(result.state == ProofState::cancelled);
  BOOST_CHECK_EQUAL(result.error, "cancelled while running");
}

BOOST_AUTO_TEST_CASE(unload_while_proofs_are_queued_finishes_them_first) {
  Gate other_gate;
  Gate gate;
  Engine engine(config());
  engine.load_key("small", files().zkey);
  engine.load_key("other", files().zkey);
  auto first = hold_dispatcher(engine, gate);
  auto second = engine.submit("small", files().wtns(4, 5));
  auto third = engine.submit("small", files().wtns(6, 7));
  BOOST_CHECK_EQUAL(engine.unload_key("small"), 2u);  // the two queued (the held one has ended: only its callback runs)
  BOOST_CHECK(!engine.has_key("small"));
  std::string message;
  BOOST_CHECK(error_kind_of([&] { engine.submit("small", files().wtns(1, 1)); }, &message) == ErrorKind::unknown_key);
  BOOST_CHECK(message.find("being unloaded") != std::string::npos);
  BOOST_CHECK(error_kind_of([&] { engine.unload_key("small"); }) == ErrorKind::unknown_key);
  gate.open();
  check_done(first, 2, 3);
  check_done(second, 4, 5);
  check_done(third, 6, 7);
  engine.wait_key_gone("small");
  const auto status = engine.status();
  BOOST_REQUIRE_EQUAL(status.keys.size(), 1u);
  BOOST_CHECK_EQUAL(status.keys[0].name, "other");
  // Unloaded while its proofs run: from the callback of the first of a run of two, the second
  // being in the same run, which finishes before the key goes.
  auto holder = engine.submit("other", files().wtns(2, 3), WhenFull::refuse, other_gate.callback());
  other_gate.wait_entered();
  std::atomic<std::size_t> left_when_unloaded{0};
  auto running_first = engine.submit("other", files().wtns(3, 4), WhenFull::refuse, [&](const ProofHandle&) {
    left_when_unloaded = engine.unload_key("other");
  });
  auto running_second = engine.submit("other", files().wtns(5, 6));
  other_gate.open();
  check_done(holder, 2, 3);
  check_done(running_first, 3, 4);
  check_done(running_second, 5, 6);
  engine.wait_key_gone("other");
  BOOST_CHECK_EQUAL(left_when_unloaded.load(), 1u);
  BOOST_CHECK(engine.status().keys.empty());
}

BOOST_AUTO_TEST_CASE(shutdown_fails_each_queued_proof_clearly_or_finishes_them) {
  std::vector<ProofHandle> queued;
  ProofHandle first;
  {
    Gate gate;
    Engine engine(config());
    engine.load_key("small", files().zkey);
    first = hold_dispatcher(engine, gate);
    for (std::uint64_t x = 4; x < 7; ++x) queued.push_back(engine.submit("small", files().wtns(x, 2)));
    std::thread stopper([&] { engine.shutdown(Drain::fail_queued); });
    while (!engine.status().stopping) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    BOOST_CHECK(error_kind_of([&] { engine.submit("small", files().wtns(1, 1)); }) == ErrorKind::stopped);
    gate.open();
    stopper.join();
    BOOST_CHECK_EQUAL(engine.status().failed, 3u);
  }
  check_done(first, 2, 3);
  for (const auto& handle : queued) {
    const auto result = handle.wait();
    BOOST_CHECK(result.state == ProofState::failed);
    BOOST_CHECK_EQUAL(result.error, "the engine shut down before this proof ran");
  }
  // The destructor drains: queued proofs are made.
  std::vector<std::pair<ProofHandle, std::uint64_t>> drained;
  {
    Gate gate;
    Engine engine(config());
    engine.load_key("small", files().zkey);
    first = hold_dispatcher(engine, gate);
    for (std::uint64_t x = 4; x < 7; ++x) drained.emplace_back(engine.submit("small", files().wtns(x, 2)), x);
    gate.open();
  }
  for (const auto& [handle, x] : drained) check_done(handle, x, 2);
}

BOOST_AUTO_TEST_CASE(a_bad_witness_fails_only_itself) {
  Gate gate;
  Engine engine(config());
  engine.load_key("small", files().zkey);
  // Malformed or for another circuit: refused at submit, naming the proof and the problem.
  auto truncated = files().wtns(2, 3);
  truncated.resize(truncated.size() - 5);
  std::string message;
  BOOST_CHECK(error_kind_of([&] { engine.submit("small", truncated); }, &message) == ErrorKind::bad_witness);
  BOOST_CHECK_MESSAGE(message.find("(key small)") != std::string::npos && message.find("section") != std::string::npos, message);
  BOOST_CHECK(error_kind_of([&] { engine.submit("small", {}); }) == ErrorKind::bad_witness);
  // Checked at submit without being converted: a value not below r, a first value other than 1,
  // a witness of another length, each named.
  auto not_reduced = files().wtns(2, 3);
  std::fill(not_reduced.end() - 32, not_reduced.end(), std::uint8_t{0xff});
  const auto last = witness(2, 3).size() - 1;
  BOOST_CHECK(error_kind_of([&] { engine.submit("small", not_reduced); }, &message) == ErrorKind::bad_witness);
  BOOST_CHECK_MESSAGE(message.find(fmt::format("value {} is not below r", last)) != std::string::npos, message);
  auto values = witness(2, 3);
  values[0] = Fr::from_uint64(2);
  BOOST_CHECK(error_kind_of([&] { engine.submit("small", groth16::wtns_bytes(values)); }, &message) == ErrorKind::bad_witness);
  BOOST_CHECK_MESSAGE(message.find("w[0] must be 1") != std::string::npos, message);
  values[0] = Fr::one();
  values.push_back(Fr::one());
  BOOST_CHECK(error_kind_of([&] { engine.submit("small", groth16::wtns_bytes(values)); }, &message) == ErrorKind::bad_witness);
  BOOST_CHECK_MESSAGE(message.find("another circuit") != std::string::npos, message);
  BOOST_CHECK(error_kind_of([&] { engine.submit("nope", files().wtns(2, 3)); }) == ErrorKind::unknown_key);
  // Well formed but not satisfying the circuit (out ≠ x·y): its proof fails the pairing check in
  // the same run as two good ones, which are made.
  auto holder = hold_dispatcher(engine, gate);
  auto good = engine.submit("small", files().wtns(4, 5));
  values = witness(6, 7);
  values[1] = Fr::from_uint64(41);
  const auto bad_path = files().dir / "bad.wtns";
  groth16::write_wtns(bad_path, values);
  auto bad = engine.submit("small", load(bad_path));
  auto also_good = engine.submit("small", files().wtns(8, 9));
  gate.open();
  check_done(holder, 2, 3);
  check_done(good, 4, 5);
  check_done(also_good, 8, 9);
  const auto result = bad.wait();
  BOOST_CHECK(result.state == ProofState::failed);
  BOOST_CHECK_MESSAGE(result.error.find("does not verify") != std::string::npos, result.error);
  BOOST_CHECK_EQUAL(engine.status().failed, 1u);
}

BOOST_AUTO_TEST_CASE(an_injected_device_fault_fails_only_its_proof) {
  auto options = Engine::default_backend_options();
  options.device_faults.fail_kernel_name = "groth16_h_combine";
  options.device_faults.fail_kernel_occurrence = 2;
  Engine engine(config(), options);
  engine.load_key("small", files().zkey);
  check_done(engine.submit("small", files().wtns(2, 3)), 2, 3);
  const auto failed = engine.submit("small", files().wtns(4, 5)).wait();
  BOOST_CHECK(failed.state == ProofState::failed);
  BOOST_CHECK_MESSAGE(failed.error.find("groth16_h_combine") != std::string::npos, failed.error);
  check_done(engine.submit("small", files().wtns(6, 7)), 6, 7);
  const auto status = engine.status();
  BOOST_CHECK_EQUAL(status.done, 2u);
  BOOST_CHECK_EQUAL(status.failed, 1u);
  BOOST_REQUIRE_EQUAL(status.gpus.size(), 1u);
  BOOST_CHECK_EQUAL(status.gpus[0].done, 3u);
}

// Two GPUs, the second lost at its third kernel launch (inside its first proof): that proof is
// proved again on the first GPU, every proof comes out right, and no GPU is left counting a proof
// as running.
BOOST_AUTO_TEST_CASE(a_lost_gpus_proofs_are_made_on_the_other) {
  auto engine_config = config();
  engine_config.run.gpus = 2;
  auto options = Engine::default_backend_options();
  options.device_faults.device = 1;
  options.device_faults.lose_device_at_launch = 3;
  Engine engine(engine_config, options);
  engine.load_key("small", files().zkey);
  std::vector<std::pair<ProofHandle, std::uint64_t>> handles;
  for (std::uint64_t x = 2; x < 8; ++x) handles.emplace_back(engine.submit("small", files().wtns(x, 5), WhenFull::wait), x);
  for (const auto& [handle, x] : handles) check_done(handle, x, 5);
  const auto status = engine.status();
  BOOST_CHECK_EQUAL(status.done, 6u);
  BOOST_CHECK_EQUAL(status.failed, 0u);
  BOOST_REQUIRE_EQUAL(status.gpus.size(), 2u);
  BOOST_CHECK_EQUAL(status.gpus[0].done + status.gpus[1].done, 6u);
  BOOST_CHECK(status.gpus[0].done > status.gpus[1].done);
  BOOST_CHECK(!status.gpus[0].lost);
  BOOST_CHECK(status.gpus[1].lost);
  for (const auto& gpu : status.gpus) BOOST_CHECK_EQUAL(gpu.running, 0);
}

// The only GPU, lost inside the second proof of a run (the first one's callback holds the run
// while a proof of the key that will join it and another key's proof queue up): the proof that
// joined fails saying the GPU is lost; the other key's proof, queued behind, fails at once when
// its turn comes, and a new proof is refused (no_gpu: a service answers 503), instead of either
// being tried on the dead device. Nothing hangs and nothing is left running, queued or held.
BOOST_AUTO_TEST_CASE(the_only_gpu_lost_fails_its_proofs_and_the_engine_refuses_more) {
  auto options = Engine::default_backend_options();
  options.device_faults.lose_device_at_launch = kLaunchesOfTheFirstProof + 2;
  Engine engine(config(), options);
  engine.load_key("small", files().zkey);
  engine.load_key("other", files().zkey);
  Gate gate;
  const auto first = hold_dispatcher(engine, gate);
  const auto joining = engine.submit("small", files().wtns(4, 5));
  const auto queued = engine.submit("other", files().wtns(8, 9));
  gate.open();
  check_done(first, 2, 3);
  const auto joined = joining.wait();
  BOOST_CHECK(joined.state == ProofState::failed);
  BOOST_CHECK_MESSAGE(joined.error.find("lost") != std::string::npos, joined.error);
  const auto behind = queued.wait();
  BOOST_CHECK(behind.state == ProofState::failed);
  BOOST_CHECK_MESSAGE(behind.error.find("only GPU is lost") != std::string::npos, behind.error);
  BOOST_REQUIRE(eventually([&] { return engine.status().running == 0; }));
  BOOST_REQUIRE_EQUAL(engine.status().gpus.size(), 1u);
  BOOST_CHECK(engine.status().gpus[0].lost);
  std::string refusal;
  BOOST_CHECK(error_kind_of([&] { engine.submit("small", files().wtns(6, 7)); }, &refusal) == ErrorKind::no_gpu);
  BOOST_CHECK_MESSAGE(refusal.find("only GPU is lost") != std::string::npos, refusal);
  const auto status = engine.status();
  BOOST_CHECK_EQUAL(status.done, 1u);
  BOOST_CHECK_EQUAL(status.failed, 2u);
  BOOST_CHECK_EQUAL(status.batches, 1u);  // the other key's proof never ran
  BOOST_CHECK_EQUAL(status.queued, 0u);
  BOOST_CHECK_EQUAL(status.witness_bytes, 0u);
  BOOST_CHECK_EQUAL(status.gpus[0].running, 0);
}

BOOST_AUTO_TEST_CASE(the_configuration_tables_are_checked) {
  // The documented example reads as it says (the tests run from the project's root).
  const auto example = load_engine_config("config/serve.toml");
  BOOST_CHECK_EQUAL(example.engine.queue_capacity, 64u);
  BOOST_CHECK_EQUAL(example.engine.promote_after_s, EngineSettings{}.promote_after_s);
  BOOST_CHECK_EQUAL(example.engine.request_id_retention_s, EngineSettings{}.request_id_retention_s);
  BOOST_CHECK_EQUAL(example.serve.max_connections, 512);
  const auto good = parse_engine_config("[engine]\nqueue_capacity = 3\nmax_batch = 2\n[serve]\nmax_request_mib = 1\nmax_connections = 5\n",
                                        "t.toml");
  BOOST_CHECK_EQUAL(good.engine.queue_capacity, 3u);
  BOOST_CHECK_EQUAL(good.engine.max_batch, 2u);
  BOOST_CHECK_EQUAL(good.serve.max_request_bytes, std::size_t{1} << 20);
  BOOST_CHECK_EQUAL(good.serve.max_connections, 5);
  auto message_of = [](const std::string& text) {
    try {
      parse_engine_config(text, "t.toml");
    } catch (const std::exception& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  BOOST_CHECK_MESSAGE(message_of("[engine]\nqueue_capacity = 0\n").find("t.toml:2: key 'engine.queue_capacity'") != std::string::npos,
                      message_of("[engine]\nqueue_capacity = 0\n"));
  BOOST_CHECK_MESSAGE(message_of("[serve]\nmax_conections = 5\n").find("serve.max_conections") != std::string::npos,
                      message_of("[serve]\nmax_conections = 5\n"));
  const auto promote = message_of("[engine]\npromote_after_s = 0\n");
  BOOST_CHECK_MESSAGE(promote.find("t.toml:2: key 'engine.promote_after_s'") != std::string::npos, promote);
  const auto timing = parse_engine_config("[engine]\npromote_after_s = 0.5\nrequest_id_retention_s = 30\nlinger_ms = 0\n", "t.toml");
  BOOST_CHECK_EQUAL(timing.engine.promote_after_s, 0.5);
  BOOST_CHECK_EQUAL(timing.engine.request_id_retention_s, 30.0);
  BOOST_CHECK_EQUAL(timing.engine.linger_ms, 0.0);
  BOOST_CHECK_EQUAL(example.engine.linger_ms, EngineSettings{}.linger_ms);
  BOOST_CHECK_GT(EngineSettings{}.linger_ms, 0.0);
  const auto linger = message_of("[engine]\nlinger_ms = -1\n");
  BOOST_CHECK_MESSAGE(linger.find("t.toml:2: key 'engine.linger_ms'") != std::string::npos, linger);
  // The proofs' layout, as `stagehand prove` takes it; no precomputed sets, no [workload].
  BOOST_CHECK(!example.engine.abc_step.has_value());
  BOOST_CHECK(!example.engine.key_sets.has_value());
  const auto layout = parse_engine_config("[engine]\nabc = \"host\"\nkey_sets = \"streamed\"\nstream_buffer_mib = 2\n", "t.toml");
  BOOST_CHECK(layout.engine.abc_step == std::optional{groth16::AbcStep::host});
  BOOST_CHECK(layout.engine.key_sets == std::optional{groth16::SetPlacement::streamed});
  BOOST_CHECK_EQUAL(layout.engine.stream_buffer_bytes, 2 * kMiB);
  const auto precomputed = parse_engine_config("[engine]\nkey_sets = \"precomputed\"\nprecompute_bases = true\n", "t.toml");
  BOOST_CHECK(precomputed.engine.key_sets == std::optional{groth16::SetPlacement::precomputed});
  BOOST_CHECK(precomputed.engine.precompute_bases);
  BOOST_CHECK(!example.engine.precompute_bases);
  const auto bad_sets = message_of("[engine]\nkey_sets = \"everywhere\"\n");
  BOOST_CHECK_MESSAGE(bad_sets.find("t.toml:2: key 'engine.key_sets'") != std::string::npos, bad_sets);
  const auto workload = message_of("[gpus]\ncount = 1\n[workload]\nproofs = 2\n");
  BOOST_CHECK_MESSAGE(workload.find("t.toml:3: key 'workload'") != std::string::npos && workload.find("[engine]") != std::string::npos,
                      workload);
}

// The layout asked for in [engine] is the one the proofs take: a/b/c on the host and every set
// streamed from pinned memory, fetched ahead, or precomputed still give the CPU reference's proofs.
BOOST_AUTO_TEST_CASE(the_configured_layout_proves_the_same_proofs) {
  for (const auto sets : {groth16::SetPlacement::streamed, groth16::SetPlacement::fetched_ahead, groth16::SetPlacement::precomputed}) {
    BOOST_TEST_CONTEXT(groth16::to_string(sets)) {
      auto engine_config = config();
      engine_config.engine.abc_step = groth16::AbcStep::host;
      engine_config.engine.key_sets = sets;
      engine_config.engine.stream_buffer_bytes = kMiB;
      Engine engine(engine_config);
      engine.load_key("small", files().zkey);
      const auto status = engine.status();
      BOOST_REQUIRE_EQUAL(status.keys.size(), 1u);
      const auto& layout = status.keys[0].layout;
      BOOST_CHECK_MESSAGE(layout.starts_with("a/b/c on the host;") && layout.find(groth16::to_string(sets)) != std::string::npos &&
                              layout.find(" resident") == std::string::npos,
                          layout);
      std::vector<std::pair<ProofHandle, std::uint64_t>> handles;
      for (std::uint64_t x = 2; x < 5; ++x) handles.emplace_back(engine.submit("small", files().wtns(x, 7), WhenFull::wait), x);
      for (const auto& [handle, x] : handles) check_done(handle, x, 7);
    }
  }
}

// Proofs of the run's key that arrive while it goes on join it: here a proof submitted from the
// first one's callback (on the run's thread, as its run still goes on) is made by the same run.
// Another key's proof queued ahead of it ends the run instead: that key's turn comes first.
BOOST_AUTO_TEST_CASE(a_proof_that_arrives_while_its_key_runs_joins_the_run_unless_another_key_waits) {
  Engine engine(config());
  engine.load_key("small", files().zkey);
  engine.load_key("other", files().zkey);
  const auto joining_wtns = files().wtns(4, 5);
  std::mutex mutex;
  std::vector<ProofHandle> submitted;  // from the callbacks
  auto submitting = [&](std::vector<std::pair<std::string, std::vector<std::uint8_t>>> proofs) {
    return [&, proofs](const ProofHandle&) {
      std::lock_guard lock(mutex);
      for (const auto& [key, wtns] : proofs) submitted.push_back(engine.submit(key, wtns));
    };
  };
  auto count_submitted = [&] {
    std::lock_guard lock(mutex);
    return submitted.size();
  };
  const auto first = engine.submit("small", files().wtns(2, 3), WhenFull::refuse, submitting({{"small", joining_wtns}}));
  check_done(first, 2, 3);
  BOOST_REQUIRE(eventually([&] { return count_submitted() == 1; }));
  check_done(submitted[0], 4, 5);
  BOOST_CHECK_EQUAL(engine.status().batches, 1u);  // one run made both

  // The first run may still be open (its proofs have ended, its end is on the way): a proof of
  // the key now could still join it. The other key's proof closes it: the second run.
  check_done(engine.submit("other", files().wtns(12, 13)), 12, 13);
  // From this callback another key's proof is queued before this key's: this key's does not
  // overtake it into the running run; three runs, the other key's second.
  const auto third = engine.submit("small", files().wtns(6, 7), WhenFull::refuse,
                                   submitting({{"other", files().wtns(8, 9)}, {"small", files().wtns(10, 11)}}));
  check_done(third, 6, 7);
  BOOST_REQUIRE(eventually([&] { return count_submitted() == 3; }));
  check_done(submitted[1], 8, 9);
  check_done(submitted[2], 10, 11);
  BOOST_CHECK_EQUAL(engine.status().batches, 5u);
  BOOST_CHECK_EQUAL(engine.status().done, 6u);
}

// A run whose proofs have all ended waits [engine] linger_ms for another proof of its key: proofs
// submitted one at a time, each once the one before has answered, are made by one run. The linger
// is far longer than the test, so a second run would mean the first did not wait; the engine's
// shutdown at the end ends the wait at once.
BOOST_AUTO_TEST_CASE(proofs_submitted_one_by_one_within_the_linger_take_one_run) {
  auto lingering = config();
  lingering.engine.linger_ms = 60'000;
  Engine engine(lingering);
  engine.load_key("small", files().zkey);
  for (std::uint64_t x = 2; x < 6; ++x) check_done(engine.submit("small", files().wtns(x, 3)), x, 3);
  BOOST_CHECK_EQUAL(engine.status().batches, 1u);
  BOOST_CHECK_EQUAL(engine.status().done, 4u);
  BOOST_CHECK_EQUAL(key_status(engine, "small").device_set_ups, 1u);
}

// Without a linger each of those proofs takes a run of its own: the next is submitted once the
// run before has ended (it has given its staging pool back), so it cannot join it.
BOOST_AUTO_TEST_CASE(without_a_linger_each_proof_submitted_after_a_run_ends_takes_its_own_run) {
  Engine engine(config());
  engine.load_key("small", files().zkey);
  for (std::uint64_t x = 2; x < 5; ++x) {
    check_done(engine.submit("small", files().wtns(x, 3)), x, 3);
    BOOST_REQUIRE(eventually([&] { return engine.status().gpus.at(0).pinned_host_kept_bytes > 0; }));
  }
  BOOST_CHECK_EQUAL(engine.status().batches, 3u);
  // The key stayed set up between the runs.
  BOOST_CHECK_EQUAL(key_status(engine, "small").device_set_ups, 1u);
}

// A proof of another key ends a run's linger at once instead of waiting it out: with a linger of
// a minute it is made within half of one, by a second run, and the lingering key's next proof
// then takes a third.
BOOST_AUTO_TEST_CASE(a_proof_of_another_key_ends_the_linger) {
  auto lingering = config();
  lingering.engine.linger_ms = 60'000;
  Engine engine(lingering);
  engine.load_key("small", files().zkey);
  engine.load_key("other", files().zkey);
  check_done(engine.submit("small", files().wtns(2, 3)), 2, 3);
  const auto other = engine.submit("other", files().wtns(4, 5));
  const auto result = other.wait_for(std::chrono::seconds(30));
  BOOST_REQUIRE_MESSAGE(result.has_value(), "the other key's proof waited for the linger");
  check_done(other, 4, 5);
  BOOST_CHECK_EQUAL(engine.status().batches, 2u);
  check_done(engine.submit("small", files().wtns(6, 7)), 6, 7);
  BOOST_CHECK_EQUAL(engine.status().batches, 3u);
}

// A key stays set up on the GPU between batches: three batches of one proof each set it up once.
// A batch of another key gives the first key's device state back (one key set up at a time), so
// the first key's next batch sets it up again; unloading both leaves nothing on the device. Each
// proof is still the CPU reference's.
// Two keys that fit side by side both stay set up while batches of each alternate.
BOOST_AUTO_TEST_CASE(keys_stay_set_up_between_batches_beside_each_other) {
  Engine engine(config(64, 1));
  engine.load_key("small", files().zkey);
  engine.load_key("other", files().zkey);
  BOOST_CHECK_EQUAL(key_status(engine, "small").device_set_ups, 0u);
  BOOST_CHECK(!on_gpu(key_status(engine, "small")));
  BOOST_CHECK_EQUAL(key_status(engine, "small").device_bytes, 0u);
  // Batches of one proof each, one after another. Each run makes its workers' result buffers anew
  // (pinned), but the witness's staging buffer only in the first: the pool is kept between
  // batches (before, the next dispatch freed what the run had kept). The first also sets the key
  // up, through two pinned upload buffers of its own (freed at its end).
  std::vector<std::uint64_t> allocations;
  for (std::uint64_t x = 2; x < 5; ++x) {
    check_done(engine.submit("small", files().wtns(x, 3)), x, 3);
    // The run has ended once it has kept its pool (it gives it to the next at set-up).
    BOOST_REQUIRE(eventually([&] { return engine.status().gpus.at(0).pinned_host_kept_bytes > 0; }));
    allocations.push_back(engine.status().gpus.at(0).pinned_host_allocations);
  }
  const auto per_later_batch = allocations[1] - allocations[0];
  BOOST_CHECK_EQUAL(allocations[2] - allocations[1], per_later_batch);
  BOOST_CHECK_EQUAL(allocations[0], per_later_batch + 1 + 2);
  BOOST_CHECK_EQUAL(engine.status().batches, 3u);
  const auto small = key_status(engine, "small");
  BOOST_CHECK_EQUAL(small.device_set_ups, 1u);
  BOOST_CHECK(on_gpu(small));
  BOOST_CHECK_GT(small.device_bytes, 0u);
  BOOST_CHECK_GT(small.proof_bytes, small.device_bytes);
  const auto used_by_one = engine.status().gpus.at(0).device_used_bytes;
  BOOST_CHECK_GT(used_by_one, 0u);

  for (std::uint64_t x = 5; x < 7; ++x) {
    check_done(engine.submit("other", files().wtns(x, 3)), x, 3);
    check_done(engine.submit("small", files().wtns(x, 4)), x, 4);
  }
  BOOST_CHECK(on_gpu(key_status(engine, "small")));
  BOOST_CHECK(on_gpu(key_status(engine, "other")));
  BOOST_CHECK_EQUAL(key_status(engine, "small").device_set_ups, 1u);
  BOOST_CHECK_EQUAL(key_status(engine, "other").device_set_ups, 1u);
  BOOST_CHECK_GT(engine.status().gpus.at(0).device_used_bytes, used_by_one);
  // The pinned staging pool stays for the next batch too (handed over at the run's end, after its
  // last proof has answered), and goes with the keys.
  BOOST_CHECK(eventually([&] { return engine.status().gpus.at(0).pinned_host_kept_bytes > 0; }));

  BOOST_CHECK_EQUAL(engine.unload_key("small"), 0u);
  engine.wait_key_gone("small");
  BOOST_CHECK(on_gpu(key_status(engine, "other")));
  BOOST_CHECK_EQUAL(engine.unload_key("other"), 0u);
  engine.wait_key_gone("other");
  BOOST_CHECK(engine.status().keys.empty());
  BOOST_CHECK_MESSAGE(gpu_memory_comes_back(engine), engine.status().gpus.at(0).device_used_bytes << " bytes left on the GPU");
  BOOST_CHECK_EQUAL(engine.status().gpus.at(0).pinned_host_kept_bytes, 0u);
}

// Two GPUs: each keeps both keys set up (one set-up of each key per GPU), whichever GPU proves.
BOOST_AUTO_TEST_CASE(two_gpus_keep_both_keys_set_up) {
  auto engine_config = config(64, 1);
  engine_config.run.gpus = 2;
  Engine engine(engine_config);
  engine.load_key("small", files().zkey);
  engine.load_key("other", files().zkey);
  for (std::uint64_t x = 2; x < 6; ++x) {
    check_done(engine.submit("small", files().wtns(x, 3)), x, 3);
    check_done(engine.submit("other", files().wtns(x, 5)), x, 5);
  }
  const std::vector<std::string> both{"host", "gpu0", "gpu1"};
  for (const auto* name : {"small", "other"}) {
    const auto key = key_status(engine, name);
    BOOST_CHECK_EQUAL(key.device_set_ups, 2u);
    BOOST_CHECK_MESSAGE(key.resident == both, name << ": " << fmt::format("{}", fmt::join(key.resident, ", ")));
  }
  BOOST_CHECK_EQUAL(engine.unload_key("small"), 0u);
  engine.wait_key_gone("small");
  BOOST_CHECK_EQUAL(engine.unload_key("other"), 0u);
  engine.wait_key_gone("other");
  BOOST_CHECK_MESSAGE(gpu_memory_comes_back(engine), engine.status().gpus.at(0).device_used_bytes << " bytes left on GPU 0");
}

// Two GPUs with one worker each, proofs submitted together: both GPUs prove, each keeps a pinned
// staging pool of its own between runs, and unloading the key frees both.
BOOST_AUTO_TEST_CASE(each_gpu_keeps_its_own_staging_pool) {
  auto engine_config = config(64, 4, 1);
  engine_config.run.gpus = 2;
  Engine engine(engine_config);
  engine.load_key("small", files().zkey);
  for (std::uint64_t round = 0; round < 2; ++round) {
    std::vector<ProofHandle> handles;
    for (std::uint64_t x = 2; x < 6; ++x) handles.push_back(engine.submit("small", files().wtns(x, 3 + round)));
    for (std::size_t i = 0; i < handles.size(); ++i) check_done(handles[i], 2 + i, 3 + round);
  }
  const auto gpus = engine.status().gpus;
  BOOST_REQUIRE_EQUAL(gpus.size(), 2u);
  BOOST_CHECK_GT(gpus[0].done, 0u);
  BOOST_CHECK_GT(gpus[1].done, 0u);
  const auto kept_on_both = [&] {
    const auto now = engine.status().gpus;
    return now.at(0).pinned_host_kept_bytes > 0 && now.at(1).pinned_host_kept_bytes > 0;
  };
  BOOST_CHECK(eventually(kept_on_both));
  BOOST_CHECK_EQUAL(engine.unload_key("small"), 0u);
  engine.wait_key_gone("small");
  for (const auto& gpu : engine.status().gpus) BOOST_CHECK_EQUAL(gpu.pinned_host_kept_bytes, 0u);
}

// On a card with room for one key's set-up and proof but not for another key's set-up beside
// them, a batch of one key gives the other's back first.
BOOST_AUTO_TEST_CASE(a_key_that_does_not_fit_beside_another_evicts_it) {
  // The layout fixed, so that the cap cannot change it (it would plan less on the device).
  auto engine_config = config(64, 1);
  engine_config.engine.abc_step = groth16::AbcStep::device;
  engine_config.engine.key_sets = groth16::SetPlacement::resident;
  Bytes device_bytes = 0, proof_bytes = 0;
  {
    Engine whole_card(engine_config);
    whole_card.load_key("small", files().zkey);
    check_done(whole_card.submit("small", files().wtns(2, 3)), 2, 3);
    device_bytes = key_status(whole_card, "small").device_bytes;
    proof_bytes = key_status(whole_card, "small").proof_bytes;
  }
  BOOST_REQUIRE_GT(device_bytes, 0u);
  engine_config.run.vram_cap_bytes = engine_config.run.coordinator.safety_margin_bytes + proof_bytes + device_bytes / 2;
  Engine engine(engine_config);
  engine.load_key("small", files().zkey);
  engine.load_key("other", files().zkey);
  check_done(engine.submit("small", files().wtns(2, 3)), 2, 3);
  BOOST_CHECK(on_gpu(key_status(engine, "small")));
  check_done(engine.submit("other", files().wtns(5, 3)), 5, 3);
  BOOST_CHECK(!on_gpu(key_status(engine, "small")));
  BOOST_CHECK_EQUAL(key_status(engine, "small").device_bytes, 0u);
  BOOST_CHECK(on_gpu(key_status(engine, "other")));
  check_done(engine.submit("small", files().wtns(6, 3)), 6, 3);
  BOOST_CHECK_EQUAL(key_status(engine, "small").device_set_ups, 2u);
  BOOST_CHECK_EQUAL(key_status(engine, "other").device_set_ups, 1u);
  BOOST_CHECK(!on_gpu(key_status(engine, "other")));
}

// [engine] trace_dir: each batch writes its trace and picture, the newest trace_runs kept.
BOOST_AUTO_TEST_CASE(each_batch_writes_its_trace_the_newest_kept) {
  const auto dir = files().dir / "traces";
  std::filesystem::remove_all(dir);
  auto engine_config = config(64, 1);
  engine_config.engine.trace_dir = dir;
  engine_config.engine.trace_runs = 2;
  Engine engine(engine_config);
  engine.load_key("small", files().zkey);
  for (std::uint64_t x = 2; x < 5; ++x) check_done(engine.submit("small", files().wtns(x, 3)), x, 3);
  // The trace is written after the batch's proofs are answered, the oldest removed after that.
  const auto third = dir / "run-000003.trace.json";
  BOOST_CHECK(eventually([&] { return std::filesystem::exists(dir / "run-000003.svg") && !std::filesystem::exists(dir / "run-000001.svg"); }));
  BOOST_REQUIRE(std::filesystem::exists(third));
  BOOST_CHECK(std::filesystem::exists(dir / "run-000002.trace.json"));
  BOOST_CHECK(!std::filesystem::exists(dir / "run-000001.trace.json"));
  BOOST_CHECK(!std::filesystem::exists(dir / "run-000001.svg"));
  const auto json = nlohmann::json::parse(std::ifstream(third));
  BOOST_REQUIRE(json.contains("traceEvents"));
  BOOST_CHECK_GT(json["traceEvents"].size(), 10u);
  const auto text = json.dump();
  BOOST_CHECK_MESSAGE(text.find("prepare") != std::string::npos, "no prepare span in " << third);
  const auto parsed = parse_engine_config("[engine]\ntrace_dir = \"t\"\ntrace_runs = 3\n", "t.toml");
  BOOST_CHECK(parsed.engine.trace_dir == "t");
  BOOST_CHECK_EQUAL(parsed.engine.trace_runs, 3u);
  std::string message;
  try {
    parse_engine_config("[engine]\ntrace_dir = \"\"\n", "t.toml");
  } catch (const std::exception& error) {
    message = error.what();
  }
  BOOST_CHECK_MESSAGE(message.find("t.toml") != std::string::npos && message.find("trace_dir") != std::string::npos, message);
}

// keep_key_on_device = false: each batch sets the key up and frees it at its end.
BOOST_AUTO_TEST_CASE(without_keep_key_on_device_each_batch_frees_the_key) {
  auto engine_config = config(64, 1);
  engine_config.engine.keep_key_on_device = false;
  Engine engine(engine_config);
  engine.load_key("small", files().zkey);
  for (std::uint64_t x = 2; x < 4; ++x) check_done(engine.submit("small", files().wtns(x, 3)), x, 3);
  const auto status = engine.status();
  BOOST_REQUIRE_EQUAL(status.keys.size(), 1u);
  BOOST_CHECK_EQUAL(status.keys[0].device_set_ups, 0u);
  BOOST_CHECK(status.keys[0].resident == std::vector<std::string>{"host"});
  BOOST_CHECK_EQUAL(status.gpus.at(0).pinned_host_kept_bytes, 0u);
  BOOST_CHECK_MESSAGE(gpu_memory_comes_back(engine), engine.status().gpus.at(0).device_used_bytes << " bytes left on the GPU");
  BOOST_CHECK(!parse_engine_config("[engine]\nkeep_key_on_device = false\n", "t.toml").engine.keep_key_on_device);
}

// ---- The queue's order: priority classes, promotion with age, batches, deadlines ----

namespace {

using QueueClock = std::chrono::steady_clock;
constexpr auto kOneSecond = std::chrono::seconds(1);

QueuedProof queued(const std::string& key, Priority priority, QueueClock::time_point at,
                   std::optional<QueueClock::time_point> deadline = std::nullopt) {
  return QueuedProof{nullptr, key, priority, at, deadline};
}

// The keys of the queue's proofs in the order it gives them out at `now`.
std::vector<std::string> order_at(ProofQueue queue, QueueClock::time_point now) {
  std::vector<std::string> keys;
  while (const auto* next = queue.front(now)) {
    const std::string key = next->key;
    keys.push_back(key);
    BOOST_REQUIRE_EQUAL(queue.take_leading(key, 1, now).size(), 1u);
  }
  return keys;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_queue_orders_by_class_then_arrival_and_promotes_with_age) {
  const auto t0 = QueueClock::time_point{} + std::chrono::hours(1);
  ProofQueue queue(kOneSecond);
  queue.push(queued("low", Priority::low, t0));
  queue.push(queued("normal1", Priority::normal, t0 + kOneSecond / 10));
  queue.push(queued("high", Priority::high, t0 + kOneSecond / 5));
  queue.push(queued("critical", Priority::critical, t0 + kOneSecond / 4));
  queue.push(queued("normal2", Priority::normal, t0 + kOneSecond / 2));
  BOOST_CHECK_EQUAL(queue.size(), 5u);
  BOOST_CHECK_EQUAL(queue.size(Priority::normal), 2u);
  // Before any promotion: class, then arrival, across keys.
  const std::vector<std::string> by_class{"critical", "high", "normal1", "normal2", "low"};
  BOOST_CHECK(order_at(queue, t0 + kOneSecond / 2) == by_class);

  // A low proof behind a stream of later normal ones: each promote_after raises every waiting
  // proof a class, so the later normal ones stay ahead until the low one is critical too, three
  // promote_after after its arrival; from then on it is ahead of every later arrival.
  ProofQueue stream(kOneSecond);
  stream.push(queued("low", Priority::low, t0));
  for (int i = 1; i <= 5; ++i) stream.push(queued(fmt::format("normal{}", i), Priority::normal, t0 + i * kOneSecond / 10));
  const auto low_critical = t0 + 3 * kOneSecond;
  BOOST_CHECK(stream.effective(*stream.front(t0), t0) == Priority::normal);
  BOOST_CHECK_EQUAL(order_at(stream, low_critical - std::chrono::nanoseconds(1)).back(), "low");
  BOOST_CHECK_EQUAL(order_at(stream, low_critical).front(), "low");
  BOOST_CHECK(stream.effective(queued("x", Priority::low, t0), low_critical) == Priority::critical);
  BOOST_CHECK(stream.effective(queued("x", Priority::low, t0), low_critical - std::chrono::nanoseconds(1)) == Priority::high);
  // A proof submitted critical stays so; a promoted one goes no higher.
  BOOST_CHECK(stream.effective(queued("x", Priority::critical, t0), t0 + 100 * kOneSecond) == Priority::critical);
}

BOOST_AUTO_TEST_CASE(a_batch_takes_its_keys_proofs_of_the_highest_class_and_joins_take_the_front_only) {
  const auto t0 = QueueClock::time_point{} + std::chrono::hours(1);
  const auto now = t0 + kOneSecond;
  ProofQueue queue(std::chrono::hours(1));
  queue.push(queued("j", Priority::normal, t0));
  queue.push(queued("k", Priority::normal, t0 + kOneSecond / 10));
  queue.push(queued("k", Priority::low, t0 + kOneSecond / 5));
  queue.push(queued("k", Priority::normal, t0 + kOneSecond / 4));
  // j's proof is the front: no proof of k joins a running run of k ahead of it.
  BOOST_CHECK(queue.take_leading("k", 10, now).empty());
  // A new run of k takes k's normal proofs (as high as j's), best first, not its low one.
  const auto batch = queue.take_batch("k", 10, now);
  BOOST_REQUIRE_EQUAL(batch.size(), 2u);
  BOOST_CHECK(batch[0].priority == Priority::normal && batch[1].priority == Priority::normal);
  BOOST_CHECK(batch[0].arrival < batch[1].arrival);
  BOOST_CHECK_EQUAL(queue.size(), 2u);
  // Once j's proof is gone, k's low one leads and joins.
  BOOST_CHECK_EQUAL(queue.take_leading("j", 10, now).size(), 1u);
  BOOST_CHECK_EQUAL(queue.take_leading("k", 10, now).size(), 1u);
  BOOST_CHECK(queue.empty());

  // Deadlines: the earliest is told; those at or before `now` are taken out, the rest stay.
  queue.push(queued("a", Priority::normal, t0, t0 + 2 * kOneSecond));
  queue.push(queued("b", Priority::critical, t0, t0 + kOneSecond));
  queue.push(queued("c", Priority::low, t0));
  BOOST_CHECK(queue.earliest_deadline() == std::optional{t0 + kOneSecond});
  BOOST_CHECK(queue.take_expired(t0 + kOneSecond - std::chrono::nanoseconds(1)).empty());
  const auto expired = queue.take_expired(t0 + kOneSecond);
  BOOST_REQUIRE_EQUAL(expired.size(), 1u);
  BOOST_CHECK_EQUAL(expired[0].key, "b");
  BOOST_CHECK(queue.earliest_deadline() == std::optional{t0 + 2 * kOneSecond});
  BOOST_CHECK_EQUAL(queue.size(), 2u);
  const auto all = queue.take_all();
  BOOST_REQUIRE_EQUAL(all.size(), 2u);
  BOOST_CHECK_EQUAL(all[0].key, "a");
  BOOST_CHECK(queue.empty() && !queue.earliest_deadline());
}

// The engine's order: a critical proof submitted while 50 normal proofs of another key are queued
// (from the callback of the first of them to end, on the run's thread, so that none joins the run
// meanwhile) ends before every one of them that was still queued then; only those already in the
// running run may end before it.
BOOST_AUTO_TEST_CASE(a_critical_proof_overtakes_50_queued_normal_proofs_of_another_key) {
  Gate gate;
  Engine engine(config(64, 256));
  engine.load_key("small", files().zkey);
  engine.load_key("other", files().zkey);
  std::mutex mutex;
  std::vector<std::uint64_t> ended;  // proof ids in the order they ended
  auto note_end = [&](const ProofHandle& handle) {
    std::lock_guard lock(mutex);
    ended.push_back(handle.id());
  };
  const auto holder = hold_dispatcher(engine, gate);
  std::vector<ProofHandle> normals;
  ProofHandle critical;
  std::vector<std::uint64_t> queued_at_critical;
  std::atomic<bool> first_ended{false};
  std::promise<void> critical_submitted;
  SubmitOptions normal;
  normal.on_done = [&](const ProofHandle& handle) {
    if (!first_ended.exchange(true)) {
      SubmitOptions options;
      options.priority = Priority::critical;
      options.on_done = note_end;
      critical = engine.submit("other", files().wtns(9, 9), options);
      for (const auto& queued : normals) {
        if (queued.state() == ProofState::queued) queued_at_critical.push_back(queued.id());
      }
      critical_submitted.set_value();
    }
    note_end(handle);
  };
  // Submitted while the gate holds the run: no callback of theirs runs before they are all in.
  for (std::uint64_t x = 10; x < 60; ++x) normals.push_back(engine.submit("small", files().wtns(x, 3), normal));
  gate.open();
  check_done(holder, 2, 3);
  critical_submitted.get_future().wait();
  check_done(critical, 9, 9);
  for (std::size_t i = 0; i < normals.size(); ++i) check_done(normals[i], 10 + i, 3);
  BOOST_CHECK(critical.priority() == Priority::critical);
  // The run held run_room (two a worker) proofs at most: the rest of the 50 were queued.
  BOOST_CHECK_GE(queued_at_critical.size(), 50u - 4u);
  std::lock_guard lock(mutex);
  const auto position = [&](std::uint64_t id) { return std::find(ended.begin(), ended.end(), id) - ended.begin(); };
  for (const auto id : queued_at_critical) {
    BOOST_CHECK_MESSAGE(position(critical.id()) < position(id), "proof " << id << " ended before the critical proof");
  }
}

// A low proof behind an endless stream of normal proofs of another key (each one's end submits
// the next, eight in flight: more than a run holds, so some are always queued): its class rises
// every promote_after_s, and once critical it goes before every later proof, so it ends while
// the stream still runs. Without promotion it would wait for the stream's end (kStreamCap).
BOOST_AUTO_TEST_CASE(a_low_proof_is_not_starved_by_a_stream_of_normal_proofs) {
  constexpr std::size_t kStreamCap = 2000;
  auto engine_config = config(64, 10'000);
  engine_config.engine.promote_after_s = 0.01;
  Engine engine(engine_config);
  engine.load_key("small", files().zkey);
  engine.load_key("other", files().zkey);
  const auto stream_wtns = files().wtns(4, 4);
  std::mutex mutex;
  std::vector<ProofHandle> stream;
  std::atomic<bool> low_ended{false};
  std::atomic<std::size_t> stream_when_low_ended{0};
  std::function<void(const ProofHandle&)> next = [&](const ProofHandle&) {
    std::lock_guard lock(mutex);
    if (low_ended.load() || stream.size() >= kStreamCap) return;
    SubmitOptions options;
    options.on_done = next;
    stream.push_back(engine.submit("small", stream_wtns, options));
  };
  Gate gate;
  const auto holder = hold_dispatcher(engine, gate);
  SubmitOptions low_options;
  low_options.priority = Priority::low;
  low_options.on_done = [&](const ProofHandle&) {
    std::lock_guard lock(mutex);
    stream_when_low_ended = stream.size();
    low_ended = true;
  };
  const auto low = engine.submit("other", files().wtns(5, 6), low_options);
  for (int i = 0; i < 8; ++i) next(holder);
  gate.open();
  check_done(low, 5, 6);
  BOOST_CHECK(low.priority() == Priority::low);
  engine.shutdown(Drain::finish);  // every callback has run once it returns
  std::lock_guard lock(mutex);
  BOOST_CHECK_MESSAGE(low_ended.load() && stream_when_low_ended.load() < kStreamCap, "the low proof waited for the stream's end");
  for (const auto& handle : stream) check_done(handle, 4, 4);
}

// A request id names one proof: submitted again while it is queued or after it has ended (and
// from several threads at once), the same proof comes back, with the same result, and each
// submit's callback runs once; for another key the id is refused. With no retention an ended
// proof's id is forgotten at once.
BOOST_AUTO_TEST_CASE(a_repeated_request_id_yields_one_proof) {
  Gate gate;
  Engine engine(config());
  engine.load_key("small", files().zkey);
  engine.load_key("other", files().zkey);
  const auto holder = hold_dispatcher(engine, gate);
  std::atomic<int> callbacks{0};
  SubmitOptions options;
  options.request_id = "job-7";
  options.on_done = [&](const ProofHandle&) { ++callbacks; };
  const auto first = engine.submit("small", files().wtns(3, 4), options);
  BOOST_CHECK(!first.repeated());
  BOOST_CHECK_EQUAL(first.request_id(), "job-7");
  const auto while_queued = engine.submit("small", files().wtns(3, 4), options);
  BOOST_CHECK(while_queued.repeated());
  BOOST_CHECK_EQUAL(while_queued.id(), first.id());
  std::string message;
  BOOST_CHECK(error_kind_of([&] { engine.submit("other", files().wtns(3, 4), options); }, &message) == ErrorKind::request_conflict);
  BOOST_CHECK_MESSAGE(message.find("job-7") != std::string::npos && message.find("key 'small'") != std::string::npos, message);
  gate.open();
  check_done(holder, 2, 3);
  check_done(first, 3, 4);
  const auto after = engine.submit("small", files().wtns(3, 4), options);  // its callback runs at once
  BOOST_CHECK(after.repeated());
  BOOST_CHECK_EQUAL(after.id(), first.id());
  const auto answer = first.wait();
  for (const auto& handle : {while_queued, after}) {
    const auto repeated = handle.wait();
    BOOST_CHECK_EQUAL(repeated.proof_json, answer.proof_json);
    BOOST_CHECK_EQUAL(repeated.public_json, answer.public_json);
  }
  BOOST_CHECK(eventually([&] { return callbacks.load() == 3; }));  // the first two run after the proof's end is seen
  // From four threads at once: one proof.
  std::vector<ProofHandle> racing(4);
  std::vector<std::thread> threads;
  SubmitOptions race;
  race.request_id = "race";
  for (auto& handle : racing) threads.emplace_back([&engine, &race, to = &handle] { *to = engine.submit("small", files().wtns(5, 5), race); });
  for (auto& thread : threads) thread.join();
  for (const auto& handle : racing) {
    BOOST_CHECK_EQUAL(handle.id(), racing[0].id());
    check_done(handle, 5, 5);
  }
  BOOST_CHECK_EQUAL(std::count_if(racing.begin(), racing.end(), [](const ProofHandle& h) { return !h.repeated(); }), 1);
  BOOST_CHECK_EQUAL(engine.status().accepted, 3u);  // the holder, job-7 and race
  BOOST_CHECK(error_kind_of([&] {
                SubmitOptions long_id;
                long_id.request_id = std::string(257, 'x');
                engine.submit("small", files().wtns(5, 5), long_id);
              }) == ErrorKind::bad_request);

  auto forgetting = config();
  forgetting.engine.request_id_retention_s = 0;
  Engine forgetful(forgetting);
  forgetful.load_key("small", files().zkey);
  const auto once = forgetful.submit("small", files().wtns(3, 4), options);
  check_done(once, 3, 4);
  const auto again = forgetful.submit("small", files().wtns(3, 4), options);
  BOOST_CHECK(!again.repeated());
  BOOST_CHECK_NE(again.id(), once.id());
  check_done(again, 3, 4);
}

// A deadline already past is refused at submit, queueing nothing; one that passes while the
// proof is queued (the run ahead of it held) fails it at its deadline, saying so, without running
// it: its whole life was in the queue.
BOOST_AUTO_TEST_CASE(a_deadline_in_the_past_is_refused_and_one_that_passes_in_the_queue_fails_unrun) {
  Gate gate;
  Engine engine(config());
  engine.load_key("small", files().zkey);
  std::string message;
  SubmitOptions past;
  past.deadline = QueueClock::now() - std::chrono::milliseconds(1);
  BOOST_CHECK(error_kind_of([&] { engine.submit("small", files().wtns(3, 4), past); }, &message) == ErrorKind::deadline_passed);
  BOOST_CHECK_MESSAGE(message.find("deadline passed") != std::string::npos && message.find("not queued") != std::string::npos, message);
  past.deadline = deadline_in(0);
  BOOST_CHECK(error_kind_of([&] { engine.submit("small", files().wtns(3, 4), past); }) == ErrorKind::deadline_passed);
  BOOST_CHECK(error_kind_of([&] { deadline_in(kDeadlineMostMs + 1); }) == ErrorKind::bad_request);
  BOOST_CHECK_EQUAL(engine.status().accepted, 0u);
  BOOST_CHECK_EQUAL(engine.status().batches, 0u);

  const auto holder = hold_dispatcher(engine, gate);
  SubmitOptions soon;
  soon.deadline = deadline_in(20);
  const auto late = engine.submit("small", files().wtns(3, 4), soon);
  const auto result = late.wait();  // while the gate still holds the run ahead of it
  BOOST_CHECK(result.state == ProofState::failed);
  BOOST_CHECK(result.deadline_missed);
  BOOST_CHECK_MESSAGE(result.error.find("deadline") != std::string::npos && result.error.find("not run") != std::string::npos, result.error);
  BOOST_CHECK_EQUAL(result.timings.queue_s, result.timings.total_s);
  BOOST_CHECK_EQUAL(result.timings.gpu_s, 0.0);
  gate.open();
  check_done(holder, 2, 3);
  const auto status = engine.status();
  BOOST_CHECK_EQUAL(status.failed, 1u);
  BOOST_CHECK_EQUAL(status.gpus.at(0).done, 1u);  // the holder only
  BOOST_CHECK_EQUAL(status.batches, 1u);
}

// Every ended proof's timings: each part present (the GPU, the host before it and the check are
// never 0 for a proof made; the first proof of a key pays its set-up), none negative, and the
// parts add up to the total, which is the proof's seconds. The histograms count them by key,
// priority and part, and the status tells the queue by priority.
BOOST_AUTO_TEST_CASE(every_timing_is_present_and_the_parts_add_up_to_the_total) {
  Engine engine(config());
  engine.load_key("small", files().zkey);
  SubmitOptions high;
  high.priority = Priority::high;
  std::vector<ProofHandle> handles;
  for (std::uint64_t x = 2; x < 6; ++x) handles.push_back(engine.submit("small", files().wtns(x, 3), high));
  for (std::size_t i = 0; i < handles.size(); ++i) check_done(handles[i], 2 + i, 3);
  for (const auto& handle : handles) {
    const auto result = handle.result();
    const auto& t = result.timings;
    BOOST_TEST_CONTEXT("proof " << handle.id()) {
      for (const double part : {t.queue_s, t.setup_s, t.host_before_s, t.gpu_s, t.host_after_s, t.check_s}) BOOST_CHECK_GE(part, 0.0);
      BOOST_CHECK_GT(t.host_before_s, 0.0);
      BOOST_CHECK_GT(t.gpu_s, 0.0);
      BOOST_CHECK_GT(t.check_s, 0.0);
      const double sum = t.queue_s + t.setup_s + t.host_before_s + t.gpu_s + t.host_after_s + t.check_s;
      BOOST_CHECK_CLOSE(sum, t.total_s, 1.0);  // percent
      BOOST_CHECK_EQUAL(t.total_s, result.seconds);
    }
  }
  BOOST_CHECK_GT(handles.front().result().timings.setup_s, 0.0);
  const auto status = engine.status();
  const auto gpu = std::find_if(status.timing_histograms.begin(), status.timing_histograms.end(),
                                [](const TimingHistogram& h) { return h.key == "small" && h.priority == Priority::high && h.part == "gpu"; });
  BOOST_REQUIRE(gpu != status.timing_histograms.end());
  BOOST_CHECK_EQUAL(gpu->counts.size(), status.timing_bounds.size() + 1);
  BOOST_CHECK_EQUAL(gpu->counts.back(), handles.size());
  BOOST_CHECK_GT(gpu->sum, 0.0);
  BOOST_CHECK_EQUAL(status.timing_histograms.size(), 7u);  // one key, one priority, seven parts
  BOOST_CHECK(status_json(status).find("\"queued_by_priority\":{\"critical\":0,\"high\":0,\"low\":0,\"normal\":0}") != std::string::npos);
  // A proof cancelled in the queue spent its whole life there.
  Gate gate;
  const auto holder = hold_dispatcher(engine, gate);
  SubmitOptions low;
  low.priority = Priority::low;
  const auto cancelled = engine.submit("small", files().wtns(7, 3), low);
  BOOST_CHECK_EQUAL(engine.status().queued_by_priority[static_cast<std::size_t>(Priority::low)], 1u);
  BOOST_CHECK(engine.cancel(cancelled.id()));
  const auto result = cancelled.wait();
  BOOST_CHECK_EQUAL(result.timings.queue_s, result.timings.total_s);
  BOOST_CHECK_GT(result.timings.total_s, 0.0);
  gate.open();
  check_done(holder, 2, 3);
}

// EngineHooks::on_run: each run's figures and its proofs' ids, once its proofs have answered; the
// run's trace where asked. A proof's result names the GPU it ended on.
BOOST_AUTO_TEST_CASE(on_run_reports_each_runs_figures_its_proofs_and_its_trace) {
  std::vector<RunSummary> runs;  // the pointers are kept for the check that they are set, not followed
  std::vector<std::size_t> jobs, proofs;
  std::vector<std::size_t> trace_events;
  std::vector<bool> answered;
  const Engine* engine_seen = nullptr;  // set before the first submit
  EngineHooks hooks;
  hooks.trace_runs = true;
  hooks.on_run = [&](const RunSummary& summary) {
    runs.push_back(summary);
    jobs.push_back(summary.figures->report.jobs.size());
    proofs.push_back(summary.figures->proofs);
    trace_events.push_back(summary.trace != nullptr ? summary.trace->events().size() : 0);
    answered.push_back(std::all_of(summary.proof_ids.begin(), summary.proof_ids.end(),
                                   [&](std::uint64_t id) { return engine_seen->find(id).finished(); }));
  };
  auto options = Engine::default_backend_options();
  options.keep_trace_events = true;
  {
    auto engine_config = config(64, 3);
    engine_config.engine.linger_ms = 60'000;  // the three proofs take one run: shutdown ends its linger
    Engine engine(engine_config, options, hooks);
    engine_seen = &engine;
    engine.load_key("small", files().zkey);
    std::vector<ProofHandle> handles;
    for (std::uint64_t x = 2; x < 5; ++x) handles.push_back(engine.submit("small", files().wtns(x, 3)));
    for (std::size_t i = 0; i < handles.size(); ++i) {
      check_done(handles[i], 2 + i, 3);
      BOOST_CHECK_EQUAL(handles[i].result().gpu, 0);
    }
    engine.shutdown();
  }
  BOOST_REQUIRE_EQUAL(runs.size(), 1u);
  BOOST_CHECK_EQUAL(runs[0].key, "small");
  BOOST_CHECK_EQUAL(runs[0].batch, 1u);
  BOOST_CHECK((runs[0].proof_ids == std::vector<std::uint64_t>{1, 2, 3}));
  BOOST_CHECK_EQUAL(jobs[0], 3u);
  BOOST_CHECK_EQUAL(proofs[0], 3u);
  BOOST_CHECK_GT(trace_events[0], 0u);
  BOOST_CHECK(answered[0]);
  BOOST_CHECK(!runs[0].on_gpu);
}

// A key in memory, as `stagehand prove` loads it: the same proofs as from its file (seeded from 0
// as prove's witnesses), the witness named as the caller names it, and a constraint system of
// another circuit refused at load.
BOOST_AUTO_TEST_CASE(a_bn254_key_is_refused_as_cpu_only_not_proved_as_bls12_381) {
  Engine engine(config());
  const auto path = std::filesystem::temp_directory_path() / fmt::format("stagehand_engine_bn254_{}.zkey", ::getpid());
  {
    // Protocol and header alone, with BN254's primes: the engine must refuse at the header.
    groth16::BinFileWriter out(path, "zkey", 1);
    out.begin_section(1);
    out.u32(1);
    out.end_section();
    out.begin_section(2);
    out.u32(32);
    out.bytes(groth16::modulus_bytes<math::bn254::Fq>());
    out.u32(32);
    out.bytes(groth16::modulus_bytes<math::bn254::Fr>());
    out.end_section();
    out.finish();
  }
  std::string message;
  BOOST_CHECK(error_kind_of([&] { engine.load_key("bn", path); }, &message) == ErrorKind::bad_key);
  BOOST_CHECK_MESSAGE(message.find(path.string()) != std::string::npos &&
                          message.find("a BN254 key, which the engine does not prove yet") != std::string::npos &&
                          message.find("MSM") != std::string::npos && message.find("kernel ABI") != std::string::npos &&
                          message.find("`stagehand prove` proves BN254 keys on the CPU") != std::string::npos,
                      message);
  BOOST_CHECK(!engine.has_key("bn"));
  std::filesystem::remove(path);
}

BOOST_AUTO_TEST_CASE(a_key_in_memory_proves_as_its_file_and_names_the_callers_witness) {
  Engine engine(config());
  KeyInMemory key;
  key.key = std::make_shared<const groth16::ProvingKey>(files().key);
  key.path = "in-memory.zkey";
  auto other = std::make_shared<groth16::R1cs>(testing::multiplier_circuit());
  other->n_wires = 6;
  KeyInMemory wrong = key;
  wrong.r1cs = other;
  wrong.r1cs_path = "other.r1cs";
  std::string message;
  BOOST_CHECK(error_kind_of([&] { engine.load_key("wrong", wrong); }, &message) == ErrorKind::bad_key);
  BOOST_CHECK_MESSAGE(message.find("other.r1cs") != std::string::npos && message.find("another circuit") != std::string::npos, message);
  BOOST_CHECK(!engine.has_key("wrong"));
  key.r1cs = std::make_shared<const groth16::R1cs>(testing::multiplier_circuit());
  key.r1cs_path = "multiplier.r1cs";
  engine.load_key("memory", key);
  SubmitOptions options;
  options.witness_name = "w.wtns";
  auto shared = std::make_shared<const std::vector<std::uint8_t>>(files().wtns(5, 7));
  const auto handle = engine.submit("memory", shared, options);
  const auto result = handle.wait();
  BOOST_REQUIRE_MESSAGE(result.state == ProofState::done, result.error);
  BOOST_CHECK_EQUAL(result.proof_json, files().expected_proof(handle.id(), 5, 7));
  // A caller that numbers its proofs (prove's witnesses) has r and s from its number.
  options.seed_index = 10;
  const auto numbered = engine.submit("memory", shared, options).wait();
  BOOST_REQUIRE_MESSAGE(numbered.state == ProofState::done, numbered.error);
  BOOST_CHECK_EQUAL(numbered.proof_json, files().expected_proof(11, 5, 7));
  // A witness of the wrong length is refused naming it as the caller does.
  auto short_witness = groth16::wtns_bytes(std::vector<Fr>{Fr::one()});
  BOOST_CHECK(error_kind_of([&] { engine.submit("memory", short_witness, options); }, &message) == ErrorKind::bad_witness);
  BOOST_CHECK_MESSAGE(message.starts_with("w.wtns: ") && message.find("another circuit") != std::string::npos, message);
}
