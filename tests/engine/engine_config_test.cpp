// stagehand::Engine on the functional simulator: the [engine] and [serve] tables, the configured
// layout's proofs, and keys as the engine loads them: a BN254 key proving beside a BLS12-381 key,
// a key in memory proving as its file.
// The shared helpers (the key on disk, the gate, the clock, the CPU reference's proofs) are
// tests/support/engine_harness.hpp.
#define BOOST_TEST_MODULE engine_config
#include <boost/test/unit_test.hpp>

#include "support/engine_harness.hpp"

#include "engine/proof_queue.hpp"
#include "groth16/encoding.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/verify.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <thread>
#include <unistd.h>

using namespace stagehand;
using namespace stagehand::engine;
using namespace stagehand::testing;
using math::Fr;

BOOST_AUTO_TEST_CASE(the_configuration_tables_are_checked) {
  // The documented example reads as it says (the tests run from the project's root).
  const auto example = load_engine_config("config/serve.toml");
  BOOST_CHECK_EQUAL(example.engine.queue_capacity, 64u);
  BOOST_CHECK_EQUAL(example.engine.promote_after_s, EngineSettings{}.promote_after_s);
  BOOST_CHECK_EQUAL(example.engine.request_id_retention_s, EngineSettings{}.request_id_retention_s);
  BOOST_CHECK_EQUAL(example.serve.max_connections, 512);
  const auto good = parse_engine_config(
      "[engine]\nqueue_capacity = 3\nmax_batch = 2\n[serve]\nmax_request_mib = 1\nmax_connections = 5\n", "t.toml");
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
  BOOST_CHECK_MESSAGE(
      message_of("[engine]\nqueue_capacity = 0\n").find("t.toml:2: key 'engine.queue_capacity'") != std::string::npos,
      message_of("[engine]\nqueue_capacity = 0\n"));
  BOOST_CHECK_MESSAGE(message_of("[serve]\nmax_conections = 5\n").find("serve.max_conections") != std::string::npos,
                      message_of("[serve]\nmax_conections = 5\n"));
  // The run configuration's [faults] (config/faults_table.hpp), its old name refused.
  BOOST_CHECK_EQUAL(
      parse_engine_config("[faults]\nkernel_error_name = \"ntt\"\n", "t.toml").run.faults.kernel_error_name, "ntt");
  BOOST_CHECK_MESSAGE(
      message_of("[device_faults]\nseed = 2\n").find("t.toml:1: key 'device_faults': this table is now [faults]") == 0,
      message_of("[device_faults]\nseed = 2\n"));
  const auto promote = message_of("[engine]\npromote_after_s = 0\n");
  BOOST_CHECK_MESSAGE(promote.find("t.toml:2: key 'engine.promote_after_s'") != std::string::npos, promote);
  const auto timing =
      parse_engine_config("[engine]\npromote_after_s = 0.5\nrequest_id_retention_s = 30\nlinger_ms = 0\n", "t.toml");
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
  const auto layout =
      parse_engine_config("[engine]\nabc = \"host\"\nkey_sets = \"streamed\"\nstream_buffer_mib = 2\n", "t.toml");
  BOOST_CHECK(layout.engine.abc_step == std::optional{groth16::AbcStep::host});
  BOOST_CHECK(layout.engine.key_sets == std::optional{groth16::SetPlacement::streamed});
  BOOST_CHECK_EQUAL(layout.engine.stream_buffer_bytes, 2 * kMiB);
  const auto precomputed =
      parse_engine_config("[engine]\nkey_sets = \"precomputed\"\nprecompute_bases = true\n", "t.toml");
  BOOST_CHECK(precomputed.engine.key_sets == std::optional{groth16::SetPlacement::precomputed});
  BOOST_CHECK(precomputed.engine.precompute_bases);
  BOOST_CHECK(!example.engine.precompute_bases);
  const auto bad_sets = message_of("[engine]\nkey_sets = \"everywhere\"\n");
  BOOST_CHECK_MESSAGE(bad_sets.find("t.toml:2: key 'engine.key_sets'") != std::string::npos, bad_sets);
  const auto workload = message_of("[gpus]\ncount = 1\n[workload]\nproofs = 2\n");
  BOOST_CHECK_MESSAGE(
      workload.find("t.toml:3: key 'workload'") != std::string::npos && workload.find("[engine]") != std::string::npos,
      workload);
}

// The layout asked for in [engine] is the one the proofs take: a/b/c on the host and every set
// streamed from pinned memory, fetched ahead, or precomputed still give the CPU reference's proofs.
BOOST_AUTO_TEST_CASE(the_configured_layout_proves_the_same_proofs) {
  for (const auto sets :
       {groth16::SetPlacement::streamed, groth16::SetPlacement::fetched_ahead, groth16::SetPlacement::precomputed}) {
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
      BOOST_CHECK_MESSAGE(layout.starts_with("a/b/c on the host;") &&
                              layout.find(groth16::to_string(sets)) != std::string::npos &&
                              layout.find(" resident") == std::string::npos,
                          layout);
      std::vector<std::pair<ProofHandle, std::uint64_t>> handles;
      for (std::uint64_t x = 2; x < 5; ++x)
        handles.emplace_back(engine.submit("small", files().wtns(x, 7), WhenFull::wait), x);
      for (const auto& [handle, x] : handles) check_done(handle, x, 7);
    }
  }
}

namespace {
namespace bn = groth16::bn254;
using BnFr = math::bn254::Fr;

std::vector<BnFr> bn_witness(std::uint64_t x, std::uint64_t y) {
  const BnFr fx = BnFr::from_uint64(x), fy = BnFr::from_uint64(y);
  return {BnFr::one(), fx * fy, fx, fy, fx + BnFr::from_uint64(3) * fy};
}

std::vector<std::uint8_t> bn_wtns(std::uint64_t x, std::uint64_t y) {
  const auto path = files().dir / fmt::format("bn_{}_{}.wtns", x, y);
  bn::write_wtns(path, bn_witness(x, y));
  auto bytes = load(path);
  std::filesystem::remove(path);
  return bytes;
}
}  // namespace

// A BN254 key beside a BLS12-381 key in one engine, both loaded and set up on the GPU side by
// side while their batches alternate: each BN254 proof the CPU reference's over BN254 (the same r
// and s, from the engine's seed) and that proof verified by the key's pairing check, each
// BLS12-381 proof as before; the status names each key's curve as snarkjs does. A witness of the
// other curve than its key's is refused at submit naming both, and a BN254 constraint system for a
// BLS12-381 key at load.
BOOST_AUTO_TEST_CASE(a_bn254_key_proves_beside_a_bls12_381_key) {
  bn::SetupOptions setup;
  setup.seed = 42;
  setup.thread_count = 1;
  const auto bn_key = bn::setup_from_r1cs(testing::bn254_multiplier_circuit(), setup);
  const auto bn_path = files().dir / "bn254.zkey";
  bn::write_zkey(bn_path, bn_key);
  Engine engine(config());
  engine.load_key("bls", files().zkey);
  engine.load_key("bn", bn_path);
  BOOST_CHECK(key_status(engine, "bn").curve == groth16::Curve::bn254);
  BOOST_CHECK(key_status(engine, "bls").curve == groth16::Curve::bls12_381);
  const auto status = nlohmann::json::parse(status_json(engine.status()));
  std::map<std::string, std::string> curves;
  for (const auto& key : status.at("keys")) curves[key.at("name")] = key.at("curve");
  BOOST_CHECK(curves == (std::map<std::string, std::string>{{"bls", "bls12381"}, {"bn", "bn128"}}));

  for (std::uint64_t x = 2; x < 5; ++x) {
    const auto bn_handle = engine.submit("bn", bn_wtns(x, 5));
    const auto bls_handle = engine.submit("bls", files().wtns(x, 5));
    const auto result = bn_handle.wait();
    BOOST_REQUIRE_MESSAGE(result.state == ProofState::done, result.error);
    const auto witness = bn_witness(x, 5);
    const auto expected =
        bn::prove_on_cpu(bn_key, witness, bn::ProofRandomness::from_seed(kSeed + bn_handle.id() - 1), 1);
    const auto signals = bn::public_signals(bn_key, witness);
    BOOST_CHECK(bn::verify_proof(bn_key, expected, signals));
    BOOST_CHECK_EQUAL(result.proof_json, bn::proof_json(expected));
    BOOST_CHECK(result.proof_json.find("\"bn128\"") != std::string::npos);
    BOOST_CHECK_EQUAL(result.public_json,
                      bn::public_json(std::vector<BnFr>{BnFr::from_uint64(x * 5), BnFr::from_uint64(x)}));
    check_done(bls_handle, x, 5);
  }
  BOOST_CHECK(engine.has_key("bn") && engine.has_key("bls"));
  BOOST_CHECK(on_gpu(key_status(engine, "bn")) && on_gpu(key_status(engine, "bls")));

  std::string message;
  BOOST_CHECK(error_kind_of([&] { engine.submit("bn", files().wtns(2, 3)); }, &message) == ErrorKind::bad_witness);
  BOOST_CHECK_MESSAGE(message.find("BLS12-381") != std::string::npos && message.find("BN254") != std::string::npos,
                      message);
  BOOST_CHECK(error_kind_of([&] { engine.submit("bls", bn_wtns(2, 3)); }, &message) == ErrorKind::bad_witness);
  BOOST_CHECK_MESSAGE(message.find("BLS12-381") != std::string::npos && message.find("BN254") != std::string::npos,
                      message);
  KeyInMemory mixed;
  mixed.key = std::make_shared<const groth16::ProvingKey>(files().key);
  mixed.path = "in-memory.zkey";
  mixed.r1cs = std::make_shared<const bn::R1cs>(testing::bn254_multiplier_circuit());
  mixed.r1cs_path = "bn.r1cs";
  BOOST_CHECK(error_kind_of([&] { engine.load_key("mixed", mixed); }, &message) == ErrorKind::bad_key);
  BOOST_CHECK_MESSAGE(message.find("bn.r1cs") != std::string::npos &&
                          message.find("in-memory.zkey") != std::string::npos &&
                          message.find("BLS12-381") != std::string::npos && message.find("BN254") != std::string::npos,
                      message);
  BOOST_CHECK(!engine.has_key("mixed"));
  std::filesystem::remove(bn_path);
}

// A key in memory, as `stagehand prove` loads it: the same proofs as from its file (seeded from 0
// as prove's witnesses), the witness named as the caller names it, and a constraint system of
// another circuit refused at load.
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
  BOOST_CHECK_MESSAGE(
      message.find("other.r1cs") != std::string::npos && message.find("another circuit") != std::string::npos, message);
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
  BOOST_CHECK(error_kind_of([&] { engine.submit("memory", short_witness, options); }, &message) ==
              ErrorKind::bad_witness);
  BOOST_CHECK_MESSAGE(message.starts_with("w.wtns: ") && message.find("another circuit") != std::string::npos, message);
}
