// stagehand::Engine on the functional simulator: keys on the devices between runs, kept set up
// beside each other and on two GPUs, each GPU's staging pool, eviction when two do not fit, the
// traces each run writes, keep_key_on_device = false.
// The shared helpers (the key on disk, the gate, the clock, the CPU reference's proofs) are
// tests/support/engine_harness.hpp.
#define BOOST_TEST_MODULE engine_keys
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

// A key stays set up on the GPU between batches: three batches of one proof each set it up once.
// A batch of another key gives the first key's device state back (one key set up at a time), so
// the first key's next batch sets it up again; unloading both leaves nothing on the device. Each
// proof is still the CPU reference's.
// Two keys that fit side by side both stay set up while batches of each alternate.
BOOST_AUTO_TEST_CASE(keys_stay_set_up_between_batches_beside_each_other) {
  RunEnds run_ends;
  Engine engine(config(64, 1), Engine::default_backend_options(), run_ends.hooks());
  engine.load_key("small", files().zkey);
  engine.load_key("other", files().zkey);
  BOOST_CHECK_EQUAL(key_status(engine, "small").device_set_ups, 0u);
  BOOST_CHECK(!on_gpu(key_status(engine, "small")));
  BOOST_CHECK_EQUAL(key_status(engine, "small").device_bytes, 0u);
  // Batches of one proof each, one after another. Only the first makes pinned buffers: its two
  // workers' result buffers (two each) and the witness's staging buffer, kept between batches
  // (before, the next dispatch freed what the run had kept), and, setting the key up, two pinned
  // upload buffers of its own (freed at its end).
  std::vector<std::uint64_t> allocations;
  for (std::uint64_t x = 2; x < 5; ++x) {
    check_done(engine.submit("small", files().wtns(x, 3)), x, 3);
    // The run has kept its pool by its end (it gives it to the next at set-up).
    run_ends.wait_all(engine);
    BOOST_REQUIRE_GT(engine.status().gpus.at(0).pinned_host_kept_bytes, 0u);
    allocations.push_back(engine.status().gpus.at(0).pinned_host_allocations);
  }
  BOOST_CHECK_EQUAL(allocations[1], allocations[0]);
  BOOST_CHECK_EQUAL(allocations[2], allocations[0]);
  BOOST_CHECK_EQUAL(allocations[0], 2 * 2 + 1 + 2u);
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
  run_ends.wait_all(engine);
  BOOST_CHECK_GT(engine.status().gpus.at(0).pinned_host_kept_bytes, 0u);

  BOOST_CHECK_EQUAL(engine.unload_key("small"), 0u);
  engine.wait_key_gone("small");
  BOOST_CHECK(on_gpu(key_status(engine, "other")));
  BOOST_CHECK_EQUAL(engine.unload_key("other"), 0u);
  engine.wait_key_gone("other");
  BOOST_CHECK(engine.status().keys.empty());
  BOOST_CHECK_MESSAGE(gpu_memory_is_back(engine),
                      engine.status().gpus.at(0).device_used_bytes << " bytes left on the GPU");
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
  BOOST_CHECK_MESSAGE(gpu_memory_is_back(engine),
                      engine.status().gpus.at(0).device_used_bytes << " bytes left on GPU 0");
}

// Two GPUs with one worker each, proofs submitted together: both GPUs prove, each keeps a pinned
// staging pool of its own between runs, and unloading the key frees both.
BOOST_AUTO_TEST_CASE(each_gpu_keeps_its_own_staging_pool) {
  auto engine_config = config(64, 4, 1);
  engine_config.run.gpus = 2;
  RunEnds run_ends;
  Engine engine(engine_config, Engine::default_backend_options(), run_ends.hooks());
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
  run_ends.wait_all(engine);
  BOOST_CHECK(kept_on_both());
  BOOST_CHECK_EQUAL(engine.unload_key("small"), 0u);
  engine.wait_key_gone("small");
  for (const auto& gpu : engine.status().gpus) BOOST_CHECK_EQUAL(gpu.pinned_host_kept_bytes, 0u);
}

// Two GPUs with one worker each and lone proofs, each run's offered to the other GPU first: the
// first run makes both GPUs' result buffers (the idle one's worker too), the second only the
// staging buffer of the GPU that proves for the first time, and later runs nothing on either GPU,
// busy or idle: each
// keeps its workers' result buffers with its staging pool, and unloading the key frees both.
BOOST_AUTO_TEST_CASE(lone_proofs_make_no_result_buffers_after_the_first_run_on_either_gpu) {
  auto engine_config = config(64, 16, 1);
  engine_config.run.gpus = 2;
  RunEnds run_ends;
  Engine engine(engine_config, Engine::default_backend_options(), run_ends.hooks());
  engine.load_key("small", files().zkey);
  std::vector<std::vector<std::uint64_t>> made;  // by run, by GPU
  for (std::uint64_t x = 2; x < 6; ++x) {
    check_done(engine.submit("small", files().wtns(x, 3)), x, 3);
    run_ends.wait_all(engine);
    const auto gpus = engine.status().gpus;
    made.push_back({gpus.at(0).pinned_host_allocations, gpus.at(1).pinned_host_allocations});
  }
  const auto gpus = engine.status().gpus;
  BOOST_CHECK_EQUAL(engine.status().batches, 4u);
  BOOST_CHECK_EQUAL(gpus.at(0).done, 2u);
  BOOST_CHECK_EQUAL(gpus.at(1).done, 2u);
  BOOST_CHECK_EQUAL(made[1][0] + made[1][1], made[0][0] + made[0][1] + 1);
  for (std::size_t run = 2; run < made.size(); ++run) {
    BOOST_TEST_CONTEXT("run " << run + 1) {
      BOOST_CHECK_EQUAL(made[run][0], made[1][0]);
      BOOST_CHECK_EQUAL(made[run][1], made[1][1]);
    }
  }
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
  RunEnds run_ends;
  Engine engine(engine_config, Engine::default_backend_options(), run_ends.hooks());
  engine.load_key("small", files().zkey);
  for (std::uint64_t x = 2; x < 5; ++x) check_done(engine.submit("small", files().wtns(x, 3)), x, 3);
  // The trace is written after the batch's proofs are answered, the oldest removed after that.
  const auto third = dir / "run-000003.trace.json";
  run_ends.wait_all(engine);
  BOOST_CHECK(std::filesystem::exists(dir / "run-000003.svg") && !std::filesystem::exists(dir / "run-000001.svg"));
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
  BOOST_CHECK_MESSAGE(message.find("t.toml") != std::string::npos && message.find("trace_dir") != std::string::npos,
                      message);
}

// keep_key_on_device = false: each batch sets the key up and frees it at its end.
BOOST_AUTO_TEST_CASE(without_keep_key_on_device_each_batch_frees_the_key) {
  auto engine_config = config(64, 1);
  engine_config.engine.keep_key_on_device = false;
  RunEnds run_ends;
  Engine engine(engine_config, Engine::default_backend_options(), run_ends.hooks());
  engine.load_key("small", files().zkey);
  for (std::uint64_t x = 2; x < 4; ++x) check_done(engine.submit("small", files().wtns(x, 3)), x, 3);
  const auto status = engine.status();
  BOOST_REQUIRE_EQUAL(status.keys.size(), 1u);
  BOOST_CHECK_EQUAL(status.keys[0].device_set_ups, 0u);
  BOOST_CHECK(status.keys[0].resident == std::vector<std::string>{"host"});
  BOOST_CHECK_EQUAL(status.gpus.at(0).pinned_host_kept_bytes, 0u);
  run_ends.wait_all(engine);
  BOOST_CHECK_MESSAGE(gpu_memory_is_back(engine),
                      engine.status().gpus.at(0).device_used_bytes << " bytes left on the GPU");
  BOOST_CHECK(!parse_engine_config("[engine]\nkeep_key_on_device = false\n", "t.toml").engine.keep_key_on_device);
}
