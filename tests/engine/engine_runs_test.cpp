// stagehand::Engine on the functional simulator: the engine's runs, proofs that join a running
// run, the linger (on a clock the test advances), each proof's timings and what EngineHooks::on_run
// reports.
// The shared helpers (the key on disk, the gate, the clock, the CPU reference's proofs) are
// tests/support/engine_harness.hpp.
#define BOOST_TEST_MODULE engine_runs
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
  Counter callbacks_done;              // a callback runs a little after its proof's handle has answered
  auto submitting = [&](std::vector<std::pair<std::string, std::vector<std::uint8_t>>> proofs) {
    return [&, proofs](const ProofHandle&) {
      {
        std::lock_guard lock(mutex);
        for (const auto& [key, wtns] : proofs) submitted.push_back(engine.submit(key, wtns));
      }
      callbacks_done.add();
    };
  };
  auto count_submitted = [&] {
    std::lock_guard lock(mutex);
    return submitted.size();
  };
  const auto first =
      engine.submit("small", files().wtns(2, 3), WhenFull::refuse, submitting({{"small", joining_wtns}}));
  check_done(first, 2, 3);
  callbacks_done.wait_for_at_least(1);
  BOOST_REQUIRE_EQUAL(count_submitted(), 1u);
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
  callbacks_done.wait_for_at_least(2);
  BOOST_REQUIRE_EQUAL(count_submitted(), 3u);
  check_done(submitted[1], 8, 9);
  check_done(submitted[2], 10, 11);
  BOOST_CHECK_EQUAL(engine.status().batches, 5u);
  BOOST_CHECK_EQUAL(engine.status().done, 6u);
}

// A run whose proofs have all ended waits [engine] linger_ms for another proof of its key: proofs
// submitted one at a time, each once the one before has answered, are made by one run. The linger
// goes by a clock the test never advances, so a second run would mean the first did not wait; the
// engine's shutdown at the end ends the wait at once.
BOOST_AUTO_TEST_CASE(proofs_submitted_one_by_one_within_the_linger_take_one_run) {
  auto lingering = config();
  lingering.engine.linger_ms = 60'000;
  const auto clock = std::make_shared<ManualClock>();
  Engine engine(lingering, Engine::default_backend_options(), with_clock(clock));
  engine.load_key("small", files().zkey);
  for (std::uint64_t x = 2; x < 6; ++x) check_done(engine.submit("small", files().wtns(x, 3)), x, 3);
  BOOST_CHECK_EQUAL(engine.status().batches, 1u);
  BOOST_CHECK_EQUAL(engine.status().done, 4u);
  BOOST_CHECK_EQUAL(key_status(engine, "small").device_set_ups, 1u);
}

// Without a linger each of those proofs takes a run of its own: the next is submitted once the
// run before has ended (it has given its staging pool back), so it cannot join it.
BOOST_AUTO_TEST_CASE(without_a_linger_each_proof_submitted_after_a_run_ends_takes_its_own_run) {
  RunEnds run_ends;
  Engine engine(config(), Engine::default_backend_options(), run_ends.hooks());
  engine.load_key("small", files().zkey);
  for (std::uint64_t x = 2; x < 5; ++x) {
    check_done(engine.submit("small", files().wtns(x, 3)), x, 3);
    run_ends.wait_all(engine);
    BOOST_REQUIRE_GT(engine.status().gpus.at(0).pinned_host_kept_bytes, 0u);
  }
  BOOST_CHECK_EQUAL(engine.status().batches, 3u);
  // The key stayed set up between the runs.
  BOOST_CHECK_EQUAL(key_status(engine, "small").device_set_ups, 1u);
}

// A proof of another key ends a run's linger at once instead of waiting it out: the linger goes by
// a clock the test never advances, so the proof is made (by a second run) only if it ends the
// linger, and the lingering key's next proof then takes a third.
BOOST_AUTO_TEST_CASE(a_proof_of_another_key_ends_the_linger) {
  auto lingering = config();
  lingering.engine.linger_ms = 60'000;
  const auto clock = std::make_shared<ManualClock>();
  const auto started = clock->now();
  Engine engine(lingering, Engine::default_backend_options(), with_clock(clock));
  engine.load_key("small", files().zkey);
  engine.load_key("other", files().zkey);
  check_done(engine.submit("small", files().wtns(2, 3)), 2, 3);
  const auto other = engine.submit("other", files().wtns(4, 5));
  const auto result = other.wait();
  BOOST_REQUIRE_MESSAGE(result.state == ProofState::done,
                        "the other key's proof: " << to_string(result.state) << ": " << result.error);
  BOOST_REQUIRE_MESSAGE(clock->now() == started, "the linger's clock moved");
  check_done(other, 4, 5);
  BOOST_CHECK_EQUAL(engine.status().batches, 2u);
  check_done(engine.submit("small", files().wtns(6, 7)), 6, 7);
  BOOST_CHECK_EQUAL(engine.status().batches, 3u);
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
      for (const double part : {t.queue_s, t.setup_s, t.host_before_s, t.gpu_s, t.host_after_s, t.check_s})
        BOOST_CHECK_GE(part, 0.0);
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
  const auto gpu = std::find_if(
      status.timing_histograms.begin(), status.timing_histograms.end(),
      [](const TimingHistogram& h) { return h.key == "small" && h.priority == Priority::high && h.part == "gpu"; });
  BOOST_REQUIRE(gpu != status.timing_histograms.end());
  BOOST_CHECK_EQUAL(gpu->counts.size(), status.timing_bounds.size() + 1);
  BOOST_CHECK_EQUAL(gpu->counts.back(), handles.size());
  BOOST_CHECK_GT(gpu->sum, 0.0);
  BOOST_CHECK_EQUAL(status.timing_histograms.size(), 7u);  // one key, one priority, seven parts
  BOOST_CHECK(status_json(status).find("\"queued_by_priority\":{\"critical\":0,\"high\":0,\"low\":0,\"normal\":0}") !=
              std::string::npos);
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
    Engine engine(engine_config, options, with_clock(std::make_shared<ManualClock>(), hooks));
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
