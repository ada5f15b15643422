#pragma once
// The synthetic generators' two groups as the checks read and write their points (Montgomery
// coordinates, 96 and 192 bytes), and sampled points against a direct scalar multiplication.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"
#include "synthetic/synthetic.hpp"

namespace stagehand::cuda::synthetic_checks {

inline math::Fq fq_at(const std::uint8_t* bytes, bool& ok) {
  math::Limbs<6> limbs;
  std::memcpy(limbs.data(), bytes, 48);
  const auto value = math::Fq::from_montgomery_limbs(limbs);
  if (!value) {
    ok = false;
    return math::Fq::zero();
  }
  return *value;
}
inline void put_fq(std::uint8_t* out, const math::Fq& value) { std::memcpy(out, value.montgomery_limbs().data(), 48); }

struct G1 {
  using Curve = math::G1Curve;
  using Affine = math::G1Affine;
  using Projective = math::G1Projective;
  static constexpr SyntheticGroup group = SyntheticGroup::g1;
  static constexpr std::uint64_t bytes = kSyntheticG1Bytes;
  static constexpr const char* name = "generate_g1_points";
  static void encode(const Affine& point, std::uint8_t* out) {
    put_fq(out, point.x);
    put_fq(out + 48, point.y);
  }
  // Nothing when a coordinate is not a reduced Montgomery Fq.
  static std::optional<Affine> decode(const std::uint8_t* in) {
    bool ok = true;
    const Affine point = Affine::from_coordinates(fq_at(in, ok), fq_at(in + 48, ok));
    if (!ok) return std::nullopt;
    return point;
  }
};
struct G2 {
  using Curve = math::G2Curve;
  using Affine = math::G2Affine;
  using Projective = math::G2Projective;
  static constexpr SyntheticGroup group = SyntheticGroup::g2;
  static constexpr std::uint64_t bytes = kSyntheticG2Bytes;
  static constexpr const char* name = "generate_g2_points";
  static void encode(const Affine& point, std::uint8_t* out) {
    put_fq(out, point.x.c0);
    put_fq(out + 48, point.x.c1);
    put_fq(out + 96, point.y.c0);
    put_fq(out + 144, point.y.c1);
  }
  static std::optional<Affine> decode(const std::uint8_t* in) {
    bool ok = true;
    const Affine point = Affine::from_coordinates(math::Fq2{fq_at(in, ok), fq_at(in + 48, ok)},
                                                  math::Fq2{fq_at(in + 96, ok), fq_at(in + 144, ok)});
    if (!ok) return std::nullopt;
    return point;
  }
};

template <class Group>
typename Group::Affine multiple(std::uint64_t scalar) {
  return Group::Projective::from_affine(Group::Curve::generator()).multiply(math::Fr::from_uint64(scalar)).to_affine();
}

// Indices worth sampling: both ends, the default plan's chunk boundaries, and random ones.
inline std::vector<std::uint64_t> sample_indices(std::uint64_t count, std::uint64_t chunk, std::uint64_t seed,
                                                 int random) {
  std::vector<std::uint64_t> indices = {0, count - 1, count / 2};
  for (std::uint64_t boundary = chunk; boundary < count && indices.size() < 24; boundary += chunk * 37) {
    indices.push_back(boundary - 1);
    indices.push_back(boundary);
  }
  std::mt19937_64 engine(seed);
  for (int i = 0; i < random; ++i) indices.push_back(engine() % count);
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  return indices;
}

// Sampled points equal a direct scalar multiplication on the host.
template <class Group>
bool sample_matches(const std::uint8_t* base, std::uint64_t stride, std::uint64_t count, std::uint64_t first_index,
                    std::uint64_t chunk, std::string& detail) {
  for (std::uint64_t i : sample_indices(count, chunk, first_index + count, 40)) {
    const auto point = Group::decode(base + i * stride);
    if (!point || !(*point == multiple<Group>(first_index + i + 1))) {
      detail = "point " + std::to_string(i) + " is not (first_index + " + std::to_string(i + 1) + ")·G";
      return false;
    }
  }
  return true;
}

}  // namespace stagehand::cuda::synthetic_checks
