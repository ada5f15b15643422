#include "synthetic/sample_data.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <type_traits>

namespace stagehand::cuda {
namespace {

unsigned threads_or_all(unsigned thread_count) {
  return thread_count != 0 ? thread_count : std::max(1u, std::thread::hardware_concurrency());
}

template <class Task>
void parallel_chunks(std::uint64_t count, unsigned thread_count, Task task) {
  const unsigned threads = static_cast<unsigned>(
      std::min<std::uint64_t>(threads_or_all(thread_count), std::max<std::uint64_t>(1, count / 1024)));
  const std::uint64_t chunk = (count + threads - 1) / threads;
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    const std::uint64_t begin = t * chunk;
    const std::uint64_t end = std::min(count, begin + chunk);
    if (begin >= end) break;
    workers.emplace_back([=, &task] { task(t, begin, end); });
  }
  for (auto& worker : workers) worker.join();
}

template <class Fr = math::Fr>
Fr random_element(std::mt19937_64& engine) {
  for (;;) {
    math::Limbs<4> limbs{engine(), engine(), engine(), engine() & 0x7fffffffffffffffULL};
    if (auto value = Fr::from_canonical_limbs(limbs)) return *value;
  }
}

}  // namespace

std::vector<math::Fr> random_fr(std::uint64_t count, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<math::Fr> values(count);
  for (auto& value : values) value = random_element(engine);
  return values;
}

namespace {

// A coordinate's Montgomery words: Fq's, or an Fq2's c0 then c1. Returns the bytes written.
template <class F>
std::size_t encode_coordinate(const F& value, std::uint8_t* target) {
  if constexpr (requires { value.c0; }) {
    const std::size_t half = encode_coordinate(value.c0, target);
    return half + encode_coordinate(value.c1, target + half);
  } else {
    std::memcpy(target, value.montgomery_limbs().data(), sizeof(value.montgomery_limbs()));
    return sizeof(value.montgomery_limbs());
  }
}
template <class Curve>
void encode(const math::AffinePoint<Curve>& point, std::uint8_t* target) {
  const std::size_t coordinate = encode_coordinate(point.x, target);
  encode_coordinate(point.y, target + coordinate);
}

// The walk in either group of either curve: chunks start at their own multiple of G, then add d·G
// per point.
template <class Curve>
BasicPointWalk<typename Curve::ScalarField> fill_walk(std::span<std::uint8_t> out, std::uint64_t point_count,
                                                      std::uint64_t seed, unsigned thread_count) {
  using Projective = math::ProjectivePoint<Curve>;
  using Affine = math::AffinePoint<Curve>;
  using Fr = typename Curve::ScalarField;
  constexpr std::uint64_t point_bytes = 2 * sizeof(typename Curve::BaseField);
  static_assert(sizeof(math::G1Affine::Field) == 48 && sizeof(math::bn254::Fq) == 32, "coordinates are their words");
  std::mt19937_64 engine(seed);
  BasicPointWalk<Fr> walk{random_element<Fr>(engine), random_element<Fr>(engine)};
  const auto generator = Projective::from_affine(Curve::generator());
  const Affine step_point = generator.multiply(walk.step).to_affine();
  parallel_chunks(point_count, thread_count, [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    std::vector<Projective> chunk(end - begin);
    Projective current = generator.multiply(walk.start + Fr::from_uint64(begin) * walk.step);
    for (auto& point : chunk) {
      point = current;
      current += step_point;
    }
    std::vector<Affine> affine(chunk.size());
    math::batch_to_affine<Curve>(chunk, affine);
    for (std::uint64_t i = begin; i < end; ++i) {
      const auto& point = affine[i - begin];
      std::uint8_t* target = out.data() + i * point_bytes;
      if (point.infinity) {
        std::memset(target, 0, point_bytes);
      } else {
        encode(point, target);
      }
    }
  });
  return walk;
}

// Σ s_i·(a + i·d) = a·Σ s_i + d·Σ i·s_i: the discrete logarithm of the walk's MSM.
template <class Fr>
Fr walk_logarithm(std::span<const std::uint8_t> canonical_scalars, std::uint64_t count, const BasicPointWalk<Fr>& walk,
                  unsigned thread_count) {
  std::mutex mutex;
  Fr sum = Fr::zero();
  Fr weighted = Fr::zero();
  parallel_chunks(count, thread_count, [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    Fr local_sum = Fr::zero();
    Fr local_weighted = Fr::zero();
    Fr index = Fr::from_uint64(begin);
    for (std::uint64_t i = begin; i < end; ++i) {
      math::Limbs<4> limbs;
      std::memcpy(limbs.data(), canonical_scalars.data() + i * 32, 32);
      const Fr scalar = *Fr::from_canonical_limbs(limbs);
      local_sum += scalar;
      local_weighted += scalar * index;
      index += Fr::one();
    }
    const std::lock_guard lock(mutex);
    sum += local_sum;
    weighted += local_weighted;
  });
  return walk.start * sum + walk.step * weighted;
}

}  // namespace

PointWalk fill_sample_points(std::span<std::uint8_t> out, std::uint64_t point_count, std::uint64_t seed,
                             unsigned thread_count) {
  return fill_walk<math::G1Curve>(out, point_count, seed, thread_count);
}

PointWalk fill_sample_g2_points(std::span<std::uint8_t> out, std::uint64_t point_count, std::uint64_t seed,
                                unsigned thread_count) {
  return fill_walk<math::G2Curve>(out, point_count, seed, thread_count);
}

namespace {

template <class Fr>
void fill_scalars(std::span<std::uint8_t> out, std::uint64_t count, std::uint64_t seed, bool montgomery) {
  parallel_chunks(count, 0, [&](unsigned thread, std::uint64_t begin, std::uint64_t end) {
    std::mt19937_64 engine(seed * 1000003 + thread);
    for (std::uint64_t i = begin; i < end; ++i) {
      const Fr value = random_element<Fr>(engine);
      const auto limbs = montgomery ? value.montgomery_limbs() : value.to_canonical_limbs();
      std::memcpy(out.data() + i * 32, limbs.data(), 32);
    }
  });
}

template <class Curve>
math::ProjectivePoint<Curve> expected_walk(std::span<const std::uint8_t> canonical_scalars, std::uint64_t count,
                                           const BasicPointWalk<typename Curve::ScalarField>& walk,
                                           unsigned thread_count) {
  const auto generator = math::ProjectivePoint<Curve>::from_affine(Curve::generator());
  return generator.multiply(walk_logarithm(canonical_scalars, count, walk, thread_count));
}

}  // namespace

void fill_sample_scalars(std::span<std::uint8_t> out, std::uint64_t count, std::uint64_t seed, bool montgomery) {
  fill_scalars<math::Fr>(out, count, seed, montgomery);
}

void fill_bn254_sample_scalars(std::span<std::uint8_t> out, std::uint64_t count, std::uint64_t seed, bool montgomery) {
  fill_scalars<math::bn254::Fr>(out, count, seed, montgomery);
}

math::G1Projective expected_walk_msm(std::span<const std::uint8_t> canonical_scalars, std::uint64_t count,
                                     const PointWalk& walk, unsigned thread_count) {
  return expected_walk<math::G1Curve>(canonical_scalars, count, walk, thread_count);
}

math::G2Projective expected_walk_g2_msm(std::span<const std::uint8_t> canonical_scalars, std::uint64_t count,
                                        const PointWalk& walk, unsigned thread_count) {
  return expected_walk<math::G2Curve>(canonical_scalars, count, walk, thread_count);
}

Bn254PointWalk fill_bn254_sample_points(std::span<std::uint8_t> out, std::uint64_t point_count, std::uint64_t seed,
                                        unsigned thread_count) {
  return fill_walk<math::bn254::G1Curve>(out, point_count, seed, thread_count);
}

Bn254PointWalk fill_bn254_sample_g2_points(std::span<std::uint8_t> out, std::uint64_t point_count, std::uint64_t seed,
                                           unsigned thread_count) {
  return fill_walk<math::bn254::G2Curve>(out, point_count, seed, thread_count);
}

math::bn254::G1Projective expected_bn254_walk_msm(std::span<const std::uint8_t> canonical_scalars, std::uint64_t count,
                                                  const Bn254PointWalk& walk, unsigned thread_count) {
  return expected_walk<math::bn254::G1Curve>(canonical_scalars, count, walk, thread_count);
}

math::bn254::G2Projective expected_bn254_walk_g2_msm(std::span<const std::uint8_t> canonical_scalars,
                                                     std::uint64_t count, const Bn254PointWalk& walk,
                                                     unsigned thread_count) {
  return expected_walk<math::bn254::G2Curve>(canonical_scalars, count, walk, thread_count);
}

}  // namespace stagehand::cuda
