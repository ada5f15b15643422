// zcash's compressed point encoding (groth16/params.hpp) and the 192-byte proof filecoin-proofs
// stores (groth16/assignment_prover.hpp): the encodings of random points, their negations and the
// points at infinity equal @noble/curves's byte for byte (tests/vectors/generate.mjs), decode back
// to the points, and malformed bytes are refused with the reason.

#define BOOST_TEST_MODULE groth16_zcash_compressed
#include <boost/test/unit_test.hpp>

#include "groth16/assignment_prover.hpp"
#include "groth16/errors.hpp"
#include "groth16/params.hpp"
#include "math/vectors.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

using namespace stagehand;
using namespace stagehand::groth16;

namespace {

template <std::size_t N>
std::array<std::uint8_t, N> bytes_from_hex(const std::string& text) {
  BOOST_TEST_REQUIRE(text.size() == 2 * N);
  std::array<std::uint8_t, N> bytes{};
  for (std::size_t i = 0; i < N; ++i)
    bytes[i] = static_cast<std::uint8_t>(std::stoul(text.substr(2 * i, 2), nullptr, 16));
  return bytes;
}

// The error decode throws for `bytes`, or "" where it throws none.
template <class Decode>
std::string refusal(Decode&& decode) {
  try {
    decode();
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_CASE(g1_points_encode_as_noble_encodes_them_and_decode_back) {
  const auto& cases = math::test::vectors().at("zcash_compressed").at("g1");
  BOOST_TEST_REQUIRE(cases.size() >= 3u);
  std::size_t signed_points = 0;
  for (const auto& entry : cases) {
    const auto point = math::test::g1_from(entry.at("point"));
    const auto expected = bytes_from_hex<kZcashG1CompressedBytes>(entry.at("compressed").get<std::string>());
    std::array<std::uint8_t, kZcashG1CompressedBytes> encoded{};
    encode_zcash_g1_compressed(point, encoded);
    BOOST_TEST(encoded == expected, "G1 " << entry.at("compressed").get<std::string>());
    BOOST_TEST((decode_zcash_g1_compressed(expected) == point));
    signed_points += (expected[0] & 0x20) != 0;
  }
  // A point and its negation are in the vectors: half the finite points carry the sign flag.
  BOOST_TEST(signed_points == (cases.size() - 1) / 2);
}

BOOST_AUTO_TEST_CASE(g2_points_encode_as_noble_encodes_them_and_decode_back) {
  const auto& cases = math::test::vectors().at("zcash_compressed").at("g2");
  BOOST_TEST_REQUIRE(cases.size() >= 3u);
  std::size_t signed_points = 0;
  for (const auto& entry : cases) {
    const auto point = math::test::g2_from(entry.at("point"));
    const auto expected = bytes_from_hex<kZcashG2CompressedBytes>(entry.at("compressed").get<std::string>());
    std::array<std::uint8_t, kZcashG2CompressedBytes> encoded{};
    encode_zcash_g2_compressed(point, encoded);
    BOOST_TEST(encoded == expected, "G2 " << entry.at("compressed").get<std::string>());
    BOOST_TEST((decode_zcash_g2_compressed(expected) == point));
    signed_points += (expected[0] & 0x20) != 0;
  }
  BOOST_TEST(signed_points == (cases.size() - 1) / 2);
}

BOOST_AUTO_TEST_CASE(a_filecoin_proof_is_a_b_c_compressed_and_round_trips) {
  const auto& g1 = math::test::vectors().at("zcash_compressed").at("g1");
  const auto& g2 = math::test::vectors().at("zcash_compressed").at("g2");
  const Proof proof{math::test::g1_from(g1.at(0).at("point")), math::test::g2_from(g2.at(1).at("point")),
                    math::test::g1_from(g1.at(3).at("point"))};
  const auto bytes = encode_filecoin_proof(proof);
  const std::string expected = g1.at(0).at("compressed").get<std::string>() +
                               g2.at(1).at("compressed").get<std::string>() +
                               g1.at(3).at("compressed").get<std::string>();
  BOOST_TEST((bytes == bytes_from_hex<kFilecoinProofBytes>(expected)));
  const auto decoded = decode_filecoin_proof(bytes);
  BOOST_TEST((decoded.a == proof.a && decoded.b == proof.b && decoded.c == proof.c));

  auto broken = bytes;
  broken[kZcashG1CompressedBytes] &= 0x7f;  // B's compression flag
  const auto why = refusal([&] { decode_filecoin_proof(broken); });
  BOOST_TEST(why.find("B: the compression flag is clear") != std::string::npos, why);
}

BOOST_AUTO_TEST_CASE(malformed_compressed_points_are_refused_with_the_reason) {
  using G1Bytes = std::array<std::uint8_t, kZcashG1CompressedBytes>;
  G1Bytes generator{};
  encode_zcash_g1_compressed(math::G1Curve::generator(), generator);

  auto uncompressed = generator;
  uncompressed[0] &= 0x7f;
  BOOST_TEST(refusal([&] { decode_zcash_g1_compressed(uncompressed); }).find("compression flag is clear") !=
             std::string::npos);

  G1Bytes not_below_p{};
  not_below_p.fill(0xff);
  not_below_p[0] = 0x9f;  // compressed, no infinity, no sign, x = 2^381 - 1 > p
  BOOST_TEST(refusal([&] { decode_zcash_g1_compressed(not_below_p); }).find("not below p") != std::string::npos);

  G1Bytes infinity_and_more{};
  infinity_and_more[0] = 0xc0, infinity_and_more[47] = 1;
  BOOST_TEST(refusal([&] { decode_zcash_g1_compressed(infinity_and_more); }).find("infinity flag") !=
             std::string::npos);

  // Some x below p has no y (about half of them): the first such small x.
  std::string no_point;
  for (std::uint8_t x = 1; no_point.empty(); ++x) {
    G1Bytes bytes{};
    bytes[0] = 0x80, bytes[47] = x;
    no_point = refusal([&] { decode_zcash_g1_compressed(bytes); });
  }
  BOOST_TEST((no_point.find("not the x-coordinate") != std::string::npos ||
              no_point.find("not in the subgroup") != std::string::npos),
             no_point);
}
