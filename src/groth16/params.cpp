#include "groth16/params.hpp"

#include "groth16/binfile.hpp"
#include "groth16/encoding.hpp"
#include "groth16/zkey.hpp"
#include "math/parallel.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace stagehand::groth16 {
namespace {

constexpr std::string_view kKind = "Filecoin parameters (.params)";
constexpr std::uint8_t kCompressedFlag = 0x80;
constexpr std::uint8_t kInfinityFlag = 0x40;
constexpr std::uint8_t kSignFlag = 0x20;
constexpr std::uint8_t kFlagBits = kCompressedFlag | kInfinityFlag | kSignFlag;
constexpr std::size_t kFqBytes = 48;
constexpr std::size_t kVkFixedBytes = 3 * kZcashG1Bytes + 3 * kZcashG2Bytes;
// The writer converts points in ranges of at least this many, each range on a thread of its own.
constexpr std::size_t kPointsPerRange = 1 << 14;
// The writer encodes and writes this many points at a time.
constexpr std::size_t kPointsPerPiece = 1 << 16;

static_assert(kZcashG1Bytes == kG1Bytes && kZcashG2Bytes == kG2Bytes,
              "a set is converted in place: both encodings must be of one size");

// 48 big-endian canonical bytes (the flag bits masked off where `flagged`) as Fq; nothing where
// the value is not below p.
std::optional<math::Fq> fq_from_zcash(const std::uint8_t* bytes, bool flagged) {
  std::array<std::uint8_t, kFqBytes> little{};
  for (std::size_t i = 0; i < kFqBytes; ++i) little[i] = bytes[kFqBytes - 1 - i];
  if (flagged) little[kFqBytes - 1] &= static_cast<std::uint8_t>(~kFlagBits);
  return math::Fq::from_canonical_bytes(little);
}

void fq_to_zcash(const math::Fq& value, std::uint8_t* out) {
  const auto little = value.to_canonical_bytes();
  for (std::size_t i = 0; i < kFqBytes; ++i) out[i] = little[kFqBytes - 1 - i];
}

// A point decoded from its zcash bytes, or why the bytes are not a point of a key. The reasons are
// static texts: points are decoded on many threads, and only the first bad one is reported.
template <class Affine>
struct Decoded {
  Affine point;
  const char* problem = nullptr;
};

// The flags of a point's first byte: nothing where they are clear, as in every point of a key.
const char* flag_problem(std::span<const std::uint8_t> bytes) {
  const std::uint8_t flags = bytes[0] & kFlagBits;
  if ((flags & kCompressedFlag) != 0) return "has the compression flag set (a .params file's points are uncompressed)";
  if ((flags & kInfinityFlag) != 0) {
    const bool rest_zero = (bytes[0] & ~kInfinityFlag) == 0 &&
                           std::all_of(bytes.begin() + 1, bytes.end(), [](std::uint8_t b) { return b == 0; });
    if (!rest_zero) return "has the infinity flag set with other bits non-zero (not an encoding of any point)";
    return "is the point at infinity, which no point of a key is";
  }
  if ((flags & kSignFlag) != 0) return "has the sign flag set (an uncompressed point carries none)";
  return nullptr;
}

Decoded<math::G1Affine> decode_zcash_g1(std::span<const std::uint8_t> bytes) {
  if (const char* problem = flag_problem(bytes)) return {{}, problem};
  const auto x = fq_from_zcash(bytes.data(), true);
  const auto y = fq_from_zcash(bytes.data() + kFqBytes, false);
  if (!x || !y) return {{}, "has a coordinate not below p"};
  const auto point = math::G1Affine::from_coordinates(*x, *y);
  if (!point.is_on_curve()) return {{}, "is not on the curve"};
  return {point, nullptr};
}

Decoded<math::G2Affine> decode_zcash_g2(std::span<const std::uint8_t> bytes) {
  if (const char* problem = flag_problem(bytes)) return {{}, problem};
  // x.c1 first: the imaginary parts lead.
  const auto x1 = fq_from_zcash(bytes.data(), true);
  const auto x0 = fq_from_zcash(bytes.data() + kFqBytes, false);
  const auto y1 = fq_from_zcash(bytes.data() + 2 * kFqBytes, false);
  const auto y0 = fq_from_zcash(bytes.data() + 3 * kFqBytes, false);
  if (!x0 || !x1 || !y0 || !y1) return {{}, "has a coordinate not below p"};
  const auto point = math::G2Affine::from_coordinates(math::Fq2{*x0, *x1}, math::Fq2{*y0, *y1});
  if (!point.is_on_curve()) return {{}, "is not on the curve"};
  return {point, nullptr};
}

template <class Affine>
Decoded<Affine> decode_zcash(std::span<const std::uint8_t> bytes) {
  if constexpr (std::is_same_v<Affine, math::G1Affine>) {
    return decode_zcash_g1(bytes);
  } else {
    return decode_zcash_g2(bytes);
  }
}

// The verifying key's points must lie in their subgroups too: a point of the curve outside it
// would let a forged proof through the pairing check. The query sets are checked on the curve only,
// as bellperson's prover reads them (a subgroup check is a scalar multiplication a point).
template <class Affine>
Decoded<Affine> decode_zcash_in_subgroup(std::span<const std::uint8_t> bytes) {
  auto decoded = decode_zcash<Affine>(bytes);
  if (decoded.problem == nullptr && !decoded.point.is_in_subgroup())
    decoded.problem = "is not in the subgroup of order r";
  return decoded;
}

// The lowest index in [0, count) at which `bad(index)` holds, or count. The indices go in chunks of `per_chunk`,
// handed out in order to up to `threads` threads (0 = all), each chunk given first to `load(begin, end)`, which
// reads it (false: it could not, and its indices are left unchecked). A chunk is loaded and checked only while no
// bad index below its first is known: whichever thread is where, the lowest is found, and little work follows it.
template <class Load, class Bad>
std::size_t first_bad_index(std::size_t count, std::size_t per_chunk, unsigned threads, Load&& load, Bad&& bad) {
  STAGEHAND_ASSERT(per_chunk > 0, "first_bad_index: chunks of no index");
  std::atomic<std::size_t> first{count};
  const std::size_t chunks = (count + per_chunk - 1) / per_chunk;
  math::detail::run_tasks(chunks, threads, [&](std::size_t chunk) {
    const std::size_t begin = chunk * per_chunk, end = std::min(count, begin + per_chunk);
    if (begin >= first.load(std::memory_order_relaxed) || !load(begin, end)) return;
    for (std::size_t i = begin; i < end && i < first.load(std::memory_order_relaxed); ++i) {
      if (!bad(i)) continue;
      std::size_t seen = first.load();
      while (i < seen && !first.compare_exchange_weak(seen, i)) {
      }
      return;
    }
  });
  const std::size_t found = first.load();
  STAGEHAND_ASSERT(found <= count, "first_bad_index: index {} of {}", found, count);
  return found;
}

// A .params file open for reading, read front to back in pieces with pread.
class ParamsFile {
 public:
  explicit ParamsFile(InputFile input);

  std::uint64_t remaining() const { return size_ - offset_; }
  // The section's big-endian u32 count.
  std::uint32_t count(std::string_view section);
  // The next out.size() bytes of the file; the caller has checked that they are there.
  void read(std::string_view section, std::span<std::uint8_t> out);
  // The next bytes read in pieces, from any number of threads at once: `out` from `at` bytes past the offset,
  // which stays where it is until pieces_read(). False where this read or an earlier one failed (the pieces
  // after a failure are not read: the whole read is an error).
  bool read_piece(std::uint64_t at, std::span<std::uint8_t> out);
  // Past the next `bytes` bytes, once every piece of them is read: fails where a read did or the file changed.
  void pieces_read(std::string_view section, std::uint64_t bytes);
  void expect_end() const;
  [[noreturn]] void fail(std::string_view section, const std::string& what) const {
    throw InputError(fmt::format("{}: section {}: {}", name_.string(), section, what));
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(fmt::format("{}: {}", name_.string(), what));
  }

 private:
  // Fails where the file is no longer what it was when opened, or `ended_early`.
  void check_unchanged(bool ended_early) const;

  std::filesystem::path name_;
  FileDescriptor descriptor_;
  std::uint64_t size_ = 0;
  std::uint64_t offset_ = 0;
  std::timespec modified_{};
  // What the pieces' reads found since the last pieces_read(): the file's end, the first errno.
  std::atomic<bool> piece_ended_early_{false};
  std::atomic<int> piece_error_{0};
};

ParamsFile::ParamsFile(InputFile input) {
  name_ = std::move(input.name);
  descriptor_ = std::move(input.descriptor);
  // Regular files only: a .params file is tens of gigabytes on a disk, and its size bounds each
  // count before anything is allocated for it.
  switch (const auto what = input_kind(descriptor_.get())) {
    case InputKind::regular: break;
    case InputKind::directory: fail(fmt::format("is a directory, not a {} file", kKind));
    default: fail(fmt::format("is {}, not a {} file (those are read from regular files only)", describe(what), kKind));
  }
  struct stat status {};
  if (::fstat(descriptor_.get(), &status) != 0) fail(fmt::format("cannot read the file: {}", std::strerror(errno)));
  size_ = static_cast<std::uint64_t>(status.st_size);
  modified_ = status.st_mtim;
  if (size_ > physical_memory_bytes()) {
    fail(fmt::format("{} bytes, more than this machine's {} bytes of memory, which a {} file is read into", size_,
                     physical_memory_bytes(), kKind));
  }
}

std::uint32_t ParamsFile::count(std::string_view section) {
  if (remaining() < 4)
    fail(section, fmt::format("truncated: the file ends before the section's count ({} bytes left)", remaining()));
  std::array<std::uint8_t, 4> bytes{};
  read(section, bytes);
  return static_cast<std::uint32_t>(bytes[0]) << 24 | static_cast<std::uint32_t>(bytes[1]) << 16 |
         static_cast<std::uint32_t>(bytes[2]) << 8 | bytes[3];
}

void ParamsFile::read(std::string_view section, std::span<std::uint8_t> out) {
  read_piece(0, out);
  pieces_read(section, out.size());
}

bool ParamsFile::read_piece(std::uint64_t at, std::span<std::uint8_t> out) {
  STAGEHAND_ASSERT(at <= remaining() && out.size() <= remaining() - at,
                   "ParamsFile::read_piece past the end: {} bytes at {} past {} of {}", out.size(), at, offset_, size_);
  if (piece_ended_early_.load(std::memory_order_relaxed) || piece_error_.load(std::memory_order_relaxed) != 0)
    return false;
  const auto outcome = read_file_range(descriptor_.get(), offset_ + at, out);
  if (outcome.error != 0) {
    int none = 0;
    piece_error_.compare_exchange_strong(none, outcome.error);
  }
  if (outcome.ended_early) piece_ended_early_.store(true);
  return outcome.error == 0 && !outcome.ended_early;
}

void ParamsFile::pieces_read(std::string_view section, std::uint64_t bytes) {
  STAGEHAND_ASSERT(bytes <= remaining(), "ParamsFile::pieces_read past the end: {} bytes at {} of {}", bytes, offset_,
                   size_);
  if (const int error = piece_error_.load(); error != 0)
    fail(section, fmt::format("cannot read the file: {}", std::strerror(error)));
  check_unchanged(piece_ended_early_.load());
  offset_ += bytes;
}

void ParamsFile::check_unchanged(bool ended_early) const {
  struct stat after {};
  const bool seen = ::fstat(descriptor_.get(), &after) == 0;
  const bool same = seen && static_cast<std::uint64_t>(after.st_size) == size_ &&
                    after.st_mtim.tv_sec == modified_.tv_sec && after.st_mtim.tv_nsec == modified_.tv_nsec;
  if (ended_early || !same) {
    fail(
        fmt::format("the file changed while it was read ({} bytes when opened, {} now): is another process writing or "
                    "truncating it?",
                    size_, seen ? fmt::format("{} bytes", after.st_size) : std::string("of unknown size")));
  }
}

void ParamsFile::expect_end() const {
  if (remaining() != 0) {
    fail(fmt::format("{} bytes follow the b_g2 section (the file is {} bytes): a damaged or concatenated file",
                     remaining(), size_));
  }
}

// Fails before anything is allocated where `count` points of `point_bytes` are more than the file
// has left: a hostile count cannot reserve gigabytes.
void expect_points(const ParamsFile& file, std::string_view section, std::uint64_t count, std::size_t point_bytes) {
  if (count * point_bytes > file.remaining()) {
    file.fail(section,
              fmt::format("truncated: {} points of {} bytes declared ({} bytes), but only {} bytes remain (the file "
                          "ends in point {})",
                          count, point_bytes, count * point_bytes, file.remaining(), file.remaining() / point_bytes));
  }
}

// `count` points of the section read into a set and converted there, in place, from zcash's encoding to the
// sets' (each point's bytes are written only once it decoded). In chunks handed out in file order to `threads`
// threads (0 = all): each thread copies its chunk out of the page cache into the set, touching those pages
// first, and converts it while its bytes are fresh in the cache, so that the copy runs on every core and
// overlaps the conversion. A chunk is a few MiB: enough of them for a set to share out evenly, each large
// enough that a read's cost is in its bytes, not in the call.
template <class Affine>
PointSet<Affine> read_point_set(ParamsFile& file, std::string_view section, std::uint32_t count, bool in_subgroup,
                                unsigned threads) {
  constexpr std::size_t kBytes = PointSet<Affine>::kPointBytes;
  constexpr std::size_t kChunkPoints = detail::kParamsReadChunkBytes / kBytes;
  static_assert(kChunkPoints * kBytes == detail::kParamsReadChunkBytes, "a chunk holds whole points");
  expect_points(file, section, count, kBytes);
  PointSet<Affine> set(count);
  const auto bytes = set.mutable_bytes();
  STAGEHAND_ASSERT(bytes.size() == std::size_t{count} * kBytes, "section {}: a set of {} bytes for {} points", section,
                   bytes.size(), count);
  auto decode = [&](std::span<const std::uint8_t> point) {
    return in_subgroup ? decode_zcash_in_subgroup<Affine>(point) : decode_zcash<Affine>(point);
  };
  auto load = [&](std::size_t begin, std::size_t end) {
    return file.read_piece(begin * kBytes, bytes.subspan(begin * kBytes, (end - begin) * kBytes));
  };
  const auto bad = first_bad_index(count, kChunkPoints, threads, load, [&](std::size_t i) {
    const auto point = bytes.subspan(i * kBytes, kBytes);
    const auto decoded = decode(point);
    if (decoded.problem != nullptr) return true;
    if constexpr (std::is_same_v<Affine, math::G1Affine>) {
      encode_g1(decoded.point, std::span<std::uint8_t, kBytes>(point.data(), kBytes));
    } else {
      encode_g2(decoded.point, std::span<std::uint8_t, kBytes>(point.data(), kBytes));
    }
    return false;
  });
  // A read that failed, or a file that changed, explains any bad point: its error comes first.
  file.pieces_read(section, bytes.size());
  if (bad < count) {
    const auto decoded = decode(bytes.subspan(bad * kBytes, kBytes));
    STAGEHAND_ASSERT(decoded.problem != nullptr, "section {}: point {} failed its check once and passed it again",
                     section, bad);
    file.fail(section, fmt::format("point {} of {} {}", bad, count, decoded.problem));
  }
  return set;
}

// The verifying key's six fixed points, each in its subgroup.
void read_vk_points(ParamsFile& file, VerifyingKey& vk) {
  constexpr std::string_view kSection = "vk";
  if (file.remaining() < kVkFixedBytes) {
    file.fail(kSection, fmt::format("truncated: its six points are {} bytes, but the file has {}", kVkFixedBytes,
                                    file.remaining()));
  }
  std::array<std::uint8_t, kVkFixedBytes> bytes{};
  file.read(kSection, bytes);
  std::size_t offset = 0;
  std::size_t index = 0;
  auto next = [&]<class Affine>(Affine& out, const char* name) {
    constexpr std::size_t size = std::is_same_v<Affine, math::G1Affine> ? kZcashG1Bytes : kZcashG2Bytes;
    const auto decoded = decode_zcash_in_subgroup<Affine>(std::span<const std::uint8_t>(bytes).subspan(offset, size));
    if (decoded.problem != nullptr) file.fail(kSection, fmt::format("point {} ({}) {}", index, name, decoded.problem));
    out = decoded.point;
    offset += size;
    ++index;
  };
  next(vk.alpha1, "alpha_g1");
  next(vk.beta1, "beta_g1");
  next(vk.beta2, "beta_g2");
  next(vk.gamma2, "gamma_g2");
  next(vk.delta1, "delta_g1");
  next(vk.delta2, "delta_g2");
}

// h's count: the domain's size less one, a power of two up to kMaxDomainLog2.
std::uint32_t read_h_count(ParamsFile& file) {
  const std::uint32_t count = file.count("h");
  const std::uint64_t domain = std::uint64_t{count} + 1;
  if (!std::has_single_bit(domain) || domain > (std::uint64_t{1} << kMaxDomainLog2)) {
    file.fail(
        "h", fmt::format("{} points, so a domain of {}: not a power of two up to 2^{}", count, domain, kMaxDomainLog2));
  }
  return count;
}

// A query's count, at most one point a variable.
std::uint32_t read_query_count(ParamsFile& file, std::string_view section, std::uint64_t variables) {
  const std::uint32_t count = file.count(section);
  if (count > variables) {
    file.fail(section, fmt::format("{} points, more than the key's {} variables (ic + l)", count, variables));
  }
  return count;
}

// The sets' zcash bytes, piece by piece in parallel, to the writer.
template <class Affine, class Write>
void write_zcash_set(const PointSet<Affine>& set, Write&& write) {
  constexpr std::size_t kBytes = PointSet<Affine>::kPointBytes;
  const std::uint32_t count = static_cast<std::uint32_t>(set.size());
  const std::array<std::uint8_t, 4> count_bytes{
      static_cast<std::uint8_t>(count >> 24), static_cast<std::uint8_t>(count >> 16),
      static_cast<std::uint8_t>(count >> 8), static_cast<std::uint8_t>(count)};
  write(std::span<const std::uint8_t>(count_bytes));
  std::vector<std::uint8_t> piece;
  for (std::size_t first = 0; first < set.size(); first += kPointsPerPiece) {
    const std::size_t points = std::min(kPointsPerPiece, set.size() - first);
    piece.resize(points * kBytes);
    math::detail::run_ranges(points, 0, kPointsPerRange, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        const std::span<std::uint8_t, kBytes> out(piece.data() + i * kBytes, kBytes);
        if constexpr (std::is_same_v<Affine, math::G1Affine>) {
          detail::encode_zcash_g1(set.at(first + i), out);
        } else {
          detail::encode_zcash_g2(set.at(first + i), out);
        }
      }
    });
    write(std::span<const std::uint8_t>(piece));
  }
}

// A file written under a temporary name and renamed over its own at finish(); removed where the
// writer is destroyed unfinished.
class FileWriter {
 public:
  explicit FileWriter(const std::filesystem::path& path) : path_(path), partial_(path) {
    partial_ += fmt::format(".partial-{}", ::getpid());
    descriptor_ = ::open(partial_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (descriptor_ < 0)
      throw std::runtime_error(fmt::format("{}: cannot create the file: {}", path_.string(), std::strerror(errno)));
  }
  ~FileWriter() { discard(); }
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  void write(std::span<const std::uint8_t> data) {
    while (!data.empty()) {
      const ssize_t put = ::write(descriptor_, data.data(), data.size());
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) fail(std::strerror(errno));
      data = data.subspan(static_cast<std::size_t>(put));
    }
  }
  void finish() {
    if (::close(std::exchange(descriptor_, -1)) != 0) fail(std::strerror(errno));
    std::error_code error;
    std::filesystem::rename(partial_, path_, error);
    if (error) fail(error.message());
    partial_.clear();
  }

 private:
  void discard() {
    if (descriptor_ >= 0) ::close(std::exchange(descriptor_, -1));
    std::error_code ignored;
    if (!partial_.empty()) std::filesystem::remove(partial_, ignored);
  }
  [[noreturn]] void fail(const std::string& what) {
    discard();
    throw std::runtime_error(fmt::format("{}: cannot write the file: {}", path_.string(), what));
  }

  std::filesystem::path path_;
  std::filesystem::path partial_;
  int descriptor_ = -1;
};

}  // namespace

namespace {

// y is the larger of y and −y as integers below p: zcash's sign flag.
bool lexicographically_largest(const math::Fq& y) {
  const auto value = y.to_canonical_bytes(), negated = (-y).to_canonical_bytes();
  return std::lexicographical_compare(negated.rbegin(), negated.rend(), value.rbegin(), value.rend());
}
bool lexicographically_largest(const math::Fq2& y) {
  return lexicographically_largest(y.c1) || (y.c1.is_zero() && lexicographically_largest(y.c0));
}

// The flags of a compressed encoding's first byte; the x bytes are read after they are masked off.
// Returns the infinity flag: the caller's point is the identity, every other bit checked zero.
bool compressed_flags(std::span<const std::uint8_t> bytes, bool& sign) {
  const std::uint8_t flags = bytes[0] & kFlagBits;
  if ((flags & kCompressedFlag) == 0) throw InputError("the compression flag is clear (not a compressed point)");
  sign = (flags & kSignFlag) != 0;
  if ((flags & kInfinityFlag) == 0) return false;
  const bool rest_zero = (bytes[0] & ~(kCompressedFlag | kInfinityFlag)) == 0 &&
                         std::all_of(bytes.begin() + 1, bytes.end(), [](std::uint8_t b) { return b == 0; });
  if (!rest_zero) throw InputError("the infinity flag is set with other bits non-zero (not an encoding of any point)");
  return true;
}

// The point of x whose y has the sign the flag says, checked in the subgroup.
template <class Affine>
Affine point_from_x(const typename Affine::Field& x, bool sign) {
  using Curve = std::conditional_t<std::is_same_v<Affine, math::G1Affine>, math::G1Curve, math::G2Curve>;
  const auto y = (x.squared() * x + Curve::b()).sqrt();
  if (!y) throw InputError("x is not the x-coordinate of a point of the curve");
  const auto point = Affine::from_coordinates(x, lexicographically_largest(*y) == sign ? *y : -*y);
  if (!point.is_in_subgroup()) throw InputError("the point is not in the subgroup of order r");
  return point;
}

}  // namespace

void encode_zcash_g1_compressed(const math::G1Affine& point, std::span<std::uint8_t, kZcashG1CompressedBytes> out) {
  std::fill(out.begin(), out.end(), std::uint8_t{0});
  if (point.infinity) {
    out[0] = kCompressedFlag | kInfinityFlag;
    return;
  }
  fq_to_zcash(point.x, out.data());
  out[0] |= kCompressedFlag | (lexicographically_largest(point.y) ? kSignFlag : 0);
}

void encode_zcash_g2_compressed(const math::G2Affine& point, std::span<std::uint8_t, kZcashG2CompressedBytes> out) {
  std::fill(out.begin(), out.end(), std::uint8_t{0});
  if (point.infinity) {
    out[0] = kCompressedFlag | kInfinityFlag;
    return;
  }
  fq_to_zcash(point.x.c1, out.data());
  fq_to_zcash(point.x.c0, out.data() + kFqBytes);
  out[0] |= kCompressedFlag | (lexicographically_largest(point.y) ? kSignFlag : 0);
}

math::G1Affine decode_zcash_g1_compressed(std::span<const std::uint8_t, kZcashG1CompressedBytes> bytes) {
  bool sign = false;
  if (compressed_flags(bytes, sign)) return math::G1Affine::identity();
  const auto x = fq_from_zcash(bytes.data(), true);
  if (!x) throw InputError("x is not below p");
  return point_from_x<math::G1Affine>(*x, sign);
}

math::G2Affine decode_zcash_g2_compressed(std::span<const std::uint8_t, kZcashG2CompressedBytes> bytes) {
  bool sign = false;
  if (compressed_flags(bytes, sign)) return math::G2Affine::identity();
  const auto x1 = fq_from_zcash(bytes.data(), true);
  const auto x0 = fq_from_zcash(bytes.data() + kFqBytes, false);
  if (!x0 || !x1) throw InputError("x is not below p");
  return point_from_x<math::G2Affine>(math::Fq2{*x0, *x1}, sign);
}

namespace detail {

void encode_zcash_g1(const math::G1Affine& point, std::span<std::uint8_t, kZcashG1Bytes> out) {
  std::fill(out.begin(), out.end(), std::uint8_t{0});
  if (point.infinity) {
    out[0] = kInfinityFlag;
    return;
  }
  fq_to_zcash(point.x, out.data());
  fq_to_zcash(point.y, out.data() + kFqBytes);
}

void encode_zcash_g2(const math::G2Affine& point, std::span<std::uint8_t, kZcashG2Bytes> out) {
  std::fill(out.begin(), out.end(), std::uint8_t{0});
  if (point.infinity) {
    out[0] = kInfinityFlag;
    return;
  }
  fq_to_zcash(point.x.c1, out.data());
  fq_to_zcash(point.x.c0, out.data() + kFqBytes);
  fq_to_zcash(point.y.c1, out.data() + 2 * kFqBytes);
  fq_to_zcash(point.y.c0, out.data() + 3 * kFqBytes);
}

}  // namespace detail

ParamsKey read_params(const std::filesystem::path& path, unsigned threads) {
  return read_params(open_input(path, kKind), threads);
}

ParamsKey read_params(InputFile input, unsigned threads) {
  ParamsFile file(std::move(input));
  ParamsKey key;
  read_vk_points(file, key.vk);
  key.vk.ic = read_point_set<math::G1Affine>(file, "ic", file.count("ic"), true, threads).decode();
  if (key.vk.ic.empty()) file.fail("ic", "no points: a key has one at least, the constant one's");
  key.h = read_point_set<math::G1Affine>(file, "h", read_h_count(file), false, threads);
  key.l = read_point_set<math::G1Affine>(file, "l", file.count("l"), false, threads);
  const std::uint64_t variables = key.input_count() + key.aux_count();
  key.a = read_point_set<math::G1Affine>(file, "a", read_query_count(file, "a", variables), false, threads);
  key.b_g1 = read_point_set<math::G1Affine>(file, "b_g1", read_query_count(file, "b_g1", variables), false, threads);
  const std::uint32_t b_g2_count = file.count("b_g2");
  if (b_g2_count != key.b_g1.size()) {
    file.fail("b_g2",
              fmt::format("{} points, but b_g1 has {}: both hold the same variables", b_g2_count, key.b_g1.size()));
  }
  key.b_g2 = read_point_set<math::G2Affine>(file, "b_g2", b_g2_count, false, threads);
  file.expect_end();
  return key;
}

void write_params(const std::filesystem::path& path, const ParamsKey& key) {
  STAGEHAND_ASSERT(key.b_g1.size() == key.b_g2.size(), "write_params: b_g1 has {} points, b_g2 {}", key.b_g1.size(),
                   key.b_g2.size());
  FileWriter out(path);
  auto write = [&](std::span<const std::uint8_t> bytes) { out.write(bytes); };
  // alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2: G1, G1, G2, G2, G1, G2.
  std::array<std::uint8_t, kVkFixedBytes> vk{};
  detail::encode_zcash_g1(key.vk.alpha1, std::span(vk).subspan<0, kZcashG1Bytes>());
  detail::encode_zcash_g1(key.vk.beta1, std::span(vk).subspan<96, kZcashG1Bytes>());
  detail::encode_zcash_g2(key.vk.beta2, std::span(vk).subspan<192, kZcashG2Bytes>());
  detail::encode_zcash_g2(key.vk.gamma2, std::span(vk).subspan<384, kZcashG2Bytes>());
  detail::encode_zcash_g1(key.vk.delta1, std::span(vk).subspan<576, kZcashG1Bytes>());
  detail::encode_zcash_g2(key.vk.delta2, std::span(vk).subspan<672, kZcashG2Bytes>());
  write(vk);
  write_zcash_set(G1Points::encode(key.vk.ic), write);
  write_zcash_set(key.h, write);
  write_zcash_set(key.l, write);
  write_zcash_set(key.a, write);
  write_zcash_set(key.b_g1, write);
  write_zcash_set(key.b_g2, write);
  out.finish();
}

}  // namespace stagehand::groth16
