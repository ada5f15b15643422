#include "batch_checks.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <ostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "device/kernel_abi.hpp"
#include "device/types.hpp"
#include "ec/curve.cuh"
#include "ec/g2.cuh"
#include "math/g1.hpp"
#include "math/g2.hpp"
#include "util/common_host.hpp"
#include "util/device_buffer.hpp"

namespace stagehand::cuda::batch_checks {
namespace {

// The partition program's bucket buffer (PartitionShape::kBucketResultBytes).
constexpr std::uint64_t kWriteBytes = 8ull << 20;

// ---- the two groups ------------------------------------------------------------------------------

struct G1 {
  using Curve = math::G1Curve;
  using Affine = math::G1Affine;
  using Projective = math::G1Projective;
  using DeviceXyzz = cuda::G1Xyzz;
  static constexpr BatchGroup group = BatchGroup::g1;
  static constexpr const char* name = kernel::batch_addition_g1;
  static constexpr int fq_per_coordinate = 1;
};
struct G2 {
  using Curve = math::G2Curve;
  using Affine = math::G2Affine;
  using Projective = math::G2Projective;
  using DeviceXyzz = cuda::G2Xyzz;
  static constexpr BatchGroup group = BatchGroup::g2;
  static constexpr const char* name = kernel::batch_addition_g2;
  static constexpr int fq_per_coordinate = 2;
};

void put_fq(std::uint8_t* out, const math::Fq& value) { std::memcpy(out, value.montgomery_limbs().data(), 48); }

// Affine points in the kernels' layout (src/groth16/encoding): Montgomery words, infinity = zeros.
void encode(const math::G1Affine& point, std::uint8_t* out) {
  if (point.infinity) {
    std::memset(out, 0, 96);
    return;
  }
  put_fq(out, point.x);
  put_fq(out + 48, point.y);
}
void encode(const math::G2Affine& point, std::uint8_t* out) {
  if (point.infinity) {
    std::memset(out, 0, 192);
    return;
  }
  put_fq(out, point.x.c0);
  put_fq(out + 48, point.x.c1);
  put_fq(out + 96, point.y.c0);
  put_fq(out + 144, point.y.c1);
}

math::Fq to_math(const cuda::Fq& value) {
  math::Limbs<6> limbs;
  std::memcpy(limbs.data(), value.w, 48);
  return *math::Fq::from_montgomery_limbs(limbs);
}
math::Fq2 to_math(const cuda::Fq2& value) { return math::Fq2{to_math(value.c0), to_math(value.c1)}; }

// The accumulator's bytes as a point, or nothing when any word is not a reduced Montgomery Fq
// (the 0xff poison of an unwritten accumulator never is).
template <class Group>
std::optional<typename Group::Projective> decode_accumulator(const std::uint8_t* bytes) {
  constexpr int words = 4 * Group::fq_per_coordinate;
  for (int i = 0; i < words; ++i) {
    math::Limbs<6> limbs;
    std::memcpy(limbs.data(), bytes + 48 * i, 48);
    if (!math::Fq::from_montgomery_limbs(limbs)) return std::nullopt;
  }
  typename Group::DeviceXyzz point;
  static_assert(sizeof(point) == 48 * words);
  std::memcpy(&point, bytes, sizeof(point));
  const auto jacobian = point.to_jacobian();  // curve.cuh / g2.cuh arithmetic, on the host
  typename Group::Projective result;
  result.x = to_math(jacobian.x);
  result.y = to_math(jacobian.y);
  result.z = to_math(jacobian.z);
  if (!result.is_on_curve()) return std::nullopt;
  return result;
}

// ---- inputs and the CPU reference ----------------------------------------------------------------

template <class Task>
void parallel_chunks(std::uint64_t count, Task task) {
  const unsigned threads = static_cast<unsigned>(
      std::clamp<std::uint64_t>(count / 4096, 1, std::max(1u, std::thread::hardware_concurrency())));
  const std::uint64_t chunk = (count + threads - 1) / threads;
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    const std::uint64_t begin = t * chunk, end = std::min(count, begin + chunk);
    if (begin >= end) break;
    workers.emplace_back([=, &task] { task(t, begin, end); });
  }
  for (auto& worker : workers) worker.join();
}

math::Fr random_fr(std::mt19937_64& engine) {
  for (;;) {
    math::Limbs<4> limbs{engine(), engine(), engine(), engine() >> 1};
    if (auto value = math::Fr::from_canonical_limbs(limbs)) return *value;
  }
}

// P_i = (a + i·d)·G: distinct valid points at one mixed addition each (one inversion per chunk).
template <class Group>
std::vector<typename Group::Affine> walk_points(std::uint64_t count, std::uint64_t seed) {
  using Projective = typename Group::Projective;
  std::mt19937_64 engine(seed);
  const math::Fr start = random_fr(engine), step = random_fr(engine);
  const Projective generator = Projective::from_affine(Group::Curve::generator());
  const auto step_point = generator.multiply(step).to_affine();
  std::vector<typename Group::Affine> points(count);
  parallel_chunks(count, [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    std::vector<Projective> chunk(end - begin);
    Projective current = generator.multiply(start + math::Fr::from_uint64(begin) * step);
    for (auto& point : chunk) {
      point = current;
      current += step_point;
    }
    math::batch_to_affine<typename Group::Curve>(chunk, std::span(points).subspan(begin, end - begin));
  });
  return points;
}

template <class Group>
typename Group::Projective cpu_sum(const std::vector<typename Group::Affine>& points, std::uint64_t begin,
                                   std::uint64_t end) {
  using Projective = typename Group::Projective;
  std::vector<Projective> partial(std::max(1u, std::thread::hardware_concurrency()), Projective::identity());
  parallel_chunks(end - begin, [&](unsigned t, std::uint64_t first, std::uint64_t last) {
    Projective sum = Projective::identity();
    for (std::uint64_t i = begin + first; i < begin + last; ++i) sum += points[i];
    partial[t] = sum;
  });
  Projective total = Projective::identity();
  for (const auto& sum : partial) total += sum;
  return total;
}

// ---- device buffers and launches -----------------------------------------------------------------

template <class Group>
void upload_points(DeviceBuffer& buffer, const std::vector<typename Group::Affine>& points) {
  const std::uint64_t point_bytes = batch_point_bytes(Group::group);
  std::vector<std::uint8_t> bytes(points.size() * point_bytes);
  parallel_chunks(points.size(), [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) encode(points[i], bytes.data() + i * point_bytes);
  });
  STAGEHAND_CUDA_CHECK(cudaMemcpy(buffer.pointer, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
}

// The arithmetic under check: launches of the default form go through the launcher, as the
// program's do; the other form is called directly with the arguments the launcher would pass.
std::optional<BatchArithmetic> checked_arithmetic;

// One launch through the launcher, as PartitionProgram::launch_segment makes it (reads [points
// segment], writes [8 MiB buffer]) plus the optional arguments.
template <class Group>
void launch(const DeviceBuffer& points, std::uint64_t first, std::uint64_t count, const DeviceBuffer& write,
            std::vector<std::uint64_t> arguments, cudaStream_t stream = nullptr) {
  const std::uint64_t point_bytes = batch_point_bytes(Group::group);
  if (checked_arithmetic && *checked_arithmetic != default_batch_arithmetic(Group::group)) {
    batch_addition(Group::group, static_cast<const std::uint8_t*>(points.pointer) + first * point_bytes, count,
                   write.pointer, write.bytes, arguments.size() >= 2 ? arguments[1] : 0,
                   !arguments.empty() && arguments[0] != 0, stream, checked_arithmetic);
    return;
  }
  const KernelLauncher* launcher = find_launcher(Group::name);
  if (launcher == nullptr) throw std::logic_error(std::string(Group::name) + " is not registered");
  KernelLaunch kernel{Group::name,
                      count,
                      std::move(arguments),
                      {points.use(first * point_bytes, count * point_bytes)},
                      {write.use(0, write.bytes)}};
  (*launcher)(kernel, stream);
}

using check_support::rejects;
using check_support::report;

// The accumulator at `offset` equals `expected`, and every byte outside it and the scratch region
// is still `background` (the poison, or zero for a zeroed buffer).
template <class Group>
bool accumulator_is(std::ostream& out, const std::vector<std::uint8_t>& bytes, std::uint64_t offset,
                    const typename Group::Projective& expected, std::uint8_t background, const std::string& what) {
  const std::uint64_t accumulator_bytes = batch_accumulator_bytes(Group::group);
  const std::uint64_t scratch_begin = (bytes.size() - kBatchAdditionScratchBytes) & ~std::uint64_t{15};
  const auto point = decode_accumulator<Group>(bytes.data() + offset);
  bool untouched = true;
  for (std::uint64_t i = 0; i < scratch_begin && untouched; ++i) {
    if ((i < offset || i >= offset + accumulator_bytes) && bytes[i] != background) untouched = false;
  }
  const bool equal = point && *point == expected;
  std::ostringstream detail;
  if (!point)
    detail << "accumulator does not decode to a point (unwritten or unreduced)";
  else if (!equal)
    detail << "accumulator differs from the CPU sum";
  if (!untouched) detail << (detail.str().empty() ? "" : "; ") << "bytes outside accumulator and scratch were written";
  if (equal && expected.is_identity()) detail << "(infinity)";
  return report(out, equal && untouched, std::string(Group::name) + " " + what, detail.str());
}

template <class Group>
bool group_rejects(std::ostream& out, const std::string& what, const std::function<void()>& call) {
  return rejects(out, std::string(Group::name) + " rejects " + what, call);
}

// Sizes, poisoned output, start = 1 and the accumulator at offsets 0 and 4096.
template <class Group>
Result check_sizes(std::ostream& out, const std::vector<typename Group::Affine>& walk, const DeviceBuffer& points,
                   DeviceBuffer& write, std::uint64_t big) {
  Result result;
  const std::uint64_t sizes[] = {1, 2, 1000, big};
  for (std::uint64_t n : sizes) {
    for (std::uint64_t offset : {std::uint64_t{0}, std::uint64_t{4096}}) {
      if (n == big && offset != 0) continue;
      write.fill(0xff);
      launch<Group>(points, 0, n, write, {1, offset});
      result.add(accumulator_is<Group>(out, write.download(), offset, cpu_sum<Group>(walk, 0, n), 0xff,
                                       "n=" + std::to_string(n) + " offset=" + std::to_string(offset)));
    }
  }
  // The same with an odd start in the point buffer (segments start anywhere in a batch) and the
  // 2^max_log set minus a few (no multiple of the block size).
  write.fill(0xff);
  launch<Group>(points, 3, big - 8, write, {1});
  result.add(accumulator_is<Group>(out, write.download(), 0, cpu_sum<Group>(walk, 3, big - 5), 0xff,
                                   "n=" + std::to_string(big - 8) + " from point 3"));
  return result;
}

// Accumulation: two batches (the second launched as the partition program does, no
// arguments), then start = 1 over the previous sum, then three batches into a zeroed slot.
template <class Group>
Result check_accumulation(std::ostream& out, const std::vector<typename Group::Affine>& walk,
                          const DeviceBuffer& points, DeviceBuffer& write) {
  using Projective = typename Group::Projective;
  Result result;
  write.fill(0xff);
  launch<Group>(points, 0, 600, write, {1});
  launch<Group>(points, 600, 400, write, {});
  result.add(accumulator_is<Group>(out, write.download(), 0, cpu_sum<Group>(walk, 0, 1000), 0xff,
                                   "two batches 600 + 400 accumulate"));
  launch<Group>(points, 1000, 77, write, {1});
  result.add(accumulator_is<Group>(out, write.download(), 0, cpu_sum<Group>(walk, 1000, 1077), 0xff,
                                   "start=1 discards the previous sum"));
  write.fill(0);
  launch<Group>(points, 0, 1, write, {0, 256});
  launch<Group>(points, 1, 2000, write, {0, 256});
  launch<Group>(points, 2001, 999, write, {0, 256});
  result.add(accumulator_is<Group>(out, write.download(), 256, cpu_sum<Group>(walk, 0, 3000), 0,
                                   "three batches into a zeroed accumulator at offset 256"));
  write.fill(0);
  launch<Group>(points, 0, 0, write, {});
  result.add(accumulator_is<Group>(out, write.download(), 0, Projective::identity(), 0, "zero points, zeroed slot"));
  return result;
}

// Edge-case sets: equal points (doublings in the threads and in the tree), P/-P pairs, all at
// infinity, one point at infinity.
template <class Group>
Result check_edge_cases(std::ostream& out, const std::vector<typename Group::Affine>& walk, DeviceBuffer& write) {
  using Affine = typename Group::Affine;
  const std::uint64_t point_bytes = batch_point_bytes(Group::group);
  Result result;
  struct Case {
    std::string name;
    std::vector<Affine> set;
  };
  const Affine p = walk[0], q = walk[1];
  std::vector<Case> cases;
  cases.push_back({"1 point at infinity", {Affine::identity()}});
  cases.push_back({"P + P", {p, p}});
  cases.push_back({"P + (-P)", {p, -p}});
  cases.push_back({"4096 equal points", std::vector<Affine>(4096, p)});
  cases.push_back({"1000 equal points", std::vector<Affine>(1000, q)});
  cases.push_back({"1000 at infinity", std::vector<Affine>(1000, Affine::identity())});
  std::vector<Affine> pairs;
  for (std::uint64_t i = 0; i < 2048; ++i) {
    pairs.push_back(walk[i]);
    pairs.push_back(-walk[i]);
  }
  cases.push_back({"2048 pairs P, -P", pairs});
  pairs.push_back(q);
  cases.push_back({"2048 pairs P, -P and Q", pairs});
  std::vector<Affine> halves(walk.begin(), walk.begin() + 2048);
  for (std::uint64_t i = 0; i < 2048; ++i) halves.push_back(-walk[i]);  // P_i meets -P_i across threads
  cases.push_back({"P_0..P_2047 then their negations", halves});
  for (const auto& item : cases) {
    DeviceBuffer set_points(item.set.size() * point_bytes);
    upload_points<Group>(set_points, item.set);
    write.fill(0xff);
    launch<Group>(set_points, 0, item.set.size(), write, {1});
    result.add(
        accumulator_is<Group>(out, write.download(), 0, cpu_sum<Group>(item.set, 0, item.set.size()), 0xff, item.name));
  }
  return result;
}

// Arguments that do not fit are refused before anything runs.
template <class Group>
Result check_refusals(std::ostream& out, const std::vector<typename Group::Affine>& walk, const DeviceBuffer& points,
                      DeviceBuffer& write) {
  const std::uint64_t point_bytes = batch_point_bytes(Group::group);
  Result result;
  const std::uint64_t accumulator_bytes = batch_accumulator_bytes(Group::group);
  DeviceBuffer small(batch_write_bytes(Group::group, 0) - 16);
  result.add(group_rejects<Group>(out, "a write buffer without room for the scratch",
                                  [&] { launch<Group>(points, 0, 10, small, {1}); }));
  result.add(group_rejects<Group>(out, "an offset that is no multiple of 16", [&] {
    launch<Group>(points, 0, 10, write, {1, 8});
  }));
  result.add(group_rejects<Group>(out, "an accumulator overlapping the scratch", [&] {
    launch<Group>(points, 0, 10, write, {1, kWriteBytes - kBatchAdditionScratchBytes - accumulator_bytes + 16});
  }));
  result.add(group_rejects<Group>(out, "a points buffer smaller than work_units", [&] {
    const KernelLaunch kernel{Group::name, 10, {1}, {points.use(0, 9 * point_bytes)}, {write.use(0, write.bytes)}};
    (*find_launcher(Group::name))(kernel, nullptr);
  }));
  // The largest offset that fits is accepted.
  write.fill(0xff);
  const std::uint64_t last_offset = kWriteBytes - kBatchAdditionScratchBytes - accumulator_bytes;
  launch<Group>(points, 0, 1000, write, {1, last_offset});
  result.add(accumulator_is<Group>(out, write.download(), last_offset, cpu_sum<Group>(walk, 0, 1000), 0xff,
                                   "accumulator right below the scratch"));
  return result;
}

template <class Group>
Result check_group(std::ostream& out, unsigned max_log, std::uint64_t seed) {
  using Affine = typename Group::Affine;
  Result result;
  const std::uint64_t big = std::uint64_t{1} << max_log;
  const std::uint64_t point_bytes = batch_point_bytes(Group::group);
  std::vector<Affine> walk = walk_points<Group>(std::max<std::uint64_t>(big, 4096), seed);
  // Points at infinity in the walk: every 37th and the last one (a tail the last block reads).
  for (std::uint64_t i = 5; i < walk.size(); i += 37) walk[i] = Affine::identity();
  walk.back() = Affine::identity();
  DeviceBuffer points(walk.size() * point_bytes);
  upload_points<Group>(points, walk);
  DeviceBuffer write(kWriteBytes);
  result.add(check_sizes<Group>(out, walk, points, write, big));
  result.add(check_accumulation<Group>(out, walk, points, write));
  result.add(check_edge_cases<Group>(out, walk, write));
  result.add(check_refusals<Group>(out, walk, points, write));
  return result;
}

template <class Group>
Result bench_group(std::ostream& out, unsigned log_size, int repetitions, std::uint64_t seed) {
  Result result;
  const std::uint64_t tile = std::uint64_t{1} << std::min(20u, log_size);
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const std::uint64_t point_bytes = batch_point_bytes(Group::group);
  const auto walk = walk_points<Group>(tile, seed);
  DeviceBuffer points(n * point_bytes);
  {
    std::vector<std::uint8_t> bytes(tile * point_bytes);
    for (std::uint64_t i = 0; i < tile; ++i) encode(walk[i], bytes.data() + i * point_bytes);
    for (std::uint64_t first = 0; first < n; first += tile) {
      STAGEHAND_CUDA_CHECK(cudaMemcpy(static_cast<std::uint8_t*>(points.pointer) + first * point_bytes, bytes.data(),
                                      bytes.size(), cudaMemcpyHostToDevice));
    }
  }
  STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
  DeviceBuffer write(kWriteBytes);
  write.fill(0xff);
  const auto timing = check_support::time_launches(
      repetitions, [&](cudaStream_t stream) { launch<Group>(points, 0, n, write, {1}, stream); });
  const double median = timing.median;
  // The points are the walk repeated n/tile times: the sum is that multiple of the walk's sum.
  const auto expected = cpu_sum<Group>(walk, 0, tile).multiply(math::Fr::from_uint64(n / tile));
  result.add(accumulator_is<Group>(out, write.download(), 0, expected, 0xff,
                                   "2^" + std::to_string(log_size) + " (timed runs) equals the CPU sum"));
  char line[256];
  std::snprintf(line, sizeof line,
                "bench %s 2^%u points: median %.3f ms (min %.3f, max %.3f, %d runs), %.1f Mpoints/s, %.3f ns/point, "
                "%u blocks",
                Group::name, log_size, median, timing.min, timing.max, repetitions, n / median / 1e3, median * 1e6 / n,
                batch_addition_blocks(Group::group, n, checked_arithmetic));
  out << line << std::endl;
  return result;
}

const char* arithmetic_name(BatchArithmetic arithmetic) {
  return arithmetic == BatchArithmetic::f64 ? "f64" : "integer";
}

// Runs `body` with `arithmetic` under check.
template <class Body>
Result with_arithmetic(std::ostream& out, BatchGroup group, BatchArithmetic arithmetic, Body&& body) {
  out << "  (" << arithmetic_name(arithmetic) << " products"
      << (arithmetic == default_batch_arithmetic(group) ? ", the default" : "") << ")" << std::endl;
  checked_arithmetic = arithmetic;
  struct Reset {
    ~Reset() { checked_arithmetic.reset(); }
  } reset;
  return body();
}

}  // namespace

Result check_batch_addition(std::ostream& out, BatchGroup group, unsigned max_log, std::uint64_t seed) {
  Result total;
  for (auto arithmetic : {BatchArithmetic::integer, BatchArithmetic::f64}) {
    total.add(with_arithmetic(out, group, arithmetic, [&] {
      return group == BatchGroup::g1 ? check_group<G1>(out, max_log, seed) : check_group<G2>(out, max_log, seed);
    }));
  }
  return total;
}

Result bench_batch_addition(std::ostream& out, BatchGroup group, unsigned log_size, int repetitions,
                            std::uint64_t seed) {
  // Alternating rounds, so that both forms see the same clocks.
  Result total;
  for (int round = 0; round < 2; ++round) {
    for (auto arithmetic : {BatchArithmetic::integer, BatchArithmetic::f64}) {
      total.add(with_arithmetic(out, group, arithmetic, [&] {
        return group == BatchGroup::g1 ? bench_group<G1>(out, log_size, repetitions, seed)
                                       : bench_group<G2>(out, log_size, repetitions, seed);
      }));
    }
  }
  return total;
}

}  // namespace stagehand::cuda::batch_checks
