// Groth16 proofs made as coordinator jobs on the functional simulator equal the CPU prover's under
// every policy and key placement; the placement plan; the constraint matrix against the direct
// evaluation; a bad witness failing only its own job.
// The shared helpers (the small circuit's files, proofs through the coordinator) are
// tests/support/groth16_files.hpp.

#define BOOST_TEST_MODULE groth16_proving
#include <boost/test/unit_test.hpp>

#include "support/key_placements.hpp"
#include "support/groth16_files.hpp"

#include <sys/stat.h>

namespace fs = std::filesystem;
using namespace stagehand;
using namespace stagehand::groth16;
using namespace stagehand::testing;
using math::Fr;

BOOST_AUTO_TEST_SUITE(proving)

BOOST_AUTO_TEST_CASE(proofs_through_the_coordinator_match_the_cpu_prover_under_every_policy) {
  Files files;
  const auto key = read_zkey(files.zkey);
  const auto witness = read_wtns(files.wtns);
  for (auto abc_step : {AbcStep::device, AbcStep::host})
    for (auto policy : {Policy::serial, Policy::prestage, Policy::two_lock, Policy::budgeted}) {
      BOOST_TEST_CONTEXT("policy " << to_string(policy) << ", a/b/c on the "
                                   << (abc_step == AbcStep::device ? "device" : "host")) {
        std::vector<ProofJob> jobs;
        for (std::uint64_t seed : {7, 8, 9}) jobs.push_back(ProofJob{files.wtns, ProofRandomness::from_seed(seed)});
        auto result = prove_through_coordinator(key, files.zkey, jobs, policy, {}, abc_step);
        check_matches_cpu_prover(result, jobs, key, witness);
        for (std::size_t i = 0; i < jobs.size(); ++i) {
          BOOST_REQUIRE(result.proofs[i].has_value());
          const auto& proof = *result.proofs[i];
          BOOST_CHECK(proof.a.is_on_curve() && proof.b.is_on_curve() && proof.c.is_on_curve());
          BOOST_CHECK(!proof.a.infinity);
          BOOST_CHECK(result.public_signals[i] == public_signals(key, witness));
        }
        // Distinct randomness: distinct proofs of the same witness.
        BOOST_CHECK(!(result.proofs[0]->a == result.proofs[1]->a));
      }
    }
}

// The same proofs wherever the key's sets are: resident, with their bases precomputed on the
// device, fetched whole per proof, streamed in batches (buffers of two G1 points or one G2 point,
// so that every set takes several), and a mix; the last two also with the MSMs' memory taken
// after H.
BOOST_AUTO_TEST_CASE(proofs_match_the_cpu_prover_with_the_key_sets_in_every_placement) {
  Files files;
  const auto key = read_zkey(files.zkey);
  const auto witness = read_wtns(files.wtns);
  auto placements = testing::every_placement();
  // The same two with the MSMs' memory (and, a/b/c on the host, the witness) taken after H.
  for (const auto& [name, placement] : std::vector(placements.begin() + 3, placements.end())) {
    auto late = placement;
    late.msm_memory_after_h = true;
    placements.emplace_back(name + ", MSM memory after H", late);
  }
  for (auto& [name, placement] : placements) placement.stream_buffer_bytes = 2 * kG1Bytes;
  for (const auto& [name, placement] : placements)
    for (auto abc_step : {AbcStep::device, AbcStep::streamed, AbcStep::host})
      for (auto policy : {Policy::serial, Policy::budgeted}) {
        // Streamed, the matrix's chunks take the buffers first: a row's chunk must fit one.
        if (abc_step == AbcStep::streamed && placement.msm_memory_after_h) continue;
        BOOST_TEST_CONTEXT("sets " << name << ", policy " << to_string(policy) << ", a/b/c " << to_string(abc_step)) {
          std::vector<ProofJob> jobs;
          for (std::uint64_t seed : {11, 12}) jobs.push_back(ProofJob{files.wtns, ProofRandomness::from_seed(seed)});
          auto chosen = placement;
          if (abc_step == AbcStep::streamed) chosen.stream_buffer_bytes = 4 * kG1Bytes;
          auto result = prove_through_coordinator(key, files.zkey, jobs, policy, {}, abc_step, chosen);
          check_matches_cpu_prover(result, jobs, key, witness);
          // The job's record says where the sets were, when any travelled with the proof.
          const auto& note = result.report.jobs.at(0).program_note;
          BOOST_CHECK_EQUAL(note.empty(),
                            (name == "resident" || name == "precomputed") && abc_step != AbcStep::streamed);
          if (abc_step == AbcStep::streamed) BOOST_CHECK(contains(note, "the constraint matrix streamed"));
          // Several chunks, so that the buffers take turns between them (the circuit's matrix is
          // larger than four G1 points).
          if (abc_step == AbcStep::streamed) BOOST_CHECK(!contains(note, "(1 chunk)"));
          if (name == "streamed") BOOST_CHECK(contains(note, "H, A, B1, B2, C streamed"));
          BOOST_CHECK_EQUAL(contains(note, "MSM memory after H"), placement.msm_memory_after_h);
          // The program keeps about two batches ahead of the device, whatever their number: at most
          // 36 operations were queued on one stream at once here, against 50-81 with every batch
          // enqueued at the start (on a GPU a queue that deep blocks the executor's thread).
          BOOST_CHECK_LE(result.most_operations_queued, 40u);
        }
      }
  // Several batches per set, and their sums added: the streamed key's shape.
  const auto shape = shape_key_program(KeySizes::of(key), placements[3].second);
  BOOST_CHECK_GT(shape.sets[kSetA].batches, 1u);
  BOOST_CHECK_EQUAL(shape.sets[kSetB2].points_per_batch, 1u);
  BOOST_CHECK_EQUAL(shape.sets[kSetB2].batches, key.b2.size());
}

// The plan keeps resident what fits beside the proofs in flight and streams the rest, B2 first.
BOOST_AUTO_TEST_CASE(the_placement_plan_streams_what_does_not_fit) {
  Files files;
  const auto key = read_zkey(files.zkey);
  const Bytes g1_set = key.a.bytes().size();
  const Bytes all_sets = key.a.bytes().size() + key.b1.bytes().size() + key.b2.bytes().size() + key.c.bytes().size() +
                         key.h.bytes().size();
  PlacementBudget budget;
  budget.proof_bytes = 1000;
  budget.proofs_in_flight = 2;
  budget.device_bytes = 2000 + all_sets;
  BOOST_CHECK(KeyPlacement::plan(KeySizes::of(key), budget).sets == KeyPlacement::all(SetPlacement::resident).sets);
  budget.device_bytes = 2000 + all_sets - 1;  // B2 no longer fits
  auto placement = KeyPlacement::plan(KeySizes::of(key), budget);
  BOOST_CHECK(placement.sets[kSetB2] == SetPlacement::streamed);
  BOOST_CHECK(placement.sets[kSetA] == SetPlacement::resident && placement.sets[kSetH] == SetPlacement::resident);
  budget.device_bytes = 2000 + g1_set;  // room for A alone
  placement = KeyPlacement::plan(KeySizes::of(key), budget);
  BOOST_CHECK(placement.sets[kSetA] == SetPlacement::resident);
  BOOST_CHECK(placement.sets[kSetB1] == SetPlacement::streamed && placement.sets[kSetC] == SetPlacement::streamed);
  budget.device_bytes = 1999;  // not even the proofs: every set streams
  BOOST_CHECK(KeyPlacement::plan(KeySizes::of(key), budget).sets == KeyPlacement::all(SetPlacement::streamed).sets);
  // A resident set's MSM takes all its points at once; the scratch that needs counts too.
  budget.device_bytes = 2000 + all_sets;
  budget.msm_scratch = [](std::size_t, SetPlacement, std::uint64_t points) { return points > 1 ? Bytes{1} : Bytes{0}; };
  BOOST_CHECK(KeyPlacement::plan(KeySizes::of(key), budget).sets[kSetB2] == SetPlacement::streamed);
  BOOST_CHECK_EQUAL(placement.describe().find("A resident"), 0u);
}

// Asked to, the plan precomputes the resident sets large enough for it to pay whose copies fit
// (12 of each at 2^23 points and more), in the order A, B1, C, H, B2; never a set that streams,
// nor a small one.
BOOST_AUTO_TEST_CASE(the_placement_plan_precomputes_resident_sets_where_asked_it_pays_and_it_fits) {
  const auto sizes = KeySizes::synthetic(23);
  const std::uint64_t n = sizes.set_points[kSetA];
  const Bytes g1_set = n * kG1Bytes, g2_set = n * kG2Bytes;
  const Bytes all_sets = 3 * g1_set + sizes.set_points[kSetC] * kG1Bytes + g2_set;
  PlacementBudget budget;
  budget.proof_bytes = 1000;
  budget.device_bytes = 1000 + all_sets + 11 * (2 * g1_set);  // room for the copies of A and B1
  BOOST_CHECK(KeyPlacement::plan(sizes, budget).sets == KeyPlacement::all(SetPlacement::resident).sets);  // not asked
  budget.precompute = true;
  auto placement = KeyPlacement::plan(sizes, budget);
  BOOST_CHECK(placement.sets[kSetA] == SetPlacement::precomputed &&
              placement.sets[kSetB1] == SetPlacement::precomputed);
  BOOST_CHECK(placement.sets[kSetC] == SetPlacement::resident && placement.sets[kSetH] == SetPlacement::resident);
  BOOST_CHECK(placement.sets[kSetB2] == SetPlacement::resident);
  const auto shape = shape_key_program(sizes, placement);
  BOOST_CHECK_EQUAL(shape.sets[kSetA].copies, 12u);
  BOOST_CHECK_EQUAL(shape.sets[kSetA].window_bits, 22u);
  BOOST_CHECK_EQUAL(shape.resident_bytes(), all_sets + 11 * (2 * g1_set));
  BOOST_CHECK_EQUAL(placement.describe(), "H, B2, C resident; A, B1 precomputed");
  // Everything fits: every set precomputed, B2 too; C, 5 points short of 2^23, at c = 20 in 13
  // copies. Residence comes first: with B2 streamed for want of room, no copies fit either.
  budget.device_bytes = 1000 + 13 * all_sets;
  BOOST_CHECK(KeyPlacement::plan(sizes, budget).sets == KeyPlacement::all(SetPlacement::precomputed).sets);
  BOOST_CHECK_EQUAL(shape_key_program(sizes, KeyPlacement::plan(sizes, budget)).sets[kSetC].copies, 13u);
  budget.device_bytes = 1000 + all_sets - 1;
  placement = KeyPlacement::plan(sizes, budget);
  BOOST_CHECK(placement.sets[kSetB2] == SetPlacement::streamed && placement.sets[kSetA] == SetPlacement::resident);
  // Below 2^20 points precomputing was not measured to pay: resident stays resident however much
  // room.
  const auto small = KeySizes::synthetic(19);
  budget.device_bytes = ~Bytes{0} / 4;
  BOOST_CHECK(KeyPlacement::plan(small, budget).sets == KeyPlacement::all(SetPlacement::resident).sets);
}

// The groth16_abc matrix against the independent reference, evaluate_constraints, which reads
// the key's records as they are; every row (padding included) must agree.
BOOST_AUTO_TEST_CASE(the_constraint_matrix_computes_what_evaluate_constraints_does) {
  Files files;
  const auto key = read_zkey(files.zkey);
  const auto witness = read_wtns(files.wtns);
  const auto matrix = build_constraint_matrix(key);
  BOOST_CHECK_EQUAL(matrix.layout.rows, key.domain_size);
  BOOST_CHECK_EQUAL(matrix.layout.entries_a + matrix.layout.entries_b, key.coefficients.size());
  BOOST_CHECK_EQUAL(matrix.bytes.size(), matrix.layout.total_bytes());
  const std::size_t n = key.domain_size;
  std::vector<Fr> a(n), b(n), c(n), a2(n), b2(n), c2(n);
  evaluate_constraints(key, witness, a, b, c);
  evaluate_constraint_matrix(matrix.layout, matrix.bytes, witness, a2, b2, c2, 2);
  BOOST_CHECK(a == a2);
  BOOST_CHECK(b == b2);
  BOOST_CHECK(c == c2);
  // And it is not trivially so: the circuit's rows are not all zero.
  BOOST_CHECK(std::any_of(c.begin(), c.end(), [](const Fr& value) { return !value.is_zero(); }));
}

// The matrix built on many threads from records in order (each chunk of records placed from its
// ranks) is, byte for byte, the one-thread counting sort's: that path is taken for a key whose A
// records of two rows are swapped, which leaves every row's own records in their order. A record
// outside the key is named whichever chunk holds it.
BOOST_AUTO_TEST_CASE(the_constraint_matrix_built_on_threads_is_the_counting_sorts) {
  const auto circuit = make_synthetic_circuit(synthetic_constraints_for_domain(18), 3, true);
  ProvingKey key;
  key.n_vars = circuit.r1cs.n_wires;
  key.n_public = circuit.r1cs.n_public();
  key.domain_log2 = 18;
  key.domain_size = 1u << 18;
  key.coefficients = constraint_coefficients(circuit.r1cs);
  BOOST_REQUIRE_GT(key.coefficients.size(), std::size_t{8} << 16);  // several chunks of records
  const auto threaded = build_constraint_matrix(key, 4);

  // Row 7's A records moved behind row 8's: out of order, each row's records as they were.
  auto swapped = key;
  auto& records = swapped.coefficients;
  const auto in_row = [](std::uint32_t row) {
    return [row](const Coefficient& e) { return e.matrix == 0 && e.constraint == row; };
  };
  const auto first7 = std::find_if(records.begin(), records.end(), in_row(7));
  const auto past8 = std::find_if(std::find_if(records.begin(), records.end(), in_row(8)), records.end(),
                                  [](const Coefficient& e) { return e.constraint > 8; });
  BOOST_REQUIRE(first7 != records.end());
  std::stable_partition(first7, past8, [](const Coefficient& e) { return !(e.matrix == 0 && e.constraint == 7); });
  BOOST_REQUIRE(std::find_if(records.begin(), records.end(), in_row(8)) <
                std::find_if(records.begin(), records.end(), in_row(7)));
  const auto counted = build_constraint_matrix(swapped, 4);
  BOOST_CHECK(counted.layout.entries_a == threaded.layout.entries_a &&
              counted.layout.entries_b == threaded.layout.entries_b);
  BOOST_CHECK(counted.bytes == threaded.bytes);

  auto bad = key;
  bad.coefficients[bad.coefficients.size() / 2 + 5].signal = key.n_vars;  // in a middle chunk
  BOOST_CHECK_EXCEPTION(
      build_constraint_matrix(bad, 4), std::invalid_argument, [&](const std::invalid_argument& error) {
        return std::string(error.what()).find(fmt::format("signal {}) outside the key", key.n_vars)) !=
               std::string::npos;
      });
}

// A streamed matrix's chunks: consecutive, covering every row and entry, each within its bound
// unless one row is larger, and each, laid out on its own from its six parts and evaluated with
// its first entries, giving its rows of the whole matrix's a, b, c.
BOOST_AUTO_TEST_CASE(the_constraint_matrix_in_chunks_computes_what_it_does_whole) {
  Files files;
  const auto key = read_zkey(files.zkey);
  const auto witness = read_wtns(files.wtns);
  const auto matrix = build_constraint_matrix(key);
  const std::size_t n = key.domain_size;
  std::vector<Fr> a(n), b(n), c(n);
  evaluate_constraint_matrix(matrix.layout, matrix.bytes, witness, a, b, c, 2);
  for (std::uint64_t max_bytes :
       {std::uint64_t{1}, std::uint64_t{200}, std::uint64_t{600}, matrix.layout.total_bytes()}) {
    BOOST_TEST_CONTEXT("chunks of at most " << max_bytes << " bytes") {
      const auto chunks = cut_constraint_matrix(matrix, max_bytes);
      BOOST_REQUIRE(!chunks.empty());
      if (max_bytes == matrix.layout.total_bytes()) BOOST_CHECK_EQUAL(chunks.size(), 1u);
      if (max_bytes == 1) BOOST_CHECK_EQUAL(chunks.size(), n);  // a row each
      std::uint64_t row = 0, entry_a = 0, entry_b = 0;
      for (const auto& chunk : chunks) {
        BOOST_CHECK_EQUAL(chunk.first_row, row);
        BOOST_CHECK_EQUAL(chunk.first_a, entry_a);
        BOOST_CHECK_EQUAL(chunk.first_b, entry_b);
        BOOST_CHECK(chunk.rows >= 1);
        BOOST_CHECK(chunk.rows == 1 || chunk.layout().total_bytes() <= max_bytes);
        std::vector<std::byte> own(chunk.layout().total_bytes());
        for (const auto& part : chunk.parts(matrix.layout)) {
          BOOST_REQUIRE(part.source + part.bytes <= matrix.bytes.size());
          BOOST_REQUIRE(part.destination + part.bytes <= own.size());
          std::memcpy(own.data() + part.destination, matrix.bytes.data() + part.source, part.bytes);
        }
        std::vector<Fr> a2(chunk.rows), b2(chunk.rows), c2(chunk.rows);
        evaluate_constraint_matrix(chunk.layout(), own, witness, a2, b2, c2, 2, chunk.first_a, chunk.first_b);
        for (std::uint64_t i = 0; i < chunk.rows; ++i) {
          BOOST_CHECK(a2[i] == a[chunk.first_row + i]);
          BOOST_CHECK(b2[i] == b[chunk.first_row + i]);
          BOOST_CHECK(c2[i] == c[chunk.first_row + i]);
        }
        row += chunk.rows;
        entry_a += chunk.entries_a;
        entry_b += chunk.entries_b;
      }
      BOOST_CHECK_EQUAL(row, matrix.layout.rows);
      BOOST_CHECK_EQUAL(entry_a, matrix.layout.entries_a);
      BOOST_CHECK_EQUAL(entry_b, matrix.layout.entries_b);
    }
  }
  // A chunk read without its first entries reaches outside its arrays: refused, not misread.
  const auto chunks = cut_constraint_matrix(matrix, 200);
  const auto& last = chunks.back();
  BOOST_REQUIRE(last.first_a + last.first_b > 0);
  std::vector<std::byte> own(last.layout().total_bytes());
  for (const auto& part : last.parts(matrix.layout))
    std::memcpy(own.data() + part.destination, matrix.bytes.data() + part.source, part.bytes);
  std::vector<Fr> a2(last.rows), b2(last.rows), c2(last.rows);
  BOOST_CHECK_THROW(evaluate_constraint_matrix(last.layout(), own, witness, a2, b2, c2, 2), std::invalid_argument);
  // The chunks take the stream buffers from the program's start: a placement whose buffers come
  // only after H is refused when the workload is made, not halfway through a proof.
  auto late = KeyPlacement::all(SetPlacement::streamed);
  late.msm_memory_after_h = true;
  HostWork host_work(0);
  BOOST_CHECK_THROW(Groth16Workload(key, files.zkey, {}, host_work, 1, {}, {}, AbcStep::streamed, late),
                    std::invalid_argument);
  BOOST_CHECK_NO_THROW(Groth16Workload(key, files.zkey, {}, host_work, 1, {}, {}, AbcStep::device, late));
}

BOOST_AUTO_TEST_CASE(a_bad_witness_fails_its_own_job_and_the_others_complete) {
  Files files;
  const auto key = read_zkey(files.zkey);
  std::vector<ProofJob> jobs{ProofJob{files.wtns, ProofRandomness::from_seed(1)},
                             ProofJob{files.dir / "absent.wtns", ProofRandomness::from_seed(2)},
                             ProofJob{files.wtns, ProofRandomness::from_seed(3)}};
  auto result = prove_through_coordinator(key, files.zkey, jobs, Policy::budgeted);
  BOOST_CHECK_EQUAL(result.report.partitions_completed, 2);
  BOOST_CHECK(result.proofs[0].has_value() && result.proofs[2].has_value());
  BOOST_CHECK(!result.proofs[1].has_value());
  BOOST_CHECK(contains(result.report.jobs[1].error, "absent.wtns"));
  BOOST_CHECK_EQUAL(result.memory_left, 0u);
}

BOOST_AUTO_TEST_SUITE_END()
