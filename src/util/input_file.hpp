#pragma once
// Opening and reading the files a user or a client names (.zkey, .wtns, .r1cs, TOML) so that no
// name makes Stagehand wait forever or read without end: a file is opened without blocking (a
// FIFO that no process writes to would otherwise hold the open for good), what it is comes from
// the open descriptor (devices and the kernel's /proc and /sys files are refused by their
// readers, never read), and a pipe is read only while its writer keeps sending.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stagehand {

// An open file descriptor, closed by its owner.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int value) : value_(value) {}
  FileDescriptor(FileDescriptor&& other) noexcept : value_(std::exchange(other.value_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() { close(); }

  int get() const { return value_; }
  bool valid() const { return value_ >= 0; }
  void close();

 private:
  int value_ = -1;
};

// Opens `path` read-only with O_NONBLOCK (without it, opening a FIFO waits for a writer), O_NOCTTY
// and O_CLOEXEC, and O_NOFOLLOW where `no_follow` (its last component may not be a symbolic
// link). An invalid descriptor where it cannot, with errno set.
FileDescriptor open_for_reading(const std::filesystem::path& path, bool no_follow = false);

// What an open file is, as far as a reader cares.
enum class InputKind {
  regular,  // a regular file: read at its size
  pipe,     // a FIFO or a pipe: read as its bytes arrive (PipeReader)
  directory,
  kernel_file,  // a regular file of /proc or /sys: its size is not its content's
  device,       // a character or block device (/dev/zero, /dev/urandom, a disk)
  other,        // a socket, or a type that cannot be found
};
InputKind input_kind(int descriptor);
// The same for a path, without opening it (opening some devices has effects of its own);
// nothing where it cannot be found.
std::optional<InputKind> input_kind(const std::filesystem::path& path);
// "a directory", "a character or block device", ...: for messages that refuse it.
std::string_view describe(InputKind kind);

// The host's physical memory, bytes: no input a reader holds in memory can be larger.
std::uint64_t physical_memory_bytes();

// How long a pipe's reader waits: for a process to open a FIFO for writing (a FIFO that nothing
// writes to must fail fast, and its writer is normally started first, so a short wait), and then
// for each next byte of a writer that holds the pipe open (a slow producer, such as a witness
// being computed, sends in bursts).
struct PipeWaits {
  std::chrono::milliseconds writer{500};
  std::chrono::milliseconds idle{30'000};
};
// The waits every PipeReader made from now on uses.
PipeWaits pipe_waits();

// Reads a FIFO or a pipe as its bytes arrive, never blocking in read(): each wait is a poll()
// bounded by PipeWaits.
class PipeReader {
 public:
  enum class Status { ok, ended, no_writer, idle, failed };

  // Sets O_NONBLOCK on `descriptor` (already set where open_for_reading opened it).
  explicit PipeReader(int descriptor, PipeWaits waits = pipe_waits());

  // Appends bytes to `out` as they arrive until `count` more are there (ok), or until the pipe
  // ends (ended: `out` holds what came), no writer came, the writer fell silent or a read
  // failed. `out` grows by what arrives, never by `count` ahead.
  Status append(std::vector<std::uint8_t>& out, std::uint64_t count);
  // What went wrong, in words, for a status other than ok and ended (e.g. "no process opened it
  // for writing within 0.5 s").
  std::string problem(Status status) const;

 private:
  // One read once the pipe is readable or ended: bytes read, 0 at the end, or a Status.
  Status read_some(std::uint8_t* to, std::size_t capacity, std::size_t& got);

  int descriptor_;
  PipeWaits waits_;
  bool writer_seen_ = false;
  int error_ = 0;
};

// The whole of a small input: a regular file up to `max_bytes` or a pipe's bytes to its end,
// within the same bound; `problem` says what is wrong otherwise, in words without the path
// ("is a character or block device, not a file", "more than 16 MiB: not a ... file").
struct SmallInput {
  std::string bytes;
  std::string problem;
};
SmallInput read_small_input(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view what);
// The same into bytes (a witness, which the engine takes as they are).
struct InputBytes {
  std::vector<std::uint8_t> bytes;
  std::string problem;
};
InputBytes read_input_bytes(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view what);

namespace detail {
// A test seam: the waits PipeReaders use from now on (a test of the idle limit cannot wait 30 s).
void set_pipe_waits(PipeWaits waits);
}  // namespace detail

}  // namespace stagehand
