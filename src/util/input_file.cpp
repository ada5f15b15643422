#include "util/input_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace stagehand {
namespace {

std::atomic<std::int64_t> writer_wait_ms{PipeWaits{}.writer.count()};
std::atomic<std::int64_t> idle_wait_ms{PipeWaits{}.idle.count()};

// A pipe's bytes are appended in pieces of at most this size, so that what is held grows with
// what arrived, whatever size a header declares.
constexpr std::size_t kPipeChunkBytes = std::size_t{1} << 20;

std::string seconds_text(std::chrono::milliseconds wait) {
  return fmt::format("{:g} s", static_cast<double>(wait.count()) / 1000);
}

}  // namespace

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    close();
    value_ = std::exchange(other.value_, -1);
  }
  return *this;
}

void FileDescriptor::close() {
  if (value_ >= 0) ::close(value_);
  value_ = -1;
}

FileDescriptor open_for_reading(const std::filesystem::path& path, bool no_follow) {
  const int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (no_follow ? O_NOFOLLOW : 0);
  return FileDescriptor(::open(path.c_str(), flags));
}

namespace {

// The kernel's files report a size of 0 or of a page whatever they hold, and some are endless.
InputKind kind_of(const struct stat& status, const struct statfs* filesystem) {
  if (S_ISDIR(status.st_mode)) return InputKind::directory;
  if (S_ISFIFO(status.st_mode)) return InputKind::pipe;
  if (S_ISCHR(status.st_mode) || S_ISBLK(status.st_mode)) return InputKind::device;
  if (!S_ISREG(status.st_mode) || filesystem == nullptr) return InputKind::other;
  if (filesystem->f_type == PROC_SUPER_MAGIC || filesystem->f_type == SYSFS_MAGIC) return InputKind::kernel_file;
  return InputKind::regular;
}

}  // namespace

InputKind input_kind(int descriptor) {
  struct stat status {};
  if (::fstat(descriptor, &status) != 0) return InputKind::other;
  struct statfs filesystem {};
  return kind_of(status, ::fstatfs(descriptor, &filesystem) == 0 ? &filesystem : nullptr);
}

std::optional<InputKind> input_kind(const std::filesystem::path& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return std::nullopt;
  struct statfs filesystem {};
  return kind_of(status, ::statfs(path.c_str(), &filesystem) == 0 ? &filesystem : nullptr);
}

std::string_view describe(InputKind kind) {
  switch (kind) {
    case InputKind::regular: return "a regular file";
    case InputKind::pipe: return "a FIFO or pipe";
    case InputKind::directory: return "a directory";
    case InputKind::kernel_file: return "a file of the kernel's /proc or /sys";
    case InputKind::device: return "a character or block device";
    case InputKind::other: return "a socket or another kind of file";
  }
  return "a file of an unknown kind";
}

std::uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_bytes = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return UINT64_MAX;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_bytes);
}

PipeWaits pipe_waits() {
  return PipeWaits{std::chrono::milliseconds(writer_wait_ms.load()), std::chrono::milliseconds(idle_wait_ms.load())};
}

void detail::set_pipe_waits(PipeWaits waits) {
  writer_wait_ms.store(waits.writer.count());
  idle_wait_ms.store(waits.idle.count());
}

PipeReader::PipeReader(int descriptor, PipeWaits waits) : descriptor_(descriptor), waits_(waits) {
  const int flags = ::fcntl(descriptor_, F_GETFL);
  if (flags >= 0 && (flags & O_NONBLOCK) == 0) ::fcntl(descriptor_, F_SETFL, flags | O_NONBLOCK);
}

PipeReader::Status PipeReader::append(std::vector<std::uint8_t>& out, std::uint64_t count) {
  while (count > 0) {
    const auto old_size = out.size();
    const auto room = static_cast<std::size_t>(std::min<std::uint64_t>(count, kPipeChunkBytes));
    out.resize(old_size + room);
    std::size_t got = 0;
    const auto status = read_some(out.data() + old_size, room, got);
    out.resize(old_size + got);
    if (status != Status::ok) return status;
    count -= got;
  }
  return Status::ok;
}

// read() alone cannot tell a FIFO that no process has opened for writing yet from one whose
// writer has finished: both read as the end. poll() can: on a FIFO opened without blocking, it
// reports the hang-up only once a writer has come and gone, and otherwise waits. So every read
// follows a poll(), and a read of nothing after a poll() that timed out means no writer came.
PipeReader::Status PipeReader::read_some(std::uint8_t* to, std::size_t capacity, std::size_t& got) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + (writer_seen_ ? waits_.idle : waits_.writer);
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd wait{descriptor_, POLLIN, 0};
    const int ready = ::poll(&wait, 1, static_cast<int>(std::clamp<std::int64_t>(left, 0, INT32_MAX)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      error_ = errno;
      return Status::failed;
    }
    const ssize_t count = ::read(descriptor_, to, capacity);
    if (count > 0) {
      writer_seen_ = true;
      got = static_cast<std::size_t>(count);
      return Status::ok;
    }
    if (count == 0) return ready > 0 || writer_seen_ ? Status::ended : Status::no_writer;
    if (errno == EINTR) continue;
    if (errno != EAGAIN) {
      error_ = errno;
      return Status::failed;
    }
    // EAGAIN: a writer holds the pipe open without sending. Until the first byte, that is the
    // writer arriving; from then on each byte has the idle wait.
    if (ready == 0) {
      if (writer_seen_) return Status::idle;
      writer_seen_ = true;
      deadline = Clock::now() + waits_.idle;
    }
  }
}

std::string PipeReader::problem(Status status) const {
  switch (status) {
    case Status::ok:
    case Status::ended: return "";
    case Status::no_writer:
      return fmt::format("no process opened it for writing within {} (a FIFO's writer must be started with the reader)",
                         seconds_text(waits_.writer));
    case Status::idle:
      return fmt::format("no byte arrived for {}: its writer holds it open without sending", seconds_text(waits_.idle));
    case Status::failed: return fmt::format("cannot read it: {}", std::strerror(error_));
  }
  return "";
}

InputBytes read_input_bytes(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view what) {
  InputBytes input;
  const auto descriptor = open_for_reading(path);
  if (!descriptor.valid()) {
    input.problem = fmt::format("cannot open file: {}", std::strerror(errno));
    return input;
  }
  const auto kind = input_kind(descriptor.get());
  if (kind != InputKind::regular && kind != InputKind::pipe) {
    input.problem = fmt::format("is {}, not a {}", describe(kind), what);
    return input;
  }
  // A regular file is read to its end the same way, so that one that grows meanwhile is bounded too.
  PipeReader reader(descriptor.get());
  const auto status = reader.append(input.bytes, max_bytes + 1);
  if (status == PipeReader::Status::ok) {
    input.problem = fmt::format("more than {} bytes: not a {}", max_bytes, what);
  } else if (status != PipeReader::Status::ended) {
    input.problem = reader.problem(status);
  }
  if (!input.problem.empty()) input.bytes = {};
  return input;
}

SmallInput read_small_input(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view what) {
  auto input = read_input_bytes(path, max_bytes, what);
  return SmallInput{std::string(input.bytes.begin(), input.bytes.end()), std::move(input.problem)};
}

}  // namespace stagehand
