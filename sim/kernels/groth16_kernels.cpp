#include "sim/kernels/groth16_kernels.hpp"

#include "device/groth16_launches.hpp"
#include "device/kernel_abi.hpp"
#include "sim/kernels/curve_math.hpp"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace stagehand::sim {
namespace {

// The Groth16 program's kernels over one curve's CPU reference; the layouts are the curve's
// (kernel::curve_sizes), the conventions kernel_abi.hpp's.
template <kernel::Curve Curve>
struct Groth16Kernels {
  using M = CurveMath<Curve>;
  using Fr = typename M::Fr;
  static constexpr kernel::CurveSizes sizes = M::sizes;

  // The device bytes of `count` points back into points.
  template <class Affine>
  static std::vector<Affine> decode(std::span<const std::byte> bytes, std::size_t count) {
    constexpr std::size_t size = groth16::affine_bytes<Affine>;
    std::vector<Affine> points(count);
    for (std::size_t i = 0; i < count; ++i) points[i] = M::template device_point<Affine>(bytes.data() + i * size);
    return points;
  }

  static std::span<const Fr> scalars_of(std::span<std::byte> bytes, std::size_t count) {
    return std::span<const Fr>(reinterpret_cast<const Fr*>(bytes.data()), count);
  }

  template <class Projective>
  static void write_sum(std::span<std::byte> out, const Projective& sum) {
    groth16::encode_jacobian(sum, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(out.data()), out.size()));
  }
  // The running sum a batch kernel wrote (the device's own bytes: always reduced).
  template <class Projective>
  static Projective read_sum(std::span<std::byte> in) {
    return *groth16::decode_jacobian<Projective>(
        std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(in.data()), in.size()));
  }

  // One snarkjs domain per size, built once: the host function runs for every proof.
  static const typename M::Domain& snarkjs_domain(unsigned log_size, unsigned threads) {
    static std::mutex mutex;
    static std::map<unsigned, std::unique_ptr<typename M::Domain>> domains;
    std::lock_guard lock(mutex);
    auto& slot = domains[log_size];
    if (!slot) slot = std::make_unique<typename M::Domain>(M::Domain::snarkjs(log_size, threads));
    return *slot;
  }

  // The H step's buffers as Fr values: the first 2^log_size of each.
  static std::span<Fr> domain_values(std::span<std::byte> bytes, unsigned log_size, const char* kernel_name) {
    const std::size_t n = std::size_t{1} << log_size;
    if (bytes.size() < n * kernel::kFrBytes)
      throw std::invalid_argument(fmt::format("{}: a buffer is smaller than the domain", kernel_name));
    return std::span<Fr>(reinterpret_cast<Fr*>(bytes.data()), n);
  }

  static void h_evaluate(KernelContext& context) {
    const auto launch = kernel::HEvaluateLaunch::from_launch(context.launch());
    const auto log_size = static_cast<unsigned>(launch.log_size);
    const auto threads = static_cast<unsigned>(launch.threads);
    const auto values = domain_values(context.bytes(launch.values), log_size, kernel::groth16_h_evaluate);
    const auto& domain = snarkjs_domain(log_size, threads);
    M::intt(values, domain, threads);
    M::coset_ntt(values, domain, threads);
  }

  static void h_combine(KernelContext& context) {
    const auto launch = kernel::HCombineLaunch::from_launch(context.launch());
    const auto log_size = static_cast<unsigned>(launch.log_size);
    const auto a = domain_values(context.bytes(launch.a), log_size, kernel::groth16_h_combine);
    const auto b = domain_values(context.bytes(launch.b), log_size, kernel::groth16_h_combine);
    const auto c = domain_values(context.bytes(launch.c), log_size, kernel::groth16_h_combine);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = a[i] * b[i] - c[i];
  }

  // groth16_msm_g1/_g2: the points decoded, math's msm over them.
  template <class Affine, class Projective>
  static void msm(KernelContext& context) {
    const auto launch = kernel::MsmLaunch::from_launch(context.launch());
    const std::size_t count = launch.points;
    auto points_bytes = context.bytes(launch.bases);
    auto scalar_bytes = context.bytes(launch.scalars);
    auto result = context.bytes(launch.result);
    if (points_bytes.size() < count * groth16::affine_bytes<Affine> || scalar_bytes.size() < count * kernel::kFrBytes ||
        result.size() < groth16::jacobian_bytes<Projective>) {
      throw std::invalid_argument(fmt::format("{}: a buffer is smaller than the launch", launch.kernel));
    }
    const auto points = decode<Affine>(points_bytes, count);
    write_sum(result, M::msm(std::span<const Affine>(points), scalars_of(scalar_bytes, count),
                             static_cast<unsigned>(launch.threads)));
  }

  // groth16_msm_g1_batch and _g2_batch: the MSM's running state is its sum so far, kept at the
  // start of the scratch (the GPU keeps its buckets there); the reduce kernels copy it out.
  template <class Affine, class Projective>
  static void msm_batch(KernelContext& context) {
    const auto launch = kernel::MsmBatchLaunch::from_launch(context.launch());
    const std::size_t count = launch.points;
    if (!launch.scratch) throw std::invalid_argument(fmt::format("{}: no scratch to keep the sum in", launch.kernel));
    auto points_bytes = context.bytes(launch.bases);
    auto scalar_bytes = context.bytes(launch.scalars);
    auto state = context.bytes(*launch.scratch);
    if (points_bytes.size() < count * groth16::affine_bytes<Affine> || scalar_bytes.size() < count * kernel::kFrBytes ||
        state.size() < groth16::jacobian_bytes<Projective>) {
      throw std::invalid_argument(fmt::format("{}: a buffer is smaller than the launch", launch.kernel));
    }
    if (count > launch.capacity) {
      throw std::invalid_argument(fmt::format("{}: point count above the planned capacity", launch.kernel));
    }
    const auto points = decode<Affine>(points_bytes, count);
    auto sum =
        M::msm(std::span<const Affine>(points), scalars_of(scalar_bytes, count), static_cast<unsigned>(launch.threads));
    if (launch.add) sum = read_sum<Projective>(state) + sum;
    write_sum(state, sum);
  }

  template <class Projective>
  static void msm_reduce(KernelContext& context) {
    const auto launch = kernel::MsmReduceLaunch::from_launch(context.launch());
    constexpr std::size_t result_bytes = groth16::jacobian_bytes<Projective>;
    if (!launch.scratch || context.bytes(launch.result).size() < result_bytes ||
        context.bytes(*launch.scratch).size() < result_bytes) {
      throw std::invalid_argument(
          fmt::format("{}: writes [result, scratch] of at least {} bytes", launch.kernel, result_bytes));
    }
    std::memcpy(context.bytes(launch.result).data(), context.bytes(*launch.scratch).data(), result_bytes);
  }

  static unsigned checked_window_bits(std::uint64_t window_bits, const std::string& name) {
    if (window_bits < 2 || window_bits > 24)
      throw std::invalid_argument(fmt::format("{}: window_bits outside 2..24", name));
    return static_cast<unsigned>(window_bits);
  }

  // groth16_precompute_g1/_g2: copy j of each point is copy j - 1 doubled c times (the CPU
  // reference's doublings), every copy written in the device layout after the one before.
  template <class Affine, class Projective>
  static void precompute(KernelContext& context) {
    const auto launch = kernel::PrecomputeLaunch::from_launch(context.launch());
    constexpr std::size_t point_bytes = groth16::affine_bytes<Affine>;
    const std::size_t count = launch.points;
    const auto window_bits = checked_window_bits(launch.window_bits, launch.kernel);
    const std::size_t copies = kernel::precomputed_copies(window_bits);
    auto points_bytes = context.bytes(launch.bases);
    auto out = context.bytes(launch.copies);
    if (points_bytes.size() < count * point_bytes || out.size() < copies * count * point_bytes) {
      throw std::invalid_argument(fmt::format("{}: a buffer is smaller than the launch", launch.kernel));
    }
    auto current = decode<Affine>(points_bytes, count);
    auto* out_bytes = reinterpret_cast<std::uint8_t*>(out.data());
    for (std::size_t copy = 0; copy < copies; ++copy) {
      for (std::size_t i = 0; i < count; ++i) {
        if (copy > 0) {
          auto point = Projective::from_affine(current[i]);
          for (unsigned k = 0; k < window_bits; ++k) point = point.doubled();
          current[i] = point.to_affine();
        }
        groth16::encode_affine(current[i],
                               std::span<std::uint8_t>(out_bytes + (copy * count + i) * point_bytes, point_bytes));
      }
    }
  }

  // groth16_msm_g1/_g2_precomputed: Σ_j Σ_i u_ij·copy_j[i] with u_ij the unsigned c-bit digits of
  // scalar i (the device's are signed; both sum to the scalar when copy j is 2^(c·j)·P): one
  // reference MSM per copy.
  template <class Affine, class Projective>
  static void msm_precomputed(KernelContext& context) {
    const auto launch = kernel::MsmLaunch::from_launch(context.launch());
    constexpr std::size_t point_bytes = groth16::affine_bytes<Affine>;
    if (!launch.window_bits) {
      throw std::invalid_argument(fmt::format("{}: expects arguments [threads, window_bits]", launch.kernel));
    }
    const std::size_t count = launch.points;
    const auto threads = static_cast<unsigned>(launch.threads);
    const auto window_bits = checked_window_bits(*launch.window_bits, launch.kernel);
    const std::size_t copies = kernel::precomputed_copies(window_bits);
    auto copies_bytes = context.bytes(launch.bases);
    auto scalar_bytes = context.bytes(launch.scalars);
    auto result = context.bytes(launch.result);
    if (copies_bytes.size() < copies * count * point_bytes || scalar_bytes.size() < count * kernel::kFrBytes ||
        result.size() < groth16::jacobian_bytes<Projective>) {
      throw std::invalid_argument(fmt::format("{}: a buffer is smaller than the launch", launch.kernel));
    }
    const auto scalars = scalars_of(scalar_bytes, count);
    std::vector<typename Fr::LimbArray> canonical(count);
    for (std::size_t i = 0; i < count; ++i) canonical[i] = scalars[i].to_canonical_limbs();
    auto digit = [&](std::size_t i, unsigned bit) {
      std::uint64_t value = 0;
      for (unsigned k = 0; k < window_bits && bit + k < 256; ++k) {
        value |= ((canonical[i][(bit + k) / 64] >> ((bit + k) % 64)) & 1) << k;
      }
      return Fr::from_uint64(value);
    };
    std::vector<Fr> digits(count);
    auto copy_sum = [&](std::size_t copy) {
      for (std::size_t i = 0; i < count; ++i) digits[i] = digit(i, static_cast<unsigned>(copy) * window_bits);
      const auto points = decode<Affine>(copies_bytes.subspan(copy * count * point_bytes), count);
      return M::msm(std::span<const Affine>(points), std::span<const Fr>(digits), threads);
    };
    auto sum = copy_sum(0);
    for (std::size_t copy = 1; copy < copies; ++copy) sum = sum + copy_sum(copy);
    write_sum(result, sum);
  }

  static void abc(KernelContext& context) {
    const auto launch = kernel::AbcLaunch::from_launch(context.launch());
    kernel::ConstraintMatrixLayout layout{launch.rows, launch.entries_a, launch.entries_b};
    const auto chunk = launch.chunk.value_or(kernel::AbcLaunch::ChunkStart{});
    auto witness = context.bytes(launch.witness);
    auto as_fr = [&](std::span<std::byte> bytes) {
      if (bytes.size() < layout.rows * kernel::kFrBytes) {
        throw std::invalid_argument(
            fmt::format("{}: an output is smaller than the matrix's rows", kernel::groth16_abc));
      }
      return std::span<Fr>(reinterpret_cast<Fr*>(bytes.data()), layout.rows);
    };
    groth16::evaluate_constraint_matrix(
        layout, context.bytes(launch.matrix), scalars_of(witness, witness.size() / kernel::kFrBytes),
        as_fr(context.bytes(launch.a)), as_fr(context.bytes(launch.b)), as_fr(context.bytes(launch.c)),
        static_cast<unsigned>(launch.threads), chunk.first_a, chunk.first_b);
  }

  static void register_all(SimSystem& system) {
    using G1A = typename M::G1Affine;
    using G1P = typename M::G1Projective;
    using G2A = typename M::G2Affine;
    using G2P = typename M::G2Projective;
    system.register_kernel(kernel::groth16_h_evaluate, Curve, h_evaluate);
    system.register_kernel(kernel::groth16_h_combine, Curve, h_combine);
    system.register_kernel(kernel::groth16_msm_g1, Curve, msm<G1A, G1P>);
    system.register_kernel(kernel::groth16_msm_g2, Curve, msm<G2A, G2P>);
    system.register_kernel(kernel::groth16_precompute_g1, Curve, precompute<G1A, G1P>);
    system.register_kernel(kernel::groth16_precompute_g2, Curve, precompute<G2A, G2P>);
    system.register_kernel(kernel::groth16_msm_g1_precomputed, Curve, msm_precomputed<G1A, G1P>);
    system.register_kernel(kernel::groth16_msm_g2_precomputed, Curve, msm_precomputed<G2A, G2P>);
    // The batch kernels keep the MSM's sum so far in their scratch: at least one sum of it.
    system.register_kernel(kernel::groth16_msm_g1_batch, Curve, msm_batch<G1A, G1P>, sizes.g1_jacobian);
    system.register_kernel(kernel::groth16_msm_g2_batch, Curve, msm_batch<G2A, G2P>, sizes.g2_jacobian);
    system.register_kernel(kernel::groth16_msm_g1_reduce, Curve, msm_reduce<G1P>, sizes.g1_jacobian);
    system.register_kernel(kernel::groth16_msm_g2_reduce, Curve, msm_reduce<G2P>, sizes.g2_jacobian);
    system.register_kernel(kernel::groth16_abc, Curve, abc);
  }
};

}  // namespace

void register_groth16_kernels(SimSystem& system) {
  Groth16Kernels<kernel::Curve::bls12_381>::register_all(system);
  Groth16Kernels<kernel::Curve::bn254>::register_all(system);
}

}  // namespace stagehand::sim
