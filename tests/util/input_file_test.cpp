// util/input_file.hpp: what an open file is (devices and the kernel's files told from regular
// files), and PipeReader on FIFOs and pipes: a FIFO that no process opens for writing is
// "no_writer", not a wait; a writer that comes after the reader, or is silent past the wait for
// a writer, is read; one that falls silent is "idle"; a pipe whose writer leaves is the end. The
// waits are set through the test seam where a test needs one to pass: each test waits for the
// reader's answer, never for a time.

#define BOOST_TEST_MODULE util_input_file
#include <boost/test/unit_test.hpp>

#include "util/input_file.hpp"

#include <chrono>
#include <optional>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace stagehand;
using namespace std::chrono_literals;
using Status = PipeReader::Status;

namespace {

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("stagehand_input_file_test_" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
  fs::path fifo(const std::string& name) const {
    const auto path = dir / name;
    BOOST_REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    return path;
  }
};

// Short waits for the tests of what happens once one has passed; the defaults again at the end.
struct ShortWaits {
  explicit ShortWaits(PipeWaits waits) { detail::set_pipe_waits(waits); }
  ~ShortWaits() { detail::set_pipe_waits(PipeWaits{}); }
};

// Opens the FIFO for writing (the reader has it open already, so this does not wait), writes
// `bytes`, then holds it open until `release` is ready, then closes it.
std::thread writer(const fs::path& fifo, std::vector<std::uint8_t> bytes, std::shared_future<void> release) {
  return std::thread([fifo, bytes = std::move(bytes), release] {
    const int descriptor = ::open(fifo.c_str(), O_WRONLY);
    if (descriptor < 0) return;
    for (std::size_t done = 0; done < bytes.size();) {
      const auto put = ::write(descriptor, bytes.data() + done, bytes.size() - done);
      if (put <= 0) break;
      done += static_cast<std::size_t>(put);
    }
    release.wait();
    ::close(descriptor);
  });
}

std::vector<std::uint8_t> some_bytes(std::size_t count) {
  std::vector<std::uint8_t> bytes(count);
  for (std::size_t i = 0; i < count; ++i) bytes[i] = static_cast<std::uint8_t>(i * 7 + 3);
  return bytes;
}

}  // namespace

BOOST_AUTO_TEST_CASE(what_a_file_is_comes_from_its_descriptor) {
  Scratch scratch;
  const auto regular = scratch.dir / "regular";
  std::ofstream(regular) << "text";
  const auto fifo = scratch.fifo("fifo");
  auto kind_of = [](const fs::path& path) {
    const auto descriptor = open_for_reading(path);
    BOOST_REQUIRE_MESSAGE(descriptor.valid(), path);
    return input_kind(descriptor.get());
  };
  BOOST_CHECK(kind_of(regular) == InputKind::regular);
  BOOST_CHECK(kind_of(fifo) == InputKind::pipe);  // opened at once, without a writer
  BOOST_CHECK(kind_of(scratch.dir) == InputKind::directory);
  BOOST_CHECK(kind_of("/dev/zero") == InputKind::device);
  BOOST_CHECK(kind_of("/dev/urandom") == InputKind::device);
  BOOST_CHECK(kind_of("/proc/self/status") == InputKind::kernel_file);
  // By path, without opening: the same answers, and none for a path that is not there.
  BOOST_CHECK(input_kind(regular) == std::optional{InputKind::regular});
  BOOST_CHECK(input_kind(fifo) == std::optional{InputKind::pipe});
  BOOST_CHECK(input_kind(fs::path("/dev/zero")) == std::optional{InputKind::device});
  BOOST_CHECK(input_kind(fs::path("/proc/self/status")) == std::optional{InputKind::kernel_file});
  BOOST_CHECK(!input_kind(scratch.dir / "absent").has_value());
  // A last component that is a symbolic link is not followed where asked.
  const auto link = scratch.dir / "link";
  fs::create_symlink(regular, link);
  BOOST_CHECK(open_for_reading(link).valid());
  BOOST_CHECK(!open_for_reading(link, /*no_follow=*/true).valid());
}

BOOST_AUTO_TEST_CASE(a_fifo_no_process_writes_to_is_no_writer) {
  Scratch scratch;
  const auto fifo = scratch.fifo("lonely");
  const auto descriptor = open_for_reading(fifo);
  BOOST_REQUIRE(descriptor.valid());
  PipeReader reader(descriptor.get());
  std::vector<std::uint8_t> out;
  const auto status = reader.append(out, 12);
  BOOST_CHECK(status == Status::no_writer);
  BOOST_CHECK(out.empty());
  BOOST_CHECK_EQUAL(reader.problem(status),
                    "no process opened it for writing within 0.5 s (a FIFO's writer must be started with the reader)");
}

BOOST_AUTO_TEST_CASE(a_writer_that_comes_after_the_reader_is_read_to_its_end) {
  Scratch scratch;
  ShortWaits waits({10s, 10s});  // the writer's thread, however slow to start, is waited for
  const auto fifo = scratch.fifo("fed");
  const auto descriptor = open_for_reading(fifo);
  BOOST_REQUIRE(descriptor.valid());
  std::promise<void> release;
  release.set_value();                     // closes as soon as it has written: the end follows the bytes
  const auto bytes = some_bytes(300'000);  // more than a pipe holds: written as it is read
  auto feeding = writer(fifo, bytes, release.get_future().share());
  PipeReader reader(descriptor.get());
  std::vector<std::uint8_t> out;
  BOOST_CHECK(reader.append(out, 100) == Status::ok);
  BOOST_CHECK_EQUAL(out.size(), 100u);
  BOOST_CHECK(reader.append(out, 1'000'000) == Status::ended);
  feeding.join();
  BOOST_CHECK(out == bytes);
}

BOOST_AUTO_TEST_CASE(a_writer_that_falls_silent_is_idle) {
  Scratch scratch;
  ShortWaits waits({10s, 200ms});
  const auto fifo = scratch.fifo("silent");
  const auto descriptor = open_for_reading(fifo);
  BOOST_REQUIRE(descriptor.valid());
  std::promise<void> release;
  auto holding = writer(fifo, some_bytes(20), release.get_future().share());
  PipeReader reader(descriptor.get());
  std::vector<std::uint8_t> out;
  BOOST_CHECK(reader.append(out, 20) == Status::ok);
  const auto status = reader.append(out, 1);
  BOOST_CHECK(status == Status::idle);
  BOOST_CHECK_EQUAL(out.size(), 20u);
  BOOST_CHECK_EQUAL(reader.problem(status), "no byte arrived for 0.2 s: its writer holds it open without sending");
  release.set_value();
  holding.join();
}

BOOST_AUTO_TEST_CASE(a_writer_silent_past_the_writer_wait_is_no_missing_writer) {
  // On one thread: the writer's end is open before the reader's first wait, which is over at
  // once; the reader then gives the silent writer the idle wait, and reads what it sends next.
  Scratch scratch;
  ShortWaits waits({0ms, 100ms});
  const auto fifo = scratch.fifo("slow");
  const auto descriptor = open_for_reading(fifo);
  BOOST_REQUIRE(descriptor.valid());
  const FileDescriptor writing(::open(fifo.c_str(), O_WRONLY | O_NONBLOCK));
  BOOST_REQUIRE(writing.valid());
  PipeReader reader(descriptor.get());
  std::vector<std::uint8_t> out;
  BOOST_CHECK(reader.append(out, 1) == Status::idle);
  const std::uint8_t byte = 42;
  BOOST_REQUIRE_EQUAL(::write(writing.get(), &byte, 1), 1);
  BOOST_CHECK(reader.append(out, 1) == Status::ok);
  BOOST_CHECK(out == std::vector<std::uint8_t>{42});
}

BOOST_AUTO_TEST_CASE(a_pipe_whose_writer_leaves_without_a_byte_has_ended) {
  int ends[2];
  BOOST_REQUIRE(::pipe(ends) == 0);
  ::close(ends[1]);
  PipeReader reader(ends[0]);
  std::vector<std::uint8_t> out;
  BOOST_CHECK(reader.append(out, 12) == Status::ended);
  ::close(ends[0]);
}

BOOST_AUTO_TEST_CASE(a_small_input_is_bounded_and_devices_are_refused) {
  Scratch scratch;
  const auto small = scratch.dir / "small.toml";
  std::ofstream(small) << "a = 1\n";
  const auto read = read_small_input(small, 100, "TOML file");
  BOOST_CHECK_EQUAL(read.problem, "");
  BOOST_CHECK_EQUAL(read.bytes, "a = 1\n");
  BOOST_CHECK_EQUAL(read_small_input(small, 5, "TOML file").problem, "more than 5 bytes: not a TOML file");
  BOOST_CHECK_EQUAL(read_small_input("/dev/zero", 100, "TOML file").problem,
                    "is a character or block device, not a TOML file");
  BOOST_CHECK_EQUAL(read_small_input("/dev/urandom", 100, "TOML file").problem,
                    "is a character or block device, not a TOML file");
  BOOST_CHECK_EQUAL(read_small_input(scratch.dir, 100, "TOML file").problem, "is a directory, not a TOML file");
  BOOST_CHECK_EQUAL(read_small_input("/proc/self/environ", 100, "TOML file").problem,
                    "is a file of the kernel's /proc or /sys, not a TOML file");
  BOOST_CHECK(read_small_input(scratch.fifo("no-writer.toml"), 100, "TOML file")
                  .problem.starts_with("no process opened it for writing"));
  BOOST_CHECK(read_small_input(scratch.dir / "absent.toml", 100, "TOML file")
                  .problem.starts_with("cannot open file: No such file"));
}
