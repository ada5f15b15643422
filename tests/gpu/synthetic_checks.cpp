#include "synthetic_checks.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <ostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"
#include "math/parallel.hpp"
#include "synthetic_groups.hpp"
#include "synthetic/synthetic.cuh"
#include "util/common_host.hpp"
#include "util/device_buffer.hpp"

namespace stagehand::cuda::synthetic_checks {
namespace {

constexpr std::uint8_t kPoison = DeviceBuffer::kPoison;  // what every fresh DeviceBuffer holds
constexpr std::uint64_t kGuardBytes = 4 * 192;           // after every output

template <class RangeTask>
void parallel(std::uint64_t count, RangeTask&& task) {
  math::detail::run_ranges(count, 0, 2048, std::forward<RangeTask>(task));
}

// (first_index + i + 1)·G for i < count in the output layout: a walk per host thread, from a
// scalar multiplication at its start, with one inversion per range (src/math, independent of the
// kernel's arithmetic).
template <class Group>
std::vector<std::uint8_t> reference_points(std::uint64_t count, std::uint64_t first_index) {
  std::vector<std::uint8_t> bytes(count * Group::bytes);
  const auto generator = Group::Curve::generator();
  parallel(count, [&](std::size_t begin, std::size_t end) {
    std::vector<typename Group::Projective> walk;
    walk.reserve(end - begin);
    auto current = Group::Projective::from_affine(generator).multiply(math::Fr::from_uint64(first_index + begin + 1));
    for (std::size_t i = begin; i < end; ++i) {
      walk.push_back(current);
      current += generator;
    }
    std::vector<typename Group::Affine> affine(walk.size());
    math::batch_to_affine<typename Group::Curve>(walk, affine);
    for (std::size_t i = begin; i < end; ++i) Group::encode(affine[i - begin], bytes.data() + i * Group::bytes);
  });
  return bytes;
}

using check_support::rejects;
using check_support::report;

// "N word" when N is not zero, for a report's detail.
std::string how_many(std::uint64_t n, const char* word) { return n == 0 ? "" : std::to_string(n) + " " + word; }

bool all_bytes(const std::vector<std::uint8_t>& bytes, std::uint64_t begin, std::uint64_t end, std::uint8_t value) {
  return std::all_of(bytes.begin() + begin, bytes.begin() + end, [value](std::uint8_t b) { return b == value; });
}

// The first index at which two byte runs of `item` bytes each differ, or -1.
std::int64_t first_difference(const std::uint8_t* a, const std::uint8_t* b, std::uint64_t count, std::uint64_t item) {
  for (std::uint64_t i = 0; i < count; ++i) {
    if (std::memcmp(a + i * item, b + i * item, item) != 0) return static_cast<std::int64_t>(i);
  }
  return -1;
}

// No two of `count` items (`item` bytes at `stride`) are equal: sorted by their first 8 bytes,
// equal neighbours compared in full.
bool all_distinct(const std::uint8_t* base, std::uint64_t count, std::uint64_t stride, std::uint64_t item,
                  std::string& detail) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> keys(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t key;
    std::memcpy(&key, base + i * stride, 8);
    keys[i] = {key, i};
  }
  std::sort(keys.begin(), keys.end());
  for (std::uint64_t k = 1; k < count; ++k) {
    for (std::uint64_t l = k; l-- > 0 && keys[l].first == keys[k].first;) {
      if (std::memcmp(base + keys[l].second * stride, base + keys[k].second * stride, item) == 0) {
        detail = "items " + std::to_string(keys[l].second) + " and " + std::to_string(keys[k].second) + " are equal";
        return false;
      }
    }
  }
  return true;
}

// ---- points --------------------------------------------------------------------------------------

template <class Group>
void generate(const DeviceBuffer& buffer, std::uint64_t offset, std::uint64_t stride, std::uint64_t count,
              std::uint64_t first_index, std::uint64_t chunk = 0, cudaStream_t stream = nullptr) {
  generate_points(Group::group, buffer.at(offset), stride, count, first_index, chunk, stream);
}

// One call's points: the count to make, from which index.
struct GenerateCase {
  std::uint64_t count, first_index;
};

// What one call made: every point reduced, on the curve, equal to the CPU's, distinct, and nothing
// past them written.
template <class Group>
Result check_points(std::ostream& out, const std::vector<std::uint8_t>& bytes, const GenerateCase& c,
                    std::uint64_t chunk, const std::string& what) {
  Result result;
  const std::uint64_t output_bytes = c.count * Group::bytes;
  // Every point decodes (reduced coordinates: the poison is not) and lies on the curve.
  std::atomic<std::uint64_t> bad{0}, first_bad{~std::uint64_t{0}};
  parallel(c.count, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const auto point = Group::decode(bytes.data() + i * Group::bytes);
      if (!point || !point->is_on_curve()) {
        ++bad;
        std::uint64_t seen = first_bad.load();
        while (i < seen && !first_bad.compare_exchange_weak(seen, i)) {
        }
      }
    }
  });
  result.add(report(out, bad == 0, what + ": every point reduced and on the curve",
                    bad == 0 ? "" : std::to_string(bad.load()) + " bad, first " + std::to_string(first_bad.load())));
  // A few in the subgroup too (slow: a multiplication by r each).
  bool in_subgroup = true;
  for (std::uint64_t i : {std::uint64_t{0}, c.count - 1}) {
    const auto point = Group::decode(bytes.data() + i * Group::bytes);
    in_subgroup = in_subgroup && point && point->is_in_subgroup();
  }
  result.add(report(out, in_subgroup, what + ": first and last points in the subgroup"));

  std::string detail;
  result.add(report(out, sample_matches<Group>(bytes.data(), Group::bytes, c.count, c.first_index, chunk, detail),
                    what + ": sampled points equal (first_index+i+1)·G by scalar multiplication", detail));
  const auto expected = reference_points<Group>(c.count, c.first_index);
  const std::int64_t differs = first_difference(bytes.data(), expected.data(), c.count, Group::bytes);
  result.add(report(out, differs < 0, what + ": all points equal the CPU walk (chunk " + std::to_string(chunk) + ")",
                    differs < 0 ? "" : "first difference at point " + std::to_string(differs)));
  detail.clear();
  result.add(report(out, all_distinct(bytes.data(), c.count, Group::bytes, Group::bytes, detail),
                    what + ": no two points equal", detail));
  result.add(
      report(out, all_bytes(bytes, output_bytes, bytes.size(), kPoison), what + ": guard after the output untouched"));
  return result;
}

// Deterministic: a second run over zeros gives the same bytes.
template <class Group>
Result check_rerun(std::ostream& out, DeviceBuffer& buffer, const std::vector<std::uint8_t>& bytes,
                   const GenerateCase& c, const std::string& what) {
  Result result;
  const std::uint64_t output_bytes = c.count * Group::bytes;
  buffer.fill(0);
  generate<Group>(buffer, 0, Group::bytes, c.count, c.first_index);
  const auto again = buffer.download();
  result.add(report(out, std::equal(bytes.begin(), bytes.begin() + output_bytes, again.begin()),
                    what + ": a second run gives the same bytes"));
  return result;
}

// Independent of the chunk, including counts that are no multiple of it; and of the segments.
template <class Group>
Result check_chunks_and_segments(std::ostream& out, DeviceBuffer& buffer, const std::vector<std::uint8_t>& bytes,
                                 const GenerateCase& c, const std::string& what) {
  Result result;
  bool same = true;
  std::string chunks;
  for (std::uint64_t explicit_chunk : {std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{33}}) {
    if (c.count / explicit_chunk > (std::uint64_t{1} << 22)) continue;  // chunk 1 at 2^26 is pointless
    buffer.fill(kPoison);
    generate<Group>(buffer, 0, Group::bytes, c.count, c.first_index, explicit_chunk);
    const auto other = buffer.download();
    if (!std::equal(bytes.begin(), bytes.end(), other.begin())) {
      same = false;
      chunks += " " + std::to_string(explicit_chunk);
    }
  }
  result.add(
      report(out, same, what + ": chunks 1, 7, 33 give the same bytes", same ? "" : "differs at chunk" + chunks));
  // Two segments (first_index = the segment's start) give the same bytes as one call.
  const std::uint64_t head = c.count / 3 + 1;
  buffer.fill(kPoison);
  generate<Group>(buffer, 0, Group::bytes, head, c.first_index);
  generate<Group>(buffer, head * Group::bytes, Group::bytes, c.count - head, c.first_index + head);
  const auto segments = buffer.download();
  result.add(report(out, std::equal(bytes.begin(), bytes.end(), segments.begin()),
                    what + ": segments of " + std::to_string(head) + " and " + std::to_string(c.count - head) +
                        " give the same bytes"));
  return result;
}

// A 128-byte stride (tail items' layout) writes the same points and leaves bytes 96.. alone.
template <class Group>
Result check_stride(std::ostream& out, const std::vector<std::uint8_t>& bytes, const GenerateCase& c,
                    const std::string& what) {
  Result result;
  const std::uint64_t stride = Group::bytes + 32;
  DeviceBuffer strided(c.count * stride + kGuardBytes);
  strided.fill(0x5a);
  generate<Group>(strided, 0, stride, c.count, c.first_index);
  const auto wide = strided.download();
  bool points_same = true, spare_untouched = all_bytes(wide, c.count * stride, wide.size(), 0x5a);
  for (std::uint64_t i = 0; i < c.count; ++i) {
    points_same =
        points_same && std::memcmp(wide.data() + i * stride, bytes.data() + i * Group::bytes, Group::bytes) == 0;
    spare_untouched = spare_untouched && all_bytes(wide, i * stride + Group::bytes, (i + 1) * stride, 0x5a);
  }
  result.add(report(out, points_same && spare_untouched,
                    what + ": stride " + std::to_string(stride) + " writes the same points, spare bytes untouched"));
  return result;
}

template <class Group>
Result check_group(std::ostream& out, unsigned max_log) {
  Result result;
  const std::uint64_t big = (std::uint64_t{1} << max_log) - 3;  // no multiple of any plan's chunk
  const std::uint64_t odd = 1234567;
  const GenerateCase cases[] = {
      {1, odd}, {7, odd}, {1000, odd}, {big, odd}, {1000, 0}, {7, 0}, {1000, (std::uint64_t{1} << 63) + 1}};
  for (const GenerateCase& c : cases) {
    const std::string what =
        std::string(Group::name) + " n=" + std::to_string(c.count) + " first_index=" + std::to_string(c.first_index);
    const std::uint64_t output_bytes = c.count * Group::bytes;
    const std::uint64_t chunk = synthetic_default_chunk(Group::group, c.count);
    DeviceBuffer buffer(output_bytes + kGuardBytes);
    generate<Group>(buffer, 0, Group::bytes, c.count, c.first_index);
    const auto bytes = buffer.download();
    result.add(check_points<Group>(out, bytes, c, chunk, what));
    result.add(check_rerun<Group>(out, buffer, bytes, c, what));
    if (c.count < 7) continue;
    result.add(check_chunks_and_segments<Group>(out, buffer, bytes, c, what));
    if (c.count <= 100000) result.add(check_stride<Group>(out, bytes, c, what));
  }
  return result;
}

// ---- scalars -------------------------------------------------------------------------------------

std::optional<math::Fr> canonical_at(const std::uint8_t* bytes) {
  math::Limbs<4> limbs;
  std::memcpy(limbs.data(), bytes, 32);
  return math::Fr::from_canonical_limbs(limbs);
}
std::optional<math::Fr> montgomery_at(const std::uint8_t* bytes) {
  math::Limbs<4> limbs;
  std::memcpy(limbs.data(), bytes, 32);
  return math::Fr::from_montgomery_limbs(limbs);
}

std::vector<std::uint8_t> scalars_on_device(std::uint64_t count, std::uint64_t seed, bool montgomery,
                                            std::uint64_t first_index, bool& guard_ok) {
  DeviceBuffer buffer(count * 32 + kGuardBytes);
  generate_scalars(buffer.pointer, count, seed, montgomery, nullptr, first_index);
  auto bytes = buffer.download();
  guard_ok = all_bytes(bytes, count * 32, bytes.size(), kPoison);
  bytes.resize(count * 32);
  return bytes;
}

}  // namespace

Result check_points(std::ostream& out, SyntheticGroup group, unsigned max_log) {
  return group == SyntheticGroup::g1 ? check_group<G1>(out, max_log) : check_group<G2>(out, max_log);
}

Result check_scalars(std::ostream& out, unsigned max_log) {
  Result result;
  const std::uint64_t seed = 20261207;
  for (std::uint64_t count : {std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{1000}, std::uint64_t{1} << max_log}) {
    const std::string what = "generate_scalars n=" + std::to_string(count);
    bool guard = true, guard_montgomery = true, guard_seed = true;
    const auto canonical = scalars_on_device(count, seed, false, 0, guard);
    const auto montgomery = scalars_on_device(count, seed, true, 0, guard_montgomery);
    const auto other_seed = scalars_on_device(count, seed + 1, false, 0, guard_seed);
    result.add(report(out, guard && guard_montgomery && guard_seed, what + ": guard after the output untouched"));
    std::atomic<std::uint64_t> not_below_r{0}, bad_montgomery{0}, not_emulated{0}, equal_across_seeds{0}, upper{0};
    parallel(count, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        const auto value = canonical_at(canonical.data() + 32 * i);
        const auto mont = montgomery_at(montgomery.data() + 32 * i);
        if (!value) {
          ++not_below_r;
          continue;
        }
        // The Montgomery output is the same value: reduced, and equal as an Fr.
        if (!mont || !(*mont == *value)) ++bad_montgomery;
        // The device ran the same generator as the host emulation of synthetic.cuh.
        const Fr emulated = synthetic::random_scalar(seed, i);
        if (std::memcmp(emulated.w, canonical.data() + 32 * i, 32) != 0) ++not_emulated;
        if (std::memcmp(canonical.data() + 32 * i, other_seed.data() + 32 * i, 32) == 0) ++equal_across_seeds;
        if (value->to_canonical_limbs()[3] >= (math::Fr::modulus[3] >> 1)) ++upper;
      }
    });
    result.add(report(out, not_below_r == 0, what + ": every canonical scalar below r", how_many(not_below_r, "not")));
    result.add(report(out, bad_montgomery == 0, what + ": Montgomery output round-trips to the canonical value",
                      how_many(bad_montgomery, "differ")));
    result.add(report(out, not_emulated == 0, what + ": equal to the host emulation of the generator",
                      how_many(not_emulated, "differ")));
    result.add(report(out, equal_across_seeds == 0, what + ": seed + 1 differs at every index",
                      how_many(equal_across_seeds, "equal")));
    std::string detail;
    result.add(
        report(out, all_distinct(canonical.data(), count, 32, 32, detail), what + ": no two scalars equal", detail));
    bool again_guard = true;
    result.add(report(out, scalars_on_device(count, seed, false, 0, again_guard) == canonical,
                      what + ": a second run gives the same bytes"));
    if (count >= 1000) {
      // Uniform below r: about half of them at or above ~r/2 (6 standard deviations of slack).
      const double fraction = double(upper.load()) / double(count);
      const double slack = 6 * 0.5 / std::sqrt(double(count));
      result.add(
          report(out, std::abs(fraction - 0.5) < slack, what + ": fraction above r/2 " + std::to_string(fraction)));
      // first_index: a slice of the run from 0.
      const std::uint64_t from = count / 2 + 1;
      bool slice_guard = true;
      const auto slice = scalars_on_device(count - from, seed, false, from, slice_guard);
      result.add(report(out, slice_guard && std::equal(slice.begin(), slice.end(), canonical.begin() + 32 * from),
                        what + ": first_index " + std::to_string(from) + " gives the same scalars as that slice"));
    }
  }
  return result;
}

Result check_tail_items(std::ostream& out, unsigned max_log) {
  Result result;
  const std::uint64_t seed = 99, first_index = 7654321;
  for (std::uint64_t count : {std::uint64_t{1000}, (std::uint64_t{1} << max_log) - 1}) {
    const std::string what = "generate_tail_items n=" + std::to_string(count);
    DeviceBuffer items(count * kSyntheticTailItemBytes + kGuardBytes);
    generate_tail_items(items.pointer, count, first_index, seed, nullptr);
    const auto bytes = items.download();
    DeviceBuffer points(count * kSyntheticG1Bytes);
    generate_g1_points(points.pointer, count, first_index, nullptr);
    const auto point_bytes = points.download();
    bool guard = true;
    const auto scalars = scalars_on_device(count, seed, false, first_index, guard);
    bool points_same = true, scalars_same = true;
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint8_t* item = bytes.data() + i * kSyntheticTailItemBytes;
      points_same = points_same && std::memcmp(item, point_bytes.data() + i * 96, 96) == 0;
      scalars_same = scalars_same && std::memcmp(item + 96, scalars.data() + i * 32, 32) == 0;
    }
    result.add(report(out, points_same, what + ": bytes 0..95 equal generate_g1_points' (same first_index)"));
    result.add(report(out, scalars_same, what + ": bytes 96..127 equal generate_scalars' canonical output"));
    result.add(report(out, all_bytes(bytes, count * kSyntheticTailItemBytes, bytes.size(), kPoison),
                      what + ": guard after the output untouched"));
    std::string detail;
    result.add(report(out, sample_matches<G1>(bytes.data(), kSyntheticTailItemBytes, count, first_index, count, detail),
                      what + ": sampled points equal (first_index+i+1)·G", detail));
    bool scalars_below_r = true;
    for (std::uint64_t i = 0; i < count; ++i)
      scalars_below_r = scalars_below_r && canonical_at(bytes.data() + i * 128 + 96);
    result.add(report(out, scalars_below_r, what + ": every item's scalar below r"));
  }
  return result;
}

Result check_arguments(std::ostream& out) {
  Result result;
  DeviceBuffer buffer(4096);
  auto refused = [&](const std::string& what, const std::function<void()>& call) {
    result.add(rejects(out, "rejects " + what, call));
  };
  const std::uint64_t top = ~std::uint64_t{0};
  refused("a null point buffer", [&] { generate_g1_points(nullptr, 10, 0, nullptr); });
  refused("a misaligned point buffer", [&] { generate_g2_points(buffer.at(8), 10, 0, nullptr); });
  refused("first_index + count beyond 2^64 - 1", [&] { generate_g1_points(buffer.pointer, 2, top - 1, nullptr); });
  refused("a stride below the point",
          [&] { generate_points(SyntheticGroup::g2, buffer.pointer, 96, 4, 0, 0, nullptr); });
  refused("a stride no multiple of 16",
          [&] { generate_points(SyntheticGroup::g1, buffer.pointer, 100, 4, 0, 0, nullptr); });
  refused("a null scalar buffer", [&] { generate_scalars(nullptr, 10, 1, false, nullptr); });
  refused("a misaligned tail buffer", [&] { generate_tail_items(buffer.at(4), 10, 0, 1, nullptr); });
  refused("tail first_index + count beyond 2^64 - 1",
          [&] { generate_tail_items(buffer.pointer, 3, top - 2, 1, nullptr); });
  // Nothing to do is no error, even without a buffer; the last valid scalar, 2^64 - 1, is accepted.
  bool accepted = true;
  try {
    generate_g1_points(nullptr, 0, 0, nullptr);
    generate_scalars(nullptr, 0, 1, true, nullptr);
    buffer.fill(kPoison);
    generate_g1_points(buffer.pointer, 1, top - 1, nullptr);
  } catch (const std::exception&) {
    accepted = false;
  }
  const auto bytes = buffer.download();
  const auto last = G1::decode(bytes.data());
  result.add(
      report(out, accepted && last && *last == multiple<G1>(top), "count 0 without a buffer, and scalar 2^64 - 1"));
  return result;
}

// ---- timing --------------------------------------------------------------------------------------

namespace {

using check_support::Timing;

Timing time_runs(int repetitions, const std::function<void(cudaStream_t)>& launch) {
  return check_support::time_launches(repetitions, launch);
}

void print_timing(std::ostream& out, const std::string& what, unsigned log, const Timing& t, int repetitions,
                  const std::string& extra) {
  const double n = double(std::uint64_t{1} << log);
  char line[320];
  std::snprintf(line, sizeof line,
                "bench %s 2^%u: median %.3f ms (min %.3f, max %.3f, %d runs), %.1f M/s, %.3f ns each%s", what.c_str(),
                log, t.median, t.min, t.max, repetitions, n / t.median / 1e3, t.median * 1e6 / n, extra.c_str());
  out << line << std::endl;
}

// Per-item seconds of each generator; 0 when not timed.
struct Rates {
  double g1 = 0, g2 = 0, scalar = 0, tail = 0;
};

template <class Group>
Result bench_points(std::ostream& out, unsigned log, int repetitions, double& seconds_per_point) {
  Result result;
  const std::uint64_t n = std::uint64_t{1} << log;
  const std::uint64_t first_index = 3;
  DeviceBuffer buffer(n * Group::bytes);
  const Timing t = time_runs(
      repetitions, [&](cudaStream_t stream) { generate<Group>(buffer, 0, Group::bytes, n, first_index, 0, stream); });
  seconds_per_point = t.median * 1e-3 / double(n);
  print_timing(out, Group::name, log, t, repetitions,
               ", chunk " + std::to_string(synthetic_default_chunk(Group::group, n)));
  const auto bytes = buffer.download();
  std::string detail;
  result.add(report(out,
                    sample_matches<Group>(bytes.data(), Group::bytes, n, first_index,
                                          synthetic_default_chunk(Group::group, n), detail),
                    std::string(Group::name) + " 2^" + std::to_string(log) + " (timed runs): sampled points correct",
                    detail));
  return result;
}

}  // namespace

Result bench(std::ostream& out, const BenchSizes& sizes) {
  Result result;
  Rates rates;
  const int reps = std::max(1, sizes.repetitions);
  if (sizes.g1_log != 0) result.add(bench_points<G1>(out, sizes.g1_log, reps, rates.g1));
  if (sizes.g2_log != 0) result.add(bench_points<G2>(out, sizes.g2_log, reps, rates.g2));
  if (sizes.scalars_log != 0) {
    const std::uint64_t n = std::uint64_t{1} << sizes.scalars_log;
    DeviceBuffer buffer(n * 32);
    for (bool montgomery : {false, true}) {
      const Timing t =
          time_runs(reps, [&](cudaStream_t stream) { generate_scalars(buffer.pointer, n, 5, montgomery, stream); });
      print_timing(out, montgomery ? "generate_scalars (Montgomery)" : "generate_scalars", sizes.scalars_log, t, reps,
                   "");
      if (montgomery) rates.scalar = t.median * 1e-3 / double(n);
    }
    const auto bytes = buffer.download();
    bool ok = true;
    for (std::uint64_t i = 0; i < n; i += 4099) ok = ok && montgomery_at(bytes.data() + 32 * i);
    result.add(
        report(out, ok, "generate_scalars 2^" + std::to_string(sizes.scalars_log) + " (timed runs): sample reduced"));
  }
  if (sizes.tail_log != 0) {
    const std::uint64_t n = std::uint64_t{1} << sizes.tail_log;
    DeviceBuffer buffer(n * kSyntheticTailItemBytes);
    const Timing t =
        time_runs(reps, [&](cudaStream_t stream) { generate_tail_items(buffer.pointer, n, 11, 5, stream); });
    print_timing(out, "generate_tail_items", sizes.tail_log, t, reps, "");
    rates.tail = t.median * 1e-3 / double(n);
    const auto bytes = buffer.download();
    std::string detail;
    result.add(report(
        out, sample_matches<G1>(bytes.data(), kSyntheticTailItemBytes, n, 11, n, detail),
        "generate_tail_items 2^" + std::to_string(sizes.tail_log) + " (timed runs): sampled points correct", detail));
  }
  // The 2^26 partition's key, with PartitionShape's set sizes (src/coordinator/partition.hpp:
  // 2.19, 2.30, 1.07 GiB of G1, 2.14 GiB of G2 and 3.9 GiB of tail items at 2^26), at the rates
  // measured above.
  const double domain = double(std::uint64_t{1} << 26), gib = 1024.0 * 1024 * 1024;
  struct Set {
    const char* name;
    double count;
    double seconds_each;
  };
  const Set sets[] = {{"H (G1)", domain, rates.g1},
                      {"L (G1)", std::floor(2.19 * gib / 96), rates.g1},
                      {"A (G1)", std::floor(2.30 * gib / 96), rates.g1},
                      {"B_G1 (G1)", std::floor(1.07 * gib / 96), rates.g1},
                      {"B_G2 (G2)", std::floor(2.14 * gib / 192), rates.g2},
                      {"tail (G1 + scalar)", std::floor(3.9 * gib / 128), rates.tail},
                      {"a, b, c (scalars)", 3 * domain, rates.scalar}};
  double key_seconds = 0;
  bool complete = true;
  for (const Set& set : sets) {
    char line[200];
    if (set.seconds_each == 0) {
      complete = false;
      std::snprintf(line, sizeof line, "projection %-20s %11.0f items: not timed", set.name, set.count);
    } else {
      const double seconds = set.count * set.seconds_each;
      if (std::string(set.name).rfind("a, b, c", 0) != 0) key_seconds += seconds;
      std::snprintf(line, sizeof line, "projection %-20s %11.0f items: %8.1f ms", set.name, set.count, seconds * 1e3);
    }
    out << line << std::endl;
  }
  char line[200];
  std::snprintf(line, sizeof line, "projection 2^26 partition key (H, L, A, B_G1, B_G2, tail): %.1f ms%s",
                key_seconds * 1e3, complete ? "" : " (sets not timed left out)");
  out << line << std::endl;
  return result;
}

}  // namespace stagehand::cuda::synthetic_checks
