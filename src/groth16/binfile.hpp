#pragma once
// The container shared by snarkjs's .zkey, .wtns and .r1cs files (@iden3/binfileutils): a
// 4-byte magic, u32 version, u32 section count, then sections of u32 id, u64 size and the bytes.
// All little-endian. Sections are found by id, not by position.

#include "groth16/errors.hpp"
#include "util/input_file.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace stagehand::groth16 {

// Where a section of `actual` bytes is not `count` records of `record_bytes` (`what`: "G1
// points"), what to say of it ("N bytes, expected M (count what of record_bytes bytes)..."); else
// nothing.
std::optional<std::string> wrong_record_count(std::uint64_t actual, std::uint64_t count, std::uint64_t record_bytes,
                                              std::string_view what);

// The container's integers: little-endian at `data`.
std::uint32_t load_u32(const std::uint8_t* data);
std::uint64_t load_u64(const std::uint8_t* data);

// What reading a range of a file found: its end before the range's (the file shrank), or an errno.
struct FileReadOutcome {
  bool ended_early = false;
  int error = 0;
};
// Reads out.size() bytes of the open regular file at `offset` into `out` with pread, in chunks on
// several threads where the range is large (as BinFile reads); errors are returned, not thrown,
// so that the caller's message can say what the file became.
FileReadOutcome read_file_range(int descriptor, std::uint64_t offset, std::span<std::uint8_t> out);

// A file opened for a reader, and the name every message gives it: by open_input, or by a caller
// that checks more first (the service's key directories).
struct InputFile {
  FileDescriptor descriptor;
  std::filesystem::path name;
};
// Opens `path` without blocking (open_for_reading); InputError naming it and `kind` (e.g.
// "snarkjs proving key (.zkey)") where it cannot.
InputFile open_input(const std::filesystem::path& path, std::string_view kind);

class BinFile {
 public:
  // Reads the file whole into memory of its own; InputError when it cannot be read, is not a
  // regular file or a pipe (a directory, a device such as /dev/zero, a file of /proc or /sys),
  // changes while it is read (another process truncating or writing it), the magic differs, the
  // version is not in [1, max_version] (what snarkjs's readers accept), the section table runs
  // past the end of the file, or bytes follow the last section. The header is checked before
  // the rest is read. A regular file is read at its size on several threads; a FIFO or pipe
  // section by section as its header declares, growing by what arrives, and within the waits of
  // PipeReader (a FIFO that no process writes to is an error, not a wait).
  // `read_later`: sections the caller copies into memory of its own with read_section, which a
  // regular file's read leaves out of the BinFile's buffer (a .zkey's point sets, most of its
  // bytes: read into the buffer and then copied into the sets, they were held twice, 36 GiB more
  // at 2^26, and moved twice).
  BinFile(const std::filesystem::path& path, std::string_view magic, std::string_view kind, std::uint32_t max_version,
          std::set<std::uint32_t> read_later = {});
  // The same over a file already open (its descriptor is the BinFile's from now on).
  BinFile(InputFile file, std::string_view magic, std::string_view kind, std::uint32_t max_version,
          std::set<std::uint32_t> read_later = {});
  // The same checks on bytes already in memory, viewed, not copied: the caller keeps them alive
  // while the BinFile and its sections are used (a 32 MiB witness copied here was a visible part of
  // a proof's host step on the H200 machine, once at the service's check and once at the parse;
  // bench/journal/2026-12-02.md).
  // `name` stands for the file in every message (e.g. "the request body").
  BinFile(std::span<const std::uint8_t> bytes, const std::string& name, std::string_view magic, std::string_view kind,
          std::uint32_t max_version);
  // The sections are views of the bytes: not copied.
  BinFile(const BinFile&) = delete;
  BinFile& operator=(const BinFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::uint32_t version() const { return version_; }
  bool has_section(std::uint32_t id) const { return sections_.count(id) != 0; }
  // The bytes of section `id`; InputError when it is missing or appears twice; std::logic_error
  // for a section to be read later (read_section).
  std::span<const std::uint8_t> section(std::uint32_t id, std::string_view name) const;
  // Section `id`'s size in bytes, every section's, with section's InputErrors.
  std::size_t section_size(std::uint32_t id, std::string_view name) const;
  // Copies section `id` into `out`, which must be its size (std::logic_error otherwise): from the
  // file, on several threads where it is large, for a section read later; else from the bytes.
  // InputError as section, and as the constructor's read where the file changed since it was
  // opened or cannot be read.
  void read_section(std::uint32_t id, std::string_view name, std::span<std::uint8_t> out) const;

  // "<file>: section <id> (<name>): <what>"
  [[noreturn]] void fail(std::uint32_t id, std::string_view name, const std::string& what) const;
  [[noreturn]] void fail(const std::string& what) const;

 private:
  // The container's checks over bytes_: header, section table, nothing after the last section.
  void parse(std::string_view magic, std::uint32_t max_version);
  // The checks of the first 12 bytes (`header`, fewer where the file is shorter): the magic and
  // the version, which it returns.
  std::uint32_t check_header(std::span<const std::uint8_t> header, std::string_view magic,
                             std::uint32_t max_version) const;

  std::filesystem::path path_;
  std::string kind_;
  void read_regular_file(std::string_view magic, std::uint32_t max_version);
  void read_stream(std::string_view magic, std::uint32_t max_version);
  // The section's bytes within bytes_ (unread there for a section read later).
  std::span<const std::uint8_t> find_section(std::uint32_t id, std::string_view name) const;
  // Fails where the regular file is no longer what it was when opened (its size and modification
  // time), or `ended_early` (a read found its end before the size it had).
  void check_unchanged(bool ended_early) const;
  std::set<std::uint32_t> read_later_;
  // The file's descriptor, and what a regular file was when opened, kept for the sections read
  // later.
  FileDescriptor descriptor_;
  std::size_t opened_size_ = 0;
  std::timespec opened_modified_{};
  // A regular file's bytes, not zero-filled first (the read writes every byte). Not mapped: a
  // mapped file that another process truncates raises SIGBUS at the first page past its new end.
  std::unique_ptr<std::uint8_t[]> file_bytes_;
  std::vector<std::uint8_t> stream_bytes_;  // a pipe's bytes, to its end
  std::span<const std::uint8_t> bytes_;     // the file's bytes, in one or the other, or the caller's
  std::uint32_t version_ = 0;
  std::multimap<std::uint32_t, std::span<const std::uint8_t>> sections_;
};

namespace detail {
// A test seam: when set, called with the path after a regular file's size was taken and before
// its bytes are read, so that a test can change the file in between. Not for other uses.
using BinFileReadHook = void (*)(const std::filesystem::path&);
void set_binfile_read_hook(BinFileReadHook hook);
}  // namespace detail

// A bounds-checked little-endian cursor over one section.
class SectionReader {
 public:
  SectionReader(const BinFile& file, std::uint32_t id, std::string_view name)
      : file_(file), id_(id), name_(name), bytes_(file.section(id, name)) {}
  // Over a section the caller copied with read_section (one read later): `bytes`, which it keeps
  // alive while the reader is used; messages name the file and section as above.
  SectionReader(const BinFile& file, std::uint32_t id, std::string_view name, std::span<const std::uint8_t> bytes)
      : file_(file), id_(id), name_(name), bytes_(bytes) {}

  std::uint32_t u32();
  std::uint64_t u64();
  std::span<const std::uint8_t> take(std::size_t count);
  std::size_t remaining() const { return bytes_.size() - offset_; }
  std::size_t size() const { return bytes_.size(); }
  // Fails unless the section was read to its exact end.
  void expect_end() const;
  [[noreturn]] void fail(const std::string& what) const { file_.fail(id_, name_, what); }

 private:
  const BinFile& file_;
  std::uint32_t id_;
  std::string name_;
  std::span<const std::uint8_t> bytes_;
  std::size_t offset_ = 0;
};

// Writes the same container (for `stagehand setup`). In memory, for take_bytes(); or, constructed
// with a path, straight to the file as it goes (a 2^26 key's .zkey is 42 GiB: held in memory
// beside the key it would not fit a 126 GiB host): into a temporary file beside `path`, renamed
// over it by finish(), and removed where the writer is destroyed unfinished, so that a failed
// write leaves `path` as it was.
class BinFileWriter {
 public:
  BinFileWriter(std::string_view magic, std::uint32_t version);
  BinFileWriter(const std::filesystem::path& path, std::string_view magic, std::uint32_t version);
  ~BinFileWriter();
  BinFileWriter(const BinFileWriter&) = delete;
  BinFileWriter& operator=(const BinFileWriter&) = delete;

  void begin_section(std::uint32_t id);
  void end_section();
  void u32(std::uint32_t value);
  void u64(std::uint64_t value);
  void bytes(std::span<const std::uint8_t> data);
  // The file's bytes, for a caller that keeps them in memory (the writer is spent after).
  std::vector<std::uint8_t> take_bytes();
  // To a file: the rest written and the file in place; std::runtime_error naming the file when
  // it cannot be written (disk full, ...), the temporary file then removed.
  void finish();

 private:
  // Bytes the file has been given so far, and the next one's offset.
  std::uint64_t offset() const { return written_ + buffer_.size(); }
  // Writes `value` over the bytes at `at` (in the buffer, or in the file where they were written).
  void patch_u64(std::uint64_t at, std::uint64_t value, int width);
  // To a file: the buffer written once it holds kFlushBytes (or always, with `all`).
  void flush(bool all = false);
  void write_out(std::span<const std::uint8_t> data);
  // The temporary file closed (where still open) and removed.
  void discard();
  // discard(), then std::runtime_error naming the file and `what` went wrong.
  [[noreturn]] void fail_writing(const std::string& what);

  std::vector<std::uint8_t> buffer_;
  std::uint32_t section_count_ = 0;
  std::uint64_t section_size_offset_ = 0;
  bool in_section_ = false;
  // A file's writer: the path it ends at, the temporary file written and its descriptor.
  std::filesystem::path path_;
  std::filesystem::path partial_path_;
  int descriptor_ = -1;
  std::uint64_t written_ = 0;  // bytes already in the file (the buffer's first byte's offset)
};

}  // namespace stagehand::groth16
