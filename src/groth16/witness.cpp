#include "groth16/witness.hpp"

#include "groth16/binfile.hpp"
#include "groth16/encoding.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace stagehand::groth16 {

namespace {

constexpr std::string_view kMagic = "wtns";
constexpr std::string_view kKind = "snarkjs witness (.wtns)";
constexpr std::uint32_t kMaxVersion = 2;

std::vector<math::Fr> read_witness(const BinFile& file) {
  std::uint32_t count = 0;
  {
    SectionReader header(file, 1, "header");
    const auto n8 = header.u32();
    if (n8 != 32) header.fail(fmt::format("field elements of {} bytes, expected 32: not a BLS12-381 witness", n8));
    auto prime = header.take(32);
    const auto r = modulus_bytes<math::Fr>();
    if (!std::equal(prime.begin(), prime.end(), r.begin())) {
      header.fail("the prime is not BLS12-381's r: a witness for another curve (compile with circom --prime bls12381)");
    }
    count = header.u32();
    header.expect_end();
  }
  SectionReader values(file, 2, "witness values");
  if (values.size() != std::uint64_t{count} * 32) {
    values.fail(fmt::format("{} bytes, expected {} ({} values of 32 bytes){}", values.size(), std::uint64_t{count} * 32, count,
                            values.size() < std::uint64_t{count} * 32 ? ": truncated" : ""));
  }
  std::vector<math::Fr> witness(count);
  for (std::uint32_t index = 0; index < count; ++index) {
    auto value = math::Fr::from_canonical_bytes(std::span<const std::uint8_t, 32>(values.take(32).data(), 32));
    if (!value) values.fail(fmt::format("value {} is not below r", index));
    witness[index] = *value;
  }
  if (count == 0 || !witness[0].is_one()) values.fail("w[0] must be 1 (the constant signal)");
  return witness;
}

}  // namespace

std::vector<math::Fr> read_wtns(const std::filesystem::path& path) { return read_witness(BinFile(path, kMagic, kKind, kMaxVersion)); }

std::vector<math::Fr> parse_wtns(std::span<const std::uint8_t> bytes, const std::string& name) {
  return read_witness(BinFile(bytes, name, kMagic, kKind, kMaxVersion));
}

void write_wtns(const std::filesystem::path& path, const std::vector<math::Fr>& witness) {
  BinFileWriter out("wtns", 2);
  out.begin_section(1);
  out.u32(32);
  out.bytes(modulus_bytes<math::Fr>());
  out.u32(static_cast<std::uint32_t>(witness.size()));
  out.end_section();
  out.begin_section(2);
  for (const auto& value : witness) out.bytes(value.to_canonical_bytes());
  out.end_section();
  out.save(path);
}

}  // namespace stagehand::groth16
