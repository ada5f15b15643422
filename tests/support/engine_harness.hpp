#pragma once
// What the tests of stagehand::Engine on the functional simulator share (tests/engine's
// engine_*_test targets): a key and witnesses on disk, the engine's test configuration, a gate
// that holds the dispatcher, a clock the test advances and the wait for the end of the runs.
//
// Each proof is compared with the CPU reference prover (groth16::prove_on_cpu) given the same
// randomness (the engine's seed plus the proof's id less one, as `stagehand prove --seed` counts its
// witnesses from 0), an oracle independent of the device path.
// Where a test needs proofs to sit in the queue, a gate holds the dispatcher: the callback of a
// first proof runs on the dispatcher's thread and blocks there until the test opens the gate
// (declared before the engine, so that it outlives the callback's last look at it).
// Nothing here waits for time to pass: a test waits for the event it needs (a proof's end, the
// end of the engine's runs, a callback), and deadlines and the linger go by a ManualClock that
// the test advances.

#include "engine/engine.hpp"
#include "engine/engine_clock.hpp"

#include "groth16/json.hpp"
#include "groth16/prover.hpp"
#include "groth16/setup.hpp"
#include "groth16/witness.hpp"
#include "groth16/zkey.hpp"
#include "service/status_json.hpp"
#include "support/multiplier_circuit.hpp"

#include <boost/test/unit_test.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

namespace stagehand::testing {

using namespace stagehand::engine;

using math::Fr;

constexpr std::uint64_t kSeed = 1000;

inline std::vector<Fr> witness(std::uint64_t x, std::uint64_t y) {
  const Fr fx = Fr::from_uint64(x), fy = Fr::from_uint64(y);
  return {Fr::one(), fx * fy, fx, fy, fx + Fr::from_uint64(3) * fy};
}

inline std::vector<std::uint8_t> load(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// A key and witnesses on disk for the whole suite.
struct Files {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("stagehand_engine_test_" + std::to_string(::getpid()));
  std::filesystem::path zkey = dir / "small.zkey";
  groth16::ProvingKey key;
  Files() {
    std::filesystem::create_directories(dir);
    groth16::SetupOptions options;
    options.seed = 42;
    options.thread_count = 1;
    key = groth16::setup_from_r1cs(stagehand::testing::multiplier_circuit(), options);
    groth16::write_zkey(zkey, key);
  }
  ~Files() { std::filesystem::remove_all(dir); }
  std::vector<std::uint8_t> wtns(std::uint64_t x, std::uint64_t y) const {
    const auto path =
        dir / fmt::format("w_{}_{}_{}.wtns", x, y, std::hash<std::thread::id>{}(std::this_thread::get_id()));
    groth16::write_wtns(path, witness(x, y));
    auto bytes = load(path);
    std::filesystem::remove(path);
    return bytes;
  }
  // What the CPU reference makes for proof `id` of witness (x, y): the engine's proof ids count from
  // 1, its seeds (as prove's) from 0.
  std::string expected_proof(std::uint64_t id, std::uint64_t x, std::uint64_t y) const {
    return groth16::proof_json(
        groth16::prove_on_cpu(key, witness(x, y), groth16::ProofRandomness::from_seed(kSeed + id - 1), 1));
  }
};

inline const Files& files() {
  static Files instance;
  return instance;
}

inline EngineConfig config(std::size_t queue_capacity = 64, std::size_t max_batch = 16, int workers = 2) {
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
    changed_.wait(lock, [&] { return entered_; });
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
inline ProofHandle hold_dispatcher(Engine& engine, Gate& gate) {
  auto handle = engine.submit("small", files().wtns(2, 3), WhenFull::refuse, gate.callback());
  gate.wait_entered();
  return handle;
}

inline void check_done(const ProofHandle& handle, std::uint64_t x, std::uint64_t y) {
  const auto result = handle.wait();
  BOOST_REQUIRE_MESSAGE(result.state == ProofState::done,
                        "proof " << handle.id() << ": " << to_string(result.state) << ": " << result.error);
  BOOST_CHECK_EQUAL(result.proof_json, files().expected_proof(handle.id(), x, y));
  BOOST_CHECK_EQUAL(result.public_json,
                    groth16::public_json(std::vector<Fr>{Fr::from_uint64(x * y), Fr::from_uint64(x)}));
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

// A count the test waits on: bumped from the engine's threads (callbacks, hooks), waited for on
// the test's.
class Counter {
 public:
  void add() {
    std::lock_guard lock(mutex_);
    ++count_;
    changed_.notify_all();
  }
  // Blocks until the count is at least `count`.
  void wait_for_at_least(std::uint64_t count) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return count_ >= count; });
  }
  std::uint64_t value() const {
    std::lock_guard lock(mutex_);
    return count_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t count_ = 0;
};

// The ends of an engine's runs (EngineHooks::on_run_end): what the engine does after a run's
// last proof has answered (keeping its staging pool, writing its trace, sampling the devices'
// memory) is done once its run has ended. Declared before the engine it hooks.
class RunEnds {
 public:
  EngineHooks hooks(EngineHooks base = {}) {
    base.on_run_end = [this](std::uint64_t) { ended_.add(); };
    return base;
  }
  // Blocks until every run the engine has begun has ended: for a test whose proofs have all
  // answered and that submits none meanwhile, so that no run begins while it waits.
  void wait_all(const Engine& engine) { ended_.wait_for_at_least(engine.status().batches); }
  std::uint64_t ended() const { return ended_.value(); }

 private:
  Counter ended_;
};

// A clock that moves only when the test advances it (EngineHooks::clock): the linger and a
// deadline pass when the test says so, however fast the machine runs. It starts at the steady
// clock's present, so that deadline_in's and its own times compare.
class ManualClock final : public EngineClock {
 public:
  time_point now() const override {
    std::lock_guard lock(mutex_);
    return now_;
  }
  bool wait_until(std::condition_variable& changed, std::unique_lock<std::mutex>& lock, time_point until,
                  const std::function<bool()>& ready) override {
    const Waiter waiter{lock.mutex(), &changed};
    {
      std::lock_guard guard(mutex_);
      waiters_.push_back(waiter);
    }
    changed.wait(lock, [&] { return ready() || now() >= until; });
    std::lock_guard guard(mutex_);
    waiters_.erase(std::find(waiters_.begin(), waiters_.end(), waiter));
    return ready();
  }
  // Moves the clock on and wakes whoever waits on it. A waiter checks the time with its own mutex
  // held and this takes that mutex to notify it, so that no wake-up falls between its check and
  // its wait. For the test's thread, while the engine it hooks is alive.
  void advance(std::chrono::steady_clock::duration by) {
    std::vector<Waiter> waiting;
    {
      std::lock_guard lock(mutex_);
      now_ += by;
      waiting = waiters_;
    }
    for (const auto& waiter : waiting) {
      std::lock_guard lock(*waiter.mutex);
      waiter.changed->notify_all();
    }
  }

 private:
  struct Waiter {
    std::mutex* mutex;
    std::condition_variable* changed;
    bool operator==(const Waiter&) const = default;
  };
  mutable std::mutex mutex_;
  time_point now_ = std::chrono::steady_clock::now();
  std::vector<Waiter> waiters_;
};

// An engine's hooks with a ManualClock.
inline EngineHooks with_clock(const std::shared_ptr<ManualClock>& clock, EngineHooks base = {}) {
  base.clock = clock;
  return base;
}

// A key's status by name, and whether it is set up on GPU 0.
inline KeyStatus key_status(const Engine& engine, const std::string& name) {
  for (const auto& key : engine.status().keys) {
    if (key.name == name) return key;
  }
  BOOST_FAIL("no key " << name);
  return KeyStatus{};
}

inline bool on_gpu(const KeyStatus& key) {
  return std::find(key.resident.begin(), key.resident.end(), "gpu0") != key.resident.end();
}

// Whether every GPU's memory in use, as the engine last sampled it, is 0. After RunEnds::wait_all
// and wait_key_gone: the engine samples at each run's end and when it gives a key's device state
// back, before wait_key_gone returns.
inline bool gpu_memory_is_back(const Engine& engine) {
  const auto gpus = engine.status().gpus;
  return std::all_of(gpus.begin(), gpus.end(), [](const GpuStatus& gpu) { return gpu.device_used_bytes == 0; });
}

}  // namespace stagehand::testing
