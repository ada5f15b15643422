// The Groth16 checks around a proof: verification of valid and tampered proofs, unsatisfied
// constraints and another circuit's constraint system named, memory plans and public counts that
// must not wrap, the proofs' randomness, the public signals' JSON, the device's Jacobian sums.
// The shared helpers (the small circuit's files, proofs through the coordinator) are
// tests/support/groth16_files.hpp.

#define BOOST_TEST_MODULE groth16_checks
#include <boost/test/unit_test.hpp>

#include "support/groth16_files.hpp"

#include <sys/stat.h>

namespace fs = std::filesystem;
using namespace stagehand;
using namespace stagehand::groth16;
using namespace stagehand::testing;
using math::Fr;

BOOST_AUTO_TEST_SUITE(proving)

// One bit of w[index] flipped: a witness of the right shape that no longer satisfies the circuit.
std::vector<Fr> flipped(std::vector<Fr> witness, std::size_t index) {
  auto limbs = witness.at(index).to_canonical_limbs();
  limbs[0] ^= 1;
  witness[index] = *Fr::from_canonical_limbs(limbs);
  return witness;
}

BOOST_AUTO_TEST_CASE(a_valid_proof_verifies_and_tampered_ones_do_not) {
  Files files;
  const auto key = read_zkey(files.zkey);
  const auto witness = small_witness();
  const auto signals = public_signals(key, witness);
  const auto proof = prove_on_cpu(key, witness, ProofRandomness::from_seed(5), 2);
  const ProofVerifier verifier(key);
  BOOST_CHECK(!verifier.check(proof, signals).has_value());
  BOOST_CHECK(verify_proof(key, proof, signals));

  auto other_signals = signals;
  other_signals[0] += Fr::one();
  BOOST_CHECK(contains(verifier.check(proof, other_signals).value_or("verifies"), "the pairing check"));
  Proof moved = proof;
  moved.a = (math::G1Projective::from_affine(proof.a) + math::G1Curve::generator()).to_affine();
  BOOST_CHECK(contains(verifier.check(moved, signals).value_or("verifies"), "the pairing check"));
  moved = proof;
  moved.c = -proof.c;
  BOOST_CHECK(verifier.check(moved, signals).has_value());
  moved = proof;
  moved.b.x += math::Fq2::one();  // off the curve
  BOOST_CHECK(contains(verifier.check(moved, signals).value_or("verifies"), "not a point of G2's curve"));
  BOOST_CHECK(contains(verifier.check(proof, std::vector<Fr>{signals[0]}).value_or("verifies"), "1 public signals"));
  // A proof of a witness that does not satisfy the circuit, made without any check, fails.
  const auto bad = prove_on_cpu(key, flipped(witness, 3), ProofRandomness::from_seed(5), 2);
  BOOST_CHECK(contains(verifier.check(bad, signals).value_or("verifies"), "the pairing check"));
}

BOOST_AUTO_TEST_CASE(the_first_unsatisfied_constraint_is_named) {
  const auto r1cs = small_circuit();
  BOOST_CHECK(!first_unsatisfied_constraint(r1cs, small_witness()).has_value());
  BOOST_CHECK_EQUAL(first_unsatisfied_constraint(r1cs, flipped(small_witness(), 3)).value_or(99), 0u);  // y: x·y = out
  BOOST_CHECK_EQUAL(first_unsatisfied_constraint(r1cs, flipped(small_witness(), 4)).value_or(99),
                    1u);  // t: (x + 3y)·1 = t
  BOOST_CHECK_THROW(first_unsatisfied_constraint(r1cs, std::vector<Fr>{Fr::one()}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(a_witness_that_does_not_satisfy_the_circuit_yields_no_proof) {
  Files files;
  const auto key = read_zkey(files.zkey);
  const fs::path bad = files.dir / "flipped.wtns";
  write_wtns(bad, flipped(small_witness(), 3));
  std::vector<ProofJob> jobs{ProofJob{files.wtns, ProofRandomness::from_seed(1)},
                             ProofJob{bad, ProofRandomness::from_seed(2)}};

  // The pairing check (on by default): the bad proof fails its job and is never handed out.
  auto result = prove_through_coordinator(key, files.zkey, jobs, Policy::budgeted);
  BOOST_CHECK_EQUAL(result.report.partitions_completed, 1);
  BOOST_CHECK(result.proofs[0].has_value());
  BOOST_CHECK(!result.proofs[1].has_value());
  BOOST_CHECK(contains(result.report.jobs[1].error, "the proof does not verify") &&
              contains(result.report.jobs[1].error, "flipped.wtns"));
  BOOST_CHECK(verify_proof(key, *result.proofs[0], public_signals(key, small_witness())));
  BOOST_CHECK_EQUAL(result.memory_left, 0u);

  // With the constraint system: refused in prepare, naming the first failing constraint.
  const auto r1cs = read_r1cs(files.r1cs);
  ProofChecks with_r1cs;
  with_r1cs.r1cs = &r1cs;
  with_r1cs.r1cs_path = files.r1cs;
  result = prove_through_coordinator(key, files.zkey, jobs, Policy::budgeted, with_r1cs);
  BOOST_CHECK_EQUAL(result.report.partitions_completed, 1);
  BOOST_CHECK(result.proofs[0].has_value() && !result.proofs[1].has_value());
  BOOST_CHECK(contains(result.report.jobs[1].error, "does not satisfy constraint 0 of") &&
              contains(result.report.jobs[1].error, "small.r1cs"));
  BOOST_CHECK_EQUAL(result.memory_left, 0u);

  // --no-verify: no check, so the bad witness gets a proof (one that does not verify).
  ProofChecks none;
  none.verify = false;
  result = prove_through_coordinator(key, files.zkey, jobs, Policy::budgeted, none);
  BOOST_CHECK_EQUAL(result.report.partitions_completed, 2);
  BOOST_REQUIRE(result.proofs[1].has_value());
  BOOST_CHECK(!verify_proof(key, *result.proofs[1], public_signals(key, small_witness())));
}

BOOST_AUTO_TEST_CASE(a_constraint_system_of_another_circuit_is_refused) {
  Files files;
  const auto key = read_zkey(files.zkey);
  auto r1cs = small_circuit();
  r1cs.n_wires = 6;
  ProofChecks checks;
  checks.r1cs = &r1cs;
  checks.r1cs_path = "other.r1cs";
  HostWork host_work(0);
  auto message = error_of([&] { Groth16Workload(key, files.zkey, {}, host_work, 2, nullptr, checks); });
  BOOST_CHECK(contains(message, "other.r1cs") && contains(message, "another circuit"));
}

// Regression: 32 · domain_size and 32 · n_vars were u32 products and wrapped at 2^27, inside
// the range the reader accepts (a 2^27 key planned 0 bytes for each polynomial).
BOOST_AUTO_TEST_CASE(the_memory_plan_of_a_2_27_key_does_not_wrap) {
  ProvingKey key;
  key.domain_log2 = 27;
  key.domain_size = 1u << 27;
  key.n_vars = (1u << 28) - 1;
  key.n_public = 2;
  HostWork host_work(0);
  const Bytes polynomial = Bytes{32} << 27;  // 4 GiB
  const Bytes witness = Bytes{32} * ((1u << 28) - 1);
  // a/b/c on the host: a, b, c are the job's three inputs.
  const Groth16Workload host_workload(key, "big.zkey", {}, host_work, 1, {}, {}, AbcStep::host);
  const auto on_host = host_workload.memory_plan(0);
  // Five sums, one per set (all resident): four in G1 (144 bytes), one in G2 (288).
  const Bytes results = host_workload.result_bytes();
  BOOST_CHECK_EQUAL(results, 4 * 144 + 288);
  BOOST_CHECK_EQUAL(on_host.input_bytes, polynomial);
  BOOST_CHECK_EQUAL(on_host.input_count, 3);
  BOOST_CHECK_EQUAL(on_host.peak_bytes, 3 * polynomial + witness + results);
  BOOST_CHECK_EQUAL(on_host.peak_after_a_bytes, witness + results);
  // On the device: the witness is the one input, a, b, c the program's.
  const auto on_device = Groth16Workload(key, "big.zkey", {}, host_work, 1, {}, {}, AbcStep::device).memory_plan(0);
  BOOST_CHECK_EQUAL(on_device.input_bytes, witness);
  BOOST_CHECK_EQUAL(on_device.input_count, 1);
  BOOST_CHECK_EQUAL(on_device.peak_bytes, 3 * polynomial + witness + results);
  BOOST_CHECK_EQUAL(on_device.peak_after_b_and_c_bytes, polynomial + witness + results);
  // The resident matrix: its row offsets alone are 16 bytes a row.
  BOOST_CHECK_GE(Groth16Workload::matrix_bytes(KeySizes::of(key), AbcStep::device), 16 * (Bytes{1} << 27));
  BOOST_CHECK_EQUAL(Groth16Workload::matrix_bytes(KeySizes::of(key), AbcStep::host), 0u);
}

// Regression (the .zkey's side): nPublic = 0xFFFFFFFF wrapped nPublic + 1 to 0 in the header's
// check; it is refused there, in the header, not by a confusing IC size.
BOOST_AUTO_TEST_CASE(a_zkey_public_count_that_wraps_is_refused_in_the_header) {
  Files files;
  auto bytes = load(files.zkey);
  put_u32(bytes, section_offset(bytes, 2) + 4 + 48 + 4 + 32 + 4, 0xFFFFFFFF);
  save(files.zkey, bytes);
  auto message = error_of([&] { read_zkey(files.zkey); });
  BOOST_CHECK(contains(message, "section 2 (header)") && contains(message, "nPublic = 4294967295"));
}

BOOST_AUTO_TEST_CASE(seeded_randomness_is_reproducible_and_system_randomness_is_not) {
  BOOST_CHECK(ProofRandomness::from_seed(3).r == ProofRandomness::from_seed(3).r);
  BOOST_CHECK(!(ProofRandomness::from_seed(3).r == ProofRandomness::from_seed(4).r));
  BOOST_CHECK(!(ProofRandomness::from_system().r == ProofRandomness::from_system().r));
}

BOOST_AUTO_TEST_CASE(public_json_is_the_public_signals_in_decimal) {
  Files files;
  const auto key = read_zkey(files.zkey);
  const auto text = public_json(public_signals(key, small_witness()));
  BOOST_CHECK(text.find("\"42\"") != std::string::npos && text.find("\"6\"") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(the_devices_jacobian_sums_round_trip_and_refuse_unreduced_coordinates) {
  const auto g1 = math::G1Projective::from_affine(math::G1Curve::generator()).multiply(Fr::from_uint64(12345));
  std::array<std::uint8_t, kG1JacobianBytes> g1_bytes{};
  encode_g1_jacobian(g1, g1_bytes);
  const auto g1_back = decode_g1_jacobian(g1_bytes);
  BOOST_TEST_REQUIRE(g1_back.has_value());
  BOOST_TEST((*g1_back == g1));
  const auto g2 = math::G2Projective::from_affine(math::G2Curve::generator()).multiply(Fr::from_uint64(678));
  std::array<std::uint8_t, kG2JacobianBytes> g2_bytes{};
  encode_g2_jacobian(g2, g2_bytes);
  const auto g2_back = decode_g2_jacobian(g2_bytes);
  BOOST_TEST_REQUIRE(g2_back.has_value());
  BOOST_TEST((*g2_back == g2));
  // All ones is above q: a poisoned result, not a point.
  std::fill(g1_bytes.begin() + 96, g1_bytes.end(), std::uint8_t{0xff});
  BOOST_TEST(!decode_g1_jacobian(g1_bytes).has_value());
  std::fill(g2_bytes.begin() + 240, g2_bytes.end(), std::uint8_t{0xff});
  BOOST_TEST(!decode_g2_jacobian(g2_bytes).has_value());
}
