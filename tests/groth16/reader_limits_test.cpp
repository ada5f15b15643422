// The Groth16 readers at the edges of what a file can be: directories, devices, FIFOs and pipes,
// a file truncated while it is read, another kind of file, unknown versions, trailing bytes,
// and counts too large or wrapping, each refused before anything is allocated for it.
// The shared helpers (the small circuit's files, proofs through the coordinator) are
// tests/support/groth16_files.hpp.

#define BOOST_TEST_MODULE groth16_reader_limits
#include <boost/test/unit_test.hpp>

#include "support/groth16_files.hpp"

#include <sys/stat.h>

namespace fs = std::filesystem;
using namespace stagehand;
using namespace stagehand::groth16;
using namespace stagehand::testing;
using math::Fr;

BOOST_AUTO_TEST_SUITE(readers)

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
  save(path, std::vector<std::uint8_t>{'r', 'o', 'o', 't', ':', 'x', ':', '0', ':', '0', ':', ':', '/', 'r', 'o', 'o',
                                       't', '\n'});
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
      BOOST_CHECK(contains(message, path.string()) && contains(message, "version 4294967295") &&
                  contains(message, "not supported"));
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
      BOOST_CHECK(contains(message, "section 1 (header)") &&
                  contains(message, "more than the 2^28 Stagehand supports"));
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
