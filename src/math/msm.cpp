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

// Both curves' scalars fill 4 limbs (r < 2^255); their bit counts differ (255 and 254).
static_assert(Fr::limb_count == bn254::Fr::limb_count);
using ScalarLimbs = Limbs<Fr::limb_count>;
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
// (the last window's top bit is above the scalar's top bit, hence zero). |d| ≤ 2^(c-1), halving the buckets.
std::int64_t signed_digit(const ScalarLimbs& scalar, unsigned window, unsigned window_bits) {
  const unsigned offset = window * window_bits;
  const auto unsigned_part = static_cast<std::int64_t>(bits_at(scalar, offset, window_bits));
  const std::int64_t carry = offset == 0 ? 0 : static_cast<std::int64_t>(bits_at(scalar, offset - 1, 1));
  const std::int64_t half = std::int64_t{1} << (window_bits - 1);
  std::int64_t digit = unsigned_part + carry;
  if (unsigned_part >= half) digit -= std::int64_t{1} << window_bits;
  return digit;
}

unsigned window_count_for(unsigned scalar_bits, unsigned window_bits) { return scalar_bits / window_bits + 1; }

// Batch-affine buckets apply from this window width up: below it there are too few buckets for
// batches to fill before two additions meet in the same bucket.
constexpr unsigned batch_affine_minimum_window_bits = 12;
// A mixed Jacobian addition is 11 multiplications; a batched affine one about 6 plus its share
// of the batch's inversion. These weights steer the planner only.
constexpr double jacobian_point_cost = 1.0;
constexpr double batch_affine_point_cost = 0.6;

// Buckets kept in affine coordinates. Additions are queued until a batch is full; then all their
// denominators are inverted together with one field inversion, and the slopes finish the sums.
// A bucket with a queued addition is busy until the batch is flushed; a second point for it
// goes into that bucket's Jacobian overflow instead (a mixed addition), so a batch never
// waits and windows with few distinct digits (the top one) cost no more than Jacobian buckets.
// Equal points are doubled inside the batch; opposite points cancel at once.
template <class Curve>
class BatchAffineBuckets {
 public:
  using Affine = AffinePoint<Curve>;
  using Projective = ProjectivePoint<Curve>;
  using Field = typename Curve::BaseField;

  BatchAffineBuckets(std::size_t bucket_count, std::size_t batch_size)
      : buckets_(bucket_count), overflow_(bucket_count), busy_(bucket_count, 0), batch_size_(batch_size) {
    pending_buckets_.reserve(batch_size);
    pending_points_.reserve(batch_size);
    denominators_.resize(batch_size);
    prefix_products_.resize(batch_size);
  }

  void add(std::size_t bucket_index, const Affine& point) {
    if (busy_[bucket_index] != 0) {
      overflow_[bucket_index] += point;
      return;
    }
    Affine& bucket = buckets_[bucket_index];
    if (bucket.infinity) {
      bucket = point;
      return;
    }
    if (bucket.x == point.x && (bucket.y != point.y || bucket.y.is_zero())) {
      // P + (-P), or the double of a point of order two: infinity either way.
      bucket = Affine::identity();
      return;
    }
    busy_[bucket_index] = 1;
    pending_buckets_.push_back(bucket_index);
    pending_points_.push_back(point);
    if (pending_buckets_.size() == batch_size_) flush();
  }

  // Starts loading a bucket that a coming addition will read: buckets are spread over
  // megabytes, and without this most additions wait for memory.
  void prefetch(std::size_t bucket_index) const {
    __builtin_prefetch(&buckets_[bucket_index]);
    __builtin_prefetch(&busy_[bucket_index]);
  }

  // The sum held by a bucket once every addition is done (call finish first).
  Projective sum(std::size_t bucket_index) const { return overflow_[bucket_index] + buckets_[bucket_index]; }

  void finish() { flush(); }

 private:
  void flush() {
    const std::size_t count = pending_buckets_.size();
    if (count == 0) return;
    // The bucket has not changed since the addition was queued (it was busy), so equal x here
    // means equal points: a doubling, with slope 3x^2 / 2y.
    Field running = Field::one();
    for (std::size_t index = 0; index < count; ++index) {
      const Affine& bucket = buckets_[pending_buckets_[index]];
      const Affine& point = pending_points_[index];
      denominators_[index] = bucket.x == point.x ? bucket.y.doubled() : point.x - bucket.x;
      prefix_products_[index] = running;
      running *= denominators_[index];
    }
    Field inverse = running.inverse();
    for (std::size_t index = count; index-- > 0;) {
      const Field denominator_inverse = inverse * prefix_products_[index];
      inverse *= denominators_[index];
      const std::size_t bucket_index = pending_buckets_[index];
      Affine& bucket = buckets_[bucket_index];
      const Affine& point = pending_points_[index];
      Field numerator;
      if (bucket.x == point.x) {
        const Field x_squared = bucket.x.squared();
        numerator = x_squared.doubled() + x_squared;
      } else {
        numerator = point.y - bucket.y;
      }
      const Field slope = numerator * denominator_inverse;
      const Field x = slope.squared() - bucket.x - point.x;
      bucket.y = slope * (bucket.x - x) - bucket.y;
      bucket.x = x;
      busy_[bucket_index] = 0;
    }
    pending_buckets_.clear();
    pending_points_.clear();
  }

  std::vector<Affine> buckets_;
  std::vector<Projective> overflow_;
  std::vector<std::uint8_t> busy_;
  std::size_t batch_size_;
  std::vector<std::size_t> pending_buckets_;
  std::vector<Affine> pending_points_;
  std::vector<Field> denominators_;
  std::vector<Field> prefix_products_;
};

// Σ (k+1)·bucket[k] over one window of points [begin, end), by running sums from the top bucket
// down: two additions per bucket. `sum(k)` reads bucket k once every point is in.
template <class Projective, class BucketSum>
Projective weighted_bucket_sum(std::size_t bucket_count, BucketSum&& sum) {
  Projective running = Projective::identity();
  Projective total = Projective::identity();
  for (std::size_t bucket = bucket_count; bucket-- > 0;) {
    running += sum(bucket);
    total += running;
  }
  return total;
}

// One window's sum over points [begin, end) with affine buckets and batched inversions.
template <class Curve>
ProjectivePoint<Curve> window_sum_batch_affine(std::span<const AffinePoint<Curve>> points,
                                               std::span<const ScalarLimbs> canonical, std::size_t begin,
                                               std::size_t end, unsigned window, unsigned window_bits) {
  const std::size_t bucket_count = std::size_t{1} << (window_bits - 1);
  const std::size_t batch_size = std::clamp<std::size_t>(bucket_count / 8, 16, 2048);
  BatchAffineBuckets<Curve> buckets(bucket_count, batch_size);
  constexpr std::size_t prefetch_distance = 8;
  for (std::size_t index = begin; index < end; ++index) {
    if (index + prefetch_distance < end) {
      const std::int64_t coming = signed_digit(canonical[index + prefetch_distance], window, window_bits);
      if (coming != 0) buckets.prefetch(static_cast<std::size_t>((coming > 0 ? coming : -coming) - 1));
    }
    if (points[index].infinity) continue;
    const std::int64_t digit = signed_digit(canonical[index], window, window_bits);
    if (digit > 0) {
      buckets.add(static_cast<std::size_t>(digit - 1), points[index]);
    } else if (digit < 0) {
      buckets.add(static_cast<std::size_t>(-digit - 1), -points[index]);
    }
  }
  buckets.finish();
  return weighted_bucket_sum<ProjectivePoint<Curve>>(bucket_count, [&](std::size_t k) { return buckets.sum(k); });
}

// The same with projective buckets (mixed additions, no inversions).
template <class Curve>
ProjectivePoint<Curve> window_sum_projective(std::span<const AffinePoint<Curve>> points,
                                             std::span<const ScalarLimbs> canonical, std::size_t begin, std::size_t end,
                                             unsigned window, unsigned window_bits) {
  const std::size_t bucket_count = std::size_t{1} << (window_bits - 1);
  std::vector<ProjectivePoint<Curve>> buckets(bucket_count);
  for (std::size_t index = begin; index < end; ++index) {
    const std::int64_t digit = signed_digit(canonical[index], window, window_bits);
    if (digit > 0) {
      buckets[static_cast<std::size_t>(digit - 1)] += points[index];
    } else if (digit < 0) {
      buckets[static_cast<std::size_t>(-digit - 1)] += -points[index];
    }
  }
  return weighted_bucket_sum<ProjectivePoint<Curve>>(bucket_count, [&](std::size_t k) { return buckets[k]; });
}

// The MSM from its windows' partial sums (window-major, plan.chunk_count a window): Horner's rule
// over the windows from the top, window_bits doublings between them.
template <class Projective>
Projective combine_windows(const std::vector<Projective>& partial_sums, const MsmPlan& plan) {
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

template <class Curve>
ProjectivePoint<Curve> pippenger(std::span<const AffinePoint<Curve>> points,
                                 std::span<const typename Curve::ScalarField> scalars, const MsmOptions& options) {
  using Projective = ProjectivePoint<Curve>;
  using Scalar = typename Curve::ScalarField;
  static_assert(Scalar::limb_count == Fr::limb_count);
  if (points.size() != scalars.size()) {
    throw std::invalid_argument("msm: " + std::to_string(points.size()) + " points but " +
                                std::to_string(scalars.size()) + " scalars");
  }
  const std::size_t count = points.size();
  if (count == 0) return Projective::identity();
  const unsigned thread_count = detail::resolve_thread_count(options.thread_count);
  const MsmPlan plan =
      plan_msm(count, thread_count, options.window_bits, options.accumulation, Scalar::modulus_bit_count);

  std::vector<ScalarLimbs> canonical(count);
  detail::run_ranges(count, thread_count, 1 << 14, [&](std::size_t begin, std::size_t end) {
    for (std::size_t index = begin; index < end; ++index) canonical[index] = scalars[index].to_canonical_limbs();
  });

  const std::size_t chunk_size = (count + plan.chunk_count - 1) / plan.chunk_count;
  std::vector<Projective> partial_sums(plan.window_count * plan.chunk_count);
  detail::run_tasks(partial_sums.size(), thread_count, [&](std::size_t task) {
    const auto window = static_cast<unsigned>(task / plan.chunk_count);
    const std::size_t begin = (task % plan.chunk_count) * chunk_size;
    const std::size_t end = std::min(count, begin + chunk_size);
    partial_sums[task] = plan.batch_affine
                             ? window_sum_batch_affine<Curve>(points, canonical, begin, end, window, plan.window_bits)
                             : window_sum_projective<Curve>(points, canonical, begin, end, window, plan.window_bits);
  });
  return combine_windows(partial_sums, plan);
}

}  // namespace

MsmPlan plan_msm(std::size_t point_count, unsigned thread_count, unsigned forced_window_bits,
                 BucketAccumulation accumulation, unsigned scalar_bits) {
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
    const unsigned window_count = window_count_for(scalar_bits, window_bits);
    const bool batch_affine =
        accumulation == BucketAccumulation::batch_affine ||
        (accumulation == BucketAccumulation::automatic && window_bits >= batch_affine_minimum_window_bits);
    const double point_cost = batch_affine ? batch_affine_point_cost : jacobian_point_cost;
    const std::size_t chunk_limit = std::max<std::size_t>(1, std::min<std::size_t>(point_count, 4 * threads));
    for (std::size_t chunk_count = 1; chunk_count <= chunk_limit; ++chunk_count) {
      const std::size_t task_count = window_count * chunk_count;
      const double rounds = static_cast<double>((task_count + threads - 1) / threads);
      const double points_per_chunk = static_cast<double>((point_count + chunk_count - 1) / chunk_count);
      const double bucket_cost = 2 * 1.6 * static_cast<double>(std::size_t{1} << (window_bits - 1));
      const double cost =
          rounds * (point_cost * points_per_chunk + bucket_cost) + 1.6 * static_cast<double>(task_count);
      if (cost < best_cost) {
        best_cost = cost;
        best = MsmPlan{window_bits, window_count, chunk_count, batch_affine};
      }
    }
  }
  return best;
}

G1Projective msm(std::span<const G1Affine> points, std::span<const Fr> scalars, unsigned thread_count) {
  return pippenger<G1Curve>(points, scalars, MsmOptions{thread_count, 0, BucketAccumulation::automatic});
}
G2Projective msm(std::span<const G2Affine> points, std::span<const Fr> scalars, unsigned thread_count) {
  return pippenger<G2Curve>(points, scalars, MsmOptions{thread_count, 0, BucketAccumulation::automatic});
}
G1Projective msm(std::span<const G1Affine> points, std::span<const Fr> scalars, const MsmOptions& options) {
  return pippenger<G1Curve>(points, scalars, options);
}
G2Projective msm(std::span<const G2Affine> points, std::span<const Fr> scalars, const MsmOptions& options) {
  return pippenger<G2Curve>(points, scalars, options);
}

bn254::G1Projective bn254::msm(std::span<const G1Affine> points, std::span<const Fr> scalars, unsigned thread_count) {
  return pippenger<G1Curve>(points, scalars, MsmOptions{thread_count, 0, BucketAccumulation::automatic});
}
bn254::G2Projective bn254::msm(std::span<const G2Affine> points, std::span<const Fr> scalars, unsigned thread_count) {
  return pippenger<G2Curve>(points, scalars, MsmOptions{thread_count, 0, BucketAccumulation::automatic});
}
bn254::G1Projective bn254::msm(std::span<const G1Affine> points, std::span<const Fr> scalars,
                               const MsmOptions& options) {
  return pippenger<G1Curve>(points, scalars, options);
}
bn254::G2Projective bn254::msm(std::span<const G2Affine> points, std::span<const Fr> scalars,
                               const MsmOptions& options) {
  return pippenger<G2Curve>(points, scalars, options);
}

}  // namespace stagehand::math
