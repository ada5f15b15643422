// BinFile over a regular file that another process changes: truncated after it was read, its bytes
// stay readable (a mapped file raised SIGBUS there); shrinking, growing or rewritten while it is
// read, it is an InputError naming the file. Both the one-thread read of small files and the
// chunked read of large ones. A section read later (read_section) arrives whole without the file's
// buffer holding it, and the same changes before its read are the same error. A writer to a file
// writes what one in memory holds, and one left unfinished leaves the file as it was.
// What is not a regular file: devices and the kernel's files refused unread, a FIFO without a
// writer an error at once, and a FIFO read as its header declares, never past it; a file of
// another kind refused without a byte of it in the message.

#define BOOST_TEST_MODULE groth16_binfile
#include <boost/test/unit_test.hpp>

#include "support/input_errors.hpp"
#include "groth16/binfile.hpp"
#include "groth16/errors.hpp"
#include "groth16/witness.hpp"

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace stagehand::groth16;

namespace {

// Below and above the size from which BinFile reads on several threads (32 MiB).
constexpr std::size_t kSmall = std::size_t{1} << 20;
constexpr std::size_t kLarge = std::size_t{40} << 20;

struct Scratch {
  fs::path dir;
  Scratch() {
    dir = fs::temp_directory_path() / ("stagehand_binfile_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
};

// The byte at `offset` of the one section's data: a pattern that a zero page or a shifted copy
// does not match.
std::uint8_t pattern(std::size_t offset) { return static_cast<std::uint8_t>((offset * 2654435761u) >> 13); }

// A container of magic "test", version 1, one section (id 1) of `data_size` pattern bytes.
std::vector<std::uint8_t> container_bytes(std::size_t data_size) {
  std::vector<std::uint8_t> bytes(12 + 12 + data_size);
  auto put = [&](std::size_t at, std::uint64_t value, int width) {
    for (int i = 0; i < width; ++i)
      bytes[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(value >> (8 * i));
  };
  bytes[0] = 't', bytes[1] = 'e', bytes[2] = 's', bytes[3] = 't';
  put(4, 1, 4);
  put(8, 1, 4);
  put(12, 1, 4);
  put(16, data_size, 8);
  for (std::size_t i = 0; i < data_size; ++i) bytes[24 + i] = pattern(i);
  return bytes;
}

void write_container(const fs::path& path, std::size_t data_size) {
  const auto bytes = container_bytes(data_size);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  BOOST_REQUIRE(out.good());
}

BinFile open_container(const fs::path& path, std::set<std::uint32_t> read_later = {}) {
  return BinFile(path, "test", "test container", 1, std::move(read_later));
}

// The first offset whose byte differs from the pattern (the size when none does).
std::size_t first_difference(std::span<const std::uint8_t> data) {
  for (std::size_t i = 0; i < data.size(); ++i)
    if (data[i] != pattern(i)) return i;
  return data.size();
}

// This process's resident memory, bytes (/proc/self/statm's second field, in pages).
std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

// The first offset of the section whose byte differs from the pattern (the size when none does).
std::size_t first_difference(const BinFile& file, std::size_t data_size) {
  const auto data = file.section(1, "data");
  if (data.size() != data_size) return 0;
  return first_difference(data);
}

using stagehand::testing::contains;
using stagehand::testing::error_of;

// What the read hook does to the file, between BinFile taking its size and reading its bytes.
enum class Change { none, truncate_to_half, truncate_to_zero, append, rewrite };
Change hook_change = Change::none;
void change_the_file(const fs::path& path) {
  switch (hook_change) {
    case Change::none: return;
    case Change::truncate_to_half:
      BOOST_REQUIRE(::truncate(path.c_str(), static_cast<off_t>(fs::file_size(path) / 2)) == 0);
      return;
    case Change::truncate_to_zero: BOOST_REQUIRE(::truncate(path.c_str(), 0) == 0); return;
    case Change::append: {
      std::ofstream out(path, std::ios::binary | std::ios::app);
      out << "more";
      return;
    }
    case Change::rewrite: {  // the same size, other bytes
      std::fstream out(path, std::ios::binary | std::ios::in | std::ios::out);
      out.seekp(100);
      out << "other";
      return;
    }
  }
}
struct Hook {
  explicit Hook(Change change) {
    hook_change = change;
    detail::set_binfile_read_hook(change_the_file);
  }
  ~Hook() {
    detail::set_binfile_read_hook(nullptr);
    hook_change = Change::none;
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_file_truncated_after_it_was_read_keeps_its_bytes) {
  // The readers decode the sections after BinFile's constructor: with the file mapped, this
  // read of a page past the new end was SIGBUS.
  Scratch scratch;
  for (const std::size_t size : {kSmall, kLarge}) {
    const auto path = scratch.dir / ("after-" + std::to_string(size));
    write_container(path, size);
    const auto file = open_container(path);
    BOOST_REQUIRE(::truncate(path.c_str(), 0) == 0);
    BOOST_CHECK_EQUAL(first_difference(file, size), size);
  }
}

BOOST_AUTO_TEST_CASE(a_file_unchanged_while_it_is_read_reads_whole) {
  // The hook itself changes nothing: every byte of either read path arrives.
  Scratch scratch;
  Hook hook(Change::none);
  for (const std::size_t size : {std::size_t{0}, std::size_t{1}, kSmall, kLarge, kLarge + 12345}) {
    const auto path = scratch.dir / ("whole-" + std::to_string(size));
    write_container(path, size);
    BOOST_CHECK_EQUAL(first_difference(open_container(path), size), size);
  }
}

BOOST_AUTO_TEST_CASE(a_file_that_shrinks_while_it_is_read_is_an_error_naming_it) {
  Scratch scratch;
  for (const auto change : {Change::truncate_to_half, Change::truncate_to_zero}) {
    for (const std::size_t size : {kSmall, kLarge}) {
      const auto path = scratch.dir / ("shrinks-" + std::to_string(size));
      write_container(path, size);
      const auto bytes = fs::file_size(path);
      Hook hook(change);
      const auto message = error_of([&] { open_container(path); });
      BOOST_CHECK(contains(message, path.string() + ": the file changed while it was read"));
      BOOST_CHECK(contains(message, std::to_string(bytes) + " bytes when opened"));
      BOOST_CHECK(
          contains(message, (change == Change::truncate_to_zero ? std::string("0") : std::to_string(bytes / 2)) +
                                " bytes now, and it ended early"));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_file_that_grows_or_is_rewritten_while_it_is_read_is_an_error_naming_it) {
  Scratch scratch;
  for (const auto change : {Change::append, Change::rewrite}) {
    for (const std::size_t size : {kSmall, kLarge}) {
      const auto path = scratch.dir / ("changes-" + std::to_string(size));
      write_container(path, size);
      // An old modification time, so that the hook's write sets another even where the clock's
      // granularity is coarse.
      fs::last_write_time(path, fs::last_write_time(path) - std::chrono::hours(1));
      const auto bytes = fs::file_size(path);
      Hook hook(change);
      const auto message = error_of([&] { open_container(path); });
      BOOST_CHECK(contains(message, path.string() + ": the file changed while it was read"));
      const auto now = change == Change::append ? bytes + 4 : bytes;
      BOOST_CHECK(
          contains(message, std::to_string(bytes) + " bytes when opened, " + std::to_string(now) + " bytes now)"));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_witness_truncated_while_it_is_read_names_the_file) {
  // Through a reader: read_wtns passes BinFile's error on.
  Scratch scratch;
  const auto path = scratch.dir / "w.wtns";
  write_wtns(path, std::vector<stagehand::math::Fr>(1000, stagehand::math::Fr::one()));
  Hook hook(Change::truncate_to_half);
  const auto message = error_of([&] { read_wtns(path); });
  BOOST_CHECK(contains(message, path.string() + ": the file changed while it was read"));
}

BOOST_AUTO_TEST_CASE(a_file_truncated_by_another_thread_at_any_moment_never_crashes_the_reader) {
  // The truncation races the open, the read and the check of the bytes: whichever it meets, the
  // outcome is the whole file read or an InputError naming the file, never a signal or a file
  // read half. Delays spread over about twice the read's time so that rounds land on each.
  Scratch scratch;
  const auto path = scratch.dir / "race";
  std::mt19937 random(20261201);
  int whole = 0, refused = 0;
  for (int round = 0; round < 12; ++round) {
    write_container(path, kLarge);
    const auto delay = std::chrono::microseconds(std::uniform_int_distribution<int>(0, 30000)(random));
    // Boost.Test's checks are not for other threads: the truncator's outcome is checked after it.
    bool truncated = false;
    std::thread truncator([&] {
      std::this_thread::sleep_for(delay);
      truncated = ::truncate(path.c_str(), 1000) == 0;
    });
    try {
      const auto file = open_container(path);
      const auto at = first_difference(file, kLarge);
      BOOST_CHECK_MESSAGE(at == kLarge, "round " << round << ": the bytes differ at " << at);
      ++whole;
    } catch (const InputError& error) {
      BOOST_CHECK(contains(error.what(), path.string() + ": "));
      ++refused;
    }
    truncator.join();
    BOOST_CHECK(truncated);
  }
  BOOST_TEST_MESSAGE("read whole " << whole << " times, refused " << refused << " times");
}

BOOST_AUTO_TEST_CASE(a_section_read_later_arrives_whole_and_the_file_does_not_hold_it) {
  Scratch scratch;
  for (const std::size_t size : {std::size_t{0}, std::size_t{1}, kSmall, kLarge, kLarge + 12345}) {
    BOOST_TEST_CONTEXT(size << " bytes") {
      const auto path = scratch.dir / ("later-" + std::to_string(size));
      write_container(path, size);
      const auto file = open_container(path, {1});
      BOOST_CHECK_THROW(file.section(1, "data"), std::logic_error);
      BOOST_REQUIRE_EQUAL(file.section_size(1, "data"), size);
      std::vector<std::uint8_t> out(size);
      file.read_section(1, "data", out);
      BOOST_CHECK_EQUAL(first_difference(out), size);
      std::vector<std::uint8_t> wrong(size + 1);
      BOOST_CHECK_THROW(file.read_section(1, "data", wrong), std::logic_error);
    }
  }
  // The section's pages in the file's buffer are never touched, so never resident: with a 40 MiB
  // section, the process grows by less than 8 MiB where the whole read grows it by 40.
  const auto path = scratch.dir / "resident";
  write_container(path, kLarge);
  const auto before_whole = resident_bytes();
  const auto whole = open_container(path);
  const auto grown_whole = resident_bytes() - before_whole;
  const auto before_later = resident_bytes();
  const auto later = open_container(path, {1});
  const auto grown_later = resident_bytes() - before_later;
  BOOST_TEST_MESSAGE("resident growth: read whole " << grown_whole << " bytes, the section read later " << grown_later);
  BOOST_CHECK_GE(grown_whole, kLarge);
  BOOST_CHECK_LT(grown_later, std::size_t{8} << 20);
}

BOOST_AUTO_TEST_CASE(a_file_changed_before_a_section_read_later_is_an_error_naming_it) {
  Scratch scratch;
  for (const auto change : {Change::truncate_to_half, Change::append, Change::rewrite}) {
    for (const std::size_t size : {kSmall, kLarge}) {
      BOOST_TEST_CONTEXT("change " << static_cast<int>(change) << ", " << size << " bytes") {
        const auto path = scratch.dir / ("later-changes-" + std::to_string(size));
        write_container(path, size);
        fs::last_write_time(path, fs::last_write_time(path) - std::chrono::hours(1));
        const auto file = open_container(path, {1});
        hook_change = change;
        change_the_file(path);
        hook_change = Change::none;
        std::vector<std::uint8_t> out(size);
        const auto message = error_of([&] { file.read_section(1, "data", out); });
        BOOST_CHECK(contains(message, path.string() + ": the file changed while it was read"));
      }
    }
  }
}

namespace {

// The same container through a writer: small sections, a section of many small writes that
// passes the writer's 8 MiB pieces (its size then patched in the file), and a 24 MiB section of
// one write (straight to the file).
void write_sample(BinFileWriter& out) {
  out.begin_section(1);
  out.u32(7);
  out.u64(0x0102030405060708ULL);
  out.end_section();
  out.begin_section(2);
  for (std::uint32_t i = 0; i < (std::uint32_t{3} << 20); ++i) out.u32(i * 2654435761u);
  out.end_section();
  std::vector<std::uint8_t> large(std::size_t{24} << 20);
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = pattern(i);
  out.begin_section(3);
  out.bytes(large);
  out.end_section();
  out.begin_section(4);
  out.end_section();
}

std::vector<std::uint8_t> file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_writer_to_a_file_writes_what_a_writer_in_memory_holds) {
  Scratch scratch;
  BinFileWriter memory("test", 1);
  write_sample(memory);
  const auto expected = memory.take_bytes();
  const auto path = scratch.dir / "written";
  {
    BinFileWriter out(path, "test", 1);
    write_sample(out);
    BOOST_CHECK(!fs::exists(path));  // only once finished
    out.finish();
  }
  BOOST_CHECK(file_bytes(path) == expected);
  // And the reader takes it: four sections of the sizes written.
  const auto file = open_container(path);
  BOOST_CHECK_EQUAL(file.section(1, "one").size(), 12u);
  BOOST_CHECK_EQUAL(file.section(2, "two").size(), std::size_t{12} << 20);
  BOOST_CHECK_EQUAL(file.section(3, "three").size(), std::size_t{24} << 20);
  BOOST_CHECK_EQUAL(file.section(4, "four").size(), 0u);
  BOOST_CHECK_EQUAL(std::distance(fs::directory_iterator(scratch.dir), fs::directory_iterator()),
                    1);  // no partial file left
}

BOOST_AUTO_TEST_CASE(a_writer_to_a_file_left_unfinished_leaves_the_file_as_it_was) {
  Scratch scratch;
  const auto path = scratch.dir / "kept";
  write_container(path, kSmall);
  {
    BinFileWriter out(path, "test", 1);
    write_sample(out);  // and then, say, an exception: never finished
  }
  BOOST_CHECK_EQUAL(first_difference(open_container(path), kSmall), kSmall);
  BOOST_CHECK_EQUAL(std::distance(fs::directory_iterator(scratch.dir), fs::directory_iterator()), 1);
  const auto missing = scratch.dir / "no-such-directory" / "file";
  std::string message = "no error";
  try {
    BinFileWriter out(missing, "test", 1);
  } catch (const std::runtime_error& error) {
    message = error.what();
  }
  BOOST_CHECK(contains(message, missing.string() + ": cannot create the file"));
}

namespace {

// What a FIFO's writer does after its bytes: closes (the end), goes on sending the same bytes
// until the reader leaves, or holds the FIFO open without sending until released.
enum class After { close, repeat, hold };

// A writer of `bytes` to `fifo`, opened once the reader has it open (so not waiting).
std::thread fifo_writer(const fs::path& fifo, std::vector<std::uint8_t> bytes, After after,
                        std::shared_future<void> release) {
  return std::thread([=] {
    const int descriptor = ::open(fifo.c_str(), O_WRONLY);
    if (descriptor < 0) return;
    auto send = [&] {
      for (std::size_t done = 0; done < bytes.size();) {
        const auto put = ::write(descriptor, bytes.data() + done, bytes.size() - done);
        if (put <= 0) return false;  // EPIPE: the reader has gone (SIGPIPE is ignored)
        done += static_cast<std::size_t>(put);
      }
      return true;
    };
    if (send() && after == After::repeat) {
      while (send()) {
      }
    }
    if (after == After::hold) release.wait();
    ::close(descriptor);
  });
}

struct Fifo {
  fs::path path;
  explicit Fifo(const Scratch& scratch, const std::string& name) : path(scratch.dir / name) {
    std::signal(SIGPIPE, SIG_IGN);
    BOOST_REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  }
  ~Fifo() { fs::remove(path); }
};

// The message of reading `fifo` as a container while `bytes` are written to it as `after` says.
std::string read_fed(const Fifo& fifo, std::vector<std::uint8_t> bytes, After after) {
  std::promise<void> release;
  auto writer = fifo_writer(fifo.path, std::move(bytes), after, release.get_future().share());
  const auto message = error_of([&] { open_container(fifo.path); });
  release.set_value();
  writer.join();
  return message;
}

}  // namespace

BOOST_AUTO_TEST_CASE(devices_and_the_kernels_files_are_refused_unread) {
  for (const std::string path : {"/dev/zero", "/dev/urandom", "/dev/null"}) {
    BOOST_CHECK_EQUAL(
        error_of([&] { open_container(path); }),
        path +
            ": is a character or block device, not a test container file (those are read from regular files "
            "and pipes only)");
  }
  BOOST_CHECK(contains(error_of([&] { open_container("/proc/self/environ"); }),
                       "/proc/self/environ: is a file of the kernel's /proc or /sys, not a test container file"));
  Scratch scratch;
  BOOST_CHECK_EQUAL(error_of([&] { open_container(scratch.dir); }),
                    scratch.dir.string() + ": is a directory, not a test container file");
}

BOOST_AUTO_TEST_CASE(a_fifo_without_a_writer_is_an_error_not_a_wait) {
  Scratch scratch;
  const Fifo fifo(scratch, "lonely");
  BOOST_CHECK_EQUAL(
      error_of([&] { open_container(fifo.path); }),
      fifo.path.string() +
          ": no process opened it for writing within 0.5 s (a FIFO's writer must be started with the reader)");
}

BOOST_AUTO_TEST_CASE(a_fifo_is_read_as_its_header_declares_and_no_further) {
  Scratch scratch;
  const Fifo fifo(scratch, "fed");
  // The whole container, then the end: read as the file itself, a section larger than a pipe holds.
  {
    std::promise<void> unused;
    auto writer = fifo_writer(fifo.path, container_bytes(kSmall), After::close, unused.get_future().share());
    const auto file = open_container(fifo.path);
    writer.join();
    BOOST_CHECK_EQUAL(first_difference(file, kSmall), kSmall);
  }
  // Half of it: truncated, as parse() says of a short file.
  auto half = container_bytes(kSmall);
  half.resize(half.size() / 2);
  BOOST_CHECK(contains(read_fed(fifo, half, After::close), "truncated: section 1 declares"));
  // An endless writer: of the container again and again, of bytes of another kind, of a header
  // declaring more than the machine holds. Each is refused as soon as its header says so.
  BOOST_CHECK_EQUAL(read_fed(fifo, container_bytes(100), After::repeat),
                    fifo.path.string() +
                        ": bytes follow the last of the 1 sections (after 124 bytes): a damaged or concatenated file");
  BOOST_CHECK_EQUAL(read_fed(fifo, std::vector<std::uint8_t>(4096, 0), After::repeat),
                    fifo.path.string() + ": not a test container file (its magic is not \"test\")");
  auto huge = container_bytes(0);
  for (int i = 0; i < 8; ++i) huge[16 + static_cast<std::size_t>(i)] = i == 7 ? 0x40 : 0;  // 2^62 bytes
  BOOST_CHECK(contains(read_fed(fifo, huge, After::repeat),
                       "section 1 declares 4611686018427387904 bytes, more than this machine's"));
}

BOOST_AUTO_TEST_CASE(a_fifo_whose_writer_falls_silent_is_an_error) {
  Scratch scratch;
  const Fifo fifo(scratch, "silent");
  stagehand::detail::set_pipe_waits({std::chrono::seconds(10), std::chrono::milliseconds(100)});
  // Its header and half its section, then nothing more while the writer holds it open; and the
  // whole container with the writer holding it open after: the end must come too.
  auto half = container_bytes(1000);
  half.resize(500);
  const auto silent_midway = read_fed(fifo, half, After::hold);
  const auto silent_after = read_fed(fifo, container_bytes(1000), After::hold);
  stagehand::detail::set_pipe_waits({});
  BOOST_CHECK_EQUAL(silent_midway,
                    fifo.path.string() + ": no byte arrived for 0.1 s: its writer holds it open without sending");
  BOOST_CHECK_EQUAL(silent_after, silent_midway);
}

BOOST_AUTO_TEST_CASE(a_file_of_another_kind_is_refused_without_quoting_it) {
  // Its first bytes stood in the message ("magic \"root\""): a client of the service naming a
  // file it may not read learnt them.
  Scratch scratch;
  const auto path = scratch.dir / "passwd";
  std::ofstream(path) << "root:x:0:0:root:/root:/bin/bash\n";
  const auto message = error_of([&] { open_container(path); });
  BOOST_CHECK_EQUAL(message, path.string() + ": not a test container file (its magic is not \"test\")");
  BOOST_CHECK(message.find("root:") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_file_larger_than_the_memory_is_refused_before_it_is_read) {
  // Sparse: its header, then a hole as large as the machine's memory.
  Scratch scratch;
  const auto path = scratch.dir / "huge";
  write_container(path, 0);
  const auto size = stagehand::physical_memory_bytes() + 1;
  BOOST_REQUIRE(::truncate(path.c_str(), static_cast<off_t>(size)) == 0);
  BOOST_CHECK(contains(error_of([&] { open_container(path); }),
                       path.string() + ": " + std::to_string(size) + " bytes, more than this machine's"));
}
