// Proofs from Filecoin assignments on the device path (workloads/assignment/, proving/assignment_batch.hpp)
// on the functional simulator, against SupraSeal C2's CPU reference (groth16/assignment_prover.hpp):
// for random assignments (they satisfy nothing: given r and s the bytes are deterministic) the
// 384-byte proofs are byte-identical, for 1 and 3 circuits a call, with full and with bit-heavy aux
// values; satisfying assignments give proofs that verify; one that satisfies nothing is refused by
// the pairing check; every policy and two devices give the same bytes; on devices too small for
// the whole key, its sets are streamed in part or all (the same bytes again), and a device too
// small for one proof even then is a clear error naming the sizes.

#define BOOST_TEST_MODULE groth16_assignment_device
#include <boost/test/unit_test.hpp>

#include "support/filecoin_assignment.hpp"
#include "support/functional_groth16_device.hpp"
#include "support/input_errors.hpp"
#include "support/multiplier_circuit.hpp"
#include "groth16/assignment_prover.hpp"
#include "groth16/params.hpp"
#include "groth16/setup.hpp"
#include "groth16/synthetic_circuit.hpp"
#include "groth16/verify.hpp"
#include "proving/assignment_batch.hpp"
#include "sim/run.hpp"
#include "util/random.hpp"
#include "workloads/assignment/assignment_workload.hpp"
#include "device/format.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <vector>

using namespace stagehand;
using namespace stagehand::groth16;
using math::Fr;
using testing::contains;
using testing::error_of;
using testing::filecoin_assignment;
using testing::FilecoinAssignment;
using testing::seeded;

namespace {

// A circuit whose aux values are mostly bits, its key and its satisfying assignment.
struct BitHeavy {
  SyntheticCircuit circuit = make_synthetic_circuit(60, 3, /*bits=*/true);
  ParamsKey key = setup_params_from_r1cs(circuit.r1cs, seeded());
  FilecoinAssignment satisfied = filecoin_assignment(circuit.r1cs, circuit.witness);
  AssignmentProver cpu{key, 2};
};

// The shape's values drawn at random; with `bit_heavy`, three aux values in four are 0 or 1.
FilecoinAssignment random_assignment(const FilecoinAssignment& shape, std::uint64_t seed, bool bit_heavy) {
  Random random(seed);
  auto full = [&] {
    return Fr::from_uint64(random.next()) * Fr::from_uint64(random.next()) + Fr::from_uint64(random.next());
  };
  FilecoinAssignment out = shape;
  for (auto* values : {&out.a, &out.b, &out.c, &out.inputs}) {
    for (auto& value : *values) value = full();
  }
  for (auto& value : out.aux) {
    const auto kind = random.next() % 4;
    value = !bit_heavy || kind == 3 ? full() : Fr::from_uint64(kind % 2);
  }
  return out;
}

// How prove_on_device runs: the device's memory (0: the H200's), the policy, a second device,
// each stream buffer's bytes; and where the run placed the key's sets, once it has run.
struct DeviceRun {
  Bytes memory_bytes = 0;
  Policy policy = Policy::budgeted;
  bool two_devices = false;
  Bytes stream_buffer_bytes = kGiB;
  AssignmentLayout* layout = nullptr;
  DeviceCounters* counters = nullptr;  // the first device's, at the run's end
};

// The proofs of `assignments` through the coordinator on a functional simulated H200 (with a
// second beside it where asked).
std::vector<Proof> prove_on_device(const ParamsKey& key, const std::vector<FilecoinAssignment>& assignments,
                                   const std::vector<ProofRandomness>& randomness, bool verify, const DeviceRun& run) {
  testing::FunctionalGroth16Device h200;
  if (run.memory_bytes > 0) h200.device.set_memory_bytes(run.memory_bytes);
  std::vector<Device*> devices{&h200.device};
  if (run.two_devices)
    devices.push_back(&h200.system.add_device(sim::load_device_model(sim::find_device_model("h200"))));
  std::vector<AssignmentView> views;
  for (const auto& assignment : assignments) views.push_back(assignment.view());
  proving::AssignmentBatchSettings settings;
  settings.verify = verify;
  settings.threads = 2;
  settings.coordinator.policy = run.policy;
  settings.stream_buffer_bytes = run.stream_buffer_bytes;
  proving::AssignmentBatchResult result;
  sim::run_to_completion(h200.system, [&]() -> asio::awaitable<void> {
    result = co_await proving::run_assignment_batch(devices, key, views, randomness, settings);
  }());
  BOOST_TEST(result.report.oom_count == 0u);
  for (auto* device : devices) {
    BOOST_TEST(device->memory_info().free_bytes == device->memory_info().total_bytes);  // nothing left behind
  }
  if (run.two_devices) {
    BOOST_REQUIRE_EQUAL(result.report.per_device.size(), 2u);
    BOOST_TEST(result.report.per_device[0].jobs_completed + result.report.per_device[1].jobs_completed ==
               static_cast<int>(assignments.size()));
    BOOST_TEST(result.report.per_device[1].jobs_completed > 0);  // the second device's set-up proved too
  }
  if (run.layout != nullptr) *run.layout = result.layout;
  if (run.counters != nullptr) *run.counters = h200.device.counters();
  return result.proofs;
}

std::vector<Proof> prove_on_device(const ParamsKey& key, const std::vector<FilecoinAssignment>& assignments,
                                   const std::vector<ProofRandomness>& randomness, bool verify, Bytes memory_bytes = 0,
                                   Policy policy = Policy::budgeted, bool two_devices = false) {
  return prove_on_device(key, assignments, randomness, verify,
                         DeviceRun{.memory_bytes = memory_bytes, .policy = policy, .two_devices = two_devices});
}

std::vector<ProofRandomness> randomness_for(std::size_t circuits, std::uint64_t seed) {
  std::vector<ProofRandomness> randomness;
  for (std::size_t i = 0; i < circuits; ++i) randomness.push_back(ProofRandomness::from_seed(seed + i));
  return randomness;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(assignment_device, BitHeavy)

BOOST_AUTO_TEST_CASE(random_assignments_give_the_cpu_references_bytes) {
  for (const std::size_t circuits : {1, 3}) {
    for (const bool bit_heavy : {false, true}) {
      BOOST_TEST_CONTEXT(circuits << " circuits, " << (bit_heavy ? "bit-heavy" : "full") << " aux") {
        std::vector<FilecoinAssignment> assignments;
        for (std::size_t i = 0; i < circuits; ++i)
          assignments.push_back(random_assignment(satisfied, 10 * circuits + i, bit_heavy));
        const auto randomness = randomness_for(circuits, 7);
        const auto proofs = prove_on_device(key, assignments, randomness, /*verify=*/false);
        BOOST_REQUIRE_EQUAL(proofs.size(), circuits);
        for (std::size_t i = 0; i < circuits; ++i) {
          const auto expected = encode_supraseal_proof(cpu.prove(assignments[i].view(), randomness[i]));
          const auto got = encode_supraseal_proof(proofs[i]);
          BOOST_TEST(got == expected, "circuit " << i << ": the device's 384 bytes differ from the CPU reference's");
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(every_policy_gives_the_same_bytes) {
  std::vector<FilecoinAssignment> assignments;
  for (std::uint64_t i = 0; i < 3; ++i) assignments.push_back(random_assignment(satisfied, 70 + i, true));
  const auto randomness = randomness_for(3, 80);
  for (const auto policy : {Policy::serial, Policy::prestage, Policy::two_lock, Policy::budgeted}) {
    BOOST_TEST_CONTEXT("policy " << to_string(policy)) {
      const auto proofs = prove_on_device(key, assignments, randomness, /*verify=*/false, 0, policy);
      BOOST_REQUIRE_EQUAL(proofs.size(), assignments.size());
      for (std::size_t i = 0; i < proofs.size(); ++i) {
        BOOST_TEST(encode_supraseal_proof(proofs[i]) ==
                   encode_supraseal_proof(cpu.prove(assignments[i].view(), randomness[i])));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(two_devices_share_the_circuits_and_give_the_same_bytes) {
  std::vector<FilecoinAssignment> assignments;
  for (std::uint64_t i = 0; i < 5; ++i) assignments.push_back(random_assignment(satisfied, 90 + i, i % 2 == 0));
  const auto randomness = randomness_for(5, 100);
  const auto proofs =
      prove_on_device(key, assignments, randomness, /*verify=*/false, 0, Policy::budgeted, /*two_devices=*/true);
  BOOST_REQUIRE_EQUAL(proofs.size(), assignments.size());
  for (std::size_t i = 0; i < proofs.size(); ++i) {
    BOOST_TEST(encode_supraseal_proof(proofs[i]) ==
               encode_supraseal_proof(cpu.prove(assignments[i].view(), randomness[i])));
  }
}

BOOST_AUTO_TEST_CASE(a_kept_key_is_set_up_once_for_two_runs_and_released) {
  testing::FunctionalGroth16Device h200;
  const std::vector<Device*> devices{&h200.device};
  const auto assignment = random_assignment(satisfied, 110, true);
  const std::vector<AssignmentView> views{assignment.view()};
  const auto randomness = randomness_for(1, 120);
  proving::AssignmentBatchSettings settings;
  settings.verify = false;
  settings.threads = 2;
  settings.key_state = std::make_shared<AssignmentKeyState>();
  std::vector<Proof> proofs;
  Bytes held_between = 0;
  sim::run_to_completion(h200.system, [&]() -> asio::awaitable<void> {
    proofs.push_back((co_await proving::run_assignment_batch(devices, key, views, randomness, settings)).proofs.at(0));
    held_between = h200.device.memory_info().total_bytes - h200.device.memory_info().free_bytes;
    proofs.push_back((co_await proving::run_assignment_batch(devices, key, views, randomness, settings)).proofs.at(0));
    co_await settings.key_state->release();
  }());
  BOOST_TEST(settings.key_state->set_ups() == 1u);  // the second run found the sets where the first left them
  BOOST_TEST(held_between == AssignmentWorkload::key_bytes(key));
  BOOST_TEST(!settings.key_state->holds_anything());
  BOOST_TEST(h200.device.memory_info().free_bytes == h200.device.memory_info().total_bytes);
  const auto expected = encode_supraseal_proof(cpu.prove(assignment.view(), randomness[0]));
  for (const auto& proof : proofs) BOOST_TEST(encode_supraseal_proof(proof) == expected);
}

BOOST_AUTO_TEST_CASE(satisfying_assignments_give_proofs_that_verify) {
  const std::vector<FilecoinAssignment> assignments{satisfied, satisfied, satisfied};
  const auto randomness = randomness_for(3, 20);
  const auto proofs = prove_on_device(key, assignments, randomness, /*verify=*/true);
  BOOST_REQUIRE_EQUAL(proofs.size(), 3u);
  const ProvingKey verifier_key = verifier_key_of(key);
  const ProofVerifier verifier(verifier_key);  // keeps a reference to the key
  for (std::size_t i = 0; i < proofs.size(); ++i) {
    BOOST_TEST(!verifier.check(proofs[i], std::span<const Fr>(satisfied.inputs).subspan(1)).has_value());
    BOOST_TEST(encode_supraseal_proof(proofs[i]) == encode_supraseal_proof(cpu.prove(satisfied.view(), randomness[i])));
  }
}

BOOST_AUTO_TEST_CASE(the_multipliers_assignment_verifies) {
  const auto r1cs = testing::multiplier_circuit();
  const auto multiplier_key = setup_params_from_r1cs(r1cs, seeded());
  const Fr x = Fr::from_uint64(3), y = Fr::from_uint64(11);
  const std::vector<Fr> witness{Fr::one(), x * y, x, y, x + Fr::from_uint64(3) * y};
  const std::vector<FilecoinAssignment> assignments{filecoin_assignment(r1cs, witness)};
  const auto randomness = randomness_for(1, 30);
  const auto proofs = prove_on_device(multiplier_key, assignments, randomness, /*verify=*/true);
  BOOST_REQUIRE_EQUAL(proofs.size(), 1u);
  BOOST_TEST(verify_proof(verifier_key_of(multiplier_key), proofs[0], std::span<const Fr>(witness).subspan(1, 2)));
}

BOOST_AUTO_TEST_CASE(an_assignment_that_satisfies_nothing_is_refused_by_the_pairing_check) {
  const std::vector<FilecoinAssignment> assignments{satisfied, random_assignment(satisfied, 5, true)};
  const auto message = error_of([&] { prove_on_device(key, assignments, randomness_for(2, 40), /*verify=*/true); });
  BOOST_TEST(contains(message, "circuit 1"), message);
  BOOST_TEST(contains(message, "does not verify"), message);
}

// Small buffers, so that every streamed set goes up in several batches (10 G1 points, 5 in G2).
constexpr Bytes kSmallBuffer = 960;
constexpr Bytes kMargin = 512 * kMiB;  // CoordinatorSettings's safety margin, which the tests keep

// One proof's least device memory with every set streamed through kSmallBuffer buffers (with its
// inputs all pre-staged, or late: two polynomials at a time).
Bytes streamed_proof(const ParamsKey& key, bool late_inputs = false) {
  testing::FunctionalGroth16Device h200;
  return AssignmentWorkload::streamed_proof_bytes(key, h200.device, kSmallBuffer, late_inputs);
}

BOOST_AUTO_TEST_CASE(sets_resident_streamed_in_part_or_all_give_the_cpu_references_bytes) {
  std::vector<FilecoinAssignment> assignments;
  for (std::uint64_t i = 0; i < 3; ++i) assignments.push_back(random_assignment(satisfied, 130 + i, i != 1));
  const auto randomness = randomness_for(3, 140);
  const Bytes proof = streamed_proof(key);
  // Room for the two workers' proofs and, beside them, a and b_g1 (the plan's first two) with
  // less than any other set to spare; then room for one proof alone, so that nothing stays.
  const Bytes a_and_b1 = key.a.bytes().size() + key.b_g1.bytes().size();
  const Bytes part = kMargin + 2 * proof + a_and_b1 + kKiB;
  const Bytes none = kMargin + proof + kKiB;
  BOOST_REQUIRE(kKiB < std::min({key.h.bytes().size(), key.l.bytes().size(), key.b_g2.bytes().size()}));
  // Below one proof with every input on the device: two polynomials at a time.
  const Bytes late = kMargin + streamed_proof(key, true) + kKiB;
  BOOST_REQUIRE(late < none);
  for (const Bytes memory : {Bytes{0}, part, none, late}) {
    AssignmentLayout layout;
    DeviceCounters counters;
    const auto proofs = prove_on_device(
        key, assignments, randomness, /*verify=*/false,
        DeviceRun{
            .memory_bytes = memory, .stream_buffer_bytes = kSmallBuffer, .layout = &layout, .counters = &counters});
    BOOST_TEST_CONTEXT(describe_assignment_layout(layout) << " on " << memory << " bytes") {
      const auto& placement = layout.placement;
      const auto& sets = placement.sets;
      BOOST_TEST(layout.late_inputs == (memory == late));
      const auto count = [&](SetPlacement where) { return std::ranges::count(sets, where); };
      if (memory == 0) BOOST_TEST(count(SetPlacement::resident) == 5);
      if (memory == part) {
        BOOST_TEST((sets[kSetA] == SetPlacement::resident && sets[kSetB1] == SetPlacement::resident));
        BOOST_TEST((sets[kSetH] == SetPlacement::streamed && sets[kSetL] == SetPlacement::streamed &&
                    sets[kSetB2] == SetPlacement::streamed));
      }
      if (memory == none || memory == late) {
        BOOST_TEST(count(SetPlacement::streamed) == 5);
        // Every proof streamed the whole key from its registered host bytes: the pageable copies
        // (the query scalars) are fewer bytes than the key.
        const Bytes key_bytes = AssignmentWorkload::key_bytes(key);
        BOOST_TEST(counters.pinned_bytes_copied >= assignments.size() * key_bytes);
        BOOST_TEST(counters.pageable_bytes_copied < key_bytes);
      }
      // Each streamed set went up in several batches.
      const auto shape = shape_key_program(assignment_key_sizes(key), placement);
      for (std::size_t set = 0; set < kKeySetCount; ++set) {
        if (sets[set] == SetPlacement::streamed) BOOST_TEST(shape.sets[set].batches > 1u, kAssignmentSetNames[set]);
      }
      BOOST_REQUIRE_EQUAL(proofs.size(), assignments.size());
      for (std::size_t i = 0; i < proofs.size(); ++i) {
        BOOST_TEST(encode_supraseal_proof(proofs[i]) ==
                       encode_supraseal_proof(cpu.prove(assignments[i].view(), randomness[i])),
                   "circuit " << i << ": the device's 384 bytes differ from the CPU reference's");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(streamed_sets_give_proofs_that_verify) {
  const std::vector<FilecoinAssignment> assignments{satisfied, satisfied};
  const auto randomness = randomness_for(2, 150);
  const auto proofs = prove_on_device(
      key, assignments, randomness, /*verify=*/true,
      DeviceRun{.memory_bytes = kMargin + streamed_proof(key) + kKiB, .stream_buffer_bytes = kSmallBuffer});
  BOOST_REQUIRE_EQUAL(proofs.size(), 2u);
  for (std::size_t i = 0; i < proofs.size(); ++i)
    BOOST_TEST(encode_supraseal_proof(proofs[i]) == encode_supraseal_proof(cpu.prove(satisfied.view(), randomness[i])));
}

BOOST_AUTO_TEST_CASE(a_device_too_small_even_for_streaming_is_a_clear_error) {
  const Bytes proof = streamed_proof(key, /*late_inputs=*/true);
  for (const Bytes memory : {64 * kMiB, kMargin + proof - 1}) {
    const auto message = error_of([&] {
      prove_on_device(key, {satisfied}, randomness_for(1, 50), true,
                      DeviceRun{.memory_bytes = memory, .stream_buffer_bytes = kSmallBuffer});
    });
    BOOST_TEST(contains(message, "even with every set streamed and two of its polynomials on it at a time"), message);
    BOOST_TEST(contains(message, fmt::format("needs {}", format_bytes(proof))), message);
    BOOST_TEST(contains(message, "held back for the budget's margin"), message);
  }
}

BOOST_AUTO_TEST_CASE(a_kept_key_made_for_another_placement_is_released_before_the_run) {
  testing::FunctionalGroth16Device h200;
  const std::vector<Device*> devices{&h200.device};
  const auto assignment = random_assignment(satisfied, 160, true);
  const std::vector<AssignmentView> views{assignment.view()};
  const auto randomness = randomness_for(1, 170);
  proving::AssignmentBatchSettings settings;
  settings.verify = false;
  settings.threads = 2;
  settings.stream_buffer_bytes = kSmallBuffer;
  settings.key_state = std::make_shared<AssignmentKeyState>();
  std::vector<proving::AssignmentBatchResult> results;
  sim::run_to_completion(h200.system, [&]() -> asio::awaitable<void> {
    results.push_back(co_await proving::run_assignment_batch(devices, key, views, randomness, settings));
    // The same device with less memory: the second run streams every set.
    h200.device.set_memory_bytes(kMargin + streamed_proof(key) + kKiB);
    results.push_back(co_await proving::run_assignment_batch(devices, key, views, randomness, settings));
    co_await settings.key_state->release();
  }());
  BOOST_REQUIRE_EQUAL(results.size(), 2u);
  BOOST_TEST(std::ranges::count(results[0].layout.placement.sets, SetPlacement::resident) == 5);
  BOOST_TEST(std::ranges::count(results[1].layout.placement.sets, SetPlacement::streamed) == 5);
  BOOST_TEST(settings.key_state->set_ups() == 2u);  // the first run's sets were freed, the second set up afresh
  BOOST_TEST(h200.device.memory_info().free_bytes == h200.device.memory_info().total_bytes);
  const auto expected = encode_supraseal_proof(cpu.prove(assignment.view(), randomness[0]));
  for (const auto& result : results) BOOST_TEST(encode_supraseal_proof(result.proofs.at(0)) == expected);
}

BOOST_AUTO_TEST_CASE(sizes_that_disagree_with_the_key_are_named_before_the_run) {
  auto wrong = satisfied;
  wrong.aux.pop_back();
  const auto message = error_of([&] { prove_on_device(key, {wrong}, randomness_for(1, 60), true); });
  BOOST_TEST(contains(message, "circuit 0: aux_assignment_size"), message);
}

BOOST_AUTO_TEST_SUITE_END()
