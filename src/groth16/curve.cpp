#include "groth16/curve.hpp"

#include "groth16/encoding.hpp"
#include "math/bn254.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace stagehand::groth16 {
namespace {

template <class Field>
bool is_prime_of(std::span<const std::uint8_t> bytes) {
  const auto modulus = modulus_bytes<Field>();
  return std::equal(bytes.begin(), bytes.end(), modulus.begin(), modulus.end());
}

}  // namespace

std::string_view curve_name(Curve curve) { return curve == Curve::bn254 ? "BN254" : "BLS12-381"; }

std::string_view snarkjs_curve_name(Curve curve) { return curve == Curve::bn254 ? "bn128" : "bls12381"; }

std::string_view circom_prime_option(Curve curve) {
  return curve == Curve::bn254 ? "--prime bn128" : "--prime bls12381";
}

std::optional<Curve> curve_of_scalar_prime(std::span<const std::uint8_t> r) {
  if (is_prime_of<math::Fr>(r)) return Curve::bls12_381;
  if (is_prime_of<math::bn254::Fr>(r)) return Curve::bn254;
  return std::nullopt;
}

std::optional<Curve> curve_of_base_prime(std::span<const std::uint8_t> q) {
  if (is_prime_of<math::Fq>(q)) return Curve::bls12_381;
  if (is_prime_of<math::bn254::Fq>(q)) return Curve::bn254;
  return std::nullopt;
}

void expect_curve(const SectionReader& reader, std::optional<Curve> found, Curve expected, std::string_view prime,
                  std::string_view file_kind, std::string_view hint) {
  const std::string tail = hint.empty() ? std::string() : fmt::format(" ({})", hint);
  if (!found) {
    reader.fail(
        fmt::format("{} is neither BLS12-381's nor BN254's: not a {} {} (a {} of another curve, one Stagehand does "
                    "not know){}",
                    prime, curve_name(expected), file_kind, file_kind, tail));
  }
  if (*found == expected) return;
  try {
    reader.fail(fmt::format("{} is {}'s: a {} of {}, where {} is expected{}", prime, curve_name(*found), file_kind,
                            curve_name(*found), curve_name(expected), tail));
  } catch (const InputError& error) {
    // The reader's message (file and section) as the error that says which curves they were.
    throw CurveError(error.what(), *found, expected);
  }
}

}  // namespace stagehand::groth16
