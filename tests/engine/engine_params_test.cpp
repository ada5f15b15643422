// stagehand::Engine on the functional simulator with Filecoin .params keys (Engine::load_params_key):
// proofs from a .wtns and the circuit's .r1cs, byte-equal to the CPU reference of SupraSeal C2's
// prover (groth16::AssignmentProver) for the same r and s and verified by the key's verifying
// key; a .params key beside a .zkey key, proved interleaved; its sets kept on the device between
// its runs and given back for another key's run and on unload; a bad witness failing its own
// proof only; a constraint system that is not the key's circuit refused naming both files.
// The shared helpers (the .zkey key on disk, the gate, the run ends) are tests/support/engine_harness.hpp.
#define BOOST_TEST_MODULE engine_params
#include <boost/test/unit_test.hpp>

#include "support/engine_harness.hpp"
#include "support/multiplier_circuit.hpp"

#include "groth16/assignment_prover.hpp"
#include "groth16/circuit_assignment.hpp"
#include "groth16/params.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "groth16/verify.hpp"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

using namespace stagehand;
using namespace stagehand::engine;
using namespace stagehand::testing;
using math::Fr;

namespace {

// The multiplier circuit's .params key (the TEST-ONLY setup `stagehand setup --format params`
// makes) and its .r1cs on disk, with the CPU reference's prover over the key.
struct ParamsFiles {
  std::filesystem::path dir = files().dir / "params";
  std::filesystem::path params = dir / "small.params";
  std::filesystem::path r1cs = dir / "small.r1cs";
  groth16::R1cs circuit = multiplier_circuit();
  groth16::ParamsKey key;
  ParamsFiles() {
    std::filesystem::create_directories(dir);
    groth16::SetupOptions options;
    options.seed = 42;
    options.thread_count = 1;
    key = groth16::setup_params_from_r1cs(circuit, options);
    groth16::write_params(params, key);
    groth16::write_r1cs(r1cs, circuit);
  }
  // What the CPU reference makes for proof `id` of witness (x, y), the engine's r and s.
  groth16::Proof expected(std::uint64_t id, std::uint64_t x, std::uint64_t y) const {
    const auto assignment = groth16::circuit_assignment(circuit, witness(x, y));
    return groth16::AssignmentProver(key, 1).prove(assignment.view(),
                                                   groth16::ProofRandomness::from_seed(kSeed + id - 1));
  }
};

const ParamsFiles& params_files() {
  static ParamsFiles instance;
  return instance;
}

// A proof of the .params key done, byte-equal to the CPU reference's, and verified by the key's
// verifying key with its public signals (out = x·y, x).
void check_params_done(const ProofHandle& handle, std::uint64_t x, std::uint64_t y) {
  const auto result = handle.wait();
  BOOST_REQUIRE_MESSAGE(result.state == ProofState::done,
                        "proof " << handle.id() << ": " << to_string(result.state) << ": " << result.error);
  const auto expected = params_files().expected(handle.id(), x, y);
  BOOST_CHECK_EQUAL(result.proof_json, groth16::proof_json(expected));
  const std::vector<Fr> signals{Fr::from_uint64(x * y), Fr::from_uint64(x)};
  BOOST_CHECK_EQUAL(result.public_json, groth16::public_json(signals));
  BOOST_CHECK(groth16::verify_proof(groth16::verifier_key_of(params_files().key), expected, signals));
}

bool kept_on_devices(const KeyStatus& key) {
  return std::find(key.resident.begin(), key.resident.end(), "gpus") != key.resident.end();
}

// A witness of the multiplier circuit whose t (wire 4) is wrong: constraint 1 fails.
std::vector<std::uint8_t> unsatisfying_wtns() {
  auto values = witness(2, 3);
  values[4] = Fr::from_uint64(1234);
  return groth16::wtns_bytes(values);
}

}  // namespace

// Proofs of a .params key, each the CPU reference's bytes for its r and s and verified; the key is
// listed as a .params key of BLS12-381 with its constraint system; a second run of it sets
// nothing up again (its sets stayed on the device).
BOOST_AUTO_TEST_CASE(params_proofs_are_the_cpu_reference_and_verify) {
  RunEnds run_ends;
  Engine engine(config(), Engine::default_backend_options(), run_ends.hooks());
  engine.load_params_key("fil", params_files().params, params_files().r1cs);
  const auto loaded = key_status(engine, "fil");
  BOOST_CHECK_EQUAL(loaded.format, "params");
  BOOST_CHECK(loaded.curve == groth16::Curve::bls12_381);
  BOOST_CHECK_EQUAL(loaded.path, params_files().params.string());
  BOOST_CHECK_EQUAL(loaded.r1cs_path, params_files().r1cs.string());
  BOOST_CHECK_GT(loaded.host_bytes, 0u);
  BOOST_CHECK_EQUAL(loaded.device_set_ups, 0u);

  check_params_done(engine.submit("fil", files().wtns(2, 3)), 2, 3);
  run_ends.wait_all(engine);
  BOOST_CHECK(kept_on_devices(key_status(engine, "fil")));
  std::vector<ProofHandle> handles;
  for (std::uint64_t x = 3; x < 6; ++x) handles.push_back(engine.submit("fil", files().wtns(x, 7)));
  for (std::uint64_t i = 0; i < handles.size(); ++i) check_params_done(handles[i], 3 + i, 7);
  run_ends.wait_all(engine);
  BOOST_CHECK_EQUAL(key_status(engine, "fil").device_set_ups, 1u);
  BOOST_CHECK_EQUAL(engine.status().done, 4u);
}

// A .params key and a .zkey key side by side, proofs of each interleaved: each is its key's
// reference proof. A .zkey run gives the .params key's sets back, so its next run sets them up
// again; unloading the .params key leaves nothing of it, and its name refuses proofs.
BOOST_AUTO_TEST_CASE(both_formats_side_by_side_interleaved_then_unloaded) {
  RunEnds run_ends;
  Engine engine(config(), Engine::default_backend_options(), run_ends.hooks());
  engine.load_key("small", files().zkey);
  engine.load_params_key("fil", params_files().params, params_files().r1cs);
  BOOST_CHECK_EQUAL(key_status(engine, "small").format, "zkey");
  for (std::uint64_t x = 2; x < 4; ++x) {
    check_params_done(engine.submit("fil", files().wtns(x, 5)), x, 5);
    check_done(engine.submit("small", files().wtns(x, 5)), x, 5);
  }
  run_ends.wait_all(engine);
  BOOST_CHECK(!kept_on_devices(key_status(engine, "fil")));
  BOOST_CHECK_EQUAL(key_status(engine, "fil").device_set_ups, 2u);
  check_params_done(engine.submit("fil", files().wtns(4, 5)), 4, 5);
  run_ends.wait_all(engine);
  BOOST_CHECK(kept_on_devices(key_status(engine, "fil")));
  BOOST_CHECK(!on_gpu(key_status(engine, "small")));  // the .params key's run gave it back
  const auto used_with_params = engine.status().gpus.at(0).device_used_bytes;
  BOOST_CHECK_GT(used_with_params, 0u);

  BOOST_CHECK_EQUAL(engine.unload_key("fil"), 0u);
  engine.wait_key_gone("fil");
  BOOST_CHECK(!engine.has_key("fil"));
  BOOST_CHECK_LT(engine.status().gpus.at(0).device_used_bytes, used_with_params);
  BOOST_CHECK(error_kind_of([&] { engine.submit("fil", files().wtns(2, 3)); }) == ErrorKind::unknown_key);
  check_done(engine.submit("small", files().wtns(6, 5)), 6, 5);
}

// A witness that satisfies not every constraint fails its own proof, naming the witness and the
// constraint; the proofs batched with it are made. One of the wrong length is refused at submit.
BOOST_AUTO_TEST_CASE(a_bad_witness_fails_only_its_own_proof) {
  Gate gate;
  Engine engine(config());
  engine.load_key("small", files().zkey);
  engine.load_params_key("fil", params_files().params, params_files().r1cs);
  const auto held = hold_dispatcher(engine, gate);
  SubmitOptions named;
  named.witness_name = "bad.wtns";
  const auto first = engine.submit("fil", files().wtns(2, 9));
  const auto bad = engine.submit("fil", unsatisfying_wtns(), named);
  const auto last = engine.submit("fil", files().wtns(3, 9));
  std::string message;
  BOOST_CHECK(error_kind_of(
                  [&] {
                    engine.submit("fil", groth16::wtns_bytes(std::vector<Fr>{Fr::one(), Fr::one()}));
                  },
                  &message) == ErrorKind::bad_witness);
  BOOST_CHECK_MESSAGE(message.find(params_files().r1cs.string()) != std::string::npos, message);
  gate.open();
  check_done(held, 2, 3);
  check_params_done(first, 2, 9);
  check_params_done(last, 3, 9);
  const auto failed = bad.wait();
  BOOST_CHECK(failed.state == ProofState::failed);
  BOOST_CHECK_MESSAGE(failed.error.find("bad.wtns") != std::string::npos, failed.error);
  BOOST_CHECK_MESSAGE(failed.error.find("does not satisfy constraint 1") != std::string::npos, failed.error);
  BOOST_CHECK_EQUAL(engine.status().failed, 1u);
}

// A constraint system that is not the key's circuit is refused at load, naming both files: one
// with another count of wires, one with the same wires whose B columns differ.
BOOST_AUTO_TEST_CASE(an_r1cs_of_another_circuit_is_refused_naming_both) {
  Engine engine(config());
  auto wider = multiplier_circuit();
  wider.n_wires = 6;
  wider.n_labels = 6;
  auto other_columns = multiplier_circuit();
  other_columns.constraints[1].b = {{3, Fr::one()}};
  for (const auto& [file, circuit] : {std::pair{"wider.r1cs", wider}, std::pair{"columns.r1cs", other_columns}}) {
    const auto path = params_files().dir / file;
    groth16::write_r1cs(path, circuit);
    std::string message;
    BOOST_CHECK(error_kind_of([&] { engine.load_params_key("fil", params_files().params, path); }, &message) ==
                ErrorKind::bad_key);
    BOOST_CHECK_MESSAGE(message.find(path.string()) != std::string::npos, message);
    BOOST_CHECK_MESSAGE(message.find(params_files().params.string()) != std::string::npos, message);
    BOOST_CHECK(!engine.has_key("fil"));
  }
  std::string message;
  BOOST_CHECK(
      error_kind_of([&] { engine.load_params_key("fil", params_files().dir / "none.params", params_files().r1cs); },
                    &message) == ErrorKind::bad_key);
  BOOST_CHECK_MESSAGE(message.find("none.params") != std::string::npos, message);
}
