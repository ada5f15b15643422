#include "groth16/r1cs.hpp"

#include "groth16/binfile.hpp"
#include "groth16/encoding.hpp"
#include "groth16/zkey.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <type_traits>

namespace stagehand::groth16 {

namespace {

template <class Fr>
constexpr Curve kCurveOf = std::is_same_v<Fr, math::bn254::Fr> ? Curve::bn254 : Curve::bls12_381;

// The header's field: 32-byte elements modulo r of Fr's curve (`hint` as read_r1cs's).
template <class Fr>
void read_prime(SectionReader& header, const std::string& hint) {
  const auto n8 = header.u32();
  if (n8 != 32)
    header.fail(fmt::format("field elements of {} bytes, expected 32: not a BLS12-381 or BN254 circuit", n8));
  constexpr Curve expected = kCurveOf<Fr>;
  const std::string compile = fmt::format("compile the circuit with circom {}", circom_prime_option(expected));
  expect_curve(header, curve_of_scalar_prime(header.take(32)), expected, "the prime r", "circuit",
               hint.empty() ? compile : hint);
}

// The header: the field, the counts, and the domain they need; returns the constraint count.
template <class R1csType>
std::uint32_t read_header(const BinFile& file, R1csType& r1cs, const std::string& hint) {
  SectionReader header(file, 1, "header");
  read_prime<typename R1csType::Fr>(header, hint);
  r1cs.n_wires = header.u32();
  r1cs.n_outputs = header.u32();
  r1cs.n_public_inputs = header.u32();
  r1cs.n_private_inputs = header.u32();
  r1cs.n_labels = header.u64();
  const std::uint32_t constraint_count = header.u32();
  header.expect_end();
  // In 64 bits: 2^31 outputs and 2^31 public inputs wrap to 0 in 32.
  const std::uint64_t signals = std::uint64_t{r1cs.n_outputs} + r1cs.n_public_inputs + r1cs.n_private_inputs + 1;
  if (r1cs.n_wires == 0 || signals > r1cs.n_wires) {
    header.fail(fmt::format("{} wires cannot hold {} outputs, {} public and {} private inputs and the constant",
                            r1cs.n_wires, r1cs.n_outputs, r1cs.n_public_inputs, r1cs.n_private_inputs));
  }
  const unsigned domain_log2 = domain_log2_for(constraint_count, r1cs.n_public());
  if (domain_log2 > kMaxDomainLog2) {
    header.fail(
        fmt::format("{} constraints and {} public signals need a domain of 2^{}, more than the 2^{} Stagehand supports",
                    constraint_count, r1cs.n_public(), domain_log2, kMaxDomainLog2));
  }
  return constraint_count;
}

// Every count against the file before anything is reserved. Section 3 maps each wire to its
// label (a u64 per wire, as circom writes it): it is what ties nWires to the file, so that a
// header claiming 2^24 wires for a one-constraint circuit cannot make setup allocate for them.
template <class R1csType>
void check_wire_labels(const BinFile& file, const R1csType& r1cs) {
  SectionReader labels(file, 3, "wire labels");
  if (labels.size() != std::uint64_t{r1cs.n_wires} * 8) {
    labels.fail(fmt::format(
        "{} bytes, expected {} (one u64 label for each of the header's {} wires){}", labels.size(),
        std::uint64_t{r1cs.n_wires} * 8, r1cs.n_wires,
        labels.size() < std::uint64_t{r1cs.n_wires} * 8 ? ": truncated, or the header's nWires is wrong" : ""));
  }
}

template <class R1csType>
void read_constraints(const BinFile& file, R1csType& r1cs, std::uint32_t constraint_count) {
  using Fr = typename R1csType::Fr;
  SectionReader section(file, 2, "constraints");
  // A constraint takes at least 12 bytes (three empty linear combinations).
  if (std::uint64_t{constraint_count} * 12 > section.size()) {
    section.fail(fmt::format(
        "{} bytes cannot hold the header's {} constraints (at least 12 bytes each): truncated, or the header's "
        "nConstraints is wrong",
        section.size(), constraint_count));
  }
  r1cs.constraints.resize(constraint_count);
  for (std::uint32_t index = 0; index < constraint_count; ++index) {
    auto read_lc = [&](BasicLinearCombination<Fr>& lc) {
      const auto terms = section.u32();
      if (std::uint64_t{terms} * 36 > section.remaining())
        section.fail(fmt::format("truncated in constraint {}", index));
      lc.resize(terms);
      for (auto& term : lc) {
        term.wire = section.u32();
        auto value = Fr::from_canonical_bytes(std::span<const std::uint8_t, 32>(section.take(32).data(), 32));
        if (term.wire >= r1cs.n_wires || !value) {
          section.fail(fmt::format("constraint {}: term on wire {} of {}{}", index, term.wire, r1cs.n_wires,
                                   value ? "" : " with a coefficient not below r"));
        }
        term.coefficient = *value;
      }
    };
    auto& constraint = r1cs.constraints[index];
    read_lc(constraint.a);
    read_lc(constraint.b);
    read_lc(constraint.c);
  }
  section.expect_end();
}

template <class R1csType>
R1csType read_r1cs_from(const BinFile& file, const std::string& hint) {
  R1csType r1cs;
  const std::uint32_t constraint_count = read_header(file, r1cs, hint);
  check_wire_labels(file, r1cs);
  read_constraints(file, r1cs, constraint_count);
  return r1cs;
}

constexpr std::string_view kMagic = "r1cs";
constexpr std::string_view kKind = "circom constraint system (.r1cs)";

template <class R1csType>
void write_r1cs_to(const std::filesystem::path& path, const R1csType& r1cs) {
  BinFileWriter out(path, kMagic, 1);
  out.begin_section(1);
  out.u32(32);
  out.bytes(modulus_bytes<typename R1csType::Fr>());
  out.u32(r1cs.n_wires);
  out.u32(r1cs.n_outputs);
  out.u32(r1cs.n_public_inputs);
  out.u32(r1cs.n_private_inputs);
  out.u64(r1cs.n_labels);
  out.u32(static_cast<std::uint32_t>(r1cs.constraints.size()));
  out.end_section();
  out.begin_section(2);
  for (const auto& constraint : r1cs.constraints) {
    for (const auto* lc : {&constraint.a, &constraint.b, &constraint.c}) {
      out.u32(static_cast<std::uint32_t>(lc->size()));
      for (const auto& term : *lc) {
        out.u32(term.wire);
        out.bytes(term.coefficient.to_canonical_bytes());
      }
    }
  }
  out.end_section();
  out.begin_section(3);
  for (std::uint64_t label = 0; label < r1cs.n_wires; ++label) out.u64(label);
  out.end_section();
  out.finish();
}

}  // namespace

R1cs read_r1cs(const std::filesystem::path& path, const std::string& hint) {
  return read_r1cs_from<R1cs>(BinFile(path, kMagic, kKind, 1), hint);
}

R1cs read_r1cs(InputFile input, const std::string& hint) {
  return read_r1cs_from<R1cs>(BinFile(std::move(input), kMagic, kKind, 1), hint);
}

void write_r1cs(const std::filesystem::path& path, const R1cs& r1cs) { write_r1cs_to(path, r1cs); }

namespace bn254 {
R1cs read_r1cs(const std::filesystem::path& path, const std::string& hint) {
  return read_r1cs_from<R1cs>(BinFile(path, kMagic, kKind, 1), hint);
}

void write_r1cs(const std::filesystem::path& path, const R1cs& r1cs) { write_r1cs_to(path, r1cs); }
}  // namespace bn254

AnyR1cs read_any_r1cs(const std::filesystem::path& path) {
  const BinFile file(path, kMagic, kKind, 1);
  SectionReader header(file, 1, "header");
  const auto n8 = header.u32();
  const auto curve = n8 == 32 ? curve_of_scalar_prime(header.take(32)) : std::nullopt;
  // The header is read again by the reader of its curve, whose checks name what else is wrong.
  if (curve == Curve::bn254) return read_r1cs_from<bn254::R1cs>(file, {});
  if (curve == Curve::bls12_381 || n8 != 32) return read_r1cs_from<R1cs>(file, {});
  header.fail(
      "the prime r is neither BLS12-381's nor BN254's: a circuit of a curve Stagehand does not know (compile it with "
      "circom --prime bn128 or --prime bls12381)");
}

}  // namespace stagehand::groth16
