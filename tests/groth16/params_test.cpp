// Filecoin's .params files: the test-only setup's key round-trips through the writer and the
// reader, an honest proof in bellperson's form verifies against it, its verifying key is the
// snarkjs setup's for the same toxic waste where the domain does not enter, and every kind of
// malformed file is an error naming the section and the index.

#define BOOST_TEST_MODULE groth16_params
#include <boost/test/unit_test.hpp>

#include "support/filecoin_assignment.hpp"
#include "support/input_errors.hpp"
#include "support/multiplier_circuit.hpp"
#include "groth16/json.hpp"
#include "groth16/params.hpp"
#include "groth16/setup.hpp"
#include "groth16/verify.hpp"
#include "math/h_polynomial.hpp"
#include "math/msm.hpp"
#include "math/ntt.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace stagehand;
using namespace stagehand::groth16;
using math::Fr;
using testing::contains;
using testing::error_of;
using testing::prove_bellperson;

namespace {

constexpr std::uint64_t kSeed = 42;

// The tests' circuit (out = x·y, t = x + 3y): inputs 1, out, x; aux y, t.
std::vector<Fr> witness() {
  const Fr x = Fr::from_uint64(6), y = Fr::from_uint64(7);
  return {Fr::one(), x * y, x, y, x + Fr::from_uint64(3) * y};
}

SetupOptions seeded() {
  SetupOptions options;
  options.seed = kSeed;
  options.thread_count = 2;
  return options;
}

std::vector<std::uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Where each section's count lies in a file of `key` (its points follow the count).
struct Layout {
  std::size_t ic, h, l, a, b_g1, b_g2, end;
  explicit Layout(const ParamsKey& key) {
    ic = 3 * 96 + 3 * 192;
    h = ic + 4 + 96 * key.vk.ic.size();
    l = h + 4 + 96 * key.h.size();
    a = l + 4 + 96 * key.l.size();
    b_g1 = a + 4 + 96 * key.a.size();
    b_g2 = b_g1 + 4 + 96 * key.b_g1.size();
    end = b_g2 + 4 + 192 * key.b_g2.size();
  }
};

struct Fixture {
  fs::path dir = fs::temp_directory_path() / ("stagehand_params_test_" + std::to_string(::getpid()));
  fs::path params = dir / "small.params";
  fs::path bad = dir / "bad.params";
  ParamsKey key = setup_params_from_r1cs(testing::multiplier_circuit(), seeded());
  std::vector<std::uint8_t> bytes;
  Fixture() {
    fs::create_directories(dir);
    write_params(params, key);
    bytes = read_bytes(params);
  }
  ~Fixture() { fs::remove_all(dir); }

  // The error of reading the valid file with `change` made to its bytes.
  template <class Change>
  std::string error_after(Change&& change) {
    auto copy = bytes;
    change(copy);
    write_bytes(bad, copy);
    return error_of([&] { read_params(bad); });
  }
};

void put_count(std::vector<std::uint8_t>& bytes, std::size_t at, std::uint32_t count) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<std::uint8_t>(count >> (24 - 8 * i));
}

// A point of G1's curve outside its subgroup (the curve's cofactor is large: most points are).
math::G1Affine point_outside_subgroup() {
  for (std::uint64_t x = 1;; ++x) {
    const auto fx = math::Fq::from_uint64(x);
    const auto y = (fx.squared() * fx + math::Fq::from_uint64(4)).sqrt();
    if (!y) continue;
    const auto point = math::G1Affine::from_coordinates(fx, *y);
    if (point.is_on_curve() && !point.is_in_subgroup()) return point;
  }
}

// The verifier of a .zkey's key, given the .params key's verifying key.
ProvingKey verifier_key(const VerifyingKey& vk) {
  ProvingKey key;
  key.n_public = static_cast<std::uint32_t>(vk.ic.size() - 1);
  key.alpha1 = vk.alpha1;
  key.beta2 = vk.beta2;
  key.gamma2 = vk.gamma2;
  key.delta2 = vk.delta2;
  key.ic = vk.ic;
  return key;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(params, Fixture)

BOOST_AUTO_TEST_CASE(setup_gives_bellpersons_shapes_and_round_trips) {
  // 2 constraints + 3 input rows: a domain of 8, 7 H points; every variable is in A (x, y, and
  // the inputs' rows), only the constant and y are in B.
  BOOST_TEST(key.domain_size() == 8u);
  BOOST_TEST(key.h.size() == 7u);
  BOOST_TEST(key.input_count() == 3u);
  BOOST_TEST(key.aux_count() == 2u);
  BOOST_TEST(key.a.size() == 4u);  // 1, out, x (input rows) and y; t is in no A
  BOOST_TEST(key.b_g1.size() == 2u);
  BOOST_TEST(key.b_g2.size() == 2u);
  BOOST_TEST(bytes.size() == Layout(key).end);

  const auto read = read_params(params);
  BOOST_TEST((read.h_form == HForm::bellperson));
  BOOST_TEST((read.vk.alpha1 == key.vk.alpha1 && read.vk.beta1 == key.vk.beta1 && read.vk.delta1 == key.vk.delta1));
  BOOST_TEST((read.vk.beta2 == key.vk.beta2 && read.vk.gamma2 == key.vk.gamma2 && read.vk.delta2 == key.vk.delta2));
  BOOST_TEST((read.vk.ic == key.vk.ic));
  BOOST_TEST((read.h == key.h && read.l == key.l && read.a == key.a && read.b_g1 == key.b_g1 && read.b_g2 == key.b_g2));
  // And written again, byte for byte the same file.
  write_params(dir / "again.params", read);
  BOOST_TEST((read_bytes(dir / "again.params") == bytes));
}

BOOST_AUTO_TEST_CASE(a_proof_in_bellpersons_form_verifies_against_the_key) {
  const auto r1cs = testing::multiplier_circuit();
  const auto read = read_params(params);
  const auto w = witness();
  const auto proof = prove_bellperson(read, r1cs, w, ProofRandomness::from_seed(5));
  const auto verifier = verifier_key(read.vk);
  const std::vector<Fr> signals(w.begin() + 1, w.begin() + 3);
  BOOST_TEST(verify_proof(verifier, proof, signals));
  // The check can fail: another public signal, or a witness that breaks a constraint.
  BOOST_TEST(!verify_proof(verifier, proof, std::vector<Fr>{signals[0] + Fr::one(), signals[1]}));
  auto broken = w;
  broken[4] += Fr::one();
  BOOST_TEST(!verify_proof(verifier, prove_bellperson(read, r1cs, broken, ProofRandomness::from_seed(5)), signals));
}

BOOST_AUTO_TEST_CASE(its_vk_is_the_snarkjs_setups_but_for_ic) {
  const auto zkey = setup_from_r1cs(testing::multiplier_circuit(), seeded());
  const auto from_params = nlohmann::json::parse(verification_key_json(read_params(params).vk));
  const auto from_zkey = nlohmann::json::parse(verification_key_json(zkey));
  for (const char* field : {"protocol", "curve", "nPublic", "vk_alpha_1", "vk_beta_2", "vk_gamma_2", "vk_delta_2"}) {
    BOOST_TEST_INFO(field);
    BOOST_TEST(from_params.at(field) == from_zkey.at(field));
  }
  BOOST_TEST(from_params.at("nPublic") == 2);
  // ic is (β·u_i + α·v_i + w_i)/γ over each form's own domain (roots from 5 and of 2^3 rows for
  // snarkjs, from 7 for bellperson): as many points, other values.
  BOOST_TEST(from_params.at("IC").size() == from_zkey.at("IC").size());
  BOOST_TEST(from_params.at("IC") != from_zkey.at("IC"));
}

BOOST_AUTO_TEST_CASE(a_truncated_section_is_named) {
  const Layout at(key);
  const std::pair<const char*, std::size_t> sections[] = {{"ic", at.ic}, {"h", at.h},       {"l", at.l},
                                                          {"a", at.a},   {"b_g1", at.b_g1}, {"b_g2", at.b_g2}};
  for (const auto& section : sections) {
    // Named, not bound: clang 14 does not capture structured bindings in lambdas.
    const std::string name = section.first;
    const std::size_t offset = section.second;
    BOOST_TEST_INFO(name);
    // In the count, and after the count within the second point.
    auto in_count = error_after([&](auto& b) { b.resize(offset + 2); });
    BOOST_TEST(
        contains(in_count, fmt::format("section {}: truncated: the file ends before the section's count", name)));
    auto in_points = error_after([&](auto& b) { b.resize(offset + 4 + (name == "b_g2" ? 192 : 96) + 10); });
    BOOST_TEST(contains(in_points, fmt::format("section {}: truncated:", name)));
    BOOST_TEST(contains(in_points, "the file ends in point 1"));
  }
  BOOST_TEST(contains(error_after([](auto& b) { b.resize(500); }), "section vk: truncated"));
  BOOST_TEST(contains(error_after([](auto& b) { b.push_back(0); }), "1 bytes follow the b_g2 section"));
}

BOOST_AUTO_TEST_CASE(bad_flags_are_named_with_the_point) {
  const Layout at(key);
  const std::size_t h1 = at.h + 4 + 96;  // h's point 1
  BOOST_TEST(
      contains(error_after([&](auto& b) { b[h1] |= 0x80; }), "section h: point 1 of 7 has the compression flag set"));
  BOOST_TEST(contains(error_after([&](auto& b) { b[h1] |= 0x20; }), "section h: point 1 of 7 has the sign flag set"));
  BOOST_TEST(contains(error_after([&](auto& b) { b[h1] |= 0x40; }),
                      "section h: point 1 of 7 has the infinity flag set with other bits non-zero"));
  const std::size_t b2_1 = at.b_g2 + 4 + 192;  // b_g2's point 1
  BOOST_TEST(contains(error_after([&](auto& b) {
                        std::fill(b.begin() + static_cast<long>(b2_1), b.begin() + static_cast<long>(b2_1 + 192), 0);
                        b[b2_1] = 0x40;
                      }),
                      "section b_g2: point 1 of 2 is the point at infinity"));
  BOOST_TEST(contains(error_after([&](auto& b) { b[0] |= 0x80; }),
                      "section vk: point 0 (alpha_g1) has the compression flag set"));
}

BOOST_AUTO_TEST_CASE(points_off_the_curve_or_unreduced_are_named) {
  const Layout at(key);
  BOOST_TEST(contains(error_after([&](auto& b) { b[at.l + 4 + 96 + 95] ^= 1; }),
                      "section l: point 1 of 2 is not on the curve"));
  BOOST_TEST(contains(error_after([&](auto& b) { b[at.b_g2 + 4 + 191] ^= 1; }),
                      "section b_g2: point 0 of 2 is not on the curve"));
  BOOST_TEST(contains(error_after([&](auto& b) { b[at.a + 4 + 3 * 96 + 95] ^= 1; }),
                      "section a: point 3 of 4 is not on the curve"));
  // x = p: the top flag bits clear, every coordinate byte p's (big-endian).
  const auto p = modulus_bytes<math::Fq>();
  BOOST_TEST(contains(error_after([&](auto& b) {
                        for (std::size_t i = 0; i < 48; ++i) b[at.b_g1 + 4 + i] = p[47 - i];
                      }),
                      "section b_g1: point 0 of 2 has a coordinate not below p"));
}

BOOST_AUTO_TEST_CASE(the_first_bad_point_of_a_set_read_in_chunks_is_named) {
  // h spans four of the reader's chunks, the last one short of a point; its points are the small
  // key's in turn (7 of them, prime to a chunk's count), so that a chunk read to another place shows.
  constexpr std::size_t chunk = groth16::detail::kParamsReadChunkBytes / kZcashG1Bytes;
  const std::size_t count = std::bit_ceil(3 * chunk + 1) - 1;
  BOOST_REQUIRE(count > 3 * chunk && count < 4 * chunk);
  const auto small = key.h.decode();
  std::vector<math::G1Affine> points(count);
  for (std::size_t i = 0; i < count; ++i) points[i] = small[i % small.size()];
  ParamsKey big = key;
  big.h = G1Points::encode(points);
  const auto path = dir / "big.params";
  write_params(path, big);
  const auto valid = read_bytes(path);
  const std::size_t h_points = Layout(big).h + 4;
  // The error of reading the file with h's points at `indices` moved off the curve (y's last bit).
  auto error_with = [&](const std::vector<std::size_t>& indices, unsigned threads) {
    auto copy = valid;
    for (const auto index : indices) copy[h_points + index * kZcashG1Bytes + kZcashG1Bytes - 1] ^= 1;
    write_bytes(bad, copy);
    return error_of([&] { read_params(bad, threads); });
  };
  auto named = [&](std::size_t index) {
    return fmt::format("section h: point {} of {} is not on the curve", index, count);
  };
  for (const unsigned threads : {1u, 4u}) {
    BOOST_TEST_INFO("threads " << threads);
    BOOST_TEST((read_params(path, threads).h == big.h));
    // Deep in the second chunk and in the fourth: the second's; the fourth's alone: its own.
    BOOST_TEST(contains(error_with({chunk + 5, 3 * chunk + 7}, threads), named(chunk + 5)));
    BOOST_TEST(contains(error_with({3 * chunk + 7}, threads), named(3 * chunk + 7)));
    // Either side of a chunk's boundary; and the set's last point.
    BOOST_TEST(contains(error_with({2 * chunk, 2 * chunk - 1}, threads), named(2 * chunk - 1)));
    BOOST_TEST(contains(error_with({count - 1}, threads), named(count - 1)));
  }
}

BOOST_AUTO_TEST_CASE(vk_points_outside_the_subgroup_are_refused) {
  const Layout at(key);
  std::array<std::uint8_t, kZcashG1Bytes> outside{};
  groth16::detail::encode_zcash_g1(point_outside_subgroup(), outside);
  // delta_g1 is the fifth point: after two G1 and two G2 points.
  BOOST_TEST(
      contains(error_after([&](auto& b) { std::copy(outside.begin(), outside.end(), b.begin() + 2 * 96 + 2 * 192); }),
               "section vk: point 4 (delta_g1) is not in the subgroup of order r"));
  BOOST_TEST(contains(error_after([&](auto& b) {
                        std::copy(outside.begin(), outside.end(), b.begin() + static_cast<long>(at.ic + 4 + 96));
                      }),
                      "section ic: point 1 of 3 is not in the subgroup of order r"));
  // A query point outside the subgroup is on the curve, and read (bellperson's prover does too).
  BOOST_TEST(error_after([&](auto& b) {
               std::copy(outside.begin(), outside.end(), b.begin() + static_cast<long>(at.l + 4));
             }) == "no error");
}

BOOST_AUTO_TEST_CASE(huge_or_inconsistent_counts_are_refused_before_allocating) {
  const Layout at(key);
  // 2^32 - 1 points of 96 bytes would be 384 GiB: refused against the file's size.
  BOOST_TEST(contains(error_after([&](auto& b) { put_count(b, at.l, 0xFFFFFFFF); }),
                      "section l: truncated: 4294967295 points of 96 bytes declared (412316860320 bytes)"));
  BOOST_TEST(contains(error_after([&](auto& b) { put_count(b, at.ic, 0xFFFFFFFF); }),
                      "section ic: truncated: 4294967295 points"));
  BOOST_TEST(contains(error_after([&](auto& b) { put_count(b, at.h, 0xFFFFFFFF); }),
                      "section h: 4294967295 points, so a domain of 4294967296"));
  BOOST_TEST(contains(error_after([&](auto& b) { put_count(b, at.h, 6); }),
                      "section h: 6 points, so a domain of 7: not a power of two"));
  BOOST_TEST(contains(error_after([&](auto& b) { put_count(b, at.a, 6); }),
                      "section a: 6 points, more than the key's 5 variables"));
  BOOST_TEST(
      contains(error_after([&](auto& b) { put_count(b, at.b_g2, 1); }), "section b_g2: 1 points, but b_g1 has 2"));
  BOOST_TEST(contains(error_after([&](auto& b) { put_count(b, at.ic, 0); }), "section ic: no points"));
}

BOOST_AUTO_TEST_CASE(only_regular_files_are_read) {
  BOOST_TEST(contains(error_of([&] { read_params(dir); }), "is a directory"));
  BOOST_TEST(contains(error_of([&] { read_params(dir / "missing.params"); }), "cannot open"));
  // A FIFO that no process writes to: refused at once, neither waited on nor read.
  const auto fifo = dir / "fifo.params";
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  BOOST_TEST(
      contains(error_of([&] { read_params(fifo); }), "is a FIFO or pipe, not a Filecoin parameters (.params) file"));
}

BOOST_AUTO_TEST_CASE(an_unconstrained_private_wire_has_no_params_key) {
  auto r1cs = testing::multiplier_circuit();
  r1cs.n_wires = 6;  // wire 5 in no constraint
  BOOST_CHECK_EXCEPTION(
      setup_params_from_r1cs(r1cs, seeded()), std::invalid_argument,
      [](const std::invalid_argument& error) { return contains(error.what(), "wire 5 is in no constraint"); });
}

BOOST_AUTO_TEST_SUITE_END()
