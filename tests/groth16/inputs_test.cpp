// The Groth16 inputs: readers round-trip what the writers wrote, every kind of bad input is a
// clear error naming the file and the section, and proofs made as coordinator jobs (on the
// functional simulator, under every policy) equal the plain CPU prover's.

#define BOOST_TEST_MODULE groth16_inputs
#include <boost/test/unit_test.hpp>

#include "support/input_errors.hpp"
#include "support/multiplier_circuit.hpp"
#include "coordinator/coordinator.hpp"
#include "support/functional_groth16_device.hpp"
#include "support/functional_run.hpp"
#include "workloads/groth16/groth16_workload.hpp"
#include "groth16/binfile.hpp"
#include "groth16/encoding.hpp"
#include "groth16/errors.hpp"
#include "groth16/json.hpp"
#include "groth16/constraint_matrix.hpp"
#include "groth16/curve.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "groth16/synthetic_circuit.hpp"
#include "groth16/verify.hpp"
#include "groth16/witness.hpp"
#include "groth16/zkey.hpp"
#include "sim/device_model.hpp"
#include "sim/kernels/groth16_kernels.hpp"
#include "sim/run.hpp"
#include "sim/sim_device.hpp"
#include "sim/sim_system.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <cstring>
#include <optional>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <thread>
#include <variant>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace stagehand;
using namespace stagehand::groth16;
using math::Fr;

namespace {

// The tests' small circuit (out = x·y, t = x + 3y) and an empty row.
R1cs small_circuit() {
  R1cs r1cs = testing::multiplier_circuit();
  r1cs.constraints.push_back({{}, {}, {}});  // an empty row
  return r1cs;
}

std::vector<Fr> small_witness() {
  const Fr x = Fr::from_uint64(6), y = Fr::from_uint64(7);
  return {Fr::one(), x * y, x, y, x + Fr::from_uint64(3) * y};
}

struct Files {
  fs::path dir;
  fs::path zkey, wtns, r1cs;
  ProvingKey key;
  Files() {
    dir = fs::temp_directory_path() / ("stagehand_groth16_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    zkey = dir / "small.zkey";
    wtns = dir / "small.wtns";
    r1cs = dir / "small.r1cs";
    write_r1cs(r1cs, small_circuit());
    SetupOptions options;
    options.seed = 42;
    options.thread_count = 2;
    key = setup_from_r1cs(read_r1cs(r1cs), options);
    write_zkey(zkey, key);
    write_wtns(wtns, small_witness());
  }
  ~Files() { fs::remove_all(dir); }
};

std::vector<std::uint8_t> load(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
}
void save(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}
// The offset of section `id`'s data in a container file.
std::size_t section_offset(const std::vector<std::uint8_t>& bytes, std::uint32_t id) {
  std::uint32_t count;
  std::memcpy(&count, bytes.data() + 8, 4);
  std::size_t offset = 12;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t section;
    std::uint64_t size;
    std::memcpy(&section, bytes.data() + offset, 4);
    std::memcpy(&size, bytes.data() + offset + 4, 8);
    if (section == id) return offset + 12;
    offset += 12 + size;
  }
  throw std::runtime_error("no such section");
}
void put_u32(std::vector<std::uint8_t>& bytes, std::size_t offset, std::uint32_t value) { std::memcpy(bytes.data() + offset, &value, 4); }

using stagehand::testing::contains;
using stagehand::testing::error_of;

}  // namespace

BOOST_AUTO_TEST_SUITE(readers)

BOOST_AUTO_TEST_CASE(what_the_writers_wrote_reads_back) {
  Files files;
  const auto key = read_zkey(files.zkey);
  BOOST_CHECK_EQUAL(key.n_vars, 5u);
  BOOST_CHECK_EQUAL(key.n_public, 2u);
  BOOST_CHECK_EQUAL(key.domain_size, 8u);  // 3 constraints + 2 public -> 2^(floor(log2 5) + 1)
  BOOST_CHECK_EQUAL(key.coefficients.size(), files.key.coefficients.size());
  for (std::size_t i = 0; i < key.coefficients.size(); ++i) BOOST_CHECK(key.coefficients[i].value == files.key.coefficients[i].value);
  BOOST_CHECK(key.a == files.key.a);
  BOOST_CHECK(key.b2 == files.key.b2);
  BOOST_CHECK(key.h == files.key.h);
  BOOST_CHECK(key.delta2 == files.key.delta2);
  const auto witness = read_wtns(files.wtns);
  BOOST_CHECK(witness == small_witness());
  const auto r1cs = read_r1cs(files.r1cs);
  BOOST_CHECK_EQUAL(r1cs.constraints.size(), 3u);
  BOOST_CHECK_EQUAL(r1cs.constraints[1].a.size(), 2u);
}

BOOST_AUTO_TEST_CASE(a_missing_file_is_named) {
  Files files;
  auto message = error_of([&] { read_zkey(files.dir / "absent.zkey"); });
  BOOST_CHECK(contains(message, "absent.zkey") && contains(message, "cannot open"));
}

BOOST_AUTO_TEST_CASE(a_truncated_zkey_names_the_file) {
  Files files;
  auto bytes = load(files.zkey);
  bytes.resize(bytes.size() / 2);
  save(files.zkey, bytes);
  auto message = error_of([&] { read_zkey(files.zkey); });
  BOOST_CHECK(contains(message, files.zkey.string()) && contains(message, "truncated"));
  bytes.resize(7);
  save(files.zkey, bytes);
  message = error_of([&] { read_zkey(files.zkey); });
  BOOST_CHECK(contains(message, "truncated"));
}

BOOST_AUTO_TEST_CASE(a_truncated_witness_names_the_section) {
  Files files;
  auto bytes = load(files.wtns);
  // Shorten section 2 consistently (size field too), so the container is valid but short.
  const auto offset = section_offset(bytes, 2);
  std::uint64_t size;
  std::memcpy(&size, bytes.data() + offset - 8, 8);
  size -= 32;
  std::memcpy(bytes.data() + offset - 8, &size, 8);
  bytes.resize(bytes.size() - 32);
  save(files.wtns, bytes);
  auto message = error_of([&] { read_wtns(files.wtns); });
  BOOST_CHECK(contains(message, files.wtns.string()) && contains(message, "section 2 (witness values)") && contains(message, "truncated"));
}

// A header count far beyond the values section is an error about the section, found before
// anything is sized by the count (it once asked for 128 GiB).
BOOST_AUTO_TEST_CASE(a_witness_count_beyond_its_values_is_refused_before_allocating) {
  Files files;
  auto bytes = load(files.wtns);
  const std::uint32_t huge = 0xffffffffu;
  std::memcpy(bytes.data() + section_offset(bytes, 1) + 4 + 32, &huge, 4);  // n8, r, count
  save(files.wtns, bytes);
  auto message = error_of([&] { read_wtns(files.wtns); });
  BOOST_CHECK(contains(message, files.wtns.string()) && contains(message, "section 2 (witness values)") &&
              contains(message, "4294967295 values") && contains(message, "truncated"));
}

BOOST_AUTO_TEST_CASE(the_wrong_magic_says_what_the_file_is_not) {
  Files files;
  auto message = error_of([&] { read_zkey(files.wtns); });
  BOOST_CHECK_EQUAL(message, files.wtns.string() + ": not a snarkjs proving key (.zkey) file (its magic is not \"zkey\": it is a .wtns file)");
  message = error_of([&] { read_wtns(files.zkey); });
  BOOST_CHECK(contains(message, "not a snarkjs witness (.wtns) file (its magic is not \"wtns\": it is a .zkey file)"));
  message = error_of([&] { read_r1cs(files.zkey); });
  BOOST_CHECK(contains(message, "not a circom constraint system (.r1cs) file (its magic is not \"r1cs\": it is a .zkey file)"));
}

BOOST_AUTO_TEST_CASE(another_curve_is_refused_in_the_header) {
  Files files;
  auto bytes = load(files.zkey);
  const auto header = section_offset(bytes, 2);
  bytes[header + 4] ^= 1;  // q
  save(files.zkey, bytes);
  auto message = error_of([&] { read_zkey(files.zkey); });
  BOOST_CHECK(contains(message, "section 2 (header)") && contains(message, "another curve"));

  bytes = load(files.wtns);
  bytes[section_offset(bytes, 1) + 4] ^= 1;  // r
  save(files.wtns, bytes);
  message = error_of([&] { read_wtns(files.wtns); });
  BOOST_CHECK(contains(message, "section 1 (header)") && contains(message, "another curve"));

  bytes = load(files.zkey);
  put_u32(bytes, section_offset(bytes, 2), 32);  // n8q of BN254
  save(files.zkey, bytes);
  message = error_of([&] { read_zkey(files.zkey); });
  BOOST_CHECK(contains(message, "section 2 (header)") && contains(message, "not a BLS12-381 key"));
}

namespace {

// A .zkey of protocol and header alone whose primes are BN254's: what the readers look at first.
void write_bn254_zkey_header(const fs::path& path) {
  BinFileWriter out(path, "zkey", 1);
  out.begin_section(1);
  out.u32(1);
  out.end_section();
  out.begin_section(2);
  out.u32(32);
  out.bytes(modulus_bytes<math::bn254::Fq>());
  out.u32(32);
  out.bytes(modulus_bytes<math::bn254::Fr>());
  out.end_section();
  out.finish();
}

// The CurveError of `action`, which must throw one.
CurveError curve_error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const CurveError& error) {
    return error;
  }
  BOOST_FAIL("no CurveError");
  throw std::logic_error("unreachable");
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_bn254_witness_is_read_by_its_curve_and_refused_by_the_other) {
  Files files;
  const auto bn_wtns = files.dir / "bn254.wtns";
  const std::vector<math::bn254::Fr> values = {math::bn254::Fr::one(), math::bn254::Fr::from_uint64(42),
                                               -math::bn254::Fr::from_uint64(6), math::bn254::Fr::from_uint64(7)};
  groth16::bn254::write_wtns(bn_wtns, values);
  BOOST_CHECK(groth16::bn254::read_wtns(bn_wtns, 2) == values);
  BOOST_CHECK(wtns_curve(bn_wtns) == Curve::bn254);
  BOOST_CHECK(wtns_curve(files.wtns) == Curve::bls12_381);

  // Read as BLS12-381's: refused naming the file, both curves and the circom option.
  auto error = curve_error_of([&] { read_wtns(bn_wtns); });
  BOOST_CHECK(error.found() == Curve::bn254 && error.expected() == Curve::bls12_381);
  std::string message = error.what();
  BOOST_CHECK_MESSAGE(contains(message, bn_wtns.string() + ": section 1 (header)") && contains(message, "BN254") &&
                          contains(message, "BLS12-381") && contains(message, "circom --prime bls12381"),
                      message);
  // And the reverse.
  error = curve_error_of([&] { groth16::bn254::read_wtns(files.wtns); });
  BOOST_CHECK(error.found() == Curve::bls12_381 && error.expected() == Curve::bn254);
  message = error.what();
  BOOST_CHECK_MESSAGE(contains(message, files.wtns.string()) && contains(message, "a witness of BLS12-381, where BN254 is expected") &&
                          contains(message, "--prime bn128"),
                      message);
}

BOOST_AUTO_TEST_CASE(a_key_of_the_other_curve_or_of_none_is_refused_naming_the_curves) {
  Files files;
  const auto bn_zkey = files.dir / "bn254.zkey";
  write_bn254_zkey_header(bn_zkey);
  BOOST_CHECK(zkey_curve(bn_zkey) == Curve::bn254);
  BOOST_CHECK(zkey_curve(files.zkey) == Curve::bls12_381);
  auto error = curve_error_of([&] { read_zkey(bn_zkey); });
  BOOST_CHECK(error.found() == Curve::bn254 && error.expected() == Curve::bls12_381);
  std::string message = error.what();
  BOOST_CHECK_MESSAGE(contains(message, bn_zkey.string() + ": section 2 (header)") &&
                          contains(message, "a key of BN254, where BLS12-381 is expected"),
                      message);
  error = curve_error_of([&] { groth16::bn254::read_zkey(files.zkey); });
  BOOST_CHECK(error.found() == Curve::bls12_381 && error.expected() == Curve::bn254);

  // q of neither curve: an unknown curve, named as such by zkey_curve and by both readers.
  auto bytes = load(files.zkey);
  bytes[section_offset(bytes, 2) + 4] ^= 1;
  save(files.zkey, bytes);
  message = error_of([&] { zkey_curve(files.zkey); });
  BOOST_CHECK_MESSAGE(contains(message, files.zkey.string()) && contains(message, "unknown curve"), message);
  message = error_of([&] { groth16::bn254::read_zkey(files.zkey); });
  BOOST_CHECK_MESSAGE(contains(message, "neither BLS12-381's nor BN254's") && contains(message, "not a BN254 key"), message);
}

namespace {

// The tests' small circuit with BN254's coefficients (the same small integers).
bn254::R1cs bn254_small_circuit() {
  const R1cs source = small_circuit();
  bn254::R1cs r1cs;
  r1cs.n_wires = source.n_wires;
  r1cs.n_outputs = source.n_outputs;
  r1cs.n_public_inputs = source.n_public_inputs;
  r1cs.n_private_inputs = source.n_private_inputs;
  r1cs.n_labels = source.n_labels;
  auto convert = [](const LinearCombination& lc) {
    bn254::LinearCombination out;
    for (const auto& term : lc) {
      const auto bytes = term.coefficient.to_canonical_bytes();
      out.push_back({term.wire, *math::bn254::Fr::from_canonical_bytes(std::span<const std::uint8_t, 32>(bytes.data(), 32))});
    }
    return out;
  };
  for (const auto& constraint : source.constraints) r1cs.constraints.push_back({convert(constraint.a), convert(constraint.b), convert(constraint.c)});
  return r1cs;
}

}  // namespace

// A BN254 circuit (.r1cs over BN254's r) is read by the reader of its curve and refused by the
// other's naming both curves and the hint; its test-only setup gives a key that the writer and
// the read-once reader round-trip, on which the CPU prover's proof verifies and a changed public
// signal does not; the same seed gives the same key.
BOOST_AUTO_TEST_CASE(a_bn254_circuit_gets_a_key_that_round_trips_and_proves) {
  using BnFr = math::bn254::Fr;
  Files files;
  const auto bn_r1cs = files.dir / "bn254.r1cs";
  bn254::write_r1cs(bn_r1cs, bn254_small_circuit());
  const auto circuit = read_any_r1cs(bn_r1cs);
  BOOST_REQUIRE(std::holds_alternative<bn254::R1cs>(circuit));
  const auto& r1cs = std::get<bn254::R1cs>(circuit);
  BOOST_CHECK(r1cs.n_wires == 5 && r1cs.n_public() == 2 && r1cs.constraints.size() == 3);
  BOOST_CHECK(r1cs.constraints[1].a[1].coefficient == BnFr::from_uint64(3));
  BOOST_CHECK(std::holds_alternative<R1cs>(read_any_r1cs(files.r1cs)));
  const auto error = curve_error_of([&] { read_r1cs(bn_r1cs, "the key k.zkey is BLS12-381's"); });
  BOOST_CHECK(error.found() == Curve::bn254 && error.expected() == Curve::bls12_381);
  const std::string message = error.what();
  BOOST_CHECK_MESSAGE(contains(message, bn_r1cs.string() + ": section 1 (header)") && contains(message, "the key k.zkey is BLS12-381's") &&
                          contains(message, "a circuit of BN254, where BLS12-381 is expected"),
                      message);
  BOOST_CHECK(contains(error_of([&] { bn254::read_r1cs(files.r1cs); }), "--prime bn128"));

  SetupOptions options;
  options.seed = 42;
  options.thread_count = 2;
  const auto key = bn254::setup_from_r1cs(r1cs, options);
  const auto bn_zkey = files.dir / "bn254.zkey";
  bn254::write_zkey(bn_zkey, key);
  auto any = read_any_zkey(bn_zkey);
  BOOST_REQUIRE(std::holds_alternative<bn254::ProvingKey>(any));
  const auto& read = std::get<bn254::ProvingKey>(any);
  BOOST_CHECK(read.n_vars == key.n_vars && read.n_public == key.n_public && read.domain_size == key.domain_size);
  BOOST_CHECK(read.alpha1 == key.alpha1 && read.beta2 == key.beta2 && read.delta2 == key.delta2 && read.ic == key.ic);
  BOOST_CHECK(read.a == key.a && read.b1 == key.b1 && read.b2 == key.b2 && read.c == key.c && read.h == key.h);
  BOOST_REQUIRE(read.coefficients.size() == key.coefficients.size());
  for (std::size_t i = 0; i < key.coefficients.size(); ++i) BOOST_REQUIRE(read.coefficients[i].value == key.coefficients[i].value);
  BOOST_CHECK(std::holds_alternative<ProvingKey>(read_any_zkey(files.zkey)));

  const auto x = BnFr::from_uint64(6), y = BnFr::from_uint64(7);
  const std::vector<BnFr> witness = {BnFr::one(), x * y, x, y, x + BnFr::from_uint64(3) * y};
  BOOST_REQUIRE(!bn254::first_unsatisfied_constraint(r1cs, witness).has_value());
  const auto proof = bn254::prove_on_cpu(read, witness, bn254::ProofRandomness::from_seed(3), 2);
  auto signals = bn254::public_signals(read, witness);
  BOOST_CHECK(bn254::verify_proof(read, proof, signals));
  signals[0] += BnFr::one();
  BOOST_CHECK(!bn254::verify_proof(read, proof, signals));
  auto wrong = witness;
  wrong[4] += BnFr::one();
  BOOST_CHECK(bn254::first_unsatisfied_constraint(r1cs, wrong) == std::optional<std::size_t>(1));

  const auto again = files.dir / "again.zkey";
  bn254::write_zkey(again, bn254::setup_from_r1cs(r1cs, options));
  BOOST_CHECK(load(again) == load(bn_zkey));
}

// A BN254 key through a pipe: read_any_zkey opens it once and takes the curve from its header
// (a FIFO's bytes cannot be read twice).
BOOST_AUTO_TEST_CASE(a_bn254_key_is_read_once_from_a_pipe) {
  Files files;
  SetupOptions options;
  options.seed = 5;
  options.thread_count = 2;
  const auto key = bn254::setup_from_r1cs(bn254_small_circuit(), options);
  const auto bn_zkey = files.dir / "bn254.zkey";
  bn254::write_zkey(bn_zkey, key);
  const auto fifo = files.dir / "bn254.fifo";
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto bytes = load(bn_zkey);
  std::thread writer([&] { save(fifo, bytes); });
  AnyProvingKey any;
  const auto message = error_of([&] { any = read_any_zkey(fifo); });
  writer.join();
  BOOST_REQUIRE_MESSAGE(message == "no error", message);
  BOOST_REQUIRE(std::holds_alternative<bn254::ProvingKey>(any));
  BOOST_CHECK(std::get<bn254::ProvingKey>(any).h == key.h && std::get<bn254::ProvingKey>(any).b2 == key.b2);
}

BOOST_AUTO_TEST_CASE(another_protocol_is_refused) {
  Files files;
  auto bytes = load(files.zkey);
  put_u32(bytes, section_offset(bytes, 1), 2);
  save(files.zkey, bytes);
  auto message = error_of([&] { read_zkey(files.zkey); });
  BOOST_CHECK(contains(message, "section 1 (protocol)") && contains(message, "PLONK"));
}

BOOST_AUTO_TEST_CASE(section_sizes_must_agree_with_the_header) {
  Files files;
  auto bytes = load(files.zkey);
  const auto header = section_offset(bytes, 2);
  put_u32(bytes, header + 4 + 48 + 4 + 32 + 4, 3);  // nPublic 2 -> 3: IC and C no longer fit
  save(files.zkey, bytes);
  auto message = error_of([&] { read_zkey(files.zkey); });
  BOOST_CHECK(contains(message, "section 3 (IC)") && contains(message, "expected 384"));

  write_zkey(files.zkey, files.key);  // start again from a good key
  bytes = load(files.zkey);
  put_u32(bytes, header + 4 + 48 + 4 + 32, 6);  // nVars 5 -> 6: A is too short
  save(files.zkey, bytes);
  message = error_of([&] { read_zkey(files.zkey); });
  BOOST_CHECK(contains(message, "section 5 (A)") || contains(message, "section 4 (coefficients)"));

  write_zkey(files.zkey, files.key);  // start again from a good key
  bytes = load(files.zkey);
  put_u32(bytes, header + 4 + 48 + 4 + 32 + 8, 12);  // domain size not a power of two
  save(files.zkey, bytes);
  message = error_of([&] { read_zkey(files.zkey); });
  BOOST_CHECK(contains(message, "section 2 (header)") && contains(message, "power of two"));

  write_zkey(files.zkey, files.key);  // start again from a good key
  bytes = load(files.zkey);
  put_u32(bytes, section_offset(bytes, 4), 1000);  // coefficient count
  save(files.zkey, bytes);
  message = error_of([&] { read_zkey(files.zkey); });
  BOOST_CHECK(contains(message, "section 4 (coefficients)") && contains(message, "1000 coefficients"));
}

// The coefficient records are decoded on several threads in ranges; the record named is still the
// first bad one, whichever range finds its own first.
BOOST_AUTO_TEST_CASE(the_first_bad_coefficient_record_is_named_however_the_records_are_split) {
  constexpr std::uint64_t kRecords = 10000;
  std::vector<std::uint8_t> records(kRecords * 44);
  const auto put = [&](std::uint64_t index, std::uint32_t matrix, std::uint32_t constraint, std::uint32_t signal, std::uint8_t fill) {
    std::uint8_t* record = records.data() + index * 44;
    for (int k = 0; k < 4; ++k) {
      record[k] = static_cast<std::uint8_t>(matrix >> (8 * k));
      record[4 + k] = static_cast<std::uint8_t>(constraint >> (8 * k));
      record[8 + k] = static_cast<std::uint8_t>(signal >> (8 * k));
    }
    std::memset(record + 12, 0, 32);
    record[12] = fill;  // a small value, below r
  };
  for (std::uint64_t i = 0; i < kRecords; ++i) put(i, static_cast<std::uint32_t>(i % 2), static_cast<std::uint32_t>(i % 64), 3, 1);
  std::vector<Coefficient> out(kRecords);
  BOOST_TEST(groth16::detail::decode_coefficients(records, 64, 5, out, 4, 100) == kRecords);
  BOOST_TEST(out[777].matrix == 1u);
  BOOST_TEST(out[777].constraint == 777u % 64);
  BOOST_TEST(out[777].signal == 3u);
  BOOST_TEST((out[777].value == Fr::from_double_montgomery_bytes(std::span<const std::uint8_t, 32>(records.data() + 777 * 44 + 12, 32)).value()));
  put(7777, 0, 0, 5, 1);  // signal 5 of 5
  BOOST_TEST(groth16::detail::decode_coefficients(records, 64, 5, out, 4, 100) == 7777u);
  put(3333, 2, 0, 0, 1);  // matrix 2
  BOOST_TEST(groth16::detail::decode_coefficients(records, 64, 5, out, 4, 100) == 3333u);
  BOOST_TEST(groth16::detail::decode_coefficients(records, 64, 5, out, 1, 100) == 3333u);
  put(12, 0, 0, 0, 1);
  std::memset(records.data() + 12 * 44 + 12, 0xff, 32);  // a value not below r
  BOOST_TEST(groth16::detail::decode_coefficients(records, 64, 5, out, 4, 100) == 12u);
}

BOOST_AUTO_TEST_CASE(a_point_off_the_curve_is_named) {
  Files files;
  auto bytes = load(files.zkey);
  bytes[section_offset(bytes, 5) + 96 + 5] ^= 0x10;  // A point 1, x
  save(files.zkey, bytes);
  auto message = error_of([&] { read_zkey(files.zkey); });
  BOOST_CHECK(contains(message, "section 5 (A)") && contains(message, "point 1"));
}

BOOST_AUTO_TEST_CASE(a_witness_for_another_circuit_is_refused) {
  Files files;
  auto witness = small_witness();
  witness.push_back(Fr::one());
  write_wtns(files.wtns, witness);
  const auto key = read_zkey(files.zkey);
  auto message = error_of([&] { check_witness_matches(key, read_wtns(files.wtns), files.zkey, files.wtns); });
  BOOST_CHECK(contains(message, files.wtns.string()) && contains(message, files.zkey.string()) && contains(message, "another circuit") &&
              contains(message, "6 values") && contains(message, "expects 5"));
}

BOOST_AUTO_TEST_CASE(a_witness_value_not_below_r_is_refused) {
  Files files;
  auto bytes = load(files.wtns);
  auto offset = section_offset(bytes, 2) + 32;
  std::memset(bytes.data() + offset, 0xff, 32);
  save(files.wtns, bytes);
  auto message = error_of([&] { read_wtns(files.wtns); });
  BOOST_CHECK(contains(message, "section 2 (witness values)") && contains(message, "value 1"));
}

// Regression: a directory was read as a file of 2^63 - 1 bytes (std::bad_alloc), a pipe as a
// file of size -1 (vector::_M_default_append); /dev/zero and /dev/urandom were read to the end
// of the memory (std::bad_alloc) or for ever, and a FIFO that no process writes to was waited on
// for ever, in each of the three readers.
BOOST_AUTO_TEST_CASE(a_directory_a_device_and_a_fifo_without_a_writer_are_refused_and_a_pipe_is_read) {
  Files files;
  auto message = error_of([&] { read_zkey(files.dir); });
  BOOST_CHECK(contains(message, files.dir.string()) && contains(message, "is a directory"));
  message = error_of([&] { read_wtns(files.dir); });
  BOOST_CHECK(contains(message, "is a directory"));
  message = error_of([&] { read_r1cs(files.dir); });
  BOOST_CHECK(contains(message, "is a directory"));
  const auto lonely = files.dir / "lonely.fifo";
  BOOST_REQUIRE(::mkfifo(lonely.c_str(), 0600) == 0);
  for (const auto& path : {fs::path("/dev/zero"), fs::path("/dev/urandom"), fs::path("/dev/null"), lonely}) {
    BOOST_TEST_CONTEXT(path) {
      const auto expected = path == lonely ? path.string() + ": no process opened it for writing"
                                           : path.string() + ": is a character or block device, not a ";
      BOOST_CHECK(contains(error_of([&] { read_zkey(path); }), expected));
      BOOST_CHECK(contains(error_of([&] { read_wtns(path); }), expected));
      BOOST_CHECK(contains(error_of([&] { read_r1cs(path); }), expected));
    }
  }
  // A FIFO fed by a writer: read to its end, as the file itself.
  const auto fifo = files.dir / "key.fifo";
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto bytes = load(files.zkey);
  std::thread writer([&] { save(fifo, bytes); });
  std::optional<ProvingKey> key;
  message = error_of([&] { key = read_zkey(fifo); });
  writer.join();
  BOOST_CHECK_EQUAL(message, "no error");
  BOOST_REQUIRE(key.has_value());
  BOOST_CHECK(key->h == files.key.h);
  // A truncated one is an error naming the FIFO.
  std::thread short_writer([&] { save(fifo, std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + 100)); });
  message = error_of([&] { read_zkey(fifo); });
  short_writer.join();
  BOOST_CHECK(contains(message, fifo.string()) && contains(message, "truncated"));
}

namespace {
void truncate_to_half(const fs::path& path) { fs::resize_file(path, fs::file_size(path) / 2); }
}  // namespace

// Each reader passes BinFile's error on for a file truncated between the look at its size and
// the read of its bytes (the read hook): a clear error naming the file, never a signal.
BOOST_AUTO_TEST_CASE(a_file_truncated_while_it_is_read_is_an_error_in_every_reader) {
  Files files;
  groth16::detail::set_binfile_read_hook(truncate_to_half);
  const std::pair<fs::path, std::string> messages[] = {{files.zkey, error_of([&] { read_zkey(files.zkey); })},
                                                       {files.wtns, error_of([&] { read_wtns(files.wtns); })},
                                                       {files.r1cs, error_of([&] { read_r1cs(files.r1cs); })}};
  groth16::detail::set_binfile_read_hook(nullptr);
  for (const auto& [path, message] : messages) {
    BOOST_CHECK(contains(message, path.string() + ": the file changed while it was read"));
  }
}

// Regression: the error for a file of another kind quoted its first four bytes ("magic
// \"root\"" for /etc/passwd).
BOOST_AUTO_TEST_CASE(a_file_of_another_kind_is_named_not_quoted) {
  Files files;
  const auto path = files.dir / "passwd";
  save(path, std::vector<std::uint8_t>{'r', 'o', 'o', 't', ':', 'x', ':', '0', ':', '0', ':', ':', '/', 'r', 'o', 'o', 't', '\n'});
  const std::pair<std::string, std::string> expected[] = {
      {error_of([&] { read_zkey(path); }), "not a snarkjs proving key (.zkey) file (its magic is not \"zkey\")"},
      {error_of([&] { read_wtns(path); }), "not a snarkjs witness (.wtns) file (its magic is not \"wtns\")"},
      {error_of([&] { read_r1cs(path); }), "not a circom constraint system (.r1cs) file (its magic is not \"r1cs\")"}};
  for (const auto& [message, text] : expected) {
    BOOST_CHECK_EQUAL(message, path.string() + ": " + text);
    BOOST_CHECK(message.substr(std::min(message.size(), path.string().size())).find("root") == std::string::npos);
  }
}

// Regression: version 0xFFFFFFFF was accepted in all three formats.
BOOST_AUTO_TEST_CASE(an_unknown_version_is_refused_in_every_format) {
  Files files;
  for (const auto& path : {files.zkey, files.wtns, files.r1cs}) {
    BOOST_TEST_CONTEXT(path.string()) {
      auto bytes = load(path);
      put_u32(bytes, 4, 0xFFFFFFFF);
      save(path, bytes);
      auto message = error_of([&] {
        if (path == files.zkey) read_zkey(path);
        if (path == files.wtns) read_wtns(path);
        if (path == files.r1cs) read_r1cs(path);
      });
      BOOST_CHECK(contains(message, path.string()) && contains(message, "version 4294967295") && contains(message, "not supported"));
      put_u32(bytes, 4, 0);
      save(path, bytes);
      message = error_of([&] {
        if (path == files.zkey) read_zkey(path);
        if (path == files.wtns) read_wtns(path);
        if (path == files.r1cs) read_r1cs(path);
      });
      BOOST_CHECK(contains(message, "version 0"));
    }
  }
}

// Regression: bytes after the last section were accepted in all three formats.
BOOST_AUTO_TEST_CASE(trailing_bytes_are_refused_in_every_format) {
  Files files;
  for (const auto& path : {files.zkey, files.wtns, files.r1cs}) {
    BOOST_TEST_CONTEXT(path.string()) {
      auto bytes = load(path);
      bytes.push_back(0);
      bytes.push_back(7);
      save(path, bytes);
      auto message = error_of([&] {
        if (path == files.zkey) read_zkey(path);
        if (path == files.wtns) read_wtns(path);
        if (path == files.r1cs) read_r1cs(path);
      });
      BOOST_CHECK(contains(message, path.string()) && contains(message, "2 bytes follow the last"));
    }
  }
}

// The .r1cs header's fields (section 1): n8, r, then these u32s at these offsets.
constexpr std::size_t kR1csWires = 36, kR1csOutputs = 40, kR1csPublicInputs = 44, kR1csConstraints = 60;

// Regression: read_r1cs reserved the header's nConstraints before looking at section 2 (2^24:
// 1.16 GB before the error; 0xFFFFFFFF: std::bad_alloc).
BOOST_AUTO_TEST_CASE(a_huge_constraint_count_is_refused_before_allocating) {
  Files files;
  const auto good = load(files.r1cs);
  const auto header = section_offset(good, 1);
  for (std::uint32_t count : {1u << 24, 1u << 27}) {
    BOOST_TEST_CONTEXT(count) {
      auto bytes = good;
      put_u32(bytes, header + kR1csConstraints, count);
      save(files.r1cs, bytes);
      auto message = error_of([&] { read_r1cs(files.r1cs); });
      BOOST_CHECK(contains(message, files.r1cs.string()) && contains(message, "section 2 (constraints)") &&
                  contains(message, fmt::format("the header's {} constraints", count)));
    }
  }
  for (std::uint32_t count : {1u << 28, 0xFFFFFFFFu}) {
    BOOST_TEST_CONTEXT(count) {
      auto bytes = good;
      put_u32(bytes, header + kR1csConstraints, count);
      save(files.r1cs, bytes);
      auto message = error_of([&] { read_r1cs(files.r1cs); });
      BOOST_CHECK(contains(message, "section 1 (header)") && contains(message, "more than the 2^28 Stagehand supports"));
    }
  }
}

// Regression: nWires was never checked against the file: a 1-constraint circuit claiming 2^24
// wires ran setup for 20 s and 10 GB.
BOOST_AUTO_TEST_CASE(a_wire_count_the_file_does_not_hold_is_refused) {
  Files files;
  auto bytes = load(files.r1cs);
  put_u32(bytes, section_offset(bytes, 1) + kR1csWires, 1u << 24);
  save(files.r1cs, bytes);
  auto message = error_of([&] { read_r1cs(files.r1cs); });
  BOOST_CHECK(contains(message, files.r1cs.string()) && contains(message, "section 3 (wire labels)") &&
              contains(message, "16777216 wires"));
}

// Regression: nOutputs + nPubInputs wrapped in 32 bits (2^31 each: accepted, nPublic 0).
BOOST_AUTO_TEST_CASE(public_counts_that_wrap_in_32_bits_are_refused) {
  Files files;
  auto bytes = load(files.r1cs);
  const auto header = section_offset(bytes, 1);
  put_u32(bytes, header + kR1csOutputs, 1u << 31);
  put_u32(bytes, header + kR1csPublicInputs, 1u << 31);
  save(files.r1cs, bytes);
  auto message = error_of([&] { read_r1cs(files.r1cs); });
  BOOST_CHECK(contains(message, "section 1 (header)") && contains(message, "2147483648 outputs, 2147483648 public"));
  auto r1cs = small_circuit();
  r1cs.n_outputs = r1cs.n_public_inputs = 1u << 31;
  BOOST_CHECK_THROW(setup_from_r1cs(r1cs), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(proving)

// Proofs of `jobs` through the coordinator on a functional simulated H200 under `policy`; the
// report, and each job's proof (absent where the job failed).
struct CoordinatedProofs {
  RunReport report;
  std::vector<std::optional<Proof>> proofs;
  std::vector<std::vector<Fr>> public_signals;
  Bytes memory_left = 0;
  std::size_t most_operations_queued = 0;  // on one stream at once
};

CoordinatedProofs prove_through_coordinator(const ProvingKey& key, const fs::path& zkey_path, std::vector<ProofJob> jobs,
                                            Policy policy, ProofChecks checks = {}, AbcStep abc_step = AbcStep::device,
                                            KeyPlacement placement = {}) {
  CoordinatedProofs result;
  result.proofs.resize(jobs.size());
  result.public_signals.resize(jobs.size());
  testing::FunctionalGroth16Device h200;
  auto& [system, device] = h200;
  HostWork host_work(0);
  Groth16Workload workload(key, zkey_path, std::move(jobs), host_work, 2,
                           [&](int job, const Proof& proof, const std::vector<Fr>& public_signals) {
                             result.proofs.at(static_cast<std::size_t>(job)) = proof;
                             result.public_signals.at(static_cast<std::size_t>(job)) = public_signals;
                           },
                           checks, abc_step, placement);
  CoordinatorSettings settings;
  settings.policy = policy;
  result.report = testing::run_functional(system, device, settings, workload);
  result.memory_left = device.memory_info().total_bytes - device.memory_info().free_bytes;
  result.most_operations_queued = device.most_operations_queued();
  return result;
}

// Every job completed, nothing ran out of memory or was left on the device, and each proof is the
// CPU prover's for the job's randomness.
void check_matches_cpu_prover(const CoordinatedProofs& result, const std::vector<ProofJob>& jobs, const ProvingKey& key,
                              const std::vector<Fr>& witness) {
  BOOST_CHECK_EQUAL(result.report.partitions_completed, static_cast<int>(jobs.size()));
  BOOST_CHECK_EQUAL(result.report.oom_count, 0u);
  BOOST_CHECK_EQUAL(result.memory_left, 0u);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto expected = prove_on_cpu(key, witness, jobs[i].randomness, 2);
    BOOST_REQUIRE(result.proofs[i].has_value());
    const auto& proof = *result.proofs[i];
    BOOST_CHECK(proof.a == expected.a);
    BOOST_CHECK(proof.b == expected.b);
    BOOST_CHECK(proof.c == expected.c);
  }
}

BOOST_AUTO_TEST_CASE(proofs_through_the_coordinator_match_the_cpu_prover_under_every_policy) {
  Files files;
  const auto key = read_zkey(files.zkey);
  const auto witness = read_wtns(files.wtns);
  for (auto abc_step : {AbcStep::device, AbcStep::host})
  for (auto policy : {Policy::serial, Policy::prestage, Policy::two_lock, Policy::budgeted}) {
    BOOST_TEST_CONTEXT("policy " << to_string(policy) << ", a/b/c on the " << (abc_step == AbcStep::device ? "device" : "host")) {
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
  KeyPlacement mixed;
  mixed.sets[kSetH] = SetPlacement::streamed;
  mixed.sets[kSetA] = SetPlacement::fetched_ahead;
  mixed.sets[kSetB2] = SetPlacement::streamed;
  mixed.sets[kSetC] = SetPlacement::fetched_ahead;
  mixed.sets[kSetB1] = SetPlacement::precomputed;
  std::vector<std::pair<std::string, KeyPlacement>> placements{{"resident", KeyPlacement::all(SetPlacement::resident)},
                                                               {"precomputed", KeyPlacement::all(SetPlacement::precomputed)},
                                                               {"fetched ahead", KeyPlacement::all(SetPlacement::fetched_ahead)},
                                                               {"streamed", KeyPlacement::all(SetPlacement::streamed)},
                                                               {"mixed", mixed}};
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
      BOOST_CHECK_EQUAL(note.empty(), (name == "resident" || name == "precomputed") && abc_step != AbcStep::streamed);
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
  BOOST_CHECK(placement.sets[kSetA] == SetPlacement::precomputed && placement.sets[kSetB1] == SetPlacement::precomputed);
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
  const auto in_row = [](std::uint32_t row) { return [row](const Coefficient& e) { return e.matrix == 0 && e.constraint == row; }; };
  const auto first7 = std::find_if(records.begin(), records.end(), in_row(7));
  const auto past8 = std::find_if(std::find_if(records.begin(), records.end(), in_row(8)), records.end(),
                                  [](const Coefficient& e) { return e.constraint > 8; });
  BOOST_REQUIRE(first7 != records.end());
  std::stable_partition(first7, past8, [](const Coefficient& e) { return !(e.matrix == 0 && e.constraint == 7); });
  BOOST_REQUIRE(std::find_if(records.begin(), records.end(), in_row(8)) < std::find_if(records.begin(), records.end(), in_row(7)));
  const auto counted = build_constraint_matrix(swapped, 4);
  BOOST_CHECK(counted.layout.entries_a == threaded.layout.entries_a && counted.layout.entries_b == threaded.layout.entries_b);
  BOOST_CHECK(counted.bytes == threaded.bytes);

  auto bad = key;
  bad.coefficients[bad.coefficients.size() / 2 + 5].signal = key.n_vars;  // in a middle chunk
  BOOST_CHECK_EXCEPTION(build_constraint_matrix(bad, 4), std::invalid_argument, [&](const std::invalid_argument& error) {
    return std::string(error.what()).find(fmt::format("signal {}) outside the key", key.n_vars)) != std::string::npos;
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
  for (std::uint64_t max_bytes : {std::uint64_t{1}, std::uint64_t{200}, std::uint64_t{600}, matrix.layout.total_bytes()}) {
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
  for (const auto& part : last.parts(matrix.layout)) std::memcpy(own.data() + part.destination, matrix.bytes.data() + part.source, part.bytes);
  std::vector<Fr> a2(last.rows), b2(last.rows), c2(last.rows);
  BOOST_CHECK_THROW(evaluate_constraint_matrix(last.layout(), own, witness, a2, b2, c2, 2), std::invalid_argument);
  // The chunks take the stream buffers from the program's start: a placement whose buffers come
  // only after H is refused when the workload is made, not halfway through a proof.
  auto late = KeyPlacement::all(SetPlacement::streamed);
  late.msm_memory_after_h = true;
  HostWork host_work(0);
  BOOST_CHECK_THROW(Groth16Workload(key, files.zkey, {}, host_work, 1, {}, {}, AbcStep::streamed, late), std::invalid_argument);
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

// One bit of w[index] flipped: a witness of the right shape that no longer satisfies the circuit.
std::vector<Fr> flipped(std::vector<Fr> witness, std::size_t index) {
  auto limbs = witness.at(index).to_canonical_limbs();
  limbs[0] ^= 1;
  witness[index] = *Fr::from_canonical_limbs(limbs);
  return witness;
}

BOOST_AUTO_TEST_CASE(a_valid_proof_verifies_and_tampered_ones_do_not) {
  Files files;
  const auto key = read_zkey(files.zkey);
  const auto witness = small_witness();
  const auto signals = public_signals(key, witness);
  const auto proof = prove_on_cpu(key, witness, ProofRandomness::from_seed(5), 2);
  const ProofVerifier verifier(key);
  BOOST_CHECK(!verifier.check(proof, signals).has_value());
  BOOST_CHECK(verify_proof(key, proof, signals));

  auto other_signals = signals;
  other_signals[0] += Fr::one();
  BOOST_CHECK(contains(verifier.check(proof, other_signals).value_or("verifies"), "the pairing check"));
  Proof moved = proof;
  moved.a = (math::G1Projective::from_affine(proof.a) + math::G1Curve::generator()).to_affine();
  BOOST_CHECK(contains(verifier.check(moved, signals).value_or("verifies"), "the pairing check"));
  moved = proof;
  moved.c = -proof.c;
  BOOST_CHECK(verifier.check(moved, signals).has_value());
  moved = proof;
  moved.b.x += math::Fq2::one();  // off the curve
  BOOST_CHECK(contains(verifier.check(moved, signals).value_or("verifies"), "not a point of G2's curve"));
  BOOST_CHECK(contains(verifier.check(proof, std::vector<Fr>{signals[0]}).value_or("verifies"), "1 public signals"));
  // A proof of a witness that does not satisfy the circuit, made without any check, fails.
  const auto bad = prove_on_cpu(key, flipped(witness, 3), ProofRandomness::from_seed(5), 2);
  BOOST_CHECK(contains(verifier.check(bad, signals).value_or("verifies"), "the pairing check"));
}

BOOST_AUTO_TEST_CASE(the_first_unsatisfied_constraint_is_named) {
  const auto r1cs = small_circuit();
  BOOST_CHECK(!first_unsatisfied_constraint(r1cs, small_witness()).has_value());
  BOOST_CHECK_EQUAL(first_unsatisfied_constraint(r1cs, flipped(small_witness(), 3)).value_or(99), 0u);  // y: x·y = out
  BOOST_CHECK_EQUAL(first_unsatisfied_constraint(r1cs, flipped(small_witness(), 4)).value_or(99), 1u);  // t: (x + 3y)·1 = t
  BOOST_CHECK_THROW(first_unsatisfied_constraint(r1cs, std::vector<Fr>{Fr::one()}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(a_witness_that_does_not_satisfy_the_circuit_yields_no_proof) {
  Files files;
  const auto key = read_zkey(files.zkey);
  const fs::path bad = files.dir / "flipped.wtns";
  write_wtns(bad, flipped(small_witness(), 3));
  std::vector<ProofJob> jobs{ProofJob{files.wtns, ProofRandomness::from_seed(1)}, ProofJob{bad, ProofRandomness::from_seed(2)}};

  // The pairing check (on by default): the bad proof fails its job and is never handed out.
  auto result = prove_through_coordinator(key, files.zkey, jobs, Policy::budgeted);
  BOOST_CHECK_EQUAL(result.report.partitions_completed, 1);
  BOOST_CHECK(result.proofs[0].has_value());
  BOOST_CHECK(!result.proofs[1].has_value());
  BOOST_CHECK(contains(result.report.jobs[1].error, "the proof does not verify") && contains(result.report.jobs[1].error, "flipped.wtns"));
  BOOST_CHECK(verify_proof(key, *result.proofs[0], public_signals(key, small_witness())));
  BOOST_CHECK_EQUAL(result.memory_left, 0u);

  // With the constraint system: refused in prepare, naming the first failing constraint.
  const auto r1cs = read_r1cs(files.r1cs);
  ProofChecks with_r1cs;
  with_r1cs.r1cs = &r1cs;
  with_r1cs.r1cs_path = files.r1cs;
  result = prove_through_coordinator(key, files.zkey, jobs, Policy::budgeted, with_r1cs);
  BOOST_CHECK_EQUAL(result.report.partitions_completed, 1);
  BOOST_CHECK(result.proofs[0].has_value() && !result.proofs[1].has_value());
  BOOST_CHECK(contains(result.report.jobs[1].error, "does not satisfy constraint 0 of") &&
              contains(result.report.jobs[1].error, "small.r1cs"));
  BOOST_CHECK_EQUAL(result.memory_left, 0u);

  // --no-verify: no check, so the bad witness gets a proof (one that does not verify).
  ProofChecks none;
  none.verify = false;
  result = prove_through_coordinator(key, files.zkey, jobs, Policy::budgeted, none);
  BOOST_CHECK_EQUAL(result.report.partitions_completed, 2);
  BOOST_REQUIRE(result.proofs[1].has_value());
  BOOST_CHECK(!verify_proof(key, *result.proofs[1], public_signals(key, small_witness())));
}

BOOST_AUTO_TEST_CASE(a_constraint_system_of_another_circuit_is_refused) {
  Files files;
  const auto key = read_zkey(files.zkey);
  auto r1cs = small_circuit();
  r1cs.n_wires = 6;
  ProofChecks checks;
  checks.r1cs = &r1cs;
  checks.r1cs_path = "other.r1cs";
  HostWork host_work(0);
  auto message = error_of([&] { Groth16Workload(key, files.zkey, {}, host_work, 2, nullptr, checks); });
  BOOST_CHECK(contains(message, "other.r1cs") && contains(message, "another circuit"));
}

// Regression: 32 · domain_size and 32 · n_vars were u32 products and wrapped at 2^27, inside
// the range the reader accepts (a 2^27 key planned 0 bytes for each polynomial).
BOOST_AUTO_TEST_CASE(the_memory_plan_of_a_2_27_key_does_not_wrap) {
  ProvingKey key;
  key.domain_log2 = 27;
  key.domain_size = 1u << 27;
  key.n_vars = (1u << 28) - 1;
  key.n_public = 2;
  HostWork host_work(0);
  const Bytes polynomial = Bytes{32} << 27;  // 4 GiB
  const Bytes witness = Bytes{32} * ((1u << 28) - 1);
  // a/b/c on the host: a, b, c are the job's three inputs.
  const Groth16Workload host_workload(key, "big.zkey", {}, host_work, 1, {}, {}, AbcStep::host);
  const auto on_host = host_workload.memory_plan(0);
  // Five sums, one per set (all resident): four in G1 (144 bytes), one in G2 (288).
  const Bytes results = host_workload.result_bytes();
  BOOST_CHECK_EQUAL(results, 4 * 144 + 288);
  BOOST_CHECK_EQUAL(on_host.input_bytes, polynomial);
  BOOST_CHECK_EQUAL(on_host.input_count, 3);
  BOOST_CHECK_EQUAL(on_host.peak_bytes, 3 * polynomial + witness + results);
  BOOST_CHECK_EQUAL(on_host.peak_after_a_bytes, witness + results);
  // On the device: the witness is the one input, a, b, c the program's.
  const auto on_device = Groth16Workload(key, "big.zkey", {}, host_work, 1, {}, {}, AbcStep::device).memory_plan(0);
  BOOST_CHECK_EQUAL(on_device.input_bytes, witness);
  BOOST_CHECK_EQUAL(on_device.input_count, 1);
  BOOST_CHECK_EQUAL(on_device.peak_bytes, 3 * polynomial + witness + results);
  BOOST_CHECK_EQUAL(on_device.peak_after_b_and_c_bytes, polynomial + witness + results);
  // The resident matrix: its row offsets alone are 16 bytes a row.
  BOOST_CHECK_GE(Groth16Workload::matrix_bytes(KeySizes::of(key), AbcStep::device), 16 * (Bytes{1} << 27));
  BOOST_CHECK_EQUAL(Groth16Workload::matrix_bytes(KeySizes::of(key), AbcStep::host), 0u);
}

// Regression (the .zkey's side): nPublic = 0xFFFFFFFF wrapped nPublic + 1 to 0 in the header's
// check; it is refused there, in the header, not by a confusing IC size.
BOOST_AUTO_TEST_CASE(a_zkey_public_count_that_wraps_is_refused_in_the_header) {
  Files files;
  auto bytes = load(files.zkey);
  put_u32(bytes, section_offset(bytes, 2) + 4 + 48 + 4 + 32 + 4, 0xFFFFFFFF);
  save(files.zkey, bytes);
  auto message = error_of([&] { read_zkey(files.zkey); });
  BOOST_CHECK(contains(message, "section 2 (header)") && contains(message, "nPublic = 4294967295"));
}

BOOST_AUTO_TEST_CASE(seeded_randomness_is_reproducible_and_system_randomness_is_not) {
  BOOST_CHECK(ProofRandomness::from_seed(3).r == ProofRandomness::from_seed(3).r);
  BOOST_CHECK(!(ProofRandomness::from_seed(3).r == ProofRandomness::from_seed(4).r));
  BOOST_CHECK(!(ProofRandomness::from_system().r == ProofRandomness::from_system().r));
}

BOOST_AUTO_TEST_CASE(public_json_is_the_public_signals_in_decimal) {
  Files files;
  const auto key = read_zkey(files.zkey);
  const auto text = public_json(public_signals(key, small_witness()));
  BOOST_CHECK(text.find("\"42\"") != std::string::npos && text.find("\"6\"") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(the_devices_jacobian_sums_round_trip_and_refuse_unreduced_coordinates) {
  const auto g1 = math::G1Projective::from_affine(math::G1Curve::generator()).multiply(Fr::from_uint64(12345));
  std::array<std::uint8_t, kG1JacobianBytes> g1_bytes{};
  encode_g1_jacobian(g1, g1_bytes);
  const auto g1_back = decode_g1_jacobian(g1_bytes);
  BOOST_TEST_REQUIRE(g1_back.has_value());
  BOOST_TEST((*g1_back == g1));
  const auto g2 = math::G2Projective::from_affine(math::G2Curve::generator()).multiply(Fr::from_uint64(678));
  std::array<std::uint8_t, kG2JacobianBytes> g2_bytes{};
  encode_g2_jacobian(g2, g2_bytes);
  const auto g2_back = decode_g2_jacobian(g2_bytes);
  BOOST_TEST_REQUIRE(g2_back.has_value());
  BOOST_TEST((*g2_back == g2));
  // All ones is above q: a poisoned result, not a point.
  std::fill(g1_bytes.begin() + 96, g1_bytes.end(), std::uint8_t{0xff});
  BOOST_TEST(!decode_g1_jacobian(g1_bytes).has_value());
  std::fill(g2_bytes.begin() + 240, g2_bytes.end(), std::uint8_t{0xff});
  BOOST_TEST(!decode_g2_jacobian(g2_bytes).has_value());
}
