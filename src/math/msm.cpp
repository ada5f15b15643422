#include "math/msm.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "math/parallel.hpp"

namespace stagehand::math {
namespace {

using ScalarLimbs = Limbs<Fr::limb_count>;

// Scalars are below r < 2^255.
constexpr unsigned scalar_bit_count = Fr::modulus_bit_count;
// Buckets per task are 2^(c-1) projective points; 2^17 of them is 19 MiB for G1 and 38 MiB for
// G2 per thread, the most worth spending.
constexpr unsigned maximum_window_bits = 18;

std::uint64_t bits_at(const ScalarLimbs& scalar, unsigned offset, unsigned count) {
  if (offset >= 64 * Fr::limb_count) return 0;
  const unsigned limb = offset / 64;
  const unsigned shift = offset % 64;
  std::uint64_t value = scalar[limb] >> shift;
  if (shift + count > 64 && limb + 1 < Fr::limb_count) value |= scalar[limb + 1] << (64 - shift);
  return value & ((std::uint64_t{1} << count) - 1);
}

// Signed digit of window `window`: d = u + carry - 2^c·[u ≥ 2^(c-1)], where u is the window's c
// bits and carry is the top bit of the window below. Each window reads only its own bits and
// one bit below, so windows are independent, and Σ d_w 2^(wc) telescopes back to the scalar
// (the last window's top bit is above bit 254, hence zero). |d| ≤ 2^(c-1), halving the buckets.
std::int64_t signed_digit(const ScalarLimbs& scalar, unsigned window, unsigned window_bits) {
  const unsigned offset = window * window_bits;
  const auto unsigned_part = static_cast<std::int64_t>(bits_at(scalar, offset, window_bits));
  const std::int64_t carry = offset == 0 ? 0 : static_cast<std::int64_t>(bits_at(scalar, offset - 1, 1));
  const std::int64_t half = std::int64_t{1} << (window_bits - 1);
  std::int64_t digit = unsigned_part + carry;
  if (unsigned_part >= half) digit -= std::int64_t{1} << window_bits;
  return digit;
}

unsigned window_count_for(unsigned window_bits) { return scalar_bit_count / window_bits + 1; }

template <class Curve>
ProjectivePoint<Curve> pippenger(std::span<const AffinePoint<Curve>> points, std::span<const Fr> scalars,
                                 const MsmOptions& options) {
  using Projective = ProjectivePoint<Curve>;
  if (points.size() != scalars.size()) {
    throw std::invalid_argument("msm: " + std::to_string(points.size()) + " points but " +
                                std::to_string(scalars.size()) + " scalars");
  }
  const std::size_t count = points.size();
  if (count == 0) return Projective::identity();
  const unsigned thread_count = detail::resolve_thread_count(options.thread_count);
  const MsmPlan plan = plan_msm(count, thread_count, options.window_bits);

  std::vector<ScalarLimbs> canonical(count);
  detail::run_ranges(count, thread_count, 1 << 14, [&](std::size_t begin, std::size_t end) {
    for (std::size_t index = begin; index < end; ++index) canonical[index] = scalars[index].to_canonical_limbs();
  });

  const std::size_t chunk_size = (count + plan.chunk_count - 1) / plan.chunk_count;
  const std::size_t bucket_count = std::size_t{1} << (plan.window_bits - 1);
  std::vector<Projective> partial_sums(plan.window_count * plan.chunk_count);
  detail::run_tasks(partial_sums.size(), thread_count, [&](std::size_t task) {
    const auto window = static_cast<unsigned>(task / plan.chunk_count);
    const std::size_t begin = (task % plan.chunk_count) * chunk_size;
    const std::size_t end = std::min(count, begin + chunk_size);
    std::vector<Projective> buckets(bucket_count);
    for (std::size_t index = begin; index < end; ++index) {
      const std::int64_t digit = signed_digit(canonical[index], window, plan.window_bits);
      if (digit > 0) {
        buckets[static_cast<std::size_t>(digit - 1)] += points[index];
      } else if (digit < 0) {
        buckets[static_cast<std::size_t>(-digit - 1)] += -points[index];
      }
    }
    // Σ (k+1)·bucket[k] by running sums from the top bucket down: two additions per bucket.
    Projective running = Projective::identity();
    Projective total = Projective::identity();
    for (std::size_t bucket = bucket_count; bucket-- > 0;) {
      running += buckets[bucket];
      total += running;
    }
    partial_sums[task] = total;
  });

  Projective result = Projective::identity();
  for (unsigned window = plan.window_count; window-- > 0;) {
    if (!result.is_identity()) {
      for (unsigned step = 0; step < plan.window_bits; ++step) result = result.doubled();
    }
    for (std::size_t chunk = 0; chunk < plan.chunk_count; ++chunk) {
      result += partial_sums[window * plan.chunk_count + chunk];
    }
  }
  return result;
}

}  // namespace

MsmPlan plan_msm(std::size_t point_count, unsigned thread_count, unsigned forced_window_bits) {
  const unsigned threads = detail::resolve_thread_count(thread_count);
  if (forced_window_bits > 20) throw std::invalid_argument("msm: window_bits must be at most 20");
  // Cost in mixed additions of the busiest thread: each task adds its chunk's points into
  // buckets and then sums 2^(c-1) buckets with two full additions each (a full addition costs
  // about 1.6 mixed ones). Tasks are (window, chunk) pairs shared out over the threads.
  MsmPlan best;
  double best_cost = std::numeric_limits<double>::infinity();
  const unsigned first_bits = forced_window_bits != 0 ? forced_window_bits : 1;
  const unsigned last_bits = forced_window_bits != 0 ? forced_window_bits : maximum_window_bits;
  for (unsigned window_bits = first_bits; window_bits <= last_bits; ++window_bits) {
    const unsigned window_count = window_count_for(window_bits);
    const std::size_t chunk_limit = std::max<std::size_t>(1, std::min<std::size_t>(point_count, 4 * threads));
    for (std::size_t chunk_count = 1; chunk_count <= chunk_limit; ++chunk_count) {
      const std::size_t task_count = window_count * chunk_count;
      const double rounds = static_cast<double>((task_count + threads - 1) / threads);
      const double points_per_chunk = static_cast<double>((point_count + chunk_count - 1) / chunk_count);
      const double bucket_cost = 2 * 1.6 * static_cast<double>(std::size_t{1} << (window_bits - 1));
      const double cost = rounds * (points_per_chunk + bucket_cost) + 1.6 * static_cast<double>(task_count);
      if (cost < best_cost) {
        best_cost = cost;
        best = MsmPlan{window_bits, window_count, chunk_count};
      }
    }
  }
  return best;
}

G1Projective msm(std::span<const G1Affine> points, std::span<const Fr> scalars, unsigned thread_count) {
  return pippenger<G1Curve>(points, scalars, MsmOptions{thread_count, 0});
}
G2Projective msm(std::span<const G2Affine> points, std::span<const Fr> scalars, unsigned thread_count) {
  return pippenger<G2Curve>(points, scalars, MsmOptions{thread_count, 0});
}
G1Projective msm(std::span<const G1Affine> points, std::span<const Fr> scalars, const MsmOptions& options) {
  return pippenger<G1Curve>(points, scalars, options);
}
G2Projective msm(std::span<const G2Affine> points, std::span<const Fr> scalars, const MsmOptions& options) {
  return pippenger<G2Curve>(points, scalars, options);
}

}  // namespace stagehand::math
