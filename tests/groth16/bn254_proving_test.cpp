// BN254 proofs made by the Groth16 program on the functional simulator: a BN254 key (the
// test-only setup's) in its device layout (64-byte G1, 128-byte G2 points), its kernels launched
// over BN254, under two policies, with the a/b/c step in each place and the key's sets in every
// placement; each proof equal to the CPU prover's and verified by the pairing check. And the
// BLS12-381 layout of the same circuit's key is left as it was.
#define BOOST_TEST_MODULE groth16_bn254_proving
#include <boost/test/unit_test.hpp>

#include "coordinator/coordinator.hpp"
#include "device/kernel_abi.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "groth16/verify.hpp"
#include "groth16/witness.hpp"
#include "groth16/zkey.hpp"
#include "support/functional_groth16_device.hpp"
#include "support/functional_run.hpp"
#include "support/key_placements.hpp"
#include "support/multiplier_circuit.hpp"
#include "workloads/groth16/groth16_workload.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace stagehand;
using namespace stagehand::groth16;
using Fr = math::bn254::Fr;

namespace {

// The multiplier (tests/support/multiplier_circuit.hpp) over BN254's Fr, and an empty row.
bn254::R1cs circuit() {
  auto r1cs = testing::bn254_multiplier_circuit();
  r1cs.constraints.push_back({{}, {}, {}});
  return r1cs;
}

std::vector<Fr> witness() {
  const Fr x = Fr::from_uint64(6), y = Fr::from_uint64(7);
  return {Fr::one(), x * y, x, y, x + Fr::from_uint64(3) * y};
}

struct Files {
  fs::path dir = fs::temp_directory_path() / ("stagehand_bn254_proving_" + std::to_string(::getpid()));
  fs::path zkey = dir / "small.zkey", wtns = dir / "small.wtns";
  Files() {
    fs::create_directories(dir);
    bn254::SetupOptions options;
    options.seed = 42;
    options.thread_count = 2;
    bn254::write_zkey(zkey, bn254::setup_from_r1cs(circuit(), options));
    bn254::write_wtns(wtns, witness());
  }
  ~Files() { fs::remove_all(dir); }
};

struct Proofs {
  RunReport report;
  std::vector<std::optional<bn254::Proof>> proofs;
  std::vector<std::vector<Fr>> public_signals;
  Bytes memory_left = 0;
};

Proofs prove(const bn254::ProvingKey& key, const fs::path& zkey, std::vector<bn254::ProofJob> jobs, Policy policy,
             AbcStep abc_step, KeyPlacement placement, bn254::ProofChecks checks = {}) {
  Proofs result;
  result.proofs.resize(jobs.size());
  result.public_signals.resize(jobs.size());
  testing::FunctionalGroth16Device h200;
  HostWork host_work(0);
  bn254::Groth16Workload workload(
      key, zkey, std::move(jobs), host_work, 2,
      [&](int job, const bn254::Proof& proof, const std::vector<Fr>& signals) {
        result.proofs.at(static_cast<std::size_t>(job)) = proof;
        result.public_signals.at(static_cast<std::size_t>(job)) = signals;
      },
      checks, abc_step, placement);
  CoordinatorSettings settings;
  settings.policy = policy;
  result.report = testing::run_functional(h200.system, h200.device, settings, workload);
  result.memory_left = h200.device.memory_info().total_bytes - h200.device.memory_info().free_bytes;
  return result;
}

std::vector<std::pair<std::string, KeyPlacement>> placements() {
  auto all = testing::every_placement();
  // Buffers of two BN254 G1 points (one G2 point): every streamed set takes several batches.
  for (auto& [name, placement] : all)
    placement.stream_buffer_bytes = 2 * kernel::curve_sizes(kernel::Curve::bn254).g1_affine;
  return all;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_bn254_key_has_bn254_sizes_and_layout) {
  Files files;
  const auto key = bn254::read_zkey(files.zkey);
  const auto sizes = KeySizes::of(key);
  BOOST_TEST((sizes.curve == kernel::Curve::bn254));
  const auto shape = shape_key_program(sizes, KeyPlacement::all(SetPlacement::resident));
  BOOST_TEST(shape.sets[kSetA].point_bytes == 64u);
  BOOST_TEST(shape.sets[kSetB2].point_bytes == 128u);
  BOOST_TEST(shape.sets[kSetA].sum_bytes == 96u);
  BOOST_TEST(shape.sets[kSetB2].sum_bytes == 192u);
  BOOST_TEST(key.a.bytes().size() == key.n_vars * 64u);
  BOOST_TEST(key.b2.bytes().size() == key.n_vars * 128u);
  // BLS12-381's sizes are as they were.
  const auto bls = KeySizes::synthetic(10);
  BOOST_TEST((bls.curve == kernel::Curve::bls12_381));
  BOOST_TEST(shape_key_program(bls, KeyPlacement{}).sets[kSetB2].point_bytes == 192u);
  BOOST_TEST(shape_key_program(bls, KeyPlacement{}).sets[kSetH].sum_bytes == 144u);
}

BOOST_AUTO_TEST_CASE(bn254_proofs_on_the_functional_simulator_equal_the_cpu_provers_and_verify) {
  Files files;
  const auto key = bn254::read_zkey(files.zkey);
  const auto expected_signals = bn254::public_signals(key, witness());
  for (const auto& [name, placement] : placements())
    for (auto abc_step : {AbcStep::device, AbcStep::streamed, AbcStep::host})
      for (auto policy : {Policy::serial, Policy::budgeted}) {
        BOOST_TEST_CONTEXT("sets " << name << ", policy " << to_string(policy) << ", a/b/c " << to_string(abc_step)) {
          auto chosen = placement;
          // Streamed, the matrix's chunks take the buffers first: a row's chunk must fit one.
          if (abc_step == AbcStep::streamed) chosen.stream_buffer_bytes = 8 * 64;
          std::vector<bn254::ProofJob> jobs;
          for (std::uint64_t seed : {11, 12}) jobs.push_back({files.wtns, bn254::ProofRandomness::from_seed(seed)});
          const auto result = prove(key, files.zkey, jobs, policy, abc_step, chosen);
          BOOST_TEST(result.report.partitions_completed == static_cast<int>(jobs.size()));
          BOOST_TEST(result.report.oom_count == 0u);
          BOOST_TEST(result.memory_left == 0u);
          for (std::size_t i = 0; i < jobs.size(); ++i) {
            BOOST_TEST_REQUIRE(result.proofs[i].has_value());
            const auto& proof = *result.proofs[i];
            const auto cpu = bn254::prove_on_cpu(key, witness(), jobs[i].randomness, 2);
            BOOST_TEST((proof.a == cpu.a));
            BOOST_TEST((proof.b == cpu.b));
            BOOST_TEST((proof.c == cpu.c));
            BOOST_TEST((result.public_signals[i] == expected_signals));
            BOOST_TEST(bn254::verify_proof(key, proof, result.public_signals[i]));
          }
        }
      }
}

// A witness that does not satisfy the circuit gets no proof: the pairing check in the workload's
// finish fails its job, naming the check.
BOOST_AUTO_TEST_CASE(a_bn254_proof_that_does_not_verify_fails_its_job) {
  Files files;
  const auto key = bn254::read_zkey(files.zkey);
  auto bad = witness();
  bad[4] = bad[4] + Fr::one();
  bn254::write_wtns(files.dir / "bad.wtns", bad);
  std::vector<bn254::ProofJob> jobs{{files.dir / "bad.wtns", bn254::ProofRandomness::from_seed(1)},
                                    {files.wtns, bn254::ProofRandomness::from_seed(2)}};
  const auto result = prove(key, files.zkey, jobs, Policy::budgeted, AbcStep::device, {});
  BOOST_TEST(!result.proofs[0].has_value());
  BOOST_TEST(result.proofs[1].has_value());
  BOOST_TEST(result.report.partitions_completed == 1);
  BOOST_TEST(result.report.jobs.at(0).error.find("does not verify") != std::string::npos,
             result.report.jobs.at(0).error);
}

// With the circuit's constraint system the same witness is refused in prepare, naming the
// constraint it does not satisfy; a witness handed over as bytes (a service's request) is read by
// BN254's reader and proved.
BOOST_AUTO_TEST_CASE(a_bn254_witness_is_checked_against_the_circuit_and_read_from_bytes) {
  Files files;
  const auto key = bn254::read_zkey(files.zkey);
  const auto r1cs = circuit();
  auto bad = witness();
  bad[4] = bad[4] + Fr::one();
  bn254::write_wtns(files.dir / "bad.wtns", bad);
  std::ifstream in(files.wtns, std::ios::binary);
  const auto bytes = std::make_shared<const std::vector<std::uint8_t>>(std::istreambuf_iterator<char>(in),
                                                                       std::istreambuf_iterator<char>());
  std::vector<bn254::ProofJob> jobs{{files.dir / "bad.wtns", bn254::ProofRandomness::from_seed(1)},
                                    {"request", bn254::ProofRandomness::from_seed(2), bytes}};
  const auto result = prove(key, files.zkey, jobs, Policy::budgeted, AbcStep::host, {},
                            bn254::ProofChecks{.r1cs = &r1cs, .r1cs_path = "small.r1cs"});
  BOOST_TEST(!result.proofs[0].has_value());
  const auto& error = result.report.jobs.at(0).error;
  BOOST_TEST(error.find("does not satisfy constraint 1 of small.r1cs") != std::string::npos, error);
  BOOST_TEST_REQUIRE(result.proofs[1].has_value());
  BOOST_TEST(bn254::verify_proof(key, *result.proofs[1], result.public_signals[1]));
}
