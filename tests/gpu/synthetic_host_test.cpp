// The synthetic generator's arithmetic (cuda/kernels/synthetic.cuh) compiled for the host through
// field.cuh's carry-flag emulation, against the CPU reference (src/math). Needs no GPU (label
// unit): the per-thread code of the kernels, the chunk planning, the scalar generator and its
// reduction are all checked here before any device time is spent.
#define BOOST_TEST_MODULE synthetic_host
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"
#include "synthetic/synthetic.cuh"

using namespace stagehand;
namespace syn = stagehand::cuda::synthetic;

namespace {

math::Fq fq_of(const std::uint8_t* bytes) {
  math::Limbs<6> limbs;
  std::memcpy(limbs.data(), bytes, 48);
  return math::Fq::from_montgomery_limbs(limbs).value();  // throws on an unreduced word
}
math::Fq fq_of(const cuda::Fq& value) { return fq_of(reinterpret_cast<const std::uint8_t*>(value.w)); }

// The group of a coordinate field, with the reference's types and a decoder of the slot layout.
template <class F>
struct Group;
template <>
struct Group<cuda::Fq> {
  using Affine = math::G1Affine;
  using Projective = math::G1Projective;
  static constexpr std::uint64_t bytes = 96;
  static Affine generator() { return math::G1Curve::generator(); }
  static Affine decode(const std::uint8_t* slot) { return Affine::from_coordinates(fq_of(slot), fq_of(slot + 48)); }
};
template <>
struct Group<cuda::Fq2> {
  using Affine = math::G2Affine;
  using Projective = math::G2Projective;
  static constexpr std::uint64_t bytes = 192;
  static Affine generator() { return math::G2Curve::generator(); }
  static Affine decode(const std::uint8_t* slot) {
    return Affine::from_coordinates(math::Fq2{fq_of(slot), fq_of(slot + 48)},
                                    math::Fq2{fq_of(slot + 96), fq_of(slot + 144)});
  }
};

template <class F>
typename Group<F>::Affine reference_point(std::uint64_t scalar) {
  using G = Group<F>;
  return G::Projective::from_affine(G::generator()).multiply(math::Fr::from_uint64(scalar)).to_affine();
}

constexpr std::uint8_t kSentinel = 0xa5;

// Runs generate_chunk for every thread of a launch over `count` points with a slot stride of
// point bytes + 32 (as the tail items), the spare bytes of each slot and a guard slot after the
// last holding a sentinel.
template <class F>
std::vector<std::uint8_t> host_launch(std::uint64_t count, std::uint64_t first_index, std::uint64_t chunk) {
  const std::uint64_t stride = Group<F>::bytes + 32;
  std::vector<std::uint8_t> buffer((count + 1) * stride, 0xff);
  for (std::uint64_t i = 0; i <= count; ++i) std::memset(buffer.data() + i * stride + Group<F>::bytes, kSentinel, 32);
  const std::uint64_t threads = syn::chunk_count(count, chunk);
  // One thread more than needed: it must do nothing.
  for (std::uint64_t t = 0; t <= threads; ++t)
    syn::generate_chunk<F>(buffer.data(), stride, count, first_index, chunk, t);
  return buffer;
}

// Every point equals (first_index + i + 1)·G and is on the curve; the spare bytes and the guard
// slot are untouched.
template <class F>
void check_launch(const std::vector<std::uint8_t>& buffer, std::uint64_t count, std::uint64_t first_index) {
  const std::uint64_t stride = Group<F>::bytes + 32;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint8_t* slot = buffer.data() + i * stride;
    const auto point = Group<F>::decode(slot);
    BOOST_REQUIRE(point.is_on_curve());
    BOOST_REQUIRE_MESSAGE(point == reference_point<F>(first_index + i + 1),
                          "point " << i << " of first_index " << first_index);
    for (int b = 0; b < 32; ++b) BOOST_REQUIRE(slot[Group<F>::bytes + b] == kSentinel);
  }
  const std::uint8_t* guard = buffer.data() + count * stride;
  for (std::uint64_t b = 0; b < Group<F>::bytes; ++b) BOOST_REQUIRE(guard[b] == 0xff);
}

math::Fr fr_of(const cuda::Fr& value) {
  math::Limbs<4> limbs;
  std::memcpy(limbs.data(), value.w, 32);
  return math::Fr::from_canonical_limbs(limbs).value();  // throws when >= r
}

}  // namespace

BOOST_AUTO_TEST_CASE(generators_and_constants_match_reference) {
  const auto g1 = math::G1Curve::generator();
  BOOST_TEST((fq_of(syn::Generator<cuda::Fq>::x()) == g1.x));
  BOOST_TEST((fq_of(syn::Generator<cuda::Fq>::y()) == g1.y));
  const auto g2 = math::G2Curve::generator();
  const cuda::Fq2 x2 = syn::Generator<cuda::Fq2>::x(), y2 = syn::Generator<cuda::Fq2>::y();
  BOOST_TEST((fq_of(x2.c0) == g2.x.c0));
  BOOST_TEST((fq_of(x2.c1) == g2.x.c1));
  BOOST_TEST((fq_of(y2.c0) == g2.y.c0));
  BOOST_TEST((fq_of(y2.c1) == g2.y.c1));
  BOOST_TEST(std::memcmp(syn::fr_r_squared().w, math::Fr::montgomery_constants.r_squared_mod_modulus.data(), 32) == 0);
  for (int i = 0; i < 4; ++i) BOOST_TEST(syn::r_limb(i) == math::Fr::modulus[i]);
}

BOOST_AUTO_TEST_CASE(chunk_planning) {
  const std::uint64_t h200 = 132 * 384;  // G1: 3 blocks of 128 threads per SM at 158 registers
  BOOST_TEST(syn::plan_chunk(0, h200) == syn::kMinChunk);
  BOOST_TEST(syn::plan_chunk(1, h200) == syn::kMinChunk);
  BOOST_TEST(syn::plan_chunk(1u << 20, h200) == syn::kMinChunk);  // 21 per chunk would be overhead-bound
  BOOST_TEST(syn::plan_chunk(1u << 24, h200) == 331u);            // ceil(2^24 / 50688)
  BOOST_TEST(syn::plan_chunk(1u << 24, syn::kTargetChunks) == 256u);
  BOOST_TEST(syn::plan_chunk((1u << 24) + 1, syn::kTargetChunks) == 257u);
  BOOST_TEST(syn::plan_chunk(std::uint64_t{1} << 26, h200) == syn::kMaxChunk);
  BOOST_TEST(syn::plan_chunk(std::uint64_t{1} << 34, h200) == syn::kMaxChunk);
  BOOST_TEST(syn::plan_chunk(100, 0) == 100u);  // no occupancy figure: one thread's worth, clamped
  for (std::uint64_t count : {std::uint64_t{1} << 22, std::uint64_t{1} << 24, std::uint64_t{50'000'000}}) {
    // Unclamped, the plan is exactly one wave: no more chunks than resident threads, and the
    // last wave is not a sliver (at least all but one chunk-size worth of threads busy).
    const std::uint64_t chunk = syn::plan_chunk(count, h200);
    const std::uint64_t chunks = syn::chunk_count(count, chunk);
    BOOST_TEST(chunks <= h200, count);
    BOOST_TEST(chunks * chunk >= count, count);
    BOOST_TEST(chunks > h200 - h200 / chunk - 1, count);
  }
  BOOST_TEST(syn::chunk_count(0, 32) == 0u);
  BOOST_TEST(syn::chunk_count(1, 32) == 1u);
  BOOST_TEST(syn::chunk_count(32, 32) == 1u);
  BOOST_TEST(syn::chunk_count(33, 32) == 2u);
  BOOST_TEST(syn::index_range_fits(0, ~std::uint64_t{0}));
  BOOST_TEST(syn::index_range_fits(1, ~std::uint64_t{0} - 1));  // scalar 2^64 - 1
  BOOST_TEST(!syn::index_range_fits(1, ~std::uint64_t{0}));     // scalar 2^64
  BOOST_TEST(!syn::index_range_fits(std::uint64_t{1} << 63, std::uint64_t{1} << 63));
}

BOOST_AUTO_TEST_CASE(multiple_of_generator_matches_reference) {
  const auto gx = syn::Generator<cuda::Fq>::x(), gy = syn::Generator<cuda::Fq>::y();
  for (std::uint64_t s :
       {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{3}, std::uint64_t{1000003}, ~std::uint64_t{0}}) {
    const auto j = syn::multiple_of_generator<cuda::Fq>(s, gx, gy).to_jacobian();
    const math::G1Projective p{fq_of(j.x), fq_of(j.y), fq_of(j.z)};
    BOOST_TEST((p.to_affine() == reference_point<cuda::Fq>(s)), s);
  }
}

// The three passes for single runs: the scalar-1 start, one-point runs, large scalars.
BOOST_AUTO_TEST_CASE(g1_runs_match_reference) {
  struct Run {
    std::uint64_t first_index, count, chunk;
  };
  const std::uint64_t top = ~std::uint64_t{0};
  const Run runs[] = {{0, 1, 1},
                      {0, 2, 2},
                      {0, 5, 32},
                      {1, 1, 1},
                      {1, 9, 32},
                      {12345677, 40, 40},
                      {(std::uint64_t{1} << 63) + 5, 9, 9},
                      {top - 4, 4, 32},
                      {top - 1, 1, 1}};
  for (const Run& run : runs) {
    BOOST_TEST_CONTEXT("first_index " << run.first_index << " count " << run.count << " chunk " << run.chunk) {
      check_launch<cuda::Fq>(host_launch<cuda::Fq>(run.count, run.first_index, run.chunk), run.count, run.first_index);
    }
  }
}

// A launch's bytes do not depend on the chunk (counts that are no multiple of it, the scalar-1
// start inside the first chunk), and equal the reference.
BOOST_AUTO_TEST_CASE(g1_launch_independent_of_chunk) {
  for (std::uint64_t first_index : {std::uint64_t{0}, std::uint64_t{777}}) {
    const std::uint64_t count = 203;
    const auto reference = host_launch<cuda::Fq>(count, first_index, count);
    check_launch<cuda::Fq>(reference, count, first_index);
    for (std::uint64_t chunk : {1, 2, 3, 7, 32, 64, 202, 1024}) {
      BOOST_TEST((host_launch<cuda::Fq>(count, first_index, chunk) == reference), "chunk " << chunk);
    }
  }
}

// Segments written with first_index = the segment's start are the set written at once.
BOOST_AUTO_TEST_CASE(g1_segments_concatenate) {
  const std::uint64_t stride = 96 + 32;
  const auto whole = host_launch<cuda::Fq>(100, 50, 32);
  const auto head = host_launch<cuda::Fq>(37, 50, 32);
  const auto tail = host_launch<cuda::Fq>(63, 87, 32);
  BOOST_TEST(std::equal(head.begin(), head.begin() + 37 * stride, whole.begin()));
  BOOST_TEST(std::equal(tail.begin(), tail.begin() + 63 * stride, whole.begin() + 37 * stride));
}

BOOST_AUTO_TEST_CASE(g2_runs_match_reference) {
  const std::uint64_t top = ~std::uint64_t{0};
  check_launch<cuda::Fq2>(host_launch<cuda::Fq2>(1, 0, 1), 1, 0);
  check_launch<cuda::Fq2>(host_launch<cuda::Fq2>(6, 0, 32), 6, 0);
  check_launch<cuda::Fq2>(host_launch<cuda::Fq2>(3, top - 3, 32), 3, top - 3);
  const auto reference = host_launch<cuda::Fq2>(45, 12345677, 45);
  check_launch<cuda::Fq2>(reference, 45, 12345677);
  for (std::uint64_t chunk : {1, 4, 32}) {
    BOOST_TEST((host_launch<cuda::Fq2>(45, 12345677, chunk) == reference), "chunk " << chunk);
  }
}

// The G2 walk divides through Fq2::inverse (the norm: (a − bu)/(a² + b²)); check it on values
// the walk meets and on random ones.
BOOST_AUTO_TEST_CASE(fq2_inverse_via_norm) {
  std::mt19937_64 engine(5);
  const cuda::Fq2 one = cuda::Fq2::one();
  std::vector<cuda::Fq2> values = {syn::Generator<cuda::Fq2>::x(), syn::Generator<cuda::Fq2>::y(), one,
                                   cuda::Fq2{cuda::Fq::zero(), cuda::Fq::one()}};
  for (int i = 0; i < 20; ++i) {
    cuda::Fq2 v;
    for (auto* c : {&v.c0, &v.c1}) {
      math::Limbs<6> limbs;
      for (auto& limb : limbs) limb = engine();
      limbs[5] >>= 4;  // below 2^380 < q
      std::memcpy(c->w, limbs.data(), 48);
    }
    values.push_back(v);
  }
  for (const auto& v : values) {
    const cuda::Fq2 inverse = v.inverse();
    BOOST_TEST(((v * inverse) == one));
    const math::Fq2 reference = math::Fq2{fq_of(v.c0), fq_of(v.c1)}.inverse();
    BOOST_TEST((fq_of(inverse.c0) == reference.c0));
    BOOST_TEST((fq_of(inverse.c1) == reference.c1));
  }
  BOOST_TEST(cuda::Fq2::zero().inverse().is_zero());
}

BOOST_AUTO_TEST_CASE(scalars_below_r_and_uniform) {
  const std::uint64_t seed = 42;
  const int n = 200000;
  int upper_half = 0, rejected_first = 0;
  std::uint64_t rejected_index = 0;
  std::vector<int> top_byte(256, 0);
  std::set<std::vector<std::uint32_t>> seen;
  const std::uint64_t half_top = syn::r_limb(3) >> 1;  // values with a top limb >= this: about r/2 of them
  for (int i = 0; i < n; ++i) {
    const cuda::Fr value = syn::random_scalar(seed, i);
    fr_of(value);  // throws when >= r
    if ((std::uint64_t{value.w[7]} << 32 | value.w[6]) >= half_top) ++upper_half;
    ++top_byte[value.w[7] >> 24];
    if (i < 5000) seen.insert(std::vector<std::uint32_t>(value.w, value.w + 8));
    std::uint64_t first[4];
    syn::scalar_draw(seed, i, 0, first);
    if (!syn::below_r(first)) {
      if (rejected_first++ == 0) rejected_index = i;
    }
  }
  BOOST_TEST(seen.size() == 5000u);  // no repeats
  // Uniform below r: half of the values at or above ~r/2 (±1% is over 8 standard deviations).
  BOOST_TEST(std::abs(upper_half - n / 2) < n / 100, upper_half);
  // The top byte is uniform over 0..0x73 (r's top byte), nothing above.
  for (int b = 0x74; b < 256; ++b) BOOST_TEST(top_byte[b] == 0);
  const double expected = n / 116.0;  // 0x00..0x73 (0x73 a little less)
  for (int b = 0; b < 0x73; ++b) BOOST_TEST(std::abs(top_byte[b] - expected) < 6 * std::sqrt(expected), b);
  // About 1 - r/2^255 = 9.4% of first draws are rejected, and rejection takes the next draw.
  BOOST_TEST(std::abs(rejected_first - 0.0936 * n) < 0.01 * n, rejected_first);
  std::uint64_t second[4];
  syn::scalar_draw(seed, rejected_index, 1, second);
  if (syn::below_r(second)) {
    BOOST_TEST(std::memcmp(syn::random_scalar(seed, rejected_index).w, second, 32) == 0);
  }
  // The bounded fallback: the draw minus r.
  std::uint64_t first[4];
  syn::scalar_draw(seed, rejected_index, 0, first);
  const cuda::Fr fallback = syn::random_scalar(seed, rejected_index, 1);
  math::Limbs<4> expected_limbs{first[0], first[1], first[2], first[3]};
  math::detail::subtract_in_place(expected_limbs, math::Fr::modulus);
  BOOST_TEST(std::memcmp(fallback.w, expected_limbs.data(), 32) == 0);
  fr_of(fallback);  // below r
}

BOOST_AUTO_TEST_CASE(scalars_deterministic_and_seeded) {
  int equal_seeds = 0, equal_neighbours = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const cuda::Fr a = syn::random_scalar(1, i), b = syn::random_scalar(2, i), c = syn::random_scalar(1, i + 1);
    BOOST_REQUIRE((a == syn::random_scalar(1, i)));
    if (a == b) ++equal_seeds;
    if (a == c) ++equal_neighbours;
  }
  BOOST_TEST(equal_seeds == 0);
  BOOST_TEST(equal_neighbours == 0);
}

BOOST_AUTO_TEST_CASE(scalar_montgomery_form_matches_reference) {
  for (std::uint64_t i = 0; i < 2000; ++i) {
    const cuda::Fr canonical = syn::random_scalar(9, i);
    const cuda::Fr montgomery = syn::to_montgomery(canonical);
    const math::Fr reference = fr_of(canonical);
    BOOST_REQUIRE(std::memcmp(montgomery.w, reference.montgomery_limbs().data(), 32) == 0);
    BOOST_REQUIRE((montgomery.from_montgomery() == canonical));  // round trip
  }
}
