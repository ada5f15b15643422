#include "kernel_checks.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <ostream>
#include <random>
#include <span>
#include <vector>

#include "device/kernel_abi.hpp"
#include "kernel_check_helpers.hpp"
#include "math/h_polynomial.hpp"
#include "math/msm.hpp"
#include "math/ntt.hpp"
#include "math/g2.hpp"
#include "msm/msm.hpp"
#include "msm/msm_results_host.hpp"
#include "ntt/ntt.hpp"
#include "synthetic/sample_data.hpp"
#include "util/common_host.hpp"

namespace stagehand::cuda::checks {
namespace {

// One device MSM of `plan` (a precomputed plan: its bases computed on the device first, in place
// after the points) with every output poisoned; returns the combined point.
G1JacobianBytes device_msm(const std::uint8_t* point_bytes, const std::uint8_t* scalar_bytes, bool montgomery,
                           const MsmPlan& plan) {
  const std::uint64_t n = plan.point_count;
  const std::uint64_t point_bytes_total = plan.precomputed ? msm_precomputed_bytes(plan) : n * kG1AffineBytes;
  DeviceBuffer points(point_bytes_total), scalars(n * kFrBytes), scratch(msm_scratch_bytes(plan)),
      sums(msm_result_bytes(plan));
  STAGEHAND_CUDA_CHECK(cudaMemset(points.pointer, 0xff, point_bytes_total));
  STAGEHAND_CUDA_CHECK(cudaMemset(sums.pointer, 0xff, msm_result_bytes(plan)));
  STAGEHAND_CUDA_CHECK(cudaMemcpy(points.pointer, point_bytes, n * kG1AffineBytes, cudaMemcpyHostToDevice));
  STAGEHAND_CUDA_CHECK(cudaMemcpy(scalars.pointer, scalar_bytes, n * kFrBytes, cudaMemcpyHostToDevice));
  if (plan.precomputed) msm_precompute_bases(plan, points.pointer, points.pointer, nullptr);
  msm_g1_windows(points.pointer, scalars.pointer, montgomery, plan, sums.pointer, scratch.pointer, nullptr);
  STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::uint8_t> host(msm_result_bytes(plan));
  STAGEHAND_CUDA_CHECK(cudaMemcpy(host.data(), sums.pointer, host.size(), cudaMemcpyDeviceToHost));
  return msm_combine_windows({host.data()}, msm_sum_count(plan), plan.window_bits);
}
G1JacobianBytes device_msm(const std::uint8_t* point_bytes, const std::uint8_t* scalar_bytes, std::uint64_t n,
                           bool montgomery, unsigned window_bits, const MsmTuning& tuning = MsmTuning{}) {
  MsmPlan plan = msm_plan(n, window_bits);
  plan.tuning = tuning;
  return device_msm(point_bytes, scalar_bytes, montgomery, plan);
}

// The edge cases' inputs: zero scalars, points at infinity, repeated and opposite points, r-1 and
// one, a block of equal scalars (a heavy bucket), equal points with equal scalars (P + P).
void make_edge_cases(std::vector<std::uint8_t>& points, std::vector<std::uint8_t>& scalars, std::uint64_t n,
                     std::uint64_t seed) {
  const PointSet& set = shared_points(n);
  points.assign(set.bytes.begin(), set.bytes.begin() + n * 96);
  scalars.assign(n * 32, 0);
  fill_sample_scalars(scalars, n, seed + 5, false);
  const math::Fr minus_one = -math::Fr::one();
  for (std::uint64_t i = 0; i < n; ++i) {
    switch (i % 16) {
      case 0: std::memset(scalars.data() + 32 * i, 0, 32); break;                            // zero scalar
      case 1: std::memset(points.data() + 96 * i, 0, 96); break;                             // point at infinity
      case 2: std::memcpy(points.data() + 96 * i, points.data() + 96 * (i - 2), 96); break;  // repeated point
      case 3: {                                                                              // opposite point
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
      case 5:
        std::memset(scalars.data() + 32 * i, 0, 32);
        scalars[32 * i] = 1;
        break;  // one
      default: break;
    }
  }
  for (std::uint64_t i = n / 2; i < n / 2 + n / 8; ++i)
    std::memcpy(scalars.data() + 32 * i, scalars.data() + 32 * (n / 2), 32);
  for (std::uint64_t i = n - 324; i < n - 316; ++i) {
    std::memcpy(points.data() + 96 * i, points.data() + 96 * (n - 324), 96);
    std::memcpy(scalars.data() + 32 * i, scalars.data() + 32 * (n - 324), 32);
  }
}

}  // namespace

Result check_ntt(std::ostream& out, unsigned log_size, std::uint64_t seed) {
  Result result;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const math::Domain domains[2] = {math::Domain::snarkjs(log_size), math::Domain::classic(log_size)};
  const char* names[2] = {"snarkjs", "classic"};
  const std::pair<NttKind, const char*> kinds[4] = {{NttKind::forward, kernel::ntt_forward},
                                                    {NttKind::inverse, kernel::ntt_inverse},
                                                    {NttKind::coset_forward, kernel::coset_ntt},
                                                    {NttKind::coset_inverse, kernel::coset_intt}};
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
        STAGEHAND_CUDA_CHECK(cudaMemset(values.pointer, 0xff, values.bytes));
        values.upload(limbs_of(input));
        ntt(values.pointer, table.pointer, log_size, kinds[k].first, nullptr, variant);
        STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
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

namespace {

// One H form on random a, b, c against the CPU reference, and for the classic form its two halves
// as well on the same input (h_classic_product over a and b, then h_classic_finish over a and c, each
// half holding two buffers as the assignment program does), which must leave a byte for byte the same.
Result check_h_form(std::ostream& out, unsigned log_size, HForm form, std::uint64_t seed, DeviceBuffer (&buffers)[3]) {
  Result result;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const int f = form == HForm::snarkjs ? 0 : 1;
  const math::Domain domain = f == 0 ? math::Domain::snarkjs(log_size) : math::Domain::classic(log_size);
  DeviceBuffer table(ntt_domain_bytes(log_size));
  FrWords root, coset;
  words_of(root, domain.root());
  words_of(coset, domain.coset_generator());
  ntt_domain_init(table.pointer, log_size, root, coset, nullptr);
  const std::vector<math::Fr> inputs[3] = {random_fr(n, seed + 10 + f), random_fr(n, seed + 20 + f),
                                           random_fr(n, seed + 30 + f)};
  auto av = inputs[0], bv = inputs[1], cv = inputs[2];
  if (f == 0) {
    math::h_evaluations_snarkjs(av, bv, cv, domain);
  } else {
    math::h_coefficients_classic(av, bv, cv, domain);
  }
  DeviceBuffer &a = buffers[0], &b = buffers[1], &c = buffers[2];
  const auto check = [&](const std::string& name, const auto& launch) {
    for (DeviceBuffer* buffer : {&a, &b, &c}) STAGEHAND_CUDA_CHECK(cudaMemset(buffer->pointer, 0xff, buffer->bytes));
    for (int i = 0; i < 3; ++i) buffers[i].upload(limbs_of(inputs[i]));
    launch();
    STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
    const long long bad = first_mismatch(a.download<FrLimbs>(n), av);
    const bool guards = guard_intact(a, n) && guard_intact(b, n) && guard_intact(c, n);
    result.add(report(out, bad < 0 && guards, name + " 2^" + std::to_string(log_size),
                      bad >= 0 ? "first mismatch at " + std::to_string(bad) : (guards ? "" : "wrote past the end")));
  };
  check(f == 0 ? kernel::h_polynomial_snarkjs : kernel::h_polynomial_classic,
        [&] { h_polynomial(a.pointer, b.pointer, c.pointer, table.pointer, log_size, form, nullptr); });
  if (form == HForm::classic) {
    check(std::string(kernel::h_classic_product) + " + " + kernel::h_classic_finish, [&] {
      h_classic_product(a.pointer, b.pointer, table.pointer, log_size, nullptr);
      h_classic_finish(a.pointer, c.pointer, table.pointer, log_size, nullptr);
    });
  }
  return result;
}

}  // namespace

Result check_h(std::ostream& out, unsigned log_size, std::uint64_t seed) {
  Result result;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  DeviceBuffer buffers[3] = {DeviceBuffer((n + kGuard) * 32), DeviceBuffer((n + kGuard) * 32),
                             DeviceBuffer((n + kGuard) * 32)};
  DeviceBuffer &a = buffers[0], &b = buffers[1], &c = buffers[2];
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
    STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
    const long long bad = first_mismatch(a.download<FrLimbs>(n), expected);
    result.add(report(out, bad < 0 && guard_intact(a, n), "h_pointwise 2^" + std::to_string(log_size)));
  }
  for (const HForm form : {HForm::snarkjs, HForm::classic})
    result.add(check_h_form(out, log_size, form, seed, buffers));
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
    result.add(
        report(out, point_from(got) == expected,
               std::string("msm_g1 ") + (montgomery ? "montgomery" : "canonical") + " 2^" + std::to_string(log_size),
               "c=" + std::to_string(plan.window_bits) + (use_reference ? " vs math::msm" : " vs discrete logs") +
                   " (cpu " + std::to_string(cpu_seconds).substr(0, 5) + " s)"));
  }
  // Scalars of 0 and 1, as most of a real witness: about half the points land in one bucket of
  // the first window, a heavy bucket cut into slices over the SMs (at c = 20 from 2^21 its slices
  // hold more than their least 256 items). The reference is the plain sum of the points whose
  // scalar is 1 (up to 2^22: one thread's additions take too long beyond).
  if (log_size > 22) return result;
  std::vector<std::uint8_t> bit_scalars(n * 32, 0);
  math::G1Projective expected_bits = math::G1Projective::identity();
  for (std::uint64_t i = 0; i < n; ++i) {
    bit_scalars[32 * i] = static_cast<std::uint8_t>(((i + seed) * 0x9e3779b97f4a7c15ull) >> 63);
    if (bit_scalars[32 * i] != 0) expected_bits = expected_bits + reference_points[i];  // use_reference up to 2^22
  }
  for (unsigned bits : {0u, 20u}) {
    const G1JacobianBytes got = device_msm(set->bytes.data(), bit_scalars.data(), n, false, bits);
    result.add(report(out, point_from(got) == expected_bits,
                      "msm_g1 scalars of 0 and 1 2^" + std::to_string(log_size) +
                          " c=" + std::to_string(msm_plan(n, bits).window_bits),
                      "vs the sum of the points whose scalar is 1"));
  }
  return result;
}

Result check_msm_edge_cases(std::ostream& out, std::uint64_t seed) {
  Result result;
  const std::uint64_t n = 1024;
  std::vector<std::uint8_t> points, scalars;
  make_edge_cases(points, scalars, n, seed);
  const math::G1Projective expected =
      math::msm(affine_from_bytes(points.data(), n), scalars_from_bytes(scalars.data(), n, false));
  for (unsigned bits : {0u, 2u, 4u, 7u, 11u, 13u, 16u, 18u, 20u}) {
    const G1JacobianBytes got = device_msm(points.data(), scalars.data(), n, false, bits);
    result.add(report(out, point_from(got) == expected,
                      "msm_g1 edge cases c=" + std::to_string(msm_plan(n, bits).window_bits)));
  }
  // All scalars zero: the identity.
  std::vector<std::uint8_t> zeros(n * 32, 0);
  result.add(report(out, point_from(device_msm(points.data(), zeros.data(), n, false, 0)).is_identity(),
                    "msm_g1 all-zero scalars"));
  return result;
}

Result check_msm_precomputed(std::ostream& out, std::uint64_t seed) {
  Result result;
  // G1: the edge cases at every width class (2 and 24 the extremes, 0 the planner's choice), and
  // a size that is no power of two with Montgomery scalars, against math::msm.
  const std::uint64_t n = 1024;
  std::vector<std::uint8_t> points, scalars;
  make_edge_cases(points, scalars, n, seed);
  const math::G1Projective expected =
      math::msm(affine_from_bytes(points.data(), n), scalars_from_bytes(scalars.data(), n, false));
  for (unsigned bits : {0u, 2u, 5u, 8u, 13u, 16u, 20u, 22u, 23u, 24u}) {
    const MsmPlan plan = msm_precomputed_plan(n, bits);
    const G1JacobianBytes got = device_msm(points.data(), scalars.data(), false, plan);
    result.add(report(out, point_from(got) == expected,
                      "msm_g1 precomputed edge cases c=" + std::to_string(plan.window_bits) + " copies=" +
                          std::to_string(plan.window_count) + " group=" + std::to_string(plan.windows_per_group)));
  }
  std::vector<std::uint8_t> zeros(n * 32, 0);
  result.add(report(out,
                    point_from(device_msm(points.data(), zeros.data(), false, msm_precomputed_plan(n))).is_identity(),
                    "msm_g1 precomputed all-zero scalars"));
  const std::uint64_t odd = (std::uint64_t{1} << 14) + 3;
  const PointSet& set = shared_points(std::uint64_t{1} << 15);
  std::vector<std::uint8_t> montgomery(odd * 32);
  fill_sample_scalars(montgomery, odd, seed + 6, true);
  const math::G1Projective expected_odd =
      math::msm(affine_from_bytes(set.bytes.data(), odd), scalars_from_bytes(montgomery.data(), odd, true));
  for (unsigned bits : {0u, 24u}) {
    const MsmPlan plan = msm_precomputed_plan(odd, bits);
    result.add(report(out, point_from(device_msm(set.bytes.data(), montgomery.data(), true, plan)) == expected_odd,
                      "msm_g1 precomputed 2^14+3 Montgomery c=" + std::to_string(plan.window_bits)));
  }
  // Several groups of windows adding into the shared buckets: 2^19 points put 2^28 / 2^19 = 512
  // windows in a group at most, so force smaller groups.
  {
    MsmPlan plan = msm_precomputed_plan(odd, 13);
    plan.windows_per_group = 3;  // 20 windows: groups of 3, 3, ..., 2
    result.add(report(out, point_from(device_msm(set.bytes.data(), montgomery.data(), true, plan)) == expected_odd,
                      "msm_g1 precomputed 2^14+3 c=13 in groups of 3 windows"));
  }
  // G2 over the sample walk, against its discrete logarithms; the bases copied out of place.
  for (const std::uint64_t count : {std::uint64_t{1000}, std::uint64_t{1} << 12}) {
    std::vector<std::uint8_t> g2_points(count * kG2AffineBytes), canonical(count * kFrBytes);
    const PointWalk walk = fill_sample_g2_points(g2_points, count, seed + 7 + count);
    fill_sample_scalars(canonical, count, seed + 8 + count, false);
    const math::G2Projective expected_g2 = expected_walk_g2_msm(canonical, count, walk);
    for (unsigned bits : {0u, 11u, 24u}) {
      const MsmPlan plan = msm_precomputed_plan(count, bits, MsmGroup::g2);
      DeviceBuffer bases(count * kG2AffineBytes), copies(msm_precomputed_bytes(plan)), device_scalars(count * kFrBytes),
          scratch(msm_scratch_bytes(plan)), sums(msm_result_bytes(plan)), combined(kG2JacobianBytes);
      STAGEHAND_CUDA_CHECK(cudaMemset(copies.pointer, 0xff, msm_precomputed_bytes(plan)));
      STAGEHAND_CUDA_CHECK(cudaMemset(combined.pointer, 0xff, kG2JacobianBytes));
      STAGEHAND_CUDA_CHECK(cudaMemcpy(bases.pointer, g2_points.data(), count * kG2AffineBytes, cudaMemcpyHostToDevice));
      STAGEHAND_CUDA_CHECK(
          cudaMemcpy(device_scalars.pointer, canonical.data(), count * kFrBytes, cudaMemcpyHostToDevice));
      msm_precompute_bases(plan, bases.pointer, copies.pointer, nullptr);
      msm_g2_windows(copies.pointer, device_scalars.pointer, false, plan, sums.pointer, scratch.pointer, nullptr);
      msm_g2_combine_windows_on_device(sums.pointer, msm_sum_count(plan), plan.window_bits, combined.pointer, nullptr);
      STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<std::uint8_t> host(kG2JacobianBytes);
      STAGEHAND_CUDA_CHECK(cudaMemcpy(host.data(), combined.pointer, kG2JacobianBytes, cudaMemcpyDeviceToHost));
      const auto point = g2_from_jacobian_bytes(host.data());
      result.add(report(out, point && *point == expected_g2 && point->is_on_curve(),
                        "msm_g2 precomputed " + std::to_string(count) + " points c=" + std::to_string(plan.window_bits),
                        "vs discrete logs"));
    }
  }
  return result;
}

Result check_msm_streamed(std::ostream& out, unsigned log_size, unsigned batch_log, std::uint64_t seed) {
  Result result;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const PointSet& set = shared_points(n);
  void* pinned = nullptr;
  STAGEHAND_CUDA_CHECK(cudaHostAlloc(&pinned, n * 96, cudaHostAllocDefault));
  std::memcpy(pinned, set.bytes.data(), n * 96);
  std::vector<std::uint8_t> scalars(n * 32);
  fill_sample_scalars(scalars, n, seed + 9, false);
  DeviceBuffer device_scalars(n * 32);
  STAGEHAND_CUDA_CHECK(cudaMemcpy(device_scalars.pointer, scalars.data(), n * 32, cudaMemcpyHostToDevice));
  const math::G1Projective expected =
      math::msm(affine_from_bytes(set.bytes.data(), n), scalars_from_bytes(scalars.data(), n, false));
  cudaStream_t compute, copy;
  STAGEHAND_CUDA_CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  STAGEHAND_CUDA_CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
  {
    // A last batch shorter than the others, too (and the same object run twice: the second run
    // must start from fresh buckets).
    StreamedMsm streamed(std::uint64_t{1} << batch_log);
    const auto got = streamed.run(pinned, device_scalars.pointer, n - 3, false, compute, copy);
    const auto short_points = affine_from_bytes(set.bytes.data(), n - 3);
    const auto short_scalars = scalars_from_bytes(scalars.data(), n - 3, false);
    const math::G1Projective expected_short = math::msm(short_points, short_scalars);
    result.add(
        report(out, point_from(got) == expected_short,
               "msm_g1 streamed 2^" + std::to_string(log_size) + "-3 in batches of 2^" + std::to_string(batch_log)));
    const auto got_full = streamed.run(pinned, device_scalars.pointer, n, false, compute, copy);
    result.add(
        report(out, point_from(got_full) == expected,
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
    STAGEHAND_CUDA_CHECK(cudaMemcpy(heavy_scalars.pointer, heavy.data(), n * 32, cudaMemcpyHostToDevice));
    const math::G1Projective expected_heavy =
        math::msm(affine_from_bytes(set.bytes.data(), n), scalars_from_bytes(heavy.data(), n, true));
    const std::uint64_t batch = (std::uint64_t{1} << batch_log) + 5;
    for (unsigned bits : {20u, 0u}) {
      StreamedMsm streamed(batch, bits);
      const auto got = streamed.run(pinned, heavy_scalars.pointer, n, true, compute, copy);
      result.add(report(out, point_from(got) == expected_heavy,
                        "msm_g1 streamed 2^" + std::to_string(log_size) +
                            " c=" + std::to_string(msm_plan(batch, bits).window_bits) +
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
        {"integer products", MsmTuning{true, true, ItemSum::integer, true}},
        {"integer products as calls", MsmTuning{true, true, ItemSum::integer_called, true}},
        {"FP64 products, prefetch", MsmTuning{true, true, ItemSum::f64_prefetch, true}}};
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

}  // namespace stagehand::cuda::checks
