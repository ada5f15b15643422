// The Groth16 readers: what the writers wrote reads back, and bad input (missing, truncated,
// another format, curve or protocol, sections that disagree, bad coefficients, points and values)
// is a clear error naming the file and the section.
// The shared helpers (the small circuit's files, proofs through the coordinator) are
// tests/support/groth16_files.hpp.

#define BOOST_TEST_MODULE groth16_readers
#include <boost/test/unit_test.hpp>

#include "support/groth16_files.hpp"

#include <sys/stat.h>
#include <variant>

namespace fs = std::filesystem;
using namespace stagehand;
using namespace stagehand::groth16;
using namespace stagehand::testing;
using math::Fr;

BOOST_AUTO_TEST_SUITE(readers)

BOOST_AUTO_TEST_CASE(what_the_writers_wrote_reads_back) {
  Files files;
  const auto key = read_zkey(files.zkey);
  BOOST_CHECK_EQUAL(key.n_vars, 5u);
  BOOST_CHECK_EQUAL(key.n_public, 2u);
  BOOST_CHECK_EQUAL(key.domain_size, 8u);  // 3 constraints + 2 public -> 2^(floor(log2 5) + 1)
  BOOST_CHECK_EQUAL(key.coefficients.size(), files.key.coefficients.size());
  for (std::size_t i = 0; i < key.coefficients.size(); ++i)
    BOOST_CHECK(key.coefficients[i].value == files.key.coefficients[i].value);
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
  BOOST_CHECK(contains(message, files.wtns.string()) && contains(message, "section 2 (witness values)") &&
              contains(message, "truncated"));
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
  BOOST_CHECK_EQUAL(
      message,
      files.wtns.string() + ": not a snarkjs proving key (.zkey) file (its magic is not \"zkey\": it is a .wtns file)");
  message = error_of([&] { read_wtns(files.zkey); });
  BOOST_CHECK(contains(message, "not a snarkjs witness (.wtns) file (its magic is not \"wtns\": it is a .zkey file)"));
  message = error_of([&] { read_r1cs(files.zkey); });
  BOOST_CHECK(
      contains(message, "not a circom constraint system (.r1cs) file (its magic is not \"r1cs\": it is a .zkey file)"));
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
  BOOST_CHECK_MESSAGE(contains(message, files.wtns.string()) &&
                          contains(message, "a witness of BLS12-381, where BN254 is expected") &&
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
  BOOST_CHECK_MESSAGE(contains(message, "neither BLS12-381's nor BN254's") && contains(message, "not a BN254 key"),
                      message);
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
      out.push_back(
          {term.wire, *math::bn254::Fr::from_canonical_bytes(std::span<const std::uint8_t, 32>(bytes.data(), 32))});
    }
    return out;
  };
  for (const auto& constraint : source.constraints)
    r1cs.constraints.push_back({convert(constraint.a), convert(constraint.b), convert(constraint.c)});
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
  BOOST_CHECK_MESSAGE(contains(message, bn_r1cs.string() + ": section 1 (header)") &&
                          contains(message, "the key k.zkey is BLS12-381's") &&
                          contains(message, "a circuit of BN254, where BLS12-381 is expected"),
                      message);
  BOOST_CHECK(contains(error_of([&] { bn254::read_r1cs(files.r1cs); }), "--prime bn128"));

  bn254::SetupOptions options;
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
  for (std::size_t i = 0; i < key.coefficients.size(); ++i)
    BOOST_REQUIRE(read.coefficients[i].value == key.coefficients[i].value);
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
  bn254::SetupOptions options;
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
  const auto put = [&](std::uint64_t index, std::uint32_t matrix, std::uint32_t constraint, std::uint32_t signal,
                       std::uint8_t fill) {
    std::uint8_t* record = records.data() + index * 44;
    for (int k = 0; k < 4; ++k) {
      record[k] = static_cast<std::uint8_t>(matrix >> (8 * k));
      record[4 + k] = static_cast<std::uint8_t>(constraint >> (8 * k));
      record[8 + k] = static_cast<std::uint8_t>(signal >> (8 * k));
    }
    std::memset(record + 12, 0, 32);
    record[12] = fill;  // a small value, below r
  };
  for (std::uint64_t i = 0; i < kRecords; ++i)
    put(i, static_cast<std::uint32_t>(i % 2), static_cast<std::uint32_t>(i % 64), 3, 1);
  std::vector<Coefficient> out(kRecords);
  BOOST_TEST(groth16::detail::decode_coefficients(records, 64, 5, out, 4, 100) == kRecords);
  BOOST_TEST(out[777].matrix == 1u);
  BOOST_TEST(out[777].constraint == 777u % 64);
  BOOST_TEST(out[777].signal == 3u);
  BOOST_TEST((
      out[777].value ==
      Fr::from_double_montgomery_bytes(std::span<const std::uint8_t, 32>(records.data() + 777 * 44 + 12, 32)).value()));
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
  BOOST_CHECK(contains(message, files.wtns.string()) && contains(message, files.zkey.string()) &&
              contains(message, "another circuit") && contains(message, "6 values") && contains(message, "expects 5"));
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

BOOST_AUTO_TEST_SUITE_END()
