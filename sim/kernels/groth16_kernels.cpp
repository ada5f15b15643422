#include "sim/kernels/groth16_kernels.hpp"

#include "device/groth16_launches.hpp"
#include "device/kernel_abi.hpp"
#include "groth16/constraint_matrix.hpp"
#include "groth16/encoding.hpp"
#include "math/fq.hpp"
#include "math/fr.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"
#include "math/msm.hpp"
#include "math/ntt.hpp"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace stagehand::sim {
namespace {

static_assert(sizeof(math::Fr) == kernel::kFrBytes,
              "Fr must be its four Montgomery limbs, so that Fr arrays are device bytes");
constexpr std::size_t kFqBytes = kernel::kG1AffineBytes / 2;
static_assert(sizeof(math::Fq::LimbArray) == kFqBytes, "a G1 coordinate is 48 bytes of Montgomery limbs");

math::Fq fq_from(const std::byte* data) {
  math::Fq::LimbArray limbs;
  std::memcpy(limbs.data(), data, kFqBytes);
  return *math::Fq::from_montgomery_limbs(limbs);
}

bool all_zero(const std::byte* data, std::size_t bytes) {
  for (std::size_t k = 0; k < bytes; ++k) {
    if (data[k] != std::byte{0}) return false;
  }
  return true;
}

// The device bytes of G1 points back into points (no curve check: the key was checked on load).
std::vector<math::G1Affine> decode_device_points(std::span<const std::byte> bytes, std::size_t count) {
  std::vector<math::G1Affine> points(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::byte* data = bytes.data() + i * kernel::kG1AffineBytes;
    if (!all_zero(data, kernel::kG1AffineBytes))
      points[i] = math::G1Affine::from_coordinates(fq_from(data), fq_from(data + kFqBytes));
  }
  return points;
}

math::Fq2 fq2_from(const std::byte* data) { return math::Fq2{fq_from(data), fq_from(data + kFqBytes)}; }

// The same for G2 (x.c0‖x.c1‖y.c0‖y.c1).
std::vector<math::G2Affine> decode_device_g2_points(std::span<const std::byte> bytes, std::size_t count) {
  std::vector<math::G2Affine> points(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::byte* data = bytes.data() + i * kernel::kG2AffineBytes;
    if (!all_zero(data, kernel::kG2AffineBytes))
      points[i] = math::G2Affine::from_coordinates(fq2_from(data), fq2_from(data + 2 * kFqBytes));
  }
  return points;
}

// One snarkjs domain per size, built once: the host function runs for every proof.
const math::Domain& snarkjs_domain(unsigned log_size, unsigned threads) {
  static std::mutex mutex;
  static std::map<unsigned, std::unique_ptr<math::Domain>> domains;
  std::lock_guard lock(mutex);
  auto& slot = domains[log_size];
  if (!slot) slot = std::make_unique<math::Domain>(math::Domain::snarkjs(log_size, threads));
  return *slot;
}

// The H step's buffers as Fr values: the first 2^log_size of each.
template <class Byte>
auto domain_values(std::span<Byte> bytes, unsigned log_size, const char* kernel_name) {
  const std::size_t n = std::size_t{1} << log_size;
  if (bytes.size() < n * kernel::kFrBytes)
    throw std::invalid_argument(fmt::format("{}: a buffer is smaller than the domain", kernel_name));
  using Value = std::conditional_t<std::is_const_v<Byte>, const math::Fr, math::Fr>;
  return std::span<Value>(reinterpret_cast<Value*>(bytes.data()), n);
}

void groth16_h_evaluate(KernelContext& context) {
  const auto launch = kernel::HEvaluateLaunch::from_launch(context.launch());
  const auto log_size = static_cast<unsigned>(launch.log_size);
  const auto threads = static_cast<unsigned>(launch.threads);
  const auto values = domain_values(context.bytes(launch.values), log_size, kernel::groth16_h_evaluate);
  const auto& domain = snarkjs_domain(log_size, threads);
  math::intt(values, domain, threads);
  math::coset_ntt(values, domain, threads);
}

void groth16_h_combine(KernelContext& context) {
  const auto launch = kernel::HCombineLaunch::from_launch(context.launch());
  const auto log_size = static_cast<unsigned>(launch.log_size);
  const auto a = domain_values(context.bytes(launch.a), log_size, kernel::groth16_h_combine);
  const auto b = domain_values(context.bytes(launch.b), log_size, kernel::groth16_h_combine);
  const auto c = domain_values(context.bytes(launch.c), log_size, kernel::groth16_h_combine);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = a[i] * b[i] - c[i];
}

// The Jacobian sums in the device layout (groth16/encoding.hpp), from and into device bytes the
// caller has checked are large enough.
template <std::size_t Bytes>
std::span<std::uint8_t, Bytes> sum_bytes(std::byte* at) {
  return std::span<std::uint8_t, Bytes>(reinterpret_cast<std::uint8_t*>(at), Bytes);
}
void write_jacobian(std::byte* out, const math::G1Projective& sum) {
  groth16::encode_g1_jacobian(sum, sum_bytes<groth16::kG1JacobianBytes>(out));
}
void write_jacobian(std::byte* out, const math::G2Projective& sum) {
  groth16::encode_g2_jacobian(sum, sum_bytes<groth16::kG2JacobianBytes>(out));
}
// The running sum a batch kernel wrote (the device's own bytes: always reduced).
math::G1Projective read_jacobian(std::byte* in, const math::G1Projective&) {
  return *groth16::decode_g1_jacobian(sum_bytes<groth16::kG1JacobianBytes>(in));
}
math::G2Projective read_jacobian(std::byte* in, const math::G2Projective&) {
  return *groth16::decode_g2_jacobian(sum_bytes<groth16::kG2JacobianBytes>(in));
}

// groth16_msm_g1 and groth16_msm_g2 on the CPU reference: `decode` turns the device bytes into
// points of the group, math::msm sums them.
template <class Decode>
void groth16_msm(KernelContext& context, const char* name, std::uint64_t point_bytes, std::uint64_t result_bytes,
                 Decode decode) {
  const auto launch = kernel::MsmLaunch::from_launch(context.launch());
  const std::size_t count = launch.points;
  const auto threads = static_cast<unsigned>(launch.threads);
  auto points_bytes = context.bytes(launch.bases);
  auto scalar_bytes = context.bytes(launch.scalars);
  auto result = context.bytes(launch.result);
  if (points_bytes.size() < count * point_bytes || scalar_bytes.size() < count * kernel::kFrBytes ||
      result.size() < result_bytes) {
    throw std::invalid_argument(fmt::format("{}: a buffer is smaller than the launch", name));
  }
  const auto points = decode(points_bytes, count);
  std::span<const math::Fr> scalars(reinterpret_cast<const math::Fr*>(scalar_bytes.data()), count);
  write_jacobian(result.data(), math::msm(points, scalars, threads));
}

void groth16_msm_g1(KernelContext& context) {
  groth16_msm(context, kernel::groth16_msm_g1, kernel::kG1AffineBytes, kernel::kG1JacobianBytes, decode_device_points);
}

void groth16_msm_g2(KernelContext& context) {
  groth16_msm(context, kernel::groth16_msm_g2, kernel::kG2AffineBytes, kernel::kG2JacobianBytes,
              decode_device_g2_points);
}

// groth16_msm_g1_batch and _g2_batch: the MSM's running state is its sum so far, kept at the
// start of the scratch (the GPU keeps its buckets there); the reduce kernels copy it out.
template <class Decode>
void groth16_msm_batch(KernelContext& context, const char* name, std::uint64_t point_bytes, std::uint64_t result_bytes,
                       Decode decode) {
  const auto launch = kernel::MsmBatchLaunch::from_launch(context.launch());
  const std::size_t count = launch.points;
  const auto threads = static_cast<unsigned>(launch.threads);
  if (!launch.scratch) throw std::invalid_argument(fmt::format("{}: no scratch to keep the sum in", name));
  auto points_bytes = context.bytes(launch.bases);
  auto scalar_bytes = context.bytes(launch.scalars);
  auto state = context.bytes(*launch.scratch);
  if (points_bytes.size() < count * point_bytes || scalar_bytes.size() < count * kernel::kFrBytes ||
      state.size() < result_bytes) {
    throw std::invalid_argument(fmt::format("{}: a buffer is smaller than the launch", name));
  }
  if (count > launch.capacity) {
    throw std::invalid_argument(fmt::format("{}: point count above the planned capacity", name));
  }
  const auto points = decode(points_bytes, count);
  std::span<const math::Fr> scalars(reinterpret_cast<const math::Fr*>(scalar_bytes.data()), count);
  auto sum = math::msm(points, scalars, threads);
  if (launch.add) sum = read_jacobian(state.data(), sum) + sum;
  write_jacobian(state.data(), sum);
}

void groth16_msm_reduce(KernelContext& context, const char* name, std::uint64_t result_bytes) {
  const auto launch = kernel::MsmReduceLaunch::from_launch(context.launch());
  if (!launch.scratch || context.bytes(launch.result).size() < result_bytes ||
      context.bytes(*launch.scratch).size() < result_bytes) {
    throw std::invalid_argument(fmt::format("{}: writes [result, scratch] of at least {} bytes", name, result_bytes));
  }
  std::memcpy(context.bytes(launch.result).data(), context.bytes(*launch.scratch).data(), result_bytes);
}

template <class Curve>
math::AffinePoint<Curve> doubled_times(const math::AffinePoint<Curve>& affine, unsigned times) {
  auto point = math::ProjectivePoint<Curve>::from_affine(affine);
  for (unsigned k = 0; k < times; ++k) point = point.doubled();
  return point.to_affine();
}

void encode_device_point(const math::G1Affine& point, std::byte* out) {
  groth16::encode_g1(
      point, std::span<std::uint8_t, groth16::kG1Bytes>(reinterpret_cast<std::uint8_t*>(out), groth16::kG1Bytes));
}
void encode_device_point(const math::G2Affine& point, std::byte* out) {
  groth16::encode_g2(
      point, std::span<std::uint8_t, groth16::kG2Bytes>(reinterpret_cast<std::uint8_t*>(out), groth16::kG2Bytes));
}

// groth16_precompute_g1/_g2: copy j of each point is copy j - 1 doubled c times (the CPU
// reference's doublings), every copy written in the device layout after the one before.
template <class Decode>
void groth16_precompute(KernelContext& context, const char* name, std::uint64_t point_bytes, Decode decode) {
  const auto launch = kernel::PrecomputeLaunch::from_launch(context.launch());
  const std::size_t count = launch.points;
  const auto window_bits = static_cast<unsigned>(launch.window_bits);
  if (window_bits < 2 || window_bits > 24)
    throw std::invalid_argument(fmt::format("{}: window_bits outside 2..24", name));
  const std::size_t copies = kernel::precomputed_copies(window_bits);
  auto points_bytes = context.bytes(launch.bases);
  auto out = context.bytes(launch.copies);
  if (points_bytes.size() < count * point_bytes || out.size() < copies * count * point_bytes) {
    throw std::invalid_argument(fmt::format("{}: a buffer is smaller than the launch", name));
  }
  auto current = decode(points_bytes, count);
  for (std::size_t copy = 0; copy < copies; ++copy) {
    for (std::size_t i = 0; i < count; ++i) {
      if (copy > 0) current[i] = doubled_times(current[i], window_bits);
      encode_device_point(current[i], out.data() + (copy * count + i) * point_bytes);
    }
  }
}

// groth16_msm_g1/_g2_precomputed: Σ_j Σ_i u_ij·copy_j[i] with u_ij the unsigned c-bit digits of
// scalar i (the device's are signed; both sum to the scalar when copy j is 2^(c·j)·P): one
// reference MSM per copy.
template <class Decode>
void groth16_msm_precomputed(KernelContext& context, const char* name, std::uint64_t point_bytes,
                             std::uint64_t result_bytes, Decode decode) {
  const auto launch = kernel::MsmLaunch::from_launch(context.launch());
  if (!launch.window_bits) {
    throw std::invalid_argument(fmt::format("{}: expects arguments [threads, window_bits]", name));
  }
  const std::size_t count = launch.points;
  const auto threads = static_cast<unsigned>(launch.threads);
  const auto window_bits = static_cast<unsigned>(*launch.window_bits);
  if (window_bits < 2 || window_bits > 24)
    throw std::invalid_argument(fmt::format("{}: window_bits outside 2..24", name));
  const std::size_t copies = kernel::precomputed_copies(window_bits);
  auto copies_bytes = context.bytes(launch.bases);
  auto scalar_bytes = context.bytes(launch.scalars);
  auto result = context.bytes(launch.result);
  if (copies_bytes.size() < copies * count * point_bytes || scalar_bytes.size() < count * kernel::kFrBytes ||
      result.size() < result_bytes) {
    throw std::invalid_argument(fmt::format("{}: a buffer is smaller than the launch", name));
  }
  std::span<const math::Fr> scalars(reinterpret_cast<const math::Fr*>(scalar_bytes.data()), count);
  std::vector<math::Fr::LimbArray> canonical(count);
  for (std::size_t i = 0; i < count; ++i) canonical[i] = scalars[i].to_canonical_limbs();
  auto digit = [&](std::size_t i, unsigned bit) {
    std::uint64_t value = 0;
    for (unsigned k = 0; k < window_bits && bit + k < 256; ++k) {
      value |= ((canonical[i][(bit + k) / 64] >> ((bit + k) % 64)) & 1) << k;
    }
    return math::Fr::from_uint64(value);
  };
  std::vector<math::Fr> digits(count);
  auto copy_sum = [&](std::size_t copy) {
    for (std::size_t i = 0; i < count; ++i) digits[i] = digit(i, static_cast<unsigned>(copy) * window_bits);
    const auto points = decode(copies_bytes.subspan(copy * count * point_bytes), count);
    return math::msm(points, std::span<const math::Fr>(digits), threads);
  };
  auto sum = copy_sum(0);
  for (std::size_t copy = 1; copy < copies; ++copy) sum = sum + copy_sum(copy);
  write_jacobian(result.data(), sum);
}

void groth16_abc(KernelContext& context) {
  const auto launch = kernel::AbcLaunch::from_launch(context.launch());
  kernel::ConstraintMatrixLayout layout{launch.rows, launch.entries_a, launch.entries_b};
  const auto threads = static_cast<unsigned>(launch.threads);
  const auto chunk = launch.chunk.value_or(kernel::AbcLaunch::ChunkStart{});
  auto witness = context.bytes(launch.witness);
  auto as_fr = [&](std::span<std::byte> bytes) {
    if (bytes.size() < layout.rows * kernel::kFrBytes) {
      throw std::invalid_argument(fmt::format("{}: an output is smaller than the matrix's rows", kernel::groth16_abc));
    }
    return std::span<math::Fr>(reinterpret_cast<math::Fr*>(bytes.data()), layout.rows);
  };
  groth16::evaluate_constraint_matrix(
      layout, context.bytes(launch.matrix),
      std::span<const math::Fr>(reinterpret_cast<const math::Fr*>(witness.data()), witness.size() / kernel::kFrBytes),
      as_fr(context.bytes(launch.a)), as_fr(context.bytes(launch.b)), as_fr(context.bytes(launch.c)), threads,
      chunk.first_a, chunk.first_b);
}

}  // namespace

void register_groth16_kernels(SimSystem& system) {
  system.register_kernel(kernel::groth16_h_evaluate, groth16_h_evaluate);
  system.register_kernel(kernel::groth16_h_combine, groth16_h_combine);
  system.register_kernel(kernel::groth16_msm_g1, groth16_msm_g1);
  system.register_kernel(kernel::groth16_msm_g2, groth16_msm_g2);
  system.register_kernel(kernel::groth16_precompute_g1, [](KernelContext& context) {
    groth16_precompute(context, kernel::groth16_precompute_g1, kernel::kG1AffineBytes, decode_device_points);
  });
  system.register_kernel(kernel::groth16_precompute_g2, [](KernelContext& context) {
    groth16_precompute(context, kernel::groth16_precompute_g2, kernel::kG2AffineBytes, decode_device_g2_points);
  });
  system.register_kernel(kernel::groth16_msm_g1_precomputed, [](KernelContext& context) {
    groth16_msm_precomputed(context, kernel::groth16_msm_g1_precomputed, kernel::kG1AffineBytes,
                            kernel::kG1JacobianBytes, decode_device_points);
  });
  system.register_kernel(kernel::groth16_msm_g2_precomputed, [](KernelContext& context) {
    groth16_msm_precomputed(context, kernel::groth16_msm_g2_precomputed, kernel::kG2AffineBytes,
                            kernel::kG2JacobianBytes, decode_device_g2_points);
  });
  // The batch kernels keep the MSM's sum so far in their scratch: at least one sum of it.
  system.register_kernel(
      kernel::groth16_msm_g1_batch,
      [](KernelContext& context) {
        groth16_msm_batch(context, kernel::groth16_msm_g1_batch, kernel::kG1AffineBytes, kernel::kG1JacobianBytes,
                          decode_device_points);
      },
      kernel::kG1JacobianBytes);
  system.register_kernel(
      kernel::groth16_msm_g2_batch,
      [](KernelContext& context) {
        groth16_msm_batch(context, kernel::groth16_msm_g2_batch, kernel::kG2AffineBytes, kernel::kG2JacobianBytes,
                          decode_device_g2_points);
      },
      kernel::kG2JacobianBytes);
  system.register_kernel(
      kernel::groth16_msm_g1_reduce,
      [](KernelContext& context) {
        groth16_msm_reduce(context, kernel::groth16_msm_g1_reduce, kernel::kG1JacobianBytes);
      },
      kernel::kG1JacobianBytes);
  system.register_kernel(
      kernel::groth16_msm_g2_reduce,
      [](KernelContext& context) {
        groth16_msm_reduce(context, kernel::groth16_msm_g2_reduce, kernel::kG2JacobianBytes);
      },
      kernel::kG2JacobianBytes);
  system.register_kernel(kernel::groth16_abc, groth16_abc);
}

}  // namespace stagehand::sim
