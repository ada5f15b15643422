// stagehand::Engine on the functional simulator: the queue's order (priority classes, promotion
// with age, batches, deadlines), request ids and deadlines through the engine (on a clock the
// test advances).
// The shared helpers (the key on disk, the gate, the clock, the CPU reference's proofs) are
// tests/support/engine_harness.hpp.
#define BOOST_TEST_MODULE engine_queue
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
  for (int i = 1; i <= 5; ++i)
    stream.push(queued(fmt::format("normal{}", i), Priority::normal, t0 + i * kOneSecond / 10));
  const auto low_critical = t0 + 3 * kOneSecond;
  BOOST_CHECK(stream.effective(*stream.front(t0), t0) == Priority::normal);
  BOOST_CHECK_EQUAL(order_at(stream, low_critical - std::chrono::nanoseconds(1)).back(), "low");
  BOOST_CHECK_EQUAL(order_at(stream, low_critical).front(), "low");
  BOOST_CHECK(stream.effective(queued("x", Priority::low, t0), low_critical) == Priority::critical);
  BOOST_CHECK(stream.effective(queued("x", Priority::low, t0), low_critical - std::chrono::nanoseconds(1)) ==
              Priority::high);
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
  BOOST_CHECK_MESSAGE(low_ended.load() && stream_when_low_ended.load() < kStreamCap,
                      "the low proof waited for the stream's end");
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
  Counter callbacks;
  SubmitOptions options;
  options.request_id = "job-7";
  options.on_done = [&](const ProofHandle&) { callbacks.add(); };
  const auto first = engine.submit("small", files().wtns(3, 4), options);
  BOOST_CHECK(!first.repeated());
  BOOST_CHECK_EQUAL(first.request_id(), "job-7");
  const auto while_queued = engine.submit("small", files().wtns(3, 4), options);
  BOOST_CHECK(while_queued.repeated());
  BOOST_CHECK_EQUAL(while_queued.id(), first.id());
  std::string message;
  BOOST_CHECK(error_kind_of([&] { engine.submit("other", files().wtns(3, 4), options); }, &message) ==
              ErrorKind::request_conflict);
  BOOST_CHECK_MESSAGE(message.find("job-7") != std::string::npos && message.find("key 'small'") != std::string::npos,
                      message);
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
  callbacks.wait_for_at_least(3);  // the first two run after the proof's end is seen
  BOOST_CHECK_EQUAL(callbacks.value(), 3u);
  // From four threads at once: one proof.
  std::vector<ProofHandle> racing(4);
  std::vector<std::thread> threads;
  SubmitOptions race;
  race.request_id = "race";
  for (auto& handle : racing)
    threads.emplace_back([&engine, &race, to = &handle] { *to = engine.submit("small", files().wtns(5, 5), race); });
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
// it: its whole life was in the queue. The second engine's deadlines go by a clock the test
// advances, so that the deadline passes after the submit however slowly the machine runs.
BOOST_AUTO_TEST_CASE(a_deadline_in_the_past_is_refused_and_one_that_passes_in_the_queue_fails_unrun) {
  Gate gate;
  Engine engine(config());
  engine.load_key("small", files().zkey);
  std::string message;
  SubmitOptions past;
  past.deadline = QueueClock::now() - std::chrono::milliseconds(1);
  BOOST_CHECK(error_kind_of([&] { engine.submit("small", files().wtns(3, 4), past); }, &message) ==
              ErrorKind::deadline_passed);
  BOOST_CHECK_MESSAGE(
      message.find("deadline passed") != std::string::npos && message.find("not queued") != std::string::npos, message);
  past.deadline = deadline_in(0);
  BOOST_CHECK(error_kind_of([&] { engine.submit("small", files().wtns(3, 4), past); }) == ErrorKind::deadline_passed);
  BOOST_CHECK(error_kind_of([&] { deadline_in(kDeadlineMostMs + 1); }) == ErrorKind::bad_request);
  BOOST_CHECK_EQUAL(engine.status().accepted, 0u);
  BOOST_CHECK_EQUAL(engine.status().batches, 0u);

  const auto clock = std::make_shared<ManualClock>();
  Engine timed(config(), Engine::default_backend_options(), with_clock(clock));
  timed.load_key("small", files().zkey);
  const auto holder = hold_dispatcher(timed, gate);
  SubmitOptions soon;
  soon.deadline = clock->now() + std::chrono::milliseconds(20);
  const auto late = timed.submit("small", files().wtns(3, 4), soon);
  clock->advance(std::chrono::milliseconds(20));
  const auto result = late.wait();  // while the gate still holds the run ahead of it
  BOOST_CHECK(result.state == ProofState::failed);
  BOOST_CHECK(result.deadline_missed);
  BOOST_CHECK_MESSAGE(
      result.error.find("deadline") != std::string::npos && result.error.find("not run") != std::string::npos,
      result.error);
  BOOST_CHECK_EQUAL(result.timings.queue_s, result.timings.total_s);
  BOOST_CHECK_EQUAL(result.timings.gpu_s, 0.0);
  gate.open();
  check_done(holder, 2, 3);
  const auto status = timed.status();
  BOOST_CHECK_EQUAL(status.failed, 1u);
  BOOST_CHECK_EQUAL(status.gpus.at(0).done, 1u);  // the holder only
  BOOST_CHECK_EQUAL(status.batches, 1u);
}
