#include "groth16/device_prover.hpp"

#include "groth16/encoding.hpp"
#include "math/h_polynomial.hpp"
#include "math/msm.hpp"
#include "math/ntt.hpp"
#include "sim/sim_system.hpp"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>

namespace stagehand::groth16 {
namespace {

static_assert(sizeof(math::Fr) == 32, "Fr must be its four Montgomery limbs, so that Fr arrays are device bytes");
constexpr std::size_t kJacobianBytes = 144;

HostRange host_range(const void* data, std::size_t bytes) {
  return HostRange{reinterpret_cast<std::uintptr_t>(data), bytes};
}

std::vector<std::uint8_t> encode_points(const std::vector<math::G1Affine>& points) {
  std::vector<std::uint8_t> bytes;
  bytes.reserve(points.size() * kG1Bytes);
  for (const auto& point : points) encode_g1(point, bytes);
  return bytes;
}

math::Fq fq_from(const std::byte* data) {
  math::Fq::LimbArray limbs;
  std::memcpy(limbs.data(), data, 48);
  return *math::Fq::from_montgomery_limbs(limbs);
}

// The device bytes of G1 points back into points (no curve check: the key was checked on load).
std::vector<math::G1Affine> decode_device_points(std::span<const std::byte> bytes, std::size_t count) {
  std::vector<math::G1Affine> points(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::byte* data = bytes.data() + i * kG1Bytes;
    bool zero = true;
    for (std::size_t k = 0; k < kG1Bytes && zero; ++k) zero = data[k] == std::byte{0};
    if (!zero) points[i] = math::G1Affine::from_coordinates(fq_from(data), fq_from(data + 48));
  }
  return points;
}

const math::Domain& snarkjs_domain(unsigned log_size, unsigned threads) {
  static std::mutex mutex;
  static std::map<unsigned, std::unique_ptr<math::Domain>> domains;
  std::lock_guard lock(mutex);
  auto& slot = domains[log_size];
  if (!slot) slot = std::make_unique<math::Domain>(math::Domain::snarkjs(log_size, threads));
  return *slot;
}

}  // namespace

void register_sim_kernels(sim::SimSystem& system) {
  system.register_kernel(kHKernel, [](sim::KernelContext& context) {
    const auto log_size = static_cast<unsigned>(context.argument(0));
    const auto threads = static_cast<unsigned>(context.argument(1));
    const std::size_t n = std::size_t{1} << log_size;
    auto as_fr = [n](std::span<std::byte> bytes) {
      if (bytes.size() < n * 32) throw std::invalid_argument("groth16_h: a buffer is smaller than the domain");
      return std::span<math::Fr>(reinterpret_cast<math::Fr*>(bytes.data()), n);
    };
    math::h_evaluations_snarkjs(as_fr(context.write(0)), as_fr(context.write(1)), as_fr(context.write(2)),
                                snarkjs_domain(log_size, threads), threads);
  });
  system.register_kernel(kMsmG1Kernel, [](sim::KernelContext& context) {
    const std::size_t count = context.launch().work_units;
    const auto threads = static_cast<unsigned>(context.argument(0));
    auto points_bytes = context.read(0);
    auto scalar_bytes = context.read(1);
    auto result = context.write(0);
    if (points_bytes.size() < count * kG1Bytes || scalar_bytes.size() < count * 32 || result.size() < kJacobianBytes) {
      throw std::invalid_argument("groth16_msm_g1: a buffer is smaller than the launch");
    }
    const auto points = decode_device_points(points_bytes, count);
    std::span<const math::Fr> scalars(reinterpret_cast<const math::Fr*>(scalar_bytes.data()), count);
    const auto sum = math::msm(points, scalars, threads);
    std::memcpy(result.data(), sum.x.montgomery_limbs().data(), 48);
    std::memcpy(result.data() + 48, sum.y.montgomery_limbs().data(), 48);
    std::memcpy(result.data() + 96, sum.z.montgomery_limbs().data(), 48);
  });
}

DeviceProver::DeviceProver(Device& device, const ProvingKey& key, unsigned thread_count)
    : device_(device), key_(key), thread_count_(thread_count) {}

asio::awaitable<void> DeviceProver::upload_key() {
  stream_ = device_.create_stream();
  auto upload = [&](const std::vector<math::G1Affine>& points, DevicePointer& target) -> asio::awaitable<void> {
    auto bytes = encode_points(points);
    target = co_await device_.allocate_async(std::max<std::size_t>(bytes.size(), 1), stream_);
    if (!bytes.empty()) co_await device_.copy_to_device(target, host_range(bytes.data(), bytes.size()), stream_);
    co_await device_.synchronize_stream(stream_);  // the host bytes go out of scope here
  };
  co_await upload(key_.a, a_points_);
  co_await upload(key_.b1, b1_points_);
  co_await upload(key_.c, c_points_);
  co_await upload(key_.h, h_points_);
}

asio::awaitable<void> DeviceProver::release_key() {
  for (auto pointer : {a_points_, b1_points_, c_points_, h_points_}) {
    if (pointer) device_.free_async(pointer, stream_);
  }
  co_await device_.synchronize_stream(stream_);
  device_.destroy_stream(stream_);
  a_points_ = b1_points_ = c_points_ = h_points_ = DevicePointer{};
}

asio::awaitable<Proof> DeviceProver::prove(std::span<const math::Fr> witness, ProofRandomness randomness) {
  const std::size_t n = key_.domain_size;
  const std::size_t vars = key_.n_vars;
  // The G2 MSM runs on a host thread while the device works.
  auto b2_future = std::async(std::launch::async, [&] { return math::msm(key_.b2, witness, thread_count_); });

  std::vector<math::Fr> a(n), b(n), c(n);
  evaluate_constraints(key_, witness, a, b, c);

  const Bytes domain_bytes = 32 * n;
  auto d_a = co_await device_.allocate_async(domain_bytes, stream_);
  auto d_b = co_await device_.allocate_async(domain_bytes, stream_);
  auto d_c = co_await device_.allocate_async(domain_bytes, stream_);
  auto d_w = co_await device_.allocate_async(32 * vars, stream_);
  auto d_results = co_await device_.allocate_async(4 * kJacobianBytes, stream_);
  co_await device_.copy_to_device(d_a, host_range(a.data(), domain_bytes), stream_);
  co_await device_.copy_to_device(d_b, host_range(b.data(), domain_bytes), stream_);
  co_await device_.copy_to_device(d_c, host_range(c.data(), domain_bytes), stream_);
  co_await device_.copy_to_device(d_w, host_range(witness.data(), 32 * vars), stream_);

  device_.launch(KernelLaunch{kHKernel, n, {key_.domain_log2, thread_count_}, {}, {{d_a, domain_bytes}, {d_b, domain_bytes}, {d_c, domain_bytes}}},
                 stream_);
  auto msm = [&](DevicePointer points, std::size_t count, DevicePointer scalars, std::size_t slot) {
    device_.launch(KernelLaunch{kMsmG1Kernel, count, {thread_count_}, {{points, count * kG1Bytes}, {scalars, count * 32}},
                                {{d_results + slot * kJacobianBytes, kJacobianBytes}}},
                   stream_);
  };
  const std::size_t public_count = key_.n_public + 1;
  msm(a_points_, vars, d_w, 0);
  msm(b1_points_, vars, d_w, 1);
  if (vars > public_count) {
    msm(c_points_, vars - public_count, d_w + 32 * public_count, 2);
  } else {
    device_.memset_async(d_results + 2 * kJacobianBytes, 0, kJacobianBytes, stream_);
  }
  msm(h_points_, n, d_a, 3);

  std::array<std::byte, 4 * kJacobianBytes> results{};
  co_await device_.copy_to_host(host_range(results.data(), results.size()), d_results, stream_);
  for (auto pointer : {d_a, d_b, d_c, d_w, d_results}) device_.free_async(pointer, stream_);
  co_await device_.synchronize_stream(stream_);

  auto jacobian = [&](std::size_t slot) {
    const std::byte* data = results.data() + slot * kJacobianBytes;
    math::G1Projective point;
    point.x = fq_from(data);
    point.y = fq_from(data + 48);
    point.z = fq_from(data + 96);
    return point;
  };
  MsmResults sums;
  sums.a = jacobian(0);
  sums.b1 = jacobian(1);
  sums.c = vars > public_count ? jacobian(2) : math::G1Projective::identity();
  sums.h = jacobian(3);
  sums.b2 = b2_future.get();
  co_return assemble_proof(key_, sums, randomness);
}

}  // namespace stagehand::groth16
