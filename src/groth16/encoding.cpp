#include "groth16/encoding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

namespace stagehand::groth16 {
namespace {

std::optional<math::Fq> decode_fq(std::span<const std::uint8_t> bytes) {
  return math::Fq::from_montgomery_bytes(std::span<const std::uint8_t, 48>(bytes.data(), 48));
}

bool all_zero(std::span<const std::uint8_t> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

void encode_fq(const math::Fq& value, std::vector<std::uint8_t>& out) {
  const auto bytes = value.to_montgomery_bytes();
  out.insert(out.end(), bytes.begin(), bytes.end());
}
void put_fq(const math::Fq& value, std::uint8_t* out) {
  const auto bytes = value.to_montgomery_bytes();
  std::memcpy(out, bytes.data(), bytes.size());
}

// Decodes `count` fixed-size records over a few threads; returns the first bad index or -1.
template <class Point, class Decode>
std::vector<Point> decode_all(std::span<const std::uint8_t> bytes, std::size_t size, std::size_t count, Decode decode,
                              std::size_t& bad_index) {
  std::vector<Point> points(count);
  std::atomic<std::size_t> first_bad{count};
  const unsigned threads =
      std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), static_cast<unsigned>(count / 4096 + 1)));
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      const std::size_t begin = count * t / threads;
      const std::size_t end = count * (t + 1) / threads;
      for (std::size_t i = begin; i < end; ++i) {
        auto point = decode(bytes.subspan(i * size, size));
        if (!point) {
          std::size_t expected = first_bad.load();
          while (i < expected && !first_bad.compare_exchange_weak(expected, i)) {
          }
          return;
        }
        points[i] = *point;
      }
    });
  }
  for (auto& worker : workers) worker.join();
  bad_index = first_bad.load();
  return points;
}

}  // namespace

std::optional<math::G1Projective> decode_g1_jacobian(std::span<const std::uint8_t, kG1JacobianBytes> bytes) {
  auto x = decode_fq(bytes.subspan(0, 48));
  auto y = decode_fq(bytes.subspan(48, 48));
  auto z = decode_fq(bytes.subspan(96, 48));
  if (!x || !y || !z) return std::nullopt;
  return math::G1Projective{*x, *y, *z};
}

std::optional<math::G2Projective> decode_g2_jacobian(std::span<const std::uint8_t, kG2JacobianBytes> bytes) {
  std::array<math::Fq, 6> c;
  for (std::size_t i = 0; i < 6; ++i) {
    auto value = decode_fq(bytes.subspan(48 * i, 48));
    if (!value) return std::nullopt;
    c[i] = *value;
  }
  return math::G2Projective{math::Fq2{c[0], c[1]}, math::Fq2{c[2], c[3]}, math::Fq2{c[4], c[5]}};
}

void encode_g1_jacobian(const math::G1Projective& point, std::span<std::uint8_t, kG1JacobianBytes> out) {
  put_fq(point.x, out.data());
  put_fq(point.y, out.data() + 48);
  put_fq(point.z, out.data() + 96);
}

void encode_g2_jacobian(const math::G2Projective& point, std::span<std::uint8_t, kG2JacobianBytes> out) {
  const math::Fq2* coordinates[] = {&point.x, &point.y, &point.z};
  for (std::size_t i = 0; i < 3; ++i) {
    put_fq(coordinates[i]->c0, out.data() + 96 * i);
    put_fq(coordinates[i]->c1, out.data() + 96 * i + 48);
  }
}

std::optional<math::G1Affine> decode_g1(std::span<const std::uint8_t> bytes) {
  if (all_zero(bytes)) return math::G1Affine::identity();
  auto x = decode_fq(bytes.subspan(0, 48));
  auto y = decode_fq(bytes.subspan(48, 48));
  if (!x || !y) return std::nullopt;
  auto point = math::G1Affine::from_coordinates(*x, *y);
  if (!point.is_on_curve()) return std::nullopt;
  return point;
}

std::optional<math::G2Affine> decode_g2(std::span<const std::uint8_t> bytes) {
  if (all_zero(bytes)) return math::G2Affine::identity();
  std::array<math::Fq, 4> c;
  for (std::size_t i = 0; i < 4; ++i) {
    auto value = decode_fq(bytes.subspan(48 * i, 48));
    if (!value) return std::nullopt;
    c[i] = *value;
  }
  auto point = math::G2Affine::from_coordinates(math::Fq2{c[0], c[1]}, math::Fq2{c[2], c[3]});
  if (!point.is_on_curve()) return std::nullopt;
  return point;
}

void encode_g1(const math::G1Affine& point, std::span<std::uint8_t, kG1Bytes> out) {
  if (point.infinity) {
    std::fill(out.begin(), out.end(), std::uint8_t{0});
    return;
  }
  put_fq(point.x, out.data());
  put_fq(point.y, out.data() + 48);
}

void encode_g2(const math::G2Affine& point, std::span<std::uint8_t, kG2Bytes> out) {
  if (point.infinity) {
    std::fill(out.begin(), out.end(), std::uint8_t{0});
    return;
  }
  put_fq(point.x.c0, out.data());
  put_fq(point.x.c1, out.data() + 48);
  put_fq(point.y.c0, out.data() + 96);
  put_fq(point.y.c1, out.data() + 144);
}

void encode_g1(const math::G1Affine& point, std::vector<std::uint8_t>& out) {
  if (point.infinity) {
    out.insert(out.end(), kG1Bytes, 0);
    return;
  }
  encode_fq(point.x, out);
  encode_fq(point.y, out);
}

void encode_g2(const math::G2Affine& point, std::vector<std::uint8_t>& out) {
  if (point.infinity) {
    out.insert(out.end(), kG2Bytes, 0);
    return;
  }
  encode_fq(point.x.c0, out);
  encode_fq(point.x.c1, out);
  encode_fq(point.y.c0, out);
  encode_fq(point.y.c1, out);
}

std::vector<math::G1Affine> read_g1_points(SectionReader& reader, std::size_t count, const std::string& what) {
  auto bytes = reader.take(count * kG1Bytes);
  std::size_t bad = count;
  auto points = decode_all<math::G1Affine>(bytes, kG1Bytes, count, decode_g1, bad);
  if (bad < count)
    reader.fail(fmt::format("{} point {} is not a point of G1 (unreduced coordinate or off the curve)", what, bad));
  return points;
}

std::vector<math::G2Affine> read_g2_points(SectionReader& reader, std::size_t count, const std::string& what) {
  auto bytes = reader.take(count * kG2Bytes);
  std::size_t bad = count;
  auto points = decode_all<math::G2Affine>(bytes, kG2Bytes, count, decode_g2, bad);
  if (bad < count)
    reader.fail(fmt::format("{} point {} is not a point of G2 (unreduced coordinate or off the curve)", what, bad));
  return points;
}

}  // namespace stagehand::groth16
