#include "groth16/point_set.hpp"

#include "math/parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

namespace stagehand::groth16 {
namespace {

// Ranges of this many points or more get a thread of their own.
constexpr std::size_t kPointsPerRange = 1 << 14;

template <class Affine>
std::optional<Affine> decode_point(std::span<const std::uint8_t> bytes) {
  return decode_affine<Affine>(bytes);
}

}  // namespace

template <class Affine>
PointSet<Affine> PointSet<Affine>::encode(std::span<const Affine> points, unsigned threads) {
  PointSet set(points.size());
  math::detail::run_ranges(points.size(), threads, kPointsPerRange, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      encode_affine(points[i], std::span<std::uint8_t>(set.bytes_.data() + i * kPointBytes, kPointBytes));
    }
  });
  return set;
}

template <class Affine>
std::size_t PointSet<Affine>::first_invalid(unsigned threads) const {
  std::atomic<std::size_t> first{size()};
  math::detail::run_ranges(size(), threads, kPointsPerRange, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end && i < first.load(std::memory_order_relaxed); ++i) {
      if (decode_point<Affine>(bytes().subspan(i * kPointBytes, kPointBytes))) continue;
      std::size_t seen = first.load();
      while (i < seen && !first.compare_exchange_weak(seen, i)) {
      }
      return;
    }
  });
  return first.load();
}

template <class Affine>
Affine PointSet<Affine>::at(std::size_t index) const {
  if (index >= size()) throw std::out_of_range("PointSet::at: past the set's end");
  auto point = decode_point<Affine>(bytes().subspan(index * kPointBytes, kPointBytes));
  if (!point) throw std::logic_error("PointSet::at: the bytes are not a point (the set was not checked)");
  return *point;
}

template <class Affine>
std::vector<Affine> PointSet<Affine>::decode(unsigned threads) const {
  std::vector<Affine> points(size());
  math::detail::run_ranges(size(), threads, kPointsPerRange, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) points[i] = at(i);
  });
  return points;
}

template <class Affine>
PointSet<Affine> read_point_set(const BinFile& file, std::uint32_t id, const std::string& what, std::size_t count,
                                const char* group) {
  if (const auto wrong = wrong_record_count(file.section_size(id, what), count, PointSet<Affine>::kPointBytes,
                                            fmt::format("{} points", group))) {
    file.fail(id, what, *wrong);
  }
  PointSet<Affine> set(count);
  file.read_section(id, what, set.mutable_bytes());
  if (const auto bad = set.first_invalid(); bad < count) {
    file.fail(
        id, what,
        fmt::format("{} point {} is not a point of {} (unreduced coordinate or off the curve)", what, bad, group));
  }
  return set;
}

G1Points read_g1_set(const BinFile& file, std::uint32_t id, const std::string& what, std::size_t count) {
  return read_point_set<math::G1Affine>(file, id, what, count, "G1");
}
G2Points read_g2_set(const BinFile& file, std::uint32_t id, const std::string& what, std::size_t count) {
  return read_point_set<math::G2Affine>(file, id, what, count, "G2");
}

template class PointSet<math::G1Affine>;
template class PointSet<math::G2Affine>;
template class PointSet<math::bn254::G1Affine>;
template class PointSet<math::bn254::G2Affine>;
template G1Points read_point_set(const BinFile&, std::uint32_t, const std::string&, std::size_t, const char*);
template G2Points read_point_set(const BinFile&, std::uint32_t, const std::string&, std::size_t, const char*);
template bn254::G1Points read_point_set(const BinFile&, std::uint32_t, const std::string&, std::size_t, const char*);
template bn254::G2Points read_point_set(const BinFile&, std::uint32_t, const std::string&, std::size_t, const char*);

}  // namespace stagehand::groth16
