#include "kernel_checks.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <span>
#include <cstring>
#include <memory>
#include <ostream>
#include <random>
#include <vector>

#include "launch/launchers.hpp"
#include "math/h_polynomial.hpp"
#include "math/msm.hpp"
#include "math/ntt.hpp"
#include "msm/msm.hpp"
#include "ntt/ntt.hpp"
#include "synthetic/sample_data.hpp"
#include "util/common_host.hpp"

namespace stagehand::cuda::checks {
namespace {

using Clock = std::chrono::steady_clock;

struct DeviceBuffer {
  void* pointer = nullptr;
  std::uint64_t bytes = 0;
  explicit DeviceBuffer(std::uint64_t size) : bytes(size) {
    SH_CUDA_OK(cudaMalloc(&pointer, size));
    SH_CUDA_OK(cudaMemset(pointer, 0xff, size));  // poison
  }
  ~DeviceBuffer() { cudaFree(pointer); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T>
  void upload(const std::vector<T>& values) {
    SH_CUDA_OK(cudaMemcpy(pointer, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  template <class T>
  std::vector<T> download(std::uint64_t count) const {
    std::vector<T> values(count);
    SH_CUDA_OK(cudaMemcpy(values.data(), pointer, count * sizeof(T), cudaMemcpyDeviceToHost));
    return values;
  }
};

// Fr values travel as their Montgomery limbs; a poisoned (unwritten) element is >= r and fails
// from_montgomery_limbs, so it can never compare equal.
using FrLimbs = math::Limbs<4>;

std::vector<FrLimbs> limbs_of(const std::vector<math::Fr>& values) {
  std::vector<FrLimbs> limbs(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) limbs[i] = values[i].montgomery_limbs();
  return limbs;
}

// Index of the first mismatch, or -1.
long long first_mismatch(const std::vector<FrLimbs>& device, const std::vector<math::Fr>& expected) {
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (device[i] != expected[i].montgomery_limbs()) return static_cast<long long>(i);
  }
  return -1;
}

void words_of(FrWords& words, const math::Fr& value) {
  const auto& limbs = value.montgomery_limbs();
  for (int i = 0; i < 4; ++i) words[i] = limbs[i];
}

double seconds_since(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

using check_support::report;
using check_support::rejects;

// A buffer of `count` Fr plus guard elements behind it: poisoned, then the input copied in; the
// guard must still hold the poison after the kernel.
constexpr std::uint64_t kGuard = 64;
bool guard_intact(const DeviceBuffer& buffer, std::uint64_t count) {
  std::vector<std::uint8_t> bytes(kGuard * 32);
  SH_CUDA_OK(cudaMemcpy(bytes.data(), static_cast<std::uint8_t*>(buffer.pointer) + count * 32, bytes.size(),
                        cudaMemcpyDeviceToHost));
  for (std::uint8_t byte : bytes) {
    if (byte != 0xff) return false;
  }
  return true;
}

// An unreduced coordinate (poison) gives (0, 0, 1), which is not on the curve and so never
// equals an expected point.
math::G1Projective point_from(const G1JacobianBytes& bytes) {
  math::G1Projective point;
  math::Fq* coordinates[3] = {&point.x, &point.y, &point.z};
  for (int c = 0; c < 3; ++c) {
    math::Limbs<6> limbs;
    std::memcpy(limbs.data(), bytes.bytes + 48 * c, 48);
    const auto value = math::Fq::from_montgomery_limbs(limbs);
    if (!value) return math::G1Projective{math::Fq::zero(), math::Fq::zero(), math::Fq::one()};
    *coordinates[c] = *value;
  }
  return point;
}

std::vector<math::G1Affine> affine_from_bytes(const std::uint8_t* bytes, std::uint64_t count) {
  std::vector<math::G1Affine> points(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    math::Limbs<6> x, y;
    std::memcpy(x.data(), bytes + 96 * i, 48);
    std::memcpy(y.data(), bytes + 96 * i + 48, 48);
    if (std::all_of(x.begin(), x.end(), [](auto l) { return l == 0; }) &&
        std::all_of(y.begin(), y.end(), [](auto l) { return l == 0; })) {
      points[i] = math::G1Affine::identity();
    } else {
      points[i] = math::G1Affine::from_coordinates(*math::Fq::from_montgomery_limbs(x), *math::Fq::from_montgomery_limbs(y));
    }
  }
  return points;
}

std::vector<math::Fr> scalars_from_bytes(const std::uint8_t* bytes, std::uint64_t count, bool montgomery) {
  std::vector<math::Fr> scalars(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    math::Limbs<4> limbs;
    std::memcpy(limbs.data(), bytes + 32 * i, 32);
    scalars[i] = montgomery ? *math::Fr::from_montgomery_limbs(limbs) : *math::Fr::from_canonical_limbs(limbs);
  }
  return scalars;
}

// One device MSM through msm_g1_windows with every output poisoned; returns the combined point.
G1JacobianBytes device_msm(const std::uint8_t* point_bytes, const std::uint8_t* scalar_bytes, std::uint64_t n,
                           bool montgomery, unsigned window_bits, const MsmTuning& tuning = MsmTuning{}) {
  MsmPlan plan = msm_plan(n, window_bits);
  plan.tuning = tuning;
  DeviceBuffer points(n * kG1AffineBytes), scalars(n * kFrBytes), scratch(msm_scratch_bytes(plan)),
      sums(msm_result_bytes(plan));
  SH_CUDA_OK(cudaMemcpy(points.pointer, point_bytes, n * kG1AffineBytes, cudaMemcpyHostToDevice));
  SH_CUDA_OK(cudaMemcpy(scalars.pointer, scalar_bytes, n * kFrBytes, cudaMemcpyHostToDevice));
  msm_g1_windows(points.pointer, scalars.pointer, montgomery, plan, sums.pointer, scratch.pointer, nullptr);
  SH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<std::uint8_t> host(msm_result_bytes(plan));
  SH_CUDA_OK(cudaMemcpy(host.data(), sums.pointer, host.size(), cudaMemcpyDeviceToHost));
  return msm_combine_windows({host.data()}, plan.window_count, plan.window_bits);
}

// The sample points are expensive; tests of sizes <= 2^22 share prefixes of one set.
struct PointSet {
  std::vector<std::uint8_t> bytes;
  PointWalk walk;
  std::uint64_t count = 0;
};
const PointSet& shared_points(std::uint64_t count) {
  static PointSet set;
  if (set.count < count) {
    set.bytes.assign(count * 96, 0);
    set.walk = fill_sample_points(set.bytes, count, 4242);
    set.count = count;
  }
  return set;
}

}  // namespace

Result check_ntt(std::ostream& out, unsigned log_size, std::uint64_t seed) {
  Result result;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const math::Domain domains[2] = {math::Domain::snarkjs(log_size), math::Domain::classic(log_size)};
  const char* names[2] = {"snarkjs", "classic"};
  const std::pair<NttKind, const char*> kinds[4] = {{NttKind::forward, "ntt_forward"},
                                                    {NttKind::inverse, "ntt_inverse"},
                                                    {NttKind::coset_forward, "coset_ntt"},
                                                    {NttKind::coset_inverse, "coset_intt"}};
  DeviceBuffer values((n + kGuard) * 32);
  for (int d = 0; d < 2; ++d) {
    const math::Domain& domain = domains[d];
    DeviceBuffer table(ntt_domain_bytes(log_size));
    FrWords root, coset;
    words_of(root, domain.root());
    words_of(coset, domain.coset_generator());
    ntt_domain_init(table.pointer, log_size, root, coset, nullptr);
    for (int k = 0; k < 4; ++k) {
      const auto input = random_fr(n, seed * 131 + d * 7 + k);
      std::vector<math::Fr> expected = input;
      switch (kinds[k].first) {
        case NttKind::forward: math::ntt(expected, domain); break;
        case NttKind::inverse: math::intt(expected, domain); break;
        case NttKind::coset_forward: math::coset_ntt(expected, domain); break;
        case NttKind::coset_inverse: math::coset_intt(expected, domain); break;
      }
      // Every form of the twiddle multiplication on the same input (NttVariant).
      for (const NttVariant variant : kNttVariants) {
        SH_CUDA_OK(cudaMemset(values.pointer, 0xff, values.bytes));
        values.upload(limbs_of(input));
        ntt(values.pointer, table.pointer, log_size, kinds[k].first, nullptr, variant);
        SH_CUDA_OK(cudaDeviceSynchronize());
        const long long bad = first_mismatch(values.download<FrLimbs>(n), expected);
        const bool guard = guard_intact(values, n);
        result.add(report(out, bad < 0 && guard,
                          std::string(kinds[k].second) + " " + names[d] + " 2^" + std::to_string(log_size) + " (" +
                              ntt_variant_name(variant) + ")",
                          bad >= 0 ? "first mismatch at " + std::to_string(bad) : (guard ? "" : "wrote past the end")));
      }
    }
  }
  return result;
}

Result check_h(std::ostream& out, unsigned log_size, std::uint64_t seed) {
  Result result;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  DeviceBuffer a((n + kGuard) * 32), b((n + kGuard) * 32), c((n + kGuard) * 32);
  {  // h_pointwise with a factor
    const auto av = random_fr(n, seed + 1), bv = random_fr(n, seed + 2), cv = random_fr(n, seed + 3);
    const math::Fr factor = random_fr(1, seed + 4)[0];
    std::vector<math::Fr> expected(n);
    for (std::uint64_t i = 0; i < n; ++i) expected[i] = (av[i] * bv[i] - cv[i]) * factor;
    a.upload(limbs_of(av));
    b.upload(limbs_of(bv));
    c.upload(limbs_of(cv));
    FrWords words;
    words_of(words, factor);
    h_pointwise(a.pointer, b.pointer, c.pointer, n, &words, nullptr);
    SH_CUDA_OK(cudaDeviceSynchronize());
    const long long bad = first_mismatch(a.download<FrLimbs>(n), expected);
    result.add(report(out, bad < 0 && guard_intact(a, n), "h_pointwise 2^" + std::to_string(log_size)));
  }
  for (int form = 0; form < 2; ++form) {
    const math::Domain domain = form == 0 ? math::Domain::snarkjs(log_size) : math::Domain::classic(log_size);
    DeviceBuffer table(ntt_domain_bytes(log_size));
    FrWords root, coset;
    words_of(root, domain.root());
    words_of(coset, domain.coset_generator());
    ntt_domain_init(table.pointer, log_size, root, coset, nullptr);
    auto av = random_fr(n, seed + 10 + form), bv = random_fr(n, seed + 20 + form), cv = random_fr(n, seed + 30 + form);
    for (DeviceBuffer* buffer : {&a, &b, &c}) SH_CUDA_OK(cudaMemset(buffer->pointer, 0xff, buffer->bytes));
    a.upload(limbs_of(av));
    b.upload(limbs_of(bv));
    c.upload(limbs_of(cv));
    if (form == 0) {
      math::h_evaluations_snarkjs(av, bv, cv, domain);
    } else {
      math::h_coefficients_classic(av, bv, cv, domain);
    }
    h_polynomial(a.pointer, b.pointer, c.pointer, table.pointer, log_size, form == 0 ? HForm::snarkjs : HForm::classic,
                 nullptr);
    SH_CUDA_OK(cudaDeviceSynchronize());
    const long long bad = first_mismatch(a.download<FrLimbs>(n), av);
    result.add(report(out, bad < 0 && guard_intact(a, n),
                      std::string(form == 0 ? "h_polynomial_snarkjs" : "h_polynomial_classic") + " 2^" +
                          std::to_string(log_size),
                      bad >= 0 ? "first mismatch at " + std::to_string(bad) : ""));
  }
  return result;
}

Result check_msm(std::ostream& out, unsigned log_size, std::uint64_t seed, bool full_reference) {
  Result result;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const bool use_reference = full_reference || log_size <= 22;
  PointSet local;
  const PointSet* set = nullptr;
  if (log_size <= 22) {
    set = &shared_points(n);
  } else {
    local.bytes.assign(n * 96, 0);
    local.walk = fill_sample_points(local.bytes, n, seed + 77);
    local.count = n;
    set = &local;
  }
  std::vector<math::G1Affine> reference_points;
  if (use_reference) reference_points = affine_from_bytes(set->bytes.data(), n);
  for (bool montgomery : {false, true}) {
    std::vector<std::uint8_t> scalar_bytes(n * 32);
    fill_sample_scalars(scalar_bytes, n, seed * 17 + montgomery, montgomery);
    const auto begin = Clock::now();
    math::G1Projective expected;
    if (use_reference) {
      expected = math::msm(reference_points, scalars_from_bytes(scalar_bytes.data(), n, montgomery));
    } else {
      std::vector<std::uint8_t> canonical = scalar_bytes;
      if (montgomery) {
        for (std::uint64_t i = 0; i < n; ++i) {
          math::Limbs<4> limbs;
          std::memcpy(limbs.data(), scalar_bytes.data() + 32 * i, 32);
          const auto canonical_limbs = math::Fr::from_montgomery_limbs(limbs)->to_canonical_limbs();
          std::memcpy(canonical.data() + 32 * i, canonical_limbs.data(), 32);
        }
      }
      expected = expected_walk_msm(canonical, n, set->walk);
    }
    const double cpu_seconds = seconds_since(begin);
    const G1JacobianBytes got = device_msm(set->bytes.data(), scalar_bytes.data(), n, montgomery, 0);
    const MsmPlan plan = msm_plan(n);
    result.add(report(out, point_from(got) == expected,
                      std::string("msm_g1 ") + (montgomery ? "montgomery" : "canonical") + " 2^" + std::to_string(log_size),
                      "c=" + std::to_string(plan.window_bits) + (use_reference ? " vs math::msm" : " vs discrete logs") +
                          " (cpu " + std::to_string(cpu_seconds).substr(0, 5) + " s)"));
  }
  return result;
}

Result check_msm_edge_cases(std::ostream& out, std::uint64_t seed) {
  Result result;
  const std::uint64_t n = 1024;
  const PointSet& set = shared_points(n);
  std::vector<std::uint8_t> points(set.bytes.begin(), set.bytes.begin() + n * 96);
  std::vector<std::uint8_t> scalars(n * 32);
  fill_sample_scalars(scalars, n, seed + 5, false);
  const math::Fr minus_one = -math::Fr::one();
  for (std::uint64_t i = 0; i < n; ++i) {
    switch (i % 16) {
      case 0: std::memset(scalars.data() + 32 * i, 0, 32); break;             // zero scalar
      case 1: std::memset(points.data() + 96 * i, 0, 96); break;              // point at infinity
      case 2: std::memcpy(points.data() + 96 * i, points.data() + 96 * (i - 2), 96); break;  // repeated point
      case 3: {                                                               // opposite point
        const auto p = affine_from_bytes(points.data() + 96 * (i - 1), 1)[0];
        const auto negative = (-p).y.montgomery_limbs();
        std::memcpy(points.data() + 96 * i, points.data() + 96 * (i - 1), 48);
        std::memcpy(points.data() + 96 * i + 48, negative.data(), 48);
        std::memcpy(scalars.data() + 32 * i, scalars.data() + 32 * (i - 1), 32);  // cancels its partner
        break;
      }
      case 4: {
        const auto limbs = minus_one.to_canonical_limbs();
        std::memcpy(scalars.data() + 32 * i, limbs.data(), 32);
        break;
      }
      case 5: std::memset(scalars.data() + 32 * i, 0, 32); scalars[32 * i] = 1; break;  // one
      default: break;
    }
  }
  // A block of equal scalars (a heavy bucket) and equal points with equal scalars (P + P in a bucket).
  for (std::uint64_t i = 512; i < 640; ++i) std::memcpy(scalars.data() + 32 * i, scalars.data() + 32 * 512, 32);
  for (std::uint64_t i = 700; i < 708; ++i) {
    std::memcpy(points.data() + 96 * i, points.data() + 96 * 700, 96);
    std::memcpy(scalars.data() + 32 * i, scalars.data() + 32 * 700, 32);
  }
  const math::G1Projective expected = math::msm(affine_from_bytes(points.data(), n), scalars_from_bytes(scalars.data(), n, false));
  for (unsigned bits : {0u, 2u, 4u, 7u, 11u, 13u, 16u, 18u, 20u}) {
    const G1JacobianBytes got = device_msm(points.data(), scalars.data(), n, false, bits);
    result.add(report(out, point_from(got) == expected, "msm_g1 edge cases c=" + std::to_string(msm_plan(n, bits).window_bits)));
  }
  // All scalars zero: the identity.
  std::vector<std::uint8_t> zeros(n * 32, 0);
  result.add(report(out, point_from(device_msm(points.data(), zeros.data(), n, false, 0)).is_identity(), "msm_g1 all-zero scalars"));
  return result;
}

Result check_msm_streamed(std::ostream& out, unsigned log_size, unsigned batch_log, std::uint64_t seed) {
  Result result;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const PointSet& set = shared_points(n);
  void* pinned = nullptr;
  SH_CUDA_OK(cudaHostAlloc(&pinned, n * 96, cudaHostAllocDefault));
  std::memcpy(pinned, set.bytes.data(), n * 96);
  std::vector<std::uint8_t> scalars(n * 32);
  fill_sample_scalars(scalars, n, seed + 9, false);
  DeviceBuffer device_scalars(n * 32);
  SH_CUDA_OK(cudaMemcpy(device_scalars.pointer, scalars.data(), n * 32, cudaMemcpyHostToDevice));
  const math::G1Projective expected = math::msm(affine_from_bytes(set.bytes.data(), n), scalars_from_bytes(scalars.data(), n, false));
  cudaStream_t compute, copy;
  SH_CUDA_OK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  SH_CUDA_OK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
  {
    // A last batch shorter than the others, too (and the same object run twice: the second run
    // must start from fresh buckets).
    StreamedMsm streamed(std::uint64_t{1} << batch_log);
    const auto got = streamed.run(pinned, device_scalars.pointer, n - 3, false, compute, copy);
    const auto short_points = affine_from_bytes(set.bytes.data(), n - 3);
    const auto short_scalars = scalars_from_bytes(scalars.data(), n - 3, false);
    const math::G1Projective expected_short = math::msm(short_points, short_scalars);
    result.add(report(out, point_from(got) == expected_short,
                      "msm_g1 streamed 2^" + std::to_string(log_size) + "-3 in batches of 2^" + std::to_string(batch_log)));
    const auto got_full = streamed.run(pinned, device_scalars.pointer, n, false, compute, copy);
    result.add(report(out, point_from(got_full) == expected,
                      "msm_g1 streamed 2^" + std::to_string(log_size) + " in batches of 2^" + std::to_string(batch_log)));
  }
  {
    // Window width 20 (its sparse top window cut into items in every batch), Montgomery scalars,
    // a batch size that does not divide the count, and a block of equal scalars (one heavy bucket
    // per window in every batch).
    std::vector<std::uint8_t> heavy(n * 32);
    fill_sample_scalars(heavy, n, seed + 10, true);
    for (std::uint64_t i = n / 4; i < n / 2; ++i) std::memcpy(heavy.data() + 32 * i, heavy.data() + 32 * (n / 4), 32);
    DeviceBuffer heavy_scalars(n * 32);
    SH_CUDA_OK(cudaMemcpy(heavy_scalars.pointer, heavy.data(), n * 32, cudaMemcpyHostToDevice));
    const math::G1Projective expected_heavy =
        math::msm(affine_from_bytes(set.bytes.data(), n), scalars_from_bytes(heavy.data(), n, true));
    const std::uint64_t batch = (std::uint64_t{1} << batch_log) + 5;
    for (unsigned bits : {20u, 0u}) {
      StreamedMsm streamed(batch, bits);
      const auto got = streamed.run(pinned, heavy_scalars.pointer, n, true, compute, copy);
      result.add(report(out, point_from(got) == expected_heavy,
                        "msm_g1 streamed 2^" + std::to_string(log_size) + " c=" +
                            std::to_string(msm_plan(batch, bits).window_bits) +
                            " Montgomery, a quarter equal scalars, batches of 2^" + std::to_string(batch_log) + "+5"));
    }
  }
  cudaStreamDestroy(compute);
  cudaStreamDestroy(copy);
  cudaFreeHost(pinned);
  return result;
}

Result check_msm_tunings(std::ostream& out, unsigned log_size, std::uint64_t seed) {
  Result result;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const PointSet& set = shared_points(n);
  const auto points = affine_from_bytes(set.bytes.data(), n);
  for (bool heavy : {false, true}) {
    std::vector<std::uint8_t> scalars(n * 32);
    fill_sample_scalars(scalars, n, seed + heavy, false);
    // Heavy: half the scalars equal (one bucket per window holds half the points) and an eighth
    // equal to one (the lowest window's first bucket).
    if (heavy) {
      for (std::uint64_t i = 0; i < n / 2; ++i) std::memcpy(scalars.data() + 32 * i, scalars.data(), 32);
      for (std::uint64_t i = n / 2; i < n / 2 + n / 8; ++i) {
        std::memset(scalars.data() + 32 * i, 0, 32);
        scalars[32 * i] = 1;
      }
    }
    const math::G1Projective expected = math::msm(points, scalars_from_bytes(scalars.data(), n, false));
    const std::pair<const char*, MsmTuning> tunings[] = {
        {"default", MsmTuning{}},
        {"one thread per bucket", MsmTuning{false, false, ItemSum::integer, false}},
        {"one thread per bucket, deferred", MsmTuning{false, true, ItemSum::integer, true}},
        {"balanced, per group", MsmTuning{true, false, ItemSum::f64, true}},
        {"balanced, per group, one segment kernel", MsmTuning{true, false, ItemSum::f64, false}},
        {"one segment kernel", MsmTuning{true, true, ItemSum::f64, false}},
        {"FP64 products, no prefetch", MsmTuning{true, true, ItemSum::f64, true}},
        {"integer products, prefetch", MsmTuning{true, true, ItemSum::integer_prefetch, true}},
        {"integer products", MsmTuning{true, true, ItemSum::integer, true}}};
    for (unsigned bits : {0u, 8u, 20u}) {
      for (const auto& [name, tuning] : tunings) {
        const G1JacobianBytes got = device_msm(set.bytes.data(), scalars.data(), n, false, bits, tuning);
        result.add(report(out, point_from(got) == expected,
                          std::string("msm_g1 ") + name + (heavy ? " heavy buckets" : "") + " c=" +
                              std::to_string(msm_plan(n, bits).window_bits) + " 2^" + std::to_string(log_size)));
      }
    }
  }
  return result;
}

Result check_launchers(std::ostream& out, std::uint64_t seed) {
  Result result;
  for (std::string_view name : launcher_names()) {
    result.add(report(out, find_launcher(name) != nullptr, "launcher " + std::string(name) + " registered"));
  }
  result.add(report(out, find_launcher("no_such_kernel") == nullptr, "unknown launcher name gives nullptr"));

  // busy_wait: 2 ms asked, at least 2 ms measured by events.
  cudaStream_t stream;
  SH_CUDA_OK(cudaStreamCreate(&stream));
  cudaEvent_t start, stop;
  SH_CUDA_OK(cudaEventCreate(&start));
  SH_CUDA_OK(cudaEventCreate(&stop));
  KernelLaunch wait{"busy_wait", 2'000'000, {}, {}, {}};
  (*find_launcher("busy_wait"))(wait, stream);  // warm-up
  SH_CUDA_OK(cudaEventRecord(start, stream));
  (*find_launcher("busy_wait"))(wait, stream);
  SH_CUDA_OK(cudaEventRecord(stop, stream));
  SH_CUDA_OK(cudaEventSynchronize(stop));
  float ms = 0;
  SH_CUDA_OK(cudaEventElapsedTime(&ms, start, stop));
  result.add(report(out, ms >= 1.99f && ms < 50.0f, "busy_wait 2 ms", std::to_string(ms) + " ms"));

  // The NTT, the H form and the MSM through the table.
  const unsigned log_size = 12;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const math::Domain domain = math::Domain::snarkjs(log_size);
  DeviceBuffer table(ntt_domain_bytes(log_size)), values(n * 32);
  KernelLaunch init{"ntt_domain_init", n, {log_size}, {}, {BufferUse{DevicePointer{reinterpret_cast<std::uint64_t>(table.pointer)}, table.bytes}}};
  for (int i = 0; i < 4; ++i) init.arguments.push_back(domain.root().montgomery_limbs()[i]);
  for (int i = 0; i < 4; ++i) init.arguments.push_back(domain.coset_generator().montgomery_limbs()[i]);
  (*find_launcher("ntt_domain_init"))(init, stream);
  const auto input = random_fr(n, seed + 3);
  values.upload(limbs_of(input));
  KernelLaunch forward{"coset_ntt", n, {log_size},
                       {BufferUse{DevicePointer{reinterpret_cast<std::uint64_t>(table.pointer)}, table.bytes}},
                       {BufferUse{DevicePointer{reinterpret_cast<std::uint64_t>(values.pointer)}, values.bytes}}};
  (*find_launcher("coset_ntt"))(forward, stream);
  SH_CUDA_OK(cudaStreamSynchronize(stream));
  std::vector<math::Fr> expected = input;
  math::coset_ntt(expected, domain);
  result.add(report(out, first_mismatch(values.download<FrLimbs>(n), expected) < 0, "launcher coset_ntt 2^12"));

  result.add(rejects(out, "launcher rejects a buffer smaller than the transform", [&] {
    KernelLaunch small = forward;
    small.writes[0].bytes = 32;
    (*find_launcher("ntt_forward"))(small, stream);
  }));

  const PointSet& set = shared_points(n);
  std::vector<std::uint8_t> scalars(n * 32);
  fill_sample_scalars(scalars, n, seed + 4, true);
  const MsmPlan plan = msm_plan(n);
  DeviceBuffer points(n * 96), device_scalars(n * 32), sums(msm_result_bytes(plan)), scratch(msm_scratch_bytes(plan));
  SH_CUDA_OK(cudaMemcpy(points.pointer, set.bytes.data(), n * 96, cudaMemcpyHostToDevice));
  SH_CUDA_OK(cudaMemcpy(device_scalars.pointer, scalars.data(), n * 32, cudaMemcpyHostToDevice));
  auto use = [](const DeviceBuffer& buffer) {
    return BufferUse{DevicePointer{reinterpret_cast<std::uint64_t>(buffer.pointer)}, buffer.bytes};
  };
  KernelLaunch msm_launch{"msm_g1", n, {1, 0}, {use(points), use(device_scalars)}, {use(sums), use(scratch)}};
  (*find_launcher("msm_g1"))(msm_launch, stream);
  SH_CUDA_OK(cudaStreamSynchronize(stream));
  std::vector<std::uint8_t> host(msm_result_bytes(plan));
  SH_CUDA_OK(cudaMemcpy(host.data(), sums.pointer, host.size(), cudaMemcpyDeviceToHost));
  const auto got = msm_combine_windows({host.data()}, plan.window_count, plan.window_bits);
  const auto expected_msm = math::msm(affine_from_bytes(set.bytes.data(), n), scalars_from_bytes(scalars.data(), n, true));
  result.add(report(out, point_from(got) == expected_msm, "launcher msm_g1 2^12 (Montgomery scalars)"));

  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);
  return result;
}

namespace {

BufferUse use_of(const DeviceBuffer& buffer, std::uint64_t offset = 0, std::uint64_t bytes = 0) {
  return BufferUse{DevicePointer{reinterpret_cast<std::uint64_t>(buffer.pointer) + offset}, bytes ? bytes : buffer.bytes - offset};
}

void launch_through_table(const KernelLaunch& launch, cudaStream_t stream) {
  const KernelLauncher* launcher = find_launcher(launch.name);
  if (launcher == nullptr) throw std::runtime_error("no launcher for " + launch.name);
  (*launcher)(launch, stream);
}

// An XYZZ accumulator (X, Y, ZZ, ZZZ; Montgomery Fq) as a point; poison gives a point off the curve.
math::G1Projective point_from_xyzz(const std::uint8_t* bytes) {
  math::Fq coordinates[4];
  for (int c = 0; c < 4; ++c) {
    math::Limbs<6> limbs;
    std::memcpy(limbs.data(), bytes + 48 * c, 48);
    const auto value = math::Fq::from_montgomery_limbs(limbs);
    if (!value) return math::G1Projective{math::Fq::zero(), math::Fq::zero(), math::Fq::one()};
    coordinates[c] = *value;
  }
  if (coordinates[2].is_zero()) return math::G1Projective::identity();
  const math::Fq x = coordinates[0] * coordinates[2].inverse();
  const math::Fq y = coordinates[1] * coordinates[3].inverse();
  return math::G1Projective::from_affine(math::G1Affine::from_coordinates(x, y));
}

}  // namespace

Result check_partition_launchers(std::ostream& out, unsigned log_size, std::uint64_t seed) {
  Result result;
  const std::string size = " 2^" + std::to_string(log_size);
  cudaStream_t stream;
  SH_CUDA_OK(cudaStreamCreate(&stream));
  result.add(report(out, kernel_scratch_bytes("ntt", 1u << log_size) == 0 && kernel_scratch_bytes("msm_batch", 1024) > 0 &&
                             kernel_scratch_bytes("tail_msm", 1024) > 0,
                    "scratch query: none for ntt, some for msm_batch and tail_msm"));

  // ntt_twiddles, then each kind of ntt on fresh random values, against math (snarkjs's domain).
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const math::Domain domain = math::Domain::snarkjs(log_size);
  DeviceBuffer twiddles(std::max<std::uint64_t>(16 * n, ntt_domain_bytes(log_size))), values(n * 32);
  launch_through_table(KernelLaunch{"ntt_twiddles", n / 2, {log_size}, {}, {use_of(twiddles)}}, stream);
  const char* kinds[] = {"forward", "inverse", "coset forward", "coset inverse"};
  for (std::uint64_t kind = 0; kind < 4; ++kind) {
    const auto input = random_fr(n, seed + 11 * kind);
    SH_CUDA_OK(cudaMemset(values.pointer, 0xff, values.bytes));
    values.upload(limbs_of(input));
    launch_through_table(KernelLaunch{"ntt", n, {log_size, kind}, {use_of(values), use_of(twiddles)}, {use_of(values)}}, stream);
    SH_CUDA_OK(cudaStreamSynchronize(stream));
    std::vector<math::Fr> expected = input;
    if (kind == 0) math::ntt(expected, domain);
    if (kind == 1) math::intt(expected, domain);
    if (kind == 2) math::coset_ntt(expected, domain);
    if (kind == 3) math::coset_intt(expected, domain);
    result.add(report(out, first_mismatch(values.download<FrLimbs>(n), expected) < 0, std::string("partition ntt ") + kinds[kind] + size));
  }

  // The H MSM as the program streams it: batches of `capacity` points, the last one short, each
  // taking its scalars from its offset in one scalar array; then msm_reduce.
  const std::uint64_t capacity = n / 4;
  const std::uint64_t total = 2 * capacity + capacity / 2;
  const PointSet& set = shared_points(total);
  std::vector<std::uint8_t> scalar_bytes(total * 32);
  fill_sample_scalars(scalar_bytes, total, seed + 5, true);
  DeviceBuffer points(total * 96), scalars(total * 32), results(8 << 20), other(8 << 20),
      scratch(kernel_scratch_bytes("msm_batch", capacity));
  SH_CUDA_OK(cudaMemcpy(points.pointer, set.bytes.data(), total * 96, cudaMemcpyHostToDevice));
  SH_CUDA_OK(cudaMemcpy(scalars.pointer, scalar_bytes.data(), total * 32, cudaMemcpyHostToDevice));
  const MsmPlan plan = msm_plan(capacity);
  auto streamed_msm = [&](std::uint64_t count) {
    for (std::uint64_t first = 0; first < count; first += capacity) {
      const std::uint64_t batch = std::min(capacity, count - first);
      launch_through_table(KernelLaunch{"msm_batch", batch, {first, capacity, first == 0 ? 1u : 0u},
                                        {use_of(points, first * 96, batch * 96), use_of(scalars)},
                                        {use_of(results), use_of(scratch)}},
                           stream);
    }
    SH_CUDA_OK(cudaMemset(results.pointer, 0xff, results.bytes));
    launch_through_table(KernelLaunch{"msm_reduce", 1, {capacity}, {use_of(results), use_of(other)}, {use_of(results), use_of(scratch)}},
                         stream);
    SH_CUDA_OK(cudaStreamSynchronize(stream));
    std::vector<std::uint8_t> host(msm_result_bytes(plan));
    SH_CUDA_OK(cudaMemcpy(host.data(), results.pointer, host.size(), cudaMemcpyDeviceToHost));
    return point_from(msm_combine_windows({host.data()}, plan.window_count, plan.window_bits));
  };
  auto reference = [&](std::uint64_t count) {
    return math::msm(affine_from_bytes(set.bytes.data(), count), scalars_from_bytes(scalar_bytes.data(), count, true));
  };
  result.add(report(out, streamed_msm(total) == reference(total),
                    "partition msm_batch x3 (last short) + msm_reduce" + size + " (c=" + std::to_string(plan.window_bits) + ")"));
  result.add(report(out, streamed_msm(capacity + 7) == reference(capacity + 7), "partition msm_batch restarted on the same scratch" + size));

  // tail_msm: items of a point and a canonical scalar, accumulated over launches into the tail's
  // buckets, then tail_reduce into an accumulator at 1 KiB; the same scratch restarted; an empty tail.
  const std::uint64_t tail_capacity = capacity;
  const std::uint64_t tail_total = tail_capacity + tail_capacity / 3;
  std::vector<std::uint8_t> tail_scalars(tail_total * 32), items(tail_total * 128);
  fill_sample_scalars(tail_scalars, tail_total, seed + 6, false);
  for (std::uint64_t i = 0; i < tail_total; ++i) {
    std::memcpy(items.data() + 128 * i, set.bytes.data() + 96 * i, 96);
    std::memcpy(items.data() + 128 * i + 96, tail_scalars.data() + 32 * i, 32);
  }
  DeviceBuffer device_items(tail_total * 128), sums(8 << 20), tail_scratch(kernel_scratch_bytes("tail_msm", tail_capacity));
  SH_CUDA_OK(cudaMemcpy(device_items.pointer, items.data(), items.size(), cudaMemcpyHostToDevice));
  const std::uint64_t offset = 1024;
  auto tail_msm = [&](std::uint64_t total) {
    std::uint64_t first = 0;
    do {  // one launch (of no items) even for an empty tail
      const std::uint64_t count = std::min(tail_capacity, total - first);
      launch_through_table(KernelLaunch{"tail_msm", count, {first == 0 ? 1u : 0u, tail_capacity},
                                        {use_of(device_items, first * 128, count * 128)}, {use_of(tail_scratch)}},
                           stream);
      first += tail_capacity;
    } while (first < total);
    launch_through_table(KernelLaunch{"tail_reduce", 1, {offset, tail_capacity}, {}, {use_of(sums), use_of(tail_scratch)}},
                         stream);
    SH_CUDA_OK(cudaStreamSynchronize(stream));
    std::vector<std::uint8_t> sum_bytes(sums.bytes);
    SH_CUDA_OK(cudaMemcpy(sum_bytes.data(), sums.pointer, sum_bytes.size(), cudaMemcpyDeviceToHost));
    return sum_bytes;
  };
  auto tail_reference = [&](std::uint64_t count) {
    return math::msm(affine_from_bytes(set.bytes.data(), count), scalars_from_bytes(tail_scalars.data(), count, false));
  };
  const auto sum_bytes = tail_msm(tail_total);
  result.add(report(out, point_from_xyzz(sum_bytes.data() + offset) == tail_reference(tail_total),
                    "partition tail_msm x2 + tail_reduce into an accumulator" + size));
  bool untouched = true;
  for (std::uint64_t i = 0; i < sum_bytes.size(); ++i) {
    if ((i < offset || i >= offset + 192) && sum_bytes[i] != 0xff) untouched = false;
  }
  result.add(report(out, untouched, "partition tail_msm and tail_reduce write nothing outside the accumulator"));
  const std::uint64_t restarted = tail_capacity / 2 + 3;
  result.add(report(out, point_from_xyzz(tail_msm(restarted).data() + offset) == tail_reference(restarted),
                    "partition tail_msm restarted on the same scratch" + size));
  result.add(report(out, point_from_xyzz(tail_msm(0).data() + offset) == math::G1Projective::identity(),
                    "partition tail_msm over no items: infinity"));

  result.add(rejects(out, "partition msm_batch refuses a batch above its capacity", [&] {
    launch_through_table(KernelLaunch{"msm_batch", capacity + 1, {0, capacity, 1}, {use_of(points), use_of(scalars)},
                                      {use_of(results), use_of(scratch)}},
                         stream);
  }));
  SH_CUDA_OK(cudaStreamSynchronize(stream));
  cudaStreamDestroy(stream);
  return result;
}

}  // namespace stagehand::cuda::checks
