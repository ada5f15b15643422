#include "groth16/binfile.hpp"

#include <fmt/format.h>

#include "math/parallel.hpp"
#include "util/assert.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace stagehand::groth16 {

std::uint32_t load_u32(const std::uint8_t* data) {
  return static_cast<std::uint32_t>(data[0]) | static_cast<std::uint32_t>(data[1]) << 8 |
         static_cast<std::uint32_t>(data[2]) << 16 | static_cast<std::uint32_t>(data[3]) << 24;
}
std::uint64_t load_u64(const std::uint8_t* data) {
  return static_cast<std::uint64_t>(load_u32(data)) | static_cast<std::uint64_t>(load_u32(data + 4)) << 32;
}

std::optional<std::string> wrong_record_count(std::uint64_t actual, std::uint64_t count, std::uint64_t record_bytes,
                                              std::string_view what) {
  const std::uint64_t expected = count * record_bytes;
  if (actual == expected) return std::nullopt;
  return fmt::format("{} bytes, expected {} ({} {} of {} bytes){}", actual, expected, count, what, record_bytes,
                     actual < expected ? ": truncated or for a smaller circuit" : "");
}

namespace {

std::atomic<detail::BinFileReadHook> read_hook{nullptr};

// Regular files at least this big are read on several threads, in chunks handed out in file
// order: a 2^22 key is 3 GB, and one thread's copy out of the page cache (with the faults that
// first touch the buffer) runs at one core's pace while the rest wait to decode it.
constexpr std::size_t kParallelReadBytes = std::size_t{32} << 20;
constexpr std::size_t kReadChunkBytes = std::size_t{8} << 20;
constexpr unsigned kMaxReadThreads = 8;
// Section headers read one by one to find the sections read later: a .zkey has ten sections; a
// file with more is read whole past these, so that a damaged table costs no more than a read.
constexpr std::uint32_t kMaxWalkedSections = 64;

// A file's byte range [begin, end).
struct FileRange {
  std::size_t begin, end;
};

// Reads each range's file bytes to `destination` + (offset - `destination_offset`): in chunks
// handed out in file order on several threads where the ranges are large, else on this one. Each
// chunk is read to its end; errors are kept, not thrown, so that the message can say what the
// file became.
FileReadOutcome read_ranges(int descriptor, const std::vector<FileRange>& ranges, std::uint8_t* destination,
                            std::size_t destination_offset) {
  std::atomic<bool> ended_early{false};
  std::atomic<int> read_error{0};
  auto read_range = [&](std::size_t begin, std::size_t end) {
    for (std::size_t offset = begin; offset < end;) {
      if (ended_early.load(std::memory_order_relaxed) || read_error.load(std::memory_order_relaxed) != 0) return;
      const ssize_t got =
          ::pread(descriptor, destination + (offset - destination_offset), end - offset, static_cast<off_t>(offset));
      if (got > 0) {
        offset += static_cast<std::size_t>(got);
      } else if (got == 0) {
        ended_early.store(true);
        return;
      } else if (errno != EINTR) {
        int expected = 0;
        read_error.compare_exchange_strong(expected, errno);
        return;
      }
    }
  };
  std::vector<FileRange> chunks;
  std::size_t total = 0;
  for (const auto& range : ranges) {
    total += range.end - range.begin;
    for (std::size_t begin = range.begin; begin < range.end; begin += kReadChunkBytes) {
      chunks.push_back({begin, std::min(range.end, begin + kReadChunkBytes)});
    }
  }
  if (total < kParallelReadBytes) {
    for (const auto& chunk : chunks) read_range(chunk.begin, chunk.end);
  } else {
    const unsigned threads = std::min(kMaxReadThreads, math::detail::resolve_thread_count(0));
    math::detail::run_tasks(chunks.size(), threads,
                            [&](std::size_t chunk) { read_range(chunks[chunk].begin, chunks[chunk].end); });
  }
  return {ended_early.load(), read_error.load()};
}

// The parts of [0, size) outside `skipped` (ranges in file order that do not overlap).
std::vector<FileRange> complement(const std::vector<FileRange>& skipped, std::size_t size) {
  std::vector<FileRange> ranges;
  std::size_t next = 0;
  for (const auto& skip : skipped) {
    if (skip.begin > next) ranges.push_back({next, skip.begin});
    next = skip.end;
  }
  if (next < size) ranges.push_back({next, size});
  return ranges;
}

bool same_time(const timespec& a, const timespec& b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

}  // namespace

void detail::set_binfile_read_hook(BinFileReadHook hook) { read_hook.store(hook); }

FileReadOutcome read_file_range(int descriptor, std::uint64_t offset, std::span<std::uint8_t> out) {
  const auto begin = static_cast<std::size_t>(offset);
  return read_ranges(descriptor, {{begin, begin + out.size()}}, out.data(), begin);
}

InputFile open_input(const std::filesystem::path& path, std::string_view kind) {
  auto descriptor = open_for_reading(path);
  if (!descriptor.valid())
    throw InputError(fmt::format("{}: cannot open the {} file: {}", path.string(), kind, std::strerror(errno)));
  return InputFile{std::move(descriptor), path};
}

// A regular file is read with pread into memory of our own, not mapped. Mapping let the decoders
// read the page cache directly, but when another process truncates a mapped file, the first
// access to a page past its new end raises SIGBUS and kills the process, from wherever the bytes
// are touched (a decoding thread, long after the file was opened). Read, a file that shrinks ends
// the read short: an InputError naming the file, and after the read the bytes cannot change.
void BinFile::read_regular_file(std::string_view magic, std::uint32_t max_version) {
  struct stat before {};
  if (::fstat(descriptor_.get(), &before) != 0)
    fail(fmt::format("cannot read the file's size: {}", std::strerror(errno)));
  opened_size_ = static_cast<std::size_t>(before.st_size);
  opened_modified_ = before.st_mtim;
  if (const auto hook = read_hook.load()) hook(path_);
  const auto size = opened_size_;
  if (size == 0) return;  // "truncated" in parse()

  // The header first, so that a file of another kind, however large, ends here, unread.
  if (size >= 12) {
    std::uint8_t header[12];
    const auto outcome = read_ranges(descriptor_.get(), {{0, 12}}, header, 0);
    if (outcome.error != 0) fail(fmt::format("cannot read the file: {}", std::strerror(outcome.error)));
    if (!outcome.ended_early) check_header(header, magic, max_version);  // else check_unchanged says it shrank
  }
  if (size > physical_memory_bytes()) {
    fail(fmt::format("{} bytes, more than this machine's {} bytes of memory, which a {} file is read into", size,
                     physical_memory_bytes(), kind_));
  }
  // Not zero-filled: every byte is written by the read or the read fails, except a section read
  // later's, whose pages (the buffer is mapped, being large) are never touched, so never held.
  try {
    file_bytes_ = std::make_unique_for_overwrite<std::uint8_t[]>(size);
  } catch (const std::bad_alloc&) {
    fail(fmt::format("cannot hold its {} bytes in memory", size));
  }
  std::uint8_t* const buffer = file_bytes_.get();
  // The file's pages are asked for ahead, as the mapping asked for them (MADV_WILLNEED), for a
  // file not yet in the page cache. No MADV_HUGEPAGE for the buffer: where transparent huge
  // pages defragment on madvise (the default), the first writes stalled in compaction and were
  // several times slower (bench/journal/2026-12-01.md).
  if (size >= kParallelReadBytes) ::posix_fadvise(descriptor_.get(), 0, static_cast<off_t>(size), POSIX_FADV_WILLNEED);

  // The sections read later, found by walking the section table one header at a time. The walk
  // stops at anything parse() will refuse, and the rest of the file is then read whole, so that
  // parse() sees what it would have.
  std::vector<FileRange> skipped;
  FileReadOutcome outcome;
  if (!read_later_.empty() && size >= 12) {
    outcome = read_ranges(descriptor_.get(), {{0, 12}}, buffer, 0);
    const std::uint32_t count = load_u32(buffer + 8);
    std::size_t offset = 12;
    for (std::uint32_t index = 0; index < std::min(count, kMaxWalkedSections) && !outcome.ended_early &&
                                  outcome.error == 0 && size - offset >= 12;
         ++index) {
      outcome = read_ranges(descriptor_.get(), {{offset, offset + 12}}, buffer, 0);
      const std::uint32_t id = load_u32(buffer + offset);
      const std::uint64_t length = load_u64(buffer + offset + 4);
      offset += 12;
      if (length > size - offset) break;
      if (read_later_.count(id) != 0) skipped.push_back({offset, offset + static_cast<std::size_t>(length)});
      offset += static_cast<std::size_t>(length);
    }
  }
  if (!outcome.ended_early && outcome.error == 0)
    outcome = read_ranges(descriptor_.get(), complement(skipped, size), buffer, 0);
  if (outcome.error != 0) fail(fmt::format("cannot read the file: {}", std::strerror(outcome.error)));
  try {
    check_unchanged(outcome.ended_early);
  } catch (...) {
    file_bytes_.reset();
    throw;
  }
  bytes_ = std::span<const std::uint8_t>(buffer, size);
  if (read_later_.empty()) descriptor_.close();
}

// A file that shrank, grew or was rewritten in place since it was opened: the bytes read are a
// mix of before and after. The size and the modification time say so (a write sets the time).
void BinFile::check_unchanged(bool ended_early) const {
  struct stat after {};
  const bool seen = ::fstat(descriptor_.get(), &after) == 0;
  if (ended_early || (seen && (static_cast<std::size_t>(after.st_size) != opened_size_ ||
                               !same_time(after.st_mtim, opened_modified_)))) {
    const std::string now = seen ? fmt::format("{} bytes", after.st_size) : std::string("of unknown size");
    fail(fmt::format(
        "the file changed while it was read ({} bytes when opened, {} now{}): is another process writing or "
        "truncating it?",
        opened_size_, now, ended_early ? ", and it ended early" : ""));
  }
}

// A pipe has no size: it is read as its header declares, section by section, so that what it
// sends past its last section (an endless writer) is never read, and a declared size is never
// reserved ahead (the buffer grows by what arrives). A read that ends early stops here and
// parse() names what is missing.
void BinFile::read_stream(std::string_view magic, std::uint32_t max_version) {
  PipeReader reader(descriptor_.get());
  const std::uint64_t memory = physical_memory_bytes();
  auto status = PipeReader::Status::ok;
  try {
    status = reader.append(stream_bytes_, 12);
    if (status == PipeReader::Status::ok) {
      check_header(stream_bytes_, magic, max_version);
      const std::uint32_t count = load_u32(stream_bytes_.data() + 8);
      for (std::uint32_t index = 0; index < count && status == PipeReader::Status::ok; ++index) {
        status = reader.append(stream_bytes_, 12);
        if (status != PipeReader::Status::ok) break;
        const std::uint32_t id = load_u32(stream_bytes_.data() + stream_bytes_.size() - 12);
        const std::uint64_t length = load_u64(stream_bytes_.data() + stream_bytes_.size() - 8);
        if (length > memory - std::min<std::uint64_t>(memory, stream_bytes_.size())) {
          fail(fmt::format(
              "section {} declares {} bytes, more than this machine's {} bytes of memory, which a pipe's bytes "
              "are read into: a damaged file",
              id, length, memory));
        }
        status = reader.append(stream_bytes_, length);
      }
      // Past the last section: the end, or one byte too many.
      if (status == PipeReader::Status::ok) status = reader.append(stream_bytes_, 1);
      if (status == PipeReader::Status::ok) {
        fail(fmt::format("bytes follow the last of the {} sections (after {} bytes): a damaged or concatenated file",
                         count, stream_bytes_.size() - 1));
      }
    }
  } catch (const std::bad_alloc&) {
    fail(fmt::format("cannot hold its bytes in memory ({} bytes read)", stream_bytes_.size()));
  }
  if (status != PipeReader::Status::ended) fail(reader.problem(status));
  bytes_ = stream_bytes_;
}

BinFile::BinFile(const std::filesystem::path& path, std::string_view magic, std::string_view kind,
                 std::uint32_t max_version, std::set<std::uint32_t> read_later)
    : BinFile(open_input(path, kind), magic, kind, max_version, std::move(read_later)) {}

BinFile::BinFile(InputFile file, std::string_view magic, std::string_view kind, std::uint32_t max_version,
                 std::set<std::uint32_t> read_later)
    : path_(std::move(file.name)),
      kind_(kind),
      read_later_(std::move(read_later)),
      descriptor_(std::move(file.descriptor)) {
  STAGEHAND_ASSERT(descriptor_.valid(), "BinFile: {} comes without an open descriptor", path_.string());
  // What the file is comes from its descriptor, not its name, so that it cannot change between
  // the look and the read. A directory reports a size of 2^63 - 1, a device none or a false one.
  switch (const auto what = input_kind(descriptor_.get())) {
    case InputKind::regular: read_regular_file(magic, max_version); break;
    case InputKind::pipe: read_stream(magic, max_version); break;
    case InputKind::directory: fail(fmt::format("is a directory, not a {} file", kind_));
    default:
      fail(fmt::format("is {}, not a {} file (those are read from regular files and pipes only)", describe(what),
                       kind_));
  }
  parse(magic, max_version);
}

BinFile::BinFile(std::span<const std::uint8_t> bytes, const std::string& name, std::string_view magic,
                 std::string_view kind, std::uint32_t max_version)
    : path_(name), kind_(kind), bytes_(bytes) {
  parse(magic, max_version);
}

// The magic found is not quoted: a file of another kind may hold anything (a client of the
// service naming /etc/passwd must not read its first bytes in the answer). Only the containers
// of the same family are named, as a user who swapped two arguments needs to hear.
std::uint32_t BinFile::check_header(std::span<const std::uint8_t> header, std::string_view magic,
                                    std::uint32_t max_version) const {
  if (header.size() < 12) {
    fail(fmt::format("truncated: {} bytes, not even a header (a {} file starts with \"{}\")", header.size(), kind_,
                     magic));
  }
  if (std::memcmp(header.data(), magic.data(), 4) != 0) {
    std::string known;
    for (const std::string_view other : {"zkey", "wtns", "r1cs"}) {
      if (std::memcmp(header.data(), other.data(), 4) == 0) known = fmt::format(": it is a .{} file", other);
    }
    fail(fmt::format("not a {} file (its magic is not \"{}\"{})", kind_, magic, known));
  }
  const std::uint32_t version = load_u32(header.data() + 4);
  if (version == 0 || version > max_version) {
    fail(fmt::format("version {} of the {} format is not supported (snarkjs reads versions 1 to {})", version, kind_,
                     max_version));
  }
  return version;
}

void BinFile::parse(std::string_view magic, std::uint32_t max_version) {
  const std::size_t size = bytes_.size();
  version_ = check_header(bytes_.first(std::min<std::size_t>(size, 12)), magic, max_version);
  const std::uint32_t count = load_u32(bytes_.data() + 8);
  std::size_t offset = 12;
  for (std::uint32_t index = 0; index < count; ++index) {
    if (size - offset < 12) {
      fail(fmt::format("truncated: the header of section {} of {} runs past the end of the file ({} bytes)", index + 1,
                       count, size));
    }
    const std::uint32_t id = load_u32(bytes_.data() + offset);
    const std::uint64_t length = load_u64(bytes_.data() + offset + 4);
    offset += 12;
    if (length > size - offset) {
      fail(fmt::format("truncated: section {} declares {} bytes but only {} remain in the file", id, length,
                       size - offset));
    }
    sections_.emplace(id, std::span<const std::uint8_t>(bytes_.data() + offset, static_cast<std::size_t>(length)));
    offset += static_cast<std::size_t>(length);
  }
  if (offset != size) {
    fail(fmt::format(
        "{} bytes follow the last of the {} sections (the file is {} bytes): a damaged or concatenated file",
        size - offset, count, size));
  }
}

std::span<const std::uint8_t> BinFile::find_section(std::uint32_t id, std::string_view name) const {
  const auto count = sections_.count(id);
  if (count == 0) fail(id, name, "missing (the file is truncated or not of this kind)");
  if (count > 1) fail(id, name, "appears more than once");
  return sections_.find(id)->second;
}

std::span<const std::uint8_t> BinFile::section(std::uint32_t id, std::string_view name) const {
  if (read_later_.count(id) != 0)
    throw std::logic_error(fmt::format("BinFile::section: section {} ({}) is read with read_section", id, name));
  return find_section(id, name);
}

std::size_t BinFile::section_size(std::uint32_t id, std::string_view name) const {
  return find_section(id, name).size();
}

void BinFile::read_section(std::uint32_t id, std::string_view name, std::span<std::uint8_t> out) const {
  const auto bytes = find_section(id, name);
  if (out.size() != bytes.size()) {
    throw std::logic_error(
        fmt::format("BinFile::read_section: section {} ({}) is {} bytes, not {}", id, name, bytes.size(), out.size()));
  }
  if (read_later_.count(id) != 0 && file_bytes_) {
    const auto offset = static_cast<std::size_t>(bytes.data() - bytes_.data());
    const auto outcome = read_ranges(descriptor_.get(), {{offset, offset + bytes.size()}}, out.data(), offset);
    if (outcome.error != 0) fail(id, name, fmt::format("cannot read the file: {}", std::strerror(outcome.error)));
    check_unchanged(outcome.ended_early);
    return;
  }
  math::detail::run_ranges(bytes.size(), 0, std::size_t{1} << 24, [&](std::size_t begin, std::size_t end) {
    std::memcpy(out.data() + begin, bytes.data() + begin, end - begin);
  });
}

void BinFile::fail(std::uint32_t id, std::string_view name, const std::string& what) const {
  throw InputError(fmt::format("{}: section {} ({}): {}", path_.string(), id, name, what));
}

void BinFile::fail(const std::string& what) const { throw InputError(fmt::format("{}: {}", path_.string(), what)); }

std::uint32_t SectionReader::u32() { return load_u32(take(4).data()); }
std::uint64_t SectionReader::u64() { return load_u64(take(8).data()); }

std::span<const std::uint8_t> SectionReader::take(std::size_t count) {
  if (count > remaining()) {
    fail(fmt::format("too short: {} bytes, reading {} bytes at offset {}", bytes_.size(), count, offset_));
  }
  auto result = bytes_.subspan(offset_, count);
  offset_ += count;
  return result;
}

void SectionReader::expect_end() const {
  if (remaining() != 0) fail(fmt::format("{} bytes, {} more than expected", bytes_.size(), remaining()));
}

namespace {
// A file's writer hands the file its bytes in pieces of this size (and larger ones straight).
constexpr std::size_t kFlushBytes = std::size_t{8} << 20;
}  // namespace

BinFileWriter::BinFileWriter(std::string_view magic, std::uint32_t version) {
  for (std::size_t i = 0; i < 4; ++i) buffer_.push_back(static_cast<std::uint8_t>(magic[i]));
  u32(version);
  u32(0);  // section count, patched at the end
}

BinFileWriter::BinFileWriter(const std::filesystem::path& path, std::string_view magic, std::uint32_t version)
    : BinFileWriter(magic, version) {
  path_ = path;
  partial_path_ = path;
  partial_path_ += fmt::format(".partial-{}", ::getpid());
  descriptor_ = ::open(partial_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (descriptor_ < 0)
    throw std::runtime_error(fmt::format("{}: cannot create the file: {}", path.string(), std::strerror(errno)));
}

BinFileWriter::~BinFileWriter() {
  if (descriptor_ >= 0) discard();
}

void BinFileWriter::discard() {
  if (descriptor_ >= 0) ::close(descriptor_);
  descriptor_ = -1;
  std::error_code ignored;
  std::filesystem::remove(partial_path_, ignored);
}

void BinFileWriter::fail_writing(const std::string& what) {
  discard();
  throw std::runtime_error(fmt::format("{}: cannot write the file: {}", path_.string(), what));
}

void BinFileWriter::write_out(std::span<const std::uint8_t> data) {
  while (!data.empty()) {
    const ssize_t put = ::write(descriptor_, data.data(), data.size());
    if (put < 0) {
      if (errno == EINTR) continue;
      fail_writing(std::strerror(errno));
    }
    data = data.subspan(static_cast<std::size_t>(put));
    written_ += static_cast<std::uint64_t>(put);
  }
}

void BinFileWriter::flush(bool all) {
  if (descriptor_ < 0 || (!all && buffer_.size() < kFlushBytes)) return;
  write_out(buffer_);
  buffer_.clear();
}

void BinFileWriter::patch_u64(std::uint64_t at, std::uint64_t value, int width) {
  std::uint8_t bytes[8];
  for (int i = 0; i < width; ++i) bytes[i] = static_cast<std::uint8_t>(value >> (8 * i));
  if (at >= written_) {
    std::memcpy(buffer_.data() + (at - written_), bytes, static_cast<std::size_t>(width));
    return;
  }
  // Written already: its bytes lie within one flushed piece or straddle into the buffer.
  const auto in_file =
      static_cast<std::size_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(width), written_ - at));
  for (std::size_t done = 0; done < in_file;) {
    const ssize_t put = ::pwrite(descriptor_, bytes + done, in_file - done, static_cast<off_t>(at + done));
    if (put < 0) {
      if (errno == EINTR) continue;
      fail_writing(std::strerror(errno));
    }
    done += static_cast<std::size_t>(put);
  }
  if (in_file < static_cast<std::size_t>(width))
    std::memcpy(buffer_.data(), bytes + in_file, static_cast<std::size_t>(width) - in_file);
}

void BinFileWriter::begin_section(std::uint32_t id) {
  u32(id);
  section_size_offset_ = offset();
  u64(0);
  in_section_ = true;
  ++section_count_;
}

void BinFileWriter::end_section() {
  patch_u64(section_size_offset_, offset() - section_size_offset_ - 8, 8);
  in_section_ = false;
}

void BinFileWriter::u32(std::uint32_t value) {
  for (int i = 0; i < 4; ++i) buffer_.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  flush();
}
void BinFileWriter::u64(std::uint64_t value) {
  for (int i = 0; i < 8; ++i) buffer_.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  flush();
}
void BinFileWriter::bytes(std::span<const std::uint8_t> data) {
  if (descriptor_ >= 0 && data.size() >= kFlushBytes) {  // a point set: straight to the file
    flush(true);
    write_out(data);
    return;
  }
  buffer_.insert(buffer_.end(), data.begin(), data.end());
  flush();
}

std::vector<std::uint8_t> BinFileWriter::take_bytes() {
  if (descriptor_ >= 0) throw std::logic_error("BinFileWriter::take_bytes: the writer writes a file");
  patch_u64(8, section_count_, 4);
  return std::move(buffer_);
}

void BinFileWriter::finish() {
  if (descriptor_ < 0) throw std::logic_error("BinFileWriter::finish: the writer has no file, or finished");
  patch_u64(8, section_count_, 4);
  flush(true);
  const int closed = ::close(std::exchange(descriptor_, -1));
  if (closed != 0) fail_writing(std::strerror(errno));
  std::error_code error;
  std::filesystem::rename(partial_path_, path_, error);
  if (error) fail_writing(error.message());
}

}  // namespace stagehand::groth16
