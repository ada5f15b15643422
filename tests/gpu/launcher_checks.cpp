// The launcher checks of kernel_checks.hpp: every kernel through the launcher table
// (launchers.hpp, partition_launchers.hpp), as CudaDevice and the partition program launch them.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "device/kernel_abi.hpp"
#include "device/types.hpp"
#include "kernel_check_helpers.hpp"
#include "kernel_checks.hpp"
#include "launch/launchers.hpp"
#include "math/msm.hpp"
#include "math/ntt.hpp"
#include "msm/msm.hpp"
#include "ntt/ntt.hpp"
#include "synthetic/sample_data.hpp"
#include "util/common_host.hpp"

namespace stagehand::cuda::checks {

namespace {

// busy_wait: 2 ms asked, at least 2 ms measured by events.
Result check_busy_wait(std::ostream& out, cudaStream_t stream) {
  Result result;
  cudaEvent_t start, stop;
  STAGEHAND_CUDA_CHECK(cudaEventCreate(&start));
  STAGEHAND_CUDA_CHECK(cudaEventCreate(&stop));
  KernelLaunch wait{kernel::busy_wait, 2'000'000, {}, {}, {}};
  (*find_launcher(kernel::busy_wait))(wait, stream);  // warm-up
  STAGEHAND_CUDA_CHECK(cudaEventRecord(start, stream));
  (*find_launcher(kernel::busy_wait))(wait, stream);
  STAGEHAND_CUDA_CHECK(cudaEventRecord(stop, stream));
  STAGEHAND_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  STAGEHAND_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  result.add(report(out, ms >= 1.99f && ms < 50.0f, "busy_wait 2 ms", std::to_string(ms) + " ms"));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return result;
}

}  // namespace

Result check_launchers(std::ostream& out, std::uint64_t seed) {
  Result result;
  for (std::string_view name : launcher_names()) {
    result.add(report(out, find_launcher(name) != nullptr, "launcher " + std::string(name) + " registered"));
  }
  result.add(report(out, find_launcher("no_such_kernel") == nullptr, "unknown launcher name gives nullptr"));

  cudaStream_t stream;
  STAGEHAND_CUDA_CHECK(cudaStreamCreate(&stream));
  result.add(check_busy_wait(out, stream));

  // The NTT, the H form and the MSM through the table.
  const unsigned log_size = 12;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const math::Domain domain = math::Domain::snarkjs(log_size);
  DeviceBuffer table(ntt_domain_bytes(log_size)), values(n * 32);
  KernelLaunch init{kernel::ntt_domain_init, n, {log_size}, {}, {table.use(0, table.bytes)}};
  for (int i = 0; i < 4; ++i) init.arguments.push_back(domain.root().montgomery_limbs()[i]);
  for (int i = 0; i < 4; ++i) init.arguments.push_back(domain.coset_generator().montgomery_limbs()[i]);
  (*find_launcher(kernel::ntt_domain_init))(init, stream);
  const auto input = random_fr(n, seed + 3);
  values.upload(limbs_of(input));
  KernelLaunch forward{kernel::coset_ntt, n, {log_size}, {table.use(0, table.bytes)}, {values.use(0, values.bytes)}};
  (*find_launcher(kernel::coset_ntt))(forward, stream);
  STAGEHAND_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<math::Fr> expected = input;
  math::coset_ntt(expected, domain);
  result.add(report(out, first_mismatch(values.download<FrLimbs>(n), expected) < 0, "launcher coset_ntt 2^12"));

  result.add(rejects(out, "launcher rejects a buffer smaller than the transform", [&] {
    KernelLaunch small = forward;
    small.writes[0].bytes = 32;
    (*find_launcher(kernel::ntt_forward))(small, stream);
  }));

  const PointSet& set = shared_points(n);
  std::vector<std::uint8_t> scalars(n * 32);
  fill_sample_scalars(scalars, n, seed + 4, true);
  const MsmPlan plan = msm_plan(n);
  DeviceBuffer points(n * 96), device_scalars(n * 32), sums(msm_result_bytes(plan)), scratch(msm_scratch_bytes(plan));
  STAGEHAND_CUDA_CHECK(cudaMemcpy(points.pointer, set.bytes.data(), n * 96, cudaMemcpyHostToDevice));
  STAGEHAND_CUDA_CHECK(cudaMemcpy(device_scalars.pointer, scalars.data(), n * 32, cudaMemcpyHostToDevice));
  auto use = [](const DeviceBuffer& buffer) { return buffer.use(0, buffer.bytes); };
  KernelLaunch msm_launch{kernel::msm_g1, n, {1, 0}, {use(points), use(device_scalars)}, {use(sums), use(scratch)}};
  (*find_launcher(kernel::msm_g1))(msm_launch, stream);
  STAGEHAND_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<std::uint8_t> host(msm_result_bytes(plan));
  STAGEHAND_CUDA_CHECK(cudaMemcpy(host.data(), sums.pointer, host.size(), cudaMemcpyDeviceToHost));
  const auto got = msm_combine_windows({host.data()}, plan.window_count, plan.window_bits);
  const auto expected_msm =
      math::msm(affine_from_bytes(set.bytes.data(), n), scalars_from_bytes(scalars.data(), n, true));
  result.add(report(out, point_from(got) == expected_msm, "launcher msm_g1 2^12 (Montgomery scalars)"));

  cudaStreamDestroy(stream);
  return result;
}

namespace {

BufferUse use_of(const DeviceBuffer& buffer, std::uint64_t offset = 0, std::uint64_t bytes = 0) {
  return buffer.use(offset, bytes ? bytes : buffer.bytes - offset);
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

// ntt_twiddles, then each kind of ntt on fresh random values, against math (snarkjs's domain).
Result check_partition_ntts(std::ostream& out, unsigned log_size, std::uint64_t seed, cudaStream_t stream,
                            const std::string& size) {
  Result result;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const math::Domain domain = math::Domain::snarkjs(log_size);
  DeviceBuffer twiddles(std::max<std::uint64_t>(16 * n, ntt_domain_bytes(log_size))), values(n * 32);
  launch_through_table(KernelLaunch{kernel::ntt_twiddles, n / 2, {log_size}, {}, {use_of(twiddles)}}, stream);
  const char* kinds[] = {"forward", "inverse", "coset forward", "coset inverse"};
  for (std::uint64_t kind = 0; kind < 4; ++kind) {
    const auto input = random_fr(n, seed + 11 * kind);
    STAGEHAND_CUDA_CHECK(cudaMemset(values.pointer, 0xff, values.bytes));
    values.upload(limbs_of(input));
    launch_through_table(
        KernelLaunch{kernel::ntt, n, {log_size, kind}, {use_of(values), use_of(twiddles)}, {use_of(values)}}, stream);
    STAGEHAND_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<math::Fr> expected = input;
    if (kind == 0) math::ntt(expected, domain);
    if (kind == 1) math::intt(expected, domain);
    if (kind == 2) math::coset_ntt(expected, domain);
    if (kind == 3) math::coset_intt(expected, domain);
    result.add(report(out, first_mismatch(values.download<FrLimbs>(n), expected) < 0,
                      std::string("partition ntt ") + kinds[kind] + size));
  }
  return result;
}

// tail_msm: items of a point and a canonical scalar, accumulated over launches into the tail's
// buckets, then tail_reduce into an accumulator at 1 KiB; the same scratch restarted; an empty tail.
Result check_partition_tail(std::ostream& out, const PointSet& set, std::uint64_t capacity, std::uint64_t seed,
                            cudaStream_t stream, const std::string& size) {
  Result result;
  const std::uint64_t tail_capacity = capacity;
  const std::uint64_t tail_total = tail_capacity + tail_capacity / 3;
  std::vector<std::uint8_t> tail_scalars(tail_total * 32), items(tail_total * 128);
  fill_sample_scalars(tail_scalars, tail_total, seed + 6, false);
  for (std::uint64_t i = 0; i < tail_total; ++i) {
    std::memcpy(items.data() + 128 * i, set.bytes.data() + 96 * i, 96);
    std::memcpy(items.data() + 128 * i + 96, tail_scalars.data() + 32 * i, 32);
  }
  DeviceBuffer device_items(tail_total * 128), sums(8 << 20),
      tail_scratch(kernel_scratch_bytes(kernel::tail_msm, tail_capacity));
  STAGEHAND_CUDA_CHECK(cudaMemcpy(device_items.pointer, items.data(), items.size(), cudaMemcpyHostToDevice));
  const std::uint64_t offset = 1024;
  auto tail_msm = [&](std::uint64_t total) {
    std::uint64_t first = 0;
    do {  // one launch (of no items) even for an empty tail
      const std::uint64_t count = std::min(tail_capacity, total - first);
      launch_through_table(KernelLaunch{kernel::tail_msm,
                                        count,
                                        {first == 0 ? 1u : 0u, tail_capacity},
                                        {use_of(device_items, first * 128, count * 128)},
                                        {use_of(tail_scratch)}},
                           stream);
      first += tail_capacity;
    } while (first < total);
    launch_through_table(
        KernelLaunch{kernel::tail_reduce, 1, {offset, tail_capacity}, {}, {use_of(sums), use_of(tail_scratch)}},
        stream);
    STAGEHAND_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<std::uint8_t> sum_bytes(sums.bytes);
    STAGEHAND_CUDA_CHECK(cudaMemcpy(sum_bytes.data(), sums.pointer, sum_bytes.size(), cudaMemcpyDeviceToHost));
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
  return result;
}

}  // namespace

Result check_partition_launchers(std::ostream& out, unsigned log_size, std::uint64_t seed) {
  Result result;
  const std::string size = " 2^" + std::to_string(log_size);
  cudaStream_t stream;
  STAGEHAND_CUDA_CHECK(cudaStreamCreate(&stream));
  result.add(report(out,
                    kernel_scratch_bytes(kernel::ntt, 1u << log_size) == 0 &&
                        kernel_scratch_bytes(kernel::msm_batch, 1024) > 0 &&
                        kernel_scratch_bytes(kernel::tail_msm, 1024) > 0,
                    "scratch query: none for ntt, some for msm_batch and tail_msm"));

  const std::uint64_t n = std::uint64_t{1} << log_size;
  result.add(check_partition_ntts(out, log_size, seed, stream, size));

  // The H MSM as the program streams it: batches of `capacity` points, the last one short, each
  // taking its scalars from its offset in one scalar array; then msm_reduce.
  const std::uint64_t capacity = n / 4;
  const std::uint64_t total = 2 * capacity + capacity / 2;
  const PointSet& set = shared_points(total);
  std::vector<std::uint8_t> scalar_bytes(total * 32);
  fill_sample_scalars(scalar_bytes, total, seed + 5, true);
  DeviceBuffer points(total * 96), scalars(total * 32), results(8 << 20), other(8 << 20),
      scratch(kernel_scratch_bytes(kernel::msm_batch, capacity));
  STAGEHAND_CUDA_CHECK(cudaMemcpy(points.pointer, set.bytes.data(), total * 96, cudaMemcpyHostToDevice));
  STAGEHAND_CUDA_CHECK(cudaMemcpy(scalars.pointer, scalar_bytes.data(), total * 32, cudaMemcpyHostToDevice));
  const MsmPlan plan = msm_plan(capacity);
  auto streamed_msm = [&](std::uint64_t count) {
    for (std::uint64_t first = 0; first < count; first += capacity) {
      const std::uint64_t batch = std::min(capacity, count - first);
      launch_through_table(KernelLaunch{kernel::msm_batch,
                                        batch,
                                        {first, capacity, first == 0 ? 1u : 0u},
                                        {use_of(points, first * 96, batch * 96), use_of(scalars)},
                                        {use_of(results), use_of(scratch)}},
                           stream);
    }
    STAGEHAND_CUDA_CHECK(cudaMemset(results.pointer, 0xff, results.bytes));
    launch_through_table(
        KernelLaunch{
            kernel::msm_reduce, 1, {capacity}, {use_of(results), use_of(other)}, {use_of(results), use_of(scratch)}},
        stream);
    STAGEHAND_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<std::uint8_t> host(msm_result_bytes(plan));
    STAGEHAND_CUDA_CHECK(cudaMemcpy(host.data(), results.pointer, host.size(), cudaMemcpyDeviceToHost));
    return point_from(msm_combine_windows({host.data()}, plan.window_count, plan.window_bits));
  };
  auto reference = [&](std::uint64_t count) {
    return math::msm(affine_from_bytes(set.bytes.data(), count), scalars_from_bytes(scalar_bytes.data(), count, true));
  };
  result.add(report(
      out, streamed_msm(total) == reference(total),
      "partition msm_batch x3 (last short) + msm_reduce" + size + " (c=" + std::to_string(plan.window_bits) + ")"));
  result.add(report(out, streamed_msm(capacity + 7) == reference(capacity + 7),
                    "partition msm_batch restarted on the same scratch" + size));

  result.add(check_partition_tail(out, set, capacity, seed, stream, size));

  result.add(rejects(out, "partition msm_batch refuses a batch above its capacity", [&] {
    launch_through_table(KernelLaunch{kernel::msm_batch,
                                      capacity + 1,
                                      {0, capacity, 1},
                                      {use_of(points), use_of(scalars)},
                                      {use_of(results), use_of(scratch)}},
                         stream);
  }));
  STAGEHAND_CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaStreamDestroy(stream);
  return result;
}

}  // namespace stagehand::cuda::checks
