#include "groth16/witness.hpp"

#include "groth16/binfile.hpp"
#include "groth16/curve.hpp"
#include "groth16/encoding.hpp"

#include <fmt/format.h>

#include "math/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <optional>

namespace stagehand::groth16 {

namespace {

// The header's value count, after checking the field: `Fr`'s curve (Curve of the caller); the
// file's values section is `values`.
template <class Fr>
std::uint32_t read_header(const BinFile& file, Curve expected) {
  SectionReader header(file, 1, "header");
  const auto n8 = header.u32();
  if (n8 != 32)
    header.fail(fmt::format("field elements of {} bytes, expected 32: not a {} witness", n8, curve_name(expected)));
  auto prime = header.take(32);
  const auto hint = fmt::format("compile with circom {}", circom_prime_option(expected));
  expect_curve(header, curve_of_scalar_prime(prime), expected, "the prime r", "witness", hint);
  const std::uint32_t count = header.u32();
  header.expect_end();
  return count;
}

// Section 2, after checking that it holds exactly `count` values: before anything is sized by
// the header's count, so a corrupt count is an error about the file, never a huge allocation.
SectionReader values_section(const BinFile& file, std::uint32_t count) {
  SectionReader values(file, 2, "witness values");
  if (values.size() != std::uint64_t{count} * 32) {
    values.fail(fmt::format("{} bytes, expected {} ({} values of 32 bytes){}", values.size(), std::uint64_t{count} * 32,
                            count, values.size() < std::uint64_t{count} * 32 ? ": truncated" : ""));
  }
  return values;
}

// The index of the first of the section's `count` values not below r (the lowest of any
// thread's), or none; `store` is given each value below r as it is met, by index.
template <class Fr, class Store>
std::optional<std::uint64_t> first_value_not_below_r(std::span<const std::uint8_t> bytes, std::uint32_t count,
                                                     unsigned threads, const Store& store) {
  std::atomic<std::uint64_t> first_bad{~std::uint64_t{0}};
  math::detail::run_ranges(count, threads, 1 << 16, [&](std::size_t begin, std::size_t end) {
    for (std::size_t index = begin; index < end; ++index) {
      const std::span<const std::uint8_t, 32> value(bytes.data() + 32 * index, 32);
      if (!Fr::bytes_below_modulus(value)) {
        std::uint64_t seen = first_bad.load();
        while (index < seen && !first_bad.compare_exchange_weak(seen, index)) {
        }
        return;
      }
      store(index, value);
    }
  });
  if (first_bad.load() == ~std::uint64_t{0}) return std::nullopt;
  return first_bad.load();
}

// The checked section's values: each below r and w[0] = 1; converted into `out` (count of them)
// where it is given, on up to `threads` threads.
template <class Fr>
void read_values(SectionReader& values, std::uint32_t count, std::optional<std::span<Fr>> out, unsigned threads) {
  const auto bytes = values.take(values.size());
  const auto bad = first_value_not_below_r<Fr>(bytes, count, threads,
                                               [&](std::size_t index, std::span<const std::uint8_t, 32> value) {
                                                 if (out) (*out)[index] = *Fr::from_canonical_bytes(value);
                                               });
  if (bad) values.fail(fmt::format("value {} is not below r", *bad));
  const auto one = Fr::one().to_canonical_bytes();
  if (count == 0 || !std::equal(one.begin(), one.end(), bytes.begin()))
    values.fail("w[0] must be 1 (the constant signal)");
}

constexpr std::string_view kMagic = "wtns";
constexpr std::string_view kKind = "snarkjs witness (.wtns)";
constexpr std::uint32_t kMaxVersion = 2;

template <class Fr = math::Fr>
std::vector<Fr> whole_witness(const BinFile& file, unsigned threads, Curve curve = Curve::bls12_381) {
  const std::uint32_t count = read_header<Fr>(file, curve);
  auto values = values_section(file, count);
  std::vector<Fr> witness(count);
  read_values<Fr>(values, count, std::span<Fr>(witness), threads);
  return witness;
}

template <class Fr = math::Fr>
std::size_t witness_into(const BinFile& file, std::span<Fr> out, unsigned threads, Curve curve = Curve::bls12_381) {
  const std::uint32_t count = read_header<Fr>(file, curve);
  if (count > out.size()) {
    file.fail(1, "header",
              fmt::format("the witness has {} values, more than the {} expected: a witness for another circuit", count,
                          out.size()));
  }
  auto values = values_section(file, count);
  read_values<Fr>(values, count, out.first(count), threads);
  return count;
}

template <class Fr = math::Fr>
std::uint32_t checked_count(const BinFile& file, unsigned threads, Curve curve = Curve::bls12_381) {
  const std::uint32_t count = read_header<Fr>(file, curve);
  auto values = values_section(file, count);
  read_values<Fr>(values, count, std::nullopt, threads);
  return count;
}

}  // namespace

std::vector<math::Fr> read_wtns(const std::filesystem::path& path, unsigned threads) {
  return whole_witness(BinFile(path, kMagic, kKind, kMaxVersion), threads);
}

std::size_t read_wtns_into(const std::filesystem::path& path, std::span<math::Fr> out, unsigned threads) {
  return witness_into(BinFile(path, kMagic, kKind, kMaxVersion), out, threads);
}

std::vector<math::Fr> parse_wtns(std::span<const std::uint8_t> bytes, const std::string& name, unsigned threads) {
  return whole_witness(BinFile(bytes, name, kMagic, kKind, kMaxVersion), threads);
}

std::size_t parse_wtns_into(std::span<const std::uint8_t> bytes, const std::string& name, std::span<math::Fr> out,
                            unsigned threads) {
  return witness_into(BinFile(bytes, name, kMagic, kKind, kMaxVersion), out, threads);
}

std::uint32_t check_wtns(std::span<const std::uint8_t> bytes, const std::string& name, unsigned threads) {
  return checked_count(BinFile(bytes, name, kMagic, kKind, kMaxVersion), threads);
}

namespace {

template <class Fr>
void write_witness(BinFileWriter& out, const std::vector<Fr>& witness) {
  out.begin_section(1);
  out.u32(32);
  out.bytes(modulus_bytes<Fr>());
  out.u32(static_cast<std::uint32_t>(witness.size()));
  out.end_section();
  out.begin_section(2);
  for (const auto& value : witness) out.bytes(value.to_canonical_bytes());
  out.end_section();
}

}  // namespace

// Straight to the file as it goes (a 2^26 witness is 2 GiB).
void write_wtns(const std::filesystem::path& path, const std::vector<math::Fr>& witness) {
  BinFileWriter out(path, "wtns", 2);
  write_witness(out, witness);
  out.finish();
}

std::vector<std::uint8_t> wtns_bytes(const std::vector<math::Fr>& witness) {
  BinFileWriter out("wtns", 2);
  write_witness(out, witness);
  return out.take_bytes();
}

namespace bn254 {

std::vector<math::bn254::Fr> read_wtns(const std::filesystem::path& path, unsigned threads) {
  return whole_witness<math::bn254::Fr>(BinFile(path, kMagic, kKind, kMaxVersion), threads, Curve::bn254);
}

std::vector<math::bn254::Fr> parse_wtns(std::span<const std::uint8_t> bytes, const std::string& name,
                                        unsigned threads) {
  return whole_witness<math::bn254::Fr>(BinFile(bytes, name, kMagic, kKind, kMaxVersion), threads, Curve::bn254);
}

std::size_t read_wtns_into(const std::filesystem::path& path, std::span<math::bn254::Fr> out, unsigned threads) {
  return witness_into<math::bn254::Fr>(BinFile(path, kMagic, kKind, kMaxVersion), out, threads, Curve::bn254);
}

std::size_t parse_wtns_into(std::span<const std::uint8_t> bytes, const std::string& name,
                            std::span<math::bn254::Fr> out, unsigned threads) {
  return witness_into<math::bn254::Fr>(BinFile(bytes, name, kMagic, kKind, kMaxVersion), out, threads, Curve::bn254);
}

std::uint32_t check_wtns(std::span<const std::uint8_t> bytes, const std::string& name, unsigned threads) {
  return checked_count<math::bn254::Fr>(BinFile(bytes, name, kMagic, kKind, kMaxVersion), threads, Curve::bn254);
}

void write_wtns(const std::filesystem::path& path, const std::vector<math::bn254::Fr>& witness) {
  BinFileWriter out(path, "wtns", 2);
  write_witness(out, witness);
  out.finish();
}

std::vector<std::uint8_t> wtns_bytes(const std::vector<math::bn254::Fr>& witness) {
  BinFileWriter out("wtns", 2);
  write_witness(out, witness);
  return out.take_bytes();
}

}  // namespace bn254

std::optional<Curve> wtns_curve(const std::filesystem::path& path) {
  const BinFile file(path, kMagic, kKind, kMaxVersion);
  SectionReader header(file, 1, "header");
  if (header.u32() != 32) return std::nullopt;
  return curve_of_scalar_prime(header.take(32));
}

}  // namespace stagehand::groth16
