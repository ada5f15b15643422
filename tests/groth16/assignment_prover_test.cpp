// Proofs from Filecoin assignments (groth16/assignment_prover.hpp), SupraSeal C2's CPU reference:
// satisfying assignments of the test circuits give proofs that verify and equal the textbook
// form's; a changed input or witness is refused by the pairing check; for any assignment the
// bytes are deterministic in r and s and follow the assembly's algebra; every size that disagrees
// with the key is an error naming the field; the domain is bellperson's; the 384-byte encoding
// round-trips.

#define BOOST_TEST_MODULE groth16_assignment_prover
#include <boost/test/unit_test.hpp>

#include "support/filecoin_assignment.hpp"
#include "support/input_errors.hpp"
#include "support/multiplier_circuit.hpp"
#include "groth16/assignment_prover.hpp"
#include "groth16/params.hpp"
#include "groth16/setup.hpp"
#include "groth16/synthetic_circuit.hpp"
#include "math/ntt.hpp"
#include "util/random.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace stagehand;
using namespace stagehand::groth16;
using math::Fr;
using math::G1Projective;
using testing::contains;
using testing::error_of;
using testing::filecoin_assignment;
using testing::FilecoinAssignment;
using testing::seeded;

namespace {

// The multiplier's witness for out = x·y, t = x + 3y: inputs 1, out, x; aux y, t.
std::vector<Fr> multiplier_witness(std::uint64_t x_value, std::uint64_t y_value) {
  const Fr x = Fr::from_uint64(x_value), y = Fr::from_uint64(y_value);
  return {Fr::one(), x * y, x, y, x + Fr::from_uint64(3) * y};
}

struct Multiplier {
  R1cs r1cs = testing::multiplier_circuit();
  ParamsKey key = setup_params_from_r1cs(r1cs, seeded());
  AssignmentProver prover{key, 2};
};

// An assignment of the key's shape whose values are drawn at random (it satisfies nothing).
FilecoinAssignment random_assignment(const FilecoinAssignment& shape, std::uint64_t seed) {
  Random random(seed);
  auto fill = [&](std::vector<Fr>& values) {
    for (auto& value : values) {
      value = Fr::from_uint64(random.next()) * Fr::from_uint64(random.next()) + Fr::from_uint64(random.next());
    }
  };
  FilecoinAssignment out = shape;
  fill(out.a), fill(out.b), fill(out.c), fill(out.inputs), fill(out.aux);
  return out;
}

FilecoinAssignment zero_assignment(const FilecoinAssignment& shape) {
  FilecoinAssignment out = shape;
  for (auto* values : {&out.a, &out.b, &out.c, &out.inputs, &out.aux}) {
    std::fill(values->begin(), values->end(), Fr::zero());
  }
  return out;
}

bool same(const Proof& x, const Proof& y) { return x.a == y.a && x.b == y.b && x.c == y.c; }

}  // namespace

BOOST_FIXTURE_TEST_SUITE(assignment_prover, Multiplier)

BOOST_AUTO_TEST_CASE(satisfying_assignments_verify_and_match_the_textbook_form) {
  const std::vector<std::vector<Fr>> witnesses = {multiplier_witness(6, 7), multiplier_witness(2, 9),
                                                  multiplier_witness(11, 0)};
  std::vector<FilecoinAssignment> owned;
  std::vector<AssignmentView> views;
  std::vector<ProofRandomness> randomness;
  for (std::size_t i = 0; i < witnesses.size(); ++i) {
    owned.push_back(filecoin_assignment(r1cs, witnesses[i]));
    randomness.push_back(ProofRandomness::from_seed(10 + i));
  }
  for (const auto& assignment : owned) views.push_back(assignment.view());
  const auto proofs = prover.prove_checked(views, randomness);  // pairing-checked inside
  BOOST_REQUIRE(proofs.size() == 3u);
  for (std::size_t i = 0; i < proofs.size(); ++i) {
    BOOST_TEST_INFO("circuit " << i);
    BOOST_TEST(same(proofs[i], testing::prove_bellperson(key, r1cs, witnesses[i], randomness[i])));
  }
  BOOST_TEST(!same(proofs[0], proofs[1]));
}

BOOST_AUTO_TEST_CASE(a_bit_heavy_synthetic_circuit_verifies) {
  const auto circuit = make_synthetic_circuit(60, 3, /*bits=*/true);
  const auto big_key = setup_params_from_r1cs(circuit.r1cs, seeded());
  const AssignmentProver big_prover(big_key, 2);
  const auto assignment = filecoin_assignment(circuit.r1cs, circuit.witness);
  BOOST_TEST(assignment.a_aux_popcount < assignment.aux.size());  // some aux values are in no A
  const std::vector<AssignmentView> views{assignment.view()};
  const std::vector<ProofRandomness> randomness{ProofRandomness::from_seed(4)};
  const auto proofs = big_prover.prove_checked(views, randomness);
  BOOST_TEST(same(proofs.at(0), testing::prove_bellperson(big_key, circuit.r1cs, circuit.witness, randomness[0])));
}

BOOST_AUTO_TEST_CASE(a_changed_input_or_witness_fails_the_pairing_check) {
  const std::vector<ProofRandomness> randomness{ProofRandomness::from_seed(1)};
  auto changed_input = filecoin_assignment(r1cs, multiplier_witness(6, 7));
  changed_input.inputs[1] += Fr::one();  // out, and not its row's a
  const std::vector<AssignmentView> input_views{changed_input.view()};
  BOOST_TEST(contains(error_of([&] { prover.prove_checked(input_views, randomness); }),
                      "circuit 0: the proof does not verify against the key"));
  auto changed_aux = filecoin_assignment(r1cs, multiplier_witness(6, 7));
  changed_aux.aux[1] += Fr::one();  // t, which the c of row 1 no longer equals
  const std::vector<AssignmentView> aux_views{changed_aux.view()};
  BOOST_TEST(contains(error_of([&] { prover.prove_checked(aux_views, randomness); }), "the pairing check"));
}

BOOST_AUTO_TEST_CASE(random_assignments_are_deterministic_in_r_and_s) {
  const auto shape = filecoin_assignment(r1cs, multiplier_witness(6, 7));
  const auto random = random_assignment(shape, 99);
  const auto rs = ProofRandomness::from_seed(7);
  const auto first = encode_supraseal_proof(prover.prove(random.view(), rs));
  BOOST_TEST((first == encode_supraseal_proof(AssignmentProver(key, 1).prove(random.view(), rs))));
  BOOST_TEST((first != encode_supraseal_proof(prover.prove(random.view(), ProofRandomness::from_seed(8)))));
  BOOST_TEST((first != encode_supraseal_proof(prover.prove(random_assignment(shape, 100).view(), rs))));
  // Not a proof of anything: it does not verify.
  const std::vector<AssignmentView> views{random.view()};
  BOOST_TEST(contains(error_of([&] { prover.prove_checked(views, std::vector{rs}); }), "does not verify"));
}

BOOST_AUTO_TEST_CASE(the_assembly_follows_r_and_s) {
  const auto shape = filecoin_assignment(r1cs, multiplier_witness(6, 7));
  // All zeros with r = s = 0: A = α1, B = β2, C = 0 (the point at infinity, all zero bytes).
  const ProofRandomness zero{Fr::zero(), Fr::zero()};
  const auto nothing = prover.prove(zero_assignment(shape).view(), zero);
  BOOST_TEST((nothing.a == key.vk.alpha1 && nothing.b == key.vk.beta2 && nothing.c.is_identity()));
  const auto bytes = encode_supraseal_proof(nothing);
  BOOST_TEST(std::all_of(bytes.begin() + 288, bytes.end(), [](std::uint8_t byte) { return byte == 0; }));

  // For any assignment: A(r, s) − A(0, 0) = r·δ1, B(r, s) − B(0, 0) = s·δ2, and
  // C(0, s) − C(0, 0) = s·(Σa + α1) = s·A(0, 0).
  const auto owned = random_assignment(shape, 5);
  const auto random = owned.view();
  const auto r = Fr::from_uint64(1234567), s = Fr::from_uint64(7654321);
  const auto base = prover.prove(random, zero);
  const auto both = prover.prove(random, {r, s});
  const auto only_s = prover.prove(random, {Fr::zero(), s});
  const auto delta1 = G1Projective::from_affine(key.vk.delta1);
  BOOST_TEST((both.a == (G1Projective::from_affine(base.a) + delta1.multiply(r)).to_affine()));
  const auto delta2 = math::G2Projective::from_affine(key.vk.delta2);
  BOOST_TEST((both.b == (math::G2Projective::from_affine(base.b) + delta2.multiply(s)).to_affine()));
  const auto base_a = G1Projective::from_affine(base.a);
  BOOST_TEST((only_s.c == (G1Projective::from_affine(base.c) + base_a.multiply(s)).to_affine()));
}

BOOST_AUTO_TEST_CASE(sizes_that_disagree_with_the_key_are_named) {
  const auto good = filecoin_assignment(r1cs, multiplier_witness(6, 7));
  auto error_with = [&](auto&& change) {
    auto assignment = good;
    auto view = assignment.view();
    change(assignment, view);
    return error_of([&] { check_assignment(key, view, 2); });
  };
  BOOST_TEST(error_with([](auto&, auto&) {}) == "no error");
  BOOST_TEST(contains(error_with([](auto&, auto& v) { v.aux = v.aux.first(1); }),
                      "circuit 2: aux_assignment_size is 1, but the key's l has 2 points"));
  BOOST_TEST(contains(error_with([](auto&, auto& v) { v.inputs = v.inputs.first(2); }),
                      "circuit 2: inp_assignment_size is 2, but the key's ic has 3"));
  BOOST_TEST(contains(error_with([](auto&, auto& v) { v.a_aux.bit_len = 3; }),
                      "circuit 2: a_aux_bit_len is 3, but the assignment has 2 aux values"));
  BOOST_TEST(contains(error_with([](auto&, auto& v) { v.b_inp.bit_len = 1; }),
                      "b_inp_bit_len is 1, but the assignment has 3 inputs"));
  BOOST_TEST(contains(error_with([](auto&, auto& v) { v.b_aux.words = {}; }),
                      "b_aux_density has 0 words, fewer than 2 bits need"));
  BOOST_TEST(contains(error_with([](auto&, auto& v) { v.a_aux.popcount = 2; }),
                      "a_aux_popcount is 2, but a_aux_density has 1 of its 2 bits set"));
  // Bitmaps and popcounts that agree with each other but not with the key's queries.
  BOOST_TEST(contains(error_with([](auto& a, auto& v) { a.a_aux_words[0] = 3, v.a_aux.popcount = 2; }),
                      "circuit 2: 3 inputs + a_aux_popcount 2 is not the key's 4 A points"));
  BOOST_TEST(contains(error_with([](auto& a, auto& v) { a.b_aux_words[0] = 0, v.b_aux.popcount = 0; }),
                      "b_inp_popcount 1 + b_aux_popcount 0 is not the key's 2 B points"));
  // Bits past bit_len are not counted.
  BOOST_TEST(error_with([](auto& a, auto&) { a.a_aux_words[0] |= std::uint64_t{1} << 40; }) == "no error");
  BOOST_TEST(contains(error_with([](auto&, auto& v) { v.c = v.c.first(4); }), "a, b and c have 5, 5 and 4 values"));
  std::vector<Fr> long_abc(9);
  BOOST_TEST(contains(error_with([&](auto&, auto& v) { v.a = v.b = v.c = long_abc; }),
                      "circuit 2: abc_size is 9, above the key's domain of 8"));
}

BOOST_AUTO_TEST_CASE(the_domain_is_bellpersons) {
  // bellperson's root of unity of 2^k: Fr's 2^32-th root 7^((r-1)/2^32) squared 32 - k times;
  // its coset generator is 7. r - 1 has its lowest 32 bits zero, so the shift drops no bit.
  auto exponent = Fr::modulus;
  exponent[0] -= 1;
  for (std::size_t i = 0; i < exponent.size(); ++i) {
    exponent[i] = (exponent[i] >> 32) | (i + 1 < exponent.size() ? exponent[i + 1] << 32 : 0);
  }
  Fr root = Fr::from_uint64(7).pow(exponent);
  for (unsigned log2 = 32; log2 > 3; --log2) root = root.squared();
  const auto domain = math::Domain::classic(3, 1);
  BOOST_TEST((domain.root() == root));
  BOOST_TEST((domain.coset_generator() == Fr::from_uint64(7)));
  BOOST_TEST(key.domain_size() == 8u);
}

BOOST_AUTO_TEST_CASE(the_384_byte_encoding_round_trips_and_refuses_bad_points) {
  const auto assignment = filecoin_assignment(r1cs, multiplier_witness(6, 7));
  const auto proof = prover.prove(assignment.view(), ProofRandomness::from_seed(3));
  auto bytes = encode_supraseal_proof(proof);
  BOOST_TEST(same(decode_supraseal_proof(bytes), proof));
  // A's x is its Montgomery limbs, little-endian (blst's affine layout).
  BOOST_TEST(std::memcmp(bytes.data(), proof.a.x.montgomery_limbs().data(), 48) == 0);
  BOOST_TEST(std::memcmp(bytes.data() + 96, proof.b.x.c0.montgomery_limbs().data(), 48) == 0);
  BOOST_TEST(std::memcmp(bytes.data() + 144, proof.b.x.c1.montgomery_limbs().data(), 48) == 0);
  auto off_curve = bytes;
  off_curve[300] ^= 1;  // C's x
  BOOST_TEST(contains(error_of([&] { decode_supraseal_proof(off_curve); }), "groth16_proof: C is not on the curve"));
  auto unreduced = bytes;
  std::fill(unreduced.begin() + 96, unreduced.begin() + 144, 0xFF);
  BOOST_TEST(contains(error_of([&] { decode_supraseal_proof(unreduced); }), "a coordinate of B is not below p"));
  const SuprasealProofBytes zeros{};
  BOOST_TEST(decode_supraseal_proof(zeros).a.is_identity());
}

BOOST_AUTO_TEST_SUITE_END()

// The gather on several threads writes what one reads off the bitmaps, in order: an aux long
// enough for many ranges of the gather's bitmap words, a bit length that ends inside a word (with
// set bits past it, which must be ignored), and densities from empty to full.
BOOST_AUTO_TEST_CASE(the_query_gather_on_several_threads_is_the_bitmaps_order) {
  constexpr std::size_t kAux = 9 * 4096 * 64 + 37;  // nine ranges of words and a part word
  constexpr std::size_t kInputs = 5;
  constexpr std::size_t kWords = (kAux + 63) / 64;
  Random random(7);
  std::vector<math::Fr> inputs(kInputs), aux(kAux);
  for (std::size_t i = 0; i < kInputs; ++i) inputs[i] = math::Fr::from_uint64(1000 + i);
  for (std::size_t i = 0; i < kAux; ++i) aux[i] = math::Fr::from_uint64(i + 1);
  for (const std::uint64_t keep_one_in : {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{0}}) {
    BOOST_TEST_CONTEXT("a bit kept one in " << keep_one_in << " (0: none)") {
      std::vector<std::uint64_t> a_words(kWords, 0), b_aux_words(kWords, 0);
      for (std::size_t word = 0; word < kWords; ++word) {
        for (std::size_t bit = 0; bit < 64; ++bit) {
          if (keep_one_in != 0 && random.below(keep_one_in) == 0) a_words[word] |= std::uint64_t{1} << bit;
          if (keep_one_in != 0 && random.below(keep_one_in) == 0) b_aux_words[word] |= std::uint64_t{1} << bit;
        }
      }
      a_words.back() |= ~std::uint64_t{0} << (kAux % 64);  // bits past the length, set
      std::vector<std::uint64_t> b_inp_words{0b10110};
      // What one reads off the bitmaps, and the popcounts within the lengths.
      auto read_off = [&](const std::vector<std::uint64_t>& words, std::vector<math::Fr> into) {
        for (std::size_t i = 0; i < kAux; ++i) {
          if ((words[i / 64] >> (i % 64)) & 1U) into.push_back(aux[i]);
        }
        return into;
      };
      const auto expected_a = read_off(a_words, inputs);
      const auto expected_b = read_off(b_aux_words, {inputs[1], inputs[2], inputs[4]});
      groth16::AssignmentView view;
      view.inputs = inputs;
      view.aux = aux;
      view.a_aux = {a_words, kAux, expected_a.size() - kInputs};
      view.b_inp = {b_inp_words, kInputs, 3};
      view.b_aux = {b_aux_words, kAux, expected_b.size() - 3};
      for (const unsigned threads : {1u, 4u}) {
        BOOST_TEST_CONTEXT(threads << " threads") {
          std::vector<math::Fr> a(groth16::a_query_count(view)), b(groth16::b_query_count(view));
          groth16::gather_a_query_scalars(view, a, threads);
          groth16::gather_b_query_scalars(view, b, threads);
          BOOST_CHECK(a == expected_a);
          BOOST_CHECK(b == expected_b);
        }
      }
      BOOST_CHECK(groth16::a_query_scalars(view) == expected_a);
    }
  }
}
