// stagehand::Engine on the functional simulator: proofs from several threads, the bounded queue,
// cancellation, the callback at a proof's end (ProofHandle::on_end), unload while proofs run,
// shutdown with proofs queued, a bad witness, an injected device fault and a lost GPU each
// failing only their own proofs.
// The shared helpers (the key on disk, the gate, the clock, the CPU reference's proofs) are
// tests/support/engine_harness.hpp.
#define BOOST_TEST_MODULE engine_proofs
#include <boost/test/unit_test.hpp>

#include "support/engine_harness.hpp"

#include "engine/proof_queue.hpp"
#include "groth16/encoding.hpp"
#include "groth16/r1cs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>
#include <unistd.h>

using namespace stagehand;
using namespace stagehand::engine;
using namespace stagehand::testing;
using math::Fr;

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
        handles[static_cast<std::size_t>(t)].emplace_back(engine.submit("small", files().wtns(x, 5), WhenFull::wait),
                                                          x);
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
  Counter waiting_for_room;
  EngineHooks hooks;
  hooks.on_wait_for_room = [&] { waiting_for_room.add(); };
  Engine engine(config(2, 16), Engine::default_backend_options(), hooks);
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
  waiting_for_room.wait_for_at_least(1);  // it found the queue full and waits
  BOOST_CHECK(!accepted.load());
  BOOST_CHECK(engine.cancel(third.id()));
  waiter.join();
  BOOST_CHECK(accepted.load());
  const auto cancelled = third.wait();
  BOOST_CHECK(cancelled.state == ProofState::cancelled);
  BOOST_CHECK_EQUAL(cancelled.error, "cancelled while queued");
  BOOST_CHECK(!engine.cancel(third.id()));                             // it has ended
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

// ProofHandle::on_end (the service's GET ?wait=): called once when the proof ends, on the thread
// that ends it (the canceller's for a queued proof), or at once on the caller's thread where it
// has ended already.
BOOST_AUTO_TEST_CASE(on_end_calls_back_once_at_the_proofs_end_or_at_once) {
  Gate gate;
  Engine engine(config());
  engine.load_key("small", files().zkey);
  auto first = hold_dispatcher(engine, gate);
  auto made = engine.submit("small", files().wtns(4, 5));
  auto cancelled = engine.submit("small", files().wtns(6, 7));
  Counter ends;
  std::mutex mutex;
  std::vector<std::pair<std::uint64_t, ProofState>> seen;
  auto record = [&](const ProofHandle& proof) {
    {
      std::lock_guard lock(mutex);
      seen.emplace_back(proof.id(), proof.state());
    }
    ends.add();
  };
  made.on_end(record);
  cancelled.on_end(record);
  BOOST_CHECK_EQUAL(ends.value(), 0u);  // both queued behind the gate
  BOOST_CHECK(engine.cancel(cancelled.id()));
  BOOST_CHECK_EQUAL(ends.value(), 1u);  // ended by the cancel, on this thread
  gate.open();
  check_done(made, 4, 5);
  ends.wait_for_at_least(2);
  std::thread::id called_on;
  made.on_end([&](const ProofHandle& proof) {
    called_on = std::this_thread::get_id();
    record(proof);
  });
  BOOST_CHECK(called_on == std::this_thread::get_id());  // ended already: at once
  BOOST_CHECK_EQUAL(ends.value(), 3u);
  std::lock_guard lock(mutex);
  const std::vector<std::pair<std::uint64_t, ProofState>> expected{
      {cancelled.id(), ProofState::cancelled}, {made.id(), ProofState::done}, {made.id(), ProofState::done}};
  BOOST_CHECK(seen == expected);
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
  auto running_first = engine.submit("other", files().wtns(3, 4), WhenFull::refuse,
                                     [&](const ProofHandle&) { left_when_unloaded = engine.unload_key("other"); });
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
    Engine engine(config(3));
    engine.load_key("small", files().zkey);
    first = hold_dispatcher(engine, gate);
    for (std::uint64_t x = 4; x < 7; ++x) queued.push_back(engine.submit("small", files().wtns(x, 2)));
    // The queue is full: a submitter waiting for room is answered once the engine stops, which
    // shows the test that it is stopping (the gate still holds the dispatcher, so shutdown waits).
    std::optional<ErrorKind> waiter_answer;
    std::thread waiter([&] {
      try {
        engine.submit("small", files().wtns(1, 2), WhenFull::wait);
      } catch (const EngineError& error) {
        waiter_answer = error.kind();
      }
    });
    std::thread stopper([&] { engine.shutdown(Drain::fail_queued); });
    waiter.join();
    BOOST_CHECK(waiter_answer == std::optional{ErrorKind::stopped});
    BOOST_CHECK(engine.status().stopping);
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
  BOOST_CHECK_MESSAGE(message.find("(key small)") != std::string::npos && message.find("section") != std::string::npos,
                      message);
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
  BOOST_CHECK(error_kind_of([&] { engine.submit("small", groth16::wtns_bytes(values)); }, &message) ==
              ErrorKind::bad_witness);
  BOOST_CHECK_MESSAGE(message.find("w[0] must be 1") != std::string::npos, message);
  values[0] = Fr::one();
  values.push_back(Fr::one());
  BOOST_CHECK(error_kind_of([&] { engine.submit("small", groth16::wtns_bytes(values)); }, &message) ==
              ErrorKind::bad_witness);
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
  options.faults.kernel_error_name = "groth16_h_combine";
  options.faults.kernel_error_occurrence = 2;
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
  options.faults.device = 1;
  options.faults.lose_device_at_launch = 3;
  Engine engine(engine_config, options);
  engine.load_key("small", files().zkey);
  std::vector<std::pair<ProofHandle, std::uint64_t>> handles;
  for (std::uint64_t x = 2; x < 8; ++x)
    handles.emplace_back(engine.submit("small", files().wtns(x, 5), WhenFull::wait), x);
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

// Two idle GPUs and lone proofs, each submitted after the last one's end: run after run another
// GPU is offered the jobs first, so the proofs spread over both rather than all landing on GPU 0
// (a proof may join a run still finishing, so the split need not be even).
BOOST_AUTO_TEST_CASE(lone_proofs_spread_over_idle_gpus) {
  auto engine_config = config();
  engine_config.run.gpus = 2;
  Engine engine(engine_config, Engine::default_backend_options());
  engine.load_key("small", files().zkey);
  for (std::uint64_t x = 2; x < 8; ++x) check_done(engine.submit("small", files().wtns(x, 5)), x, 5);
  const auto status = engine.status();
  BOOST_CHECK_EQUAL(status.done, 6u);
  BOOST_REQUIRE_EQUAL(status.gpus.size(), 2u);
  BOOST_CHECK_EQUAL(status.gpus[0].done + status.gpus[1].done, 6u);
  BOOST_CHECK_MESSAGE(status.gpus[0].done > 0 && status.gpus[1].done > 0,
                      "GPU 0 made " << status.gpus[0].done << ", GPU 1 " << status.gpus[1].done);
}

// The only GPU, lost inside the second proof of a run (the first one's callback holds the run
// while a proof of the key that will join it and another key's proof queue up): the proof that
// joined fails saying the GPU is lost; the other key's proof, queued behind, fails at once when
// its turn comes, and a new proof is refused (no_gpu: a service answers 503), instead of either
// being tried on the dead device. Nothing hangs and nothing is left running, queued or held.
BOOST_AUTO_TEST_CASE(the_only_gpu_lost_fails_its_proofs_and_the_engine_refuses_more) {
  auto options = Engine::default_backend_options();
  options.faults.lose_device_at_launch = kLaunchesOfTheFirstProof + 2;
  Gate gate;
  RunEnds run_ends;
  Engine engine(config(), options, run_ends.hooks());
  engine.load_key("small", files().zkey);
  engine.load_key("other", files().zkey);
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
  run_ends.wait_all(engine);  // the run's end comes a little after its proofs' answers
  BOOST_REQUIRE_EQUAL(engine.status().running, 0u);
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
