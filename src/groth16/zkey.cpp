#include "groth16/zkey.hpp"

#include "groth16/binfile.hpp"
#include "groth16/encoding.hpp"
#include "math/parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <set>

namespace stagehand::groth16 {
namespace {

constexpr std::uint32_t kProtocolSection = 1;
constexpr std::uint32_t kHeaderSection = 2;
constexpr std::uint32_t kIcSection = 3;
constexpr std::uint32_t kCoefficientSection = 4;
constexpr std::uint32_t kASection = 5;
constexpr std::uint32_t kB1Section = 6;
constexpr std::uint32_t kB2Section = 7;
constexpr std::uint32_t kCSection = 8;
constexpr std::uint32_t kHSection = 9;
constexpr std::uint32_t kContributionSection = 10;
constexpr std::size_t kCoefficientBytes = 44;
constexpr std::string_view kKind = "snarkjs proving key (.zkey)";

// Checks that a section holds exactly count records of `size` bytes before decoding them.
void expect_size(SectionReader& reader, std::uint64_t count, std::size_t size, const std::string& what) {
  if (const auto wrong = wrong_record_count(reader.size(), count, size, what)) reader.fail(*wrong);
}

}  // namespace

namespace detail {

template <class Fr>
std::uint64_t decode_coefficients(std::span<const std::uint8_t> records, std::uint32_t domain_size,
                                  std::uint32_t n_vars, std::span<BasicCoefficient<Fr>> out, unsigned threads,
                                  std::size_t minimum_range) {
  const std::uint64_t count = out.size();
  std::atomic<std::uint64_t> first_bad{count};
  math::detail::run_ranges(count, threads, minimum_range, [&](std::size_t begin, std::size_t end) {
    for (std::size_t index = begin; index < end; ++index) {
      const std::uint8_t* record = records.data() + index * kCoefficientBytes;
      auto& entry = out[index];
      entry.matrix = load_u32(record);
      entry.constraint = load_u32(record + 4);
      entry.signal = load_u32(record + 8);
      const auto value = Fr::from_double_montgomery_bytes(std::span<const std::uint8_t, 32>(record + 12, 32));
      if (entry.matrix > 1 || entry.constraint >= domain_size || entry.signal >= n_vars || !value) {
        // The lowest bad index of all ranges: each range stops at its first.
        std::uint64_t seen = first_bad.load();
        while (index < seen && !first_bad.compare_exchange_weak(seen, index)) {
        }
        return;
      }
      entry.value = *value;
    }
  });
  return first_bad.load();
}

template std::uint64_t decode_coefficients<math::Fr>(std::span<const std::uint8_t>, std::uint32_t, std::uint32_t,
                                                     std::span<Coefficient>, unsigned, std::size_t);

}  // namespace detail

unsigned domain_log2_for(std::uint64_t constraint_count, std::uint64_t public_count) {
  // snarkjs: log2(nConstraints + nPublic) + 1 with a floor log2, so the domain always has room
  // for the nPublic + 1 extra rows.
  const std::uint64_t rows = std::max<std::uint64_t>(constraint_count + public_count, 1);
  return static_cast<unsigned>(std::bit_width(rows) - 1) + 1;
}

InputFile open_zkey(const std::filesystem::path& path) { return open_input(path, kKind); }

ProvingKey read_zkey(const std::filesystem::path& path) { return read_zkey(open_zkey(path)); }

namespace {

void read_protocol(const BinFile& file) {
  SectionReader protocol(file, kProtocolSection, "protocol");
  const auto id = protocol.u32();
  if (id != 1) {
    protocol.fail(fmt::format("protocol {} ({}), but Stagehand proves Groth16 (protocol 1)", id,
                              id == 2    ? "PLONK"
                              : id == 10 ? "FFLONK"
                                         : "unknown"));
  }
}

// The header's primes: the key's curve must be Key's.
template <class Key>
void read_primes(SectionReader& header) {
  const auto n8q = header.u32();
  expect_curve(header, curve_of_base_prime(header.take(n8q)), Key::curve, "the base field prime q", "key");
  const auto n8r = header.u32();
  expect_curve(header, curve_of_scalar_prime(header.take(n8r)), Key::curve, "the scalar field prime r", "key");
}

// The header: the curve's primes, the counts, the domain and the verifying key's points.
template <class Key>
void read_header(const BinFile& file, Key& key) {
  SectionReader header(file, kHeaderSection, "header");
  read_primes<Key>(header);
  key.n_vars = header.u32();
  key.n_public = header.u32();
  key.domain_size = header.u32();
  // In 64 bits: nPublic = 0xFFFFFFFF would wrap nPublic + 1 to 0.
  if (key.n_vars == 0 || std::uint64_t{key.n_public} + 1 > key.n_vars) {
    header.fail(
        fmt::format("nVars = {} and nPublic = {} are inconsistent (nPublic + 1 <= nVars)", key.n_vars, key.n_public));
  }
  if (!std::has_single_bit(key.domain_size) || (key.domain_size < 2) || key.domain_size > (1u << kMaxDomainLog2)) {
    header.fail(fmt::format("domain size {} is not a power of two in [2, 2^{}]", key.domain_size, kMaxDomainLog2));
  }
  key.domain_log2 = static_cast<unsigned>(std::countr_zero(key.domain_size));
  using G1 = std::remove_cvref_t<decltype(key.alpha1)>;
  using G2 = std::remove_cvref_t<decltype(key.beta2)>;
  auto g1 = [&](const char* name) {
    auto point = decode_affine<G1>(header.take(affine_bytes<G1>));
    if (!point) header.fail(fmt::format("{} is not a point of G1", name));
    return *point;
  };
  auto g2 = [&](const char* name) {
    auto point = decode_affine<G2>(header.take(affine_bytes<G2>));
    if (!point) header.fail(fmt::format("{} is not a point of G2", name));
    return *point;
  };
  key.alpha1 = g1("alpha1");
  key.beta1 = g1("beta1");
  key.beta2 = g2("beta2");
  key.gamma2 = g2("gamma2");
  key.delta1 = g1("delta1");
  key.delta2 = g2("delta2");
  header.expect_end();
}

template <class Key>
void read_coefficients(const BinFile& file, Key& key) {
  using Fr = decltype(key.coefficients[0].value);
  SectionReader coefficients(file, kCoefficientSection, "coefficients");
  const auto count = coefficients.u32();
  if (coefficients.remaining() != std::uint64_t{count} * kCoefficientBytes) {
    coefficients.fail(fmt::format("{} bytes of records for {} coefficients, expected {}", coefficients.remaining(),
                                  count, std::uint64_t{count} * kCoefficientBytes));
  }
  key.coefficients.resize(count);  // unwritten (PinnableAllocator): the decode writes each record
  // On every thread: each value's conversion out of snarkjs's double Montgomery form is a
  // product, and a 2^24 key has 38.8M records: the H200 machine's 16 threads took about half of
  // one thread's time (bench/journal/2026-12-04.md).
  const auto records = coefficients.take(std::uint64_t{count} * kCoefficientBytes);
  const auto bad = detail::decode_coefficients<Fr>(records, key.domain_size, key.n_vars, key.coefficients, 0);
  if (bad < count) {
    const auto& entry = key.coefficients[bad];
    const bool value_ok = Fr::from_double_montgomery_bytes(
                              std::span<const std::uint8_t, 32>(records.data() + bad * kCoefficientBytes + 12, 32))
                              .has_value();
    coefficients.fail(fmt::format("record {} is out of range (matrix {}, constraint {} of {}, signal {} of {}{})", bad,
                                  entry.matrix, entry.constraint, key.domain_size, entry.signal, key.n_vars,
                                  value_ok ? "" : ", value not below r"));
  }
}

}  // namespace

namespace {

// The sections a regular file's read leaves for the reader to copy: the point sets, most of a key.
const std::set<std::uint32_t> kPointSections = {kASection, kB1Section, kB2Section, kCSection, kHSection};

BinFile open_key_file(InputFile input) { return BinFile(std::move(input), "zkey", kKind, 2, kPointSections); }

ProvingKey read_bls12_381_key(const BinFile& file) {
  ProvingKey key;
  read_protocol(file);
  read_header(file, key);
  {
    SectionReader ic(file, kIcSection, "IC");
    expect_size(ic, key.n_public + 1ULL, kG1Bytes, "G1 points");
    key.ic = read_g1_points(ic, key.n_public + 1ULL, "IC");
  }
  read_coefficients(file, key);
  // The point sets go straight from the file into their own memory (their bytes are most of it).
  key.a = read_g1_set(file, kASection, "A", key.n_vars);
  key.b1 = read_g1_set(file, kB1Section, "B1", key.n_vars);
  key.b2 = read_g2_set(file, kB2Section, "B2", key.n_vars);
  key.c = read_g1_set(file, kCSection, "C", std::uint64_t{key.n_vars} - key.n_public - 1);
  key.h = read_g1_set(file, kHSection, "H", key.domain_size);
  return key;
}

// `count` points of section `id`, decoded; a point set's section is copied out of the file first.
template <class Affine>
std::vector<Affine> read_points(const BinFile& file, std::uint32_t id, const char* what, std::uint64_t count,
                                const char* group) {
  auto decode = [&](SectionReader section) {
    expect_size(section, count, affine_bytes<Affine>, fmt::format("{} points", group));
    return read_affine_points<Affine>(section, count, what, group);
  };
  if (kPointSections.count(id) == 0) return decode(SectionReader(file, id, what));
  std::vector<std::uint8_t> copied(file.section_size(id, what));
  file.read_section(id, what, copied);
  return decode(SectionReader(file, id, what, copied));
}

bn254::ProvingKey read_bn254_key(const BinFile& file) {
  bn254::ProvingKey key;
  read_protocol(file);
  read_header(file, key);
  using G1 = math::bn254::G1Affine;
  using G2 = math::bn254::G2Affine;
  key.ic = read_points<G1>(file, kIcSection, "IC", key.n_public + 1ULL, "G1");
  read_coefficients(file, key);
  key.a = read_point_set<G1>(file, kASection, "A", key.n_vars, "G1");
  key.b1 = read_point_set<G1>(file, kB1Section, "B1", key.n_vars, "G1");
  key.b2 = read_point_set<G2>(file, kB2Section, "B2", key.n_vars, "G2");
  key.c = read_point_set<G1>(file, kCSection, "C", std::uint64_t{key.n_vars} - key.n_public - 1, "G1");
  key.h = read_point_set<G1>(file, kHSection, "H", key.domain_size, "G1");
  return key;
}

// The curve of the header's primes; InputError naming the file where they are of no known curve
// or of two.
Curve header_curve(const BinFile& file) {
  SectionReader header(file, kHeaderSection, "header");
  const auto q = curve_of_base_prime(header.take(header.u32()));
  const auto r = curve_of_scalar_prime(header.take(header.u32()));
  if (!q || q != r) {
    header.fail(
        "the primes q and r are not those of BLS12-381 or BN254: a key of an unknown curve (Stagehand proves "
        "BLS12-381 and BN254 keys)");
  }
  return *q;
}

}  // namespace

ProvingKey read_zkey(InputFile input) { return read_bls12_381_key(open_key_file(std::move(input))); }

namespace bn254 {
ProvingKey read_zkey(const std::filesystem::path& path) { return groth16::bn254::read_zkey(open_zkey(path)); }
ProvingKey read_zkey(InputFile input) { return read_bn254_key(open_key_file(std::move(input))); }
}  // namespace bn254

AnyProvingKey read_any_zkey(InputFile input) {
  const BinFile file = open_key_file(std::move(input));
  read_protocol(file);
  if (header_curve(file) == Curve::bn254) return read_bn254_key(file);
  return read_bls12_381_key(file);
}

AnyProvingKey read_any_zkey(const std::filesystem::path& path) { return read_any_zkey(open_zkey(path)); }

Curve zkey_curve(const std::filesystem::path& path) {
  // Every section but the header left unread: a large key's coefficients and points are read once,
  // by the reader of its curve.
  const BinFile file(open_zkey(path), "zkey", kKind, 2,
                     {kProtocolSection, kIcSection, kCoefficientSection, kASection, kB1Section, kB2Section, kCSection,
                      kHSection, kContributionSection});
  return header_curve(file);
}

namespace {

// The header section: both primes, the counts and the verifying key's points.
template <class Key>
void write_header(BinFileWriter& out, const Key& key) {
  using Description = typename Key::Description;
  std::vector<std::uint8_t> buffer;
  out.begin_section(kHeaderSection);
  for (const auto& prime : {modulus_bytes<typename Description::Fq>(), modulus_bytes<typename Description::Fr>()}) {
    out.u32(static_cast<std::uint32_t>(prime.size()));
    out.bytes(prime);
  }
  out.u32(key.n_vars);
  out.u32(key.n_public);
  out.u32(key.domain_size);
  encode_affine(key.alpha1, buffer);
  encode_affine(key.beta1, buffer);
  encode_affine(key.beta2, buffer);
  encode_affine(key.gamma2, buffer);
  encode_affine(key.delta1, buffer);
  encode_affine(key.delta2, buffer);
  out.bytes(buffer);
  out.end_section();
}

template <class Key>
void write_coefficients(BinFileWriter& out, const Key& key) {
  using Fr = typename Key::Description::Fr;
  // Stored as coef·R² mod r: the Montgomery bytes of coef·R.
  const Fr r_squared = *Fr::from_montgomery_limbs(Fr::montgomery_constants.r_squared_mod_modulus);
  out.begin_section(kCoefficientSection);
  out.u32(static_cast<std::uint32_t>(key.coefficients.size()));
  for (const auto& entry : key.coefficients) {
    out.u32(entry.matrix);
    out.u32(entry.constraint);
    out.u32(entry.signal);
    out.bytes((entry.value * r_squared).to_montgomery_bytes());
  }
  out.end_section();
}

// A set of points as a section: a BLS12-381 key's sets are encoded already, a BN254 key's are
// encoded here a chunk at a time.
template <class Set>
void write_point_section(BinFileWriter& out, std::uint32_t id, const Set& set) {
  out.begin_section(id);
  if constexpr (requires { set.bytes(); }) {
    out.bytes(set.bytes());
  } else {
    constexpr std::size_t kChunk = 1 << 14;
    std::vector<std::uint8_t> buffer;
    for (std::size_t start = 0; start < set.size(); start += kChunk) {
      buffer.clear();
      for (std::size_t i = start; i < std::min(set.size(), start + kChunk); ++i) encode_affine(set[i], buffer);
      out.bytes(buffer);
    }
  }
  out.end_section();
}

template <class Key>
void write_key(const std::filesystem::path& path, const Key& key) {
  BinFileWriter out(path, "zkey", 1);
  out.begin_section(kProtocolSection);
  out.u32(1);
  out.end_section();
  write_header(out, key);
  // snarkjs writes the coefficients in the file order 4 after 2 and 3 as well; section order
  // does not matter to readers.
  write_point_section(out, kIcSection, key.ic);
  write_coefficients(out, key);
  write_point_section(out, kASection, key.a);
  write_point_section(out, kB1Section, key.b1);
  write_point_section(out, kB2Section, key.b2);
  write_point_section(out, kCSection, key.c);
  write_point_section(out, kHSection, key.h);
  out.begin_section(kContributionSection);
  out.bytes(std::vector<std::uint8_t>(64, 0));
  out.u32(0);
  out.end_section();
  out.finish();
}

}  // namespace

void write_zkey(const std::filesystem::path& path, const ProvingKey& key) { write_key(path, key); }

namespace bn254 {
void write_zkey(const std::filesystem::path& path, const ProvingKey& key) { write_key(path, key); }
}  // namespace bn254

}  // namespace stagehand::groth16
