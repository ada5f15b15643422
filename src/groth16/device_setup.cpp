#include "groth16/device_setup.hpp"

#include "device/kernel_abi.hpp"
#include "device/setup_launches.hpp"
#include "groth16/encoding.hpp"
#include "groth16/fixed_base.hpp"
#include "math/g1.hpp"
#include "math/g2.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <exception>
#include <stdexcept>
#include <type_traits>

namespace stagehand::groth16 {
namespace {

static_assert(kFixedBaseEntries == kernel::kFixedBaseTableEntries, "the kernels' table is FixedBase's");
static_assert(sizeof(math::Fr) == kernel::kFrBytes && sizeof(math::bn254::Fr) == kernel::kFrBytes,
              "Fr arrays are the kernels' scalars as they are");

// The kernel instance of Description's curve.
template <class Description>
constexpr kernel::Curve kernel_curve =
    std::is_same_v<Description, math::Bn254> ? kernel::Curve::bn254 : kernel::Curve::bls12_381;

template <class Description, SetupGroup Group>
using GroupOf = std::conditional_t<Group == SetupGroup::g1, typename Description::G1, typename Description::G2>;

template <class Description, SetupGroup Group>
std::vector<std::uint8_t> encoded_group_table() {
  using Affine = math::AffinePoint<GroupOf<Description, Group>>;
  constexpr std::size_t bytes_per_point = affine_bytes<Affine>;
  static_assert(bytes_per_point == (Group == SetupGroup::g1 ? kernel::curve_sizes(kernel_curve<Description>).g1_affine
                                                            : kernel::curve_sizes(kernel_curve<Description>).g2_affine),
                "the encoding is the kernels' layout");
  const FixedBase<GroupOf<Description, Group>> base(GroupOf<Description, Group>::generator());
  std::vector<std::uint8_t> bytes(kFixedBaseEntries * bytes_per_point);
  for (std::size_t e = 0; e < kFixedBaseEntries; ++e) {
    encode_affine(base.table()[e], std::span<std::uint8_t>(bytes.data() + e * bytes_per_point, bytes_per_point));
  }
  return bytes;
}

template <class Description>
std::vector<std::uint8_t> encoded_table(SetupGroup group) {
  return group == SetupGroup::g1 ? encoded_group_table<Description, SetupGroup::g1>()
                                 : encoded_group_table<Description, SetupGroup::g2>();
}

HostRange host_range(const void* data, Bytes bytes) { return HostRange{reinterpret_cast<std::uintptr_t>(data), bytes}; }

}  // namespace

std::size_t setup_point_bytes(SetupGroup group, kernel::Curve curve) {
  const kernel::CurveSizes sizes = kernel::curve_sizes(curve);
  return group == SetupGroup::g1 ? sizes.g1_affine : sizes.g2_affine;
}

std::vector<std::uint8_t> fixed_base_table_bytes(SetupGroup group, kernel::Curve curve) {
  return curve == kernel::Curve::bn254 ? encoded_table<math::Bn254>(group) : encoded_table<math::Bls12_381>(group);
}

std::uint64_t setup_chunk_points(SetupGroup group, std::uint64_t count, Bytes free_bytes,
                                 std::uint64_t max_chunk_points, kernel::Curve curve) {
  // Half the free memory: the rest is left to whatever else holds the device, and to the pool's
  // rounding of the four buffers.
  const Bytes usable = free_bytes / 2;
  const Bytes table = kFixedBaseEntries * setup_point_bytes(group, curve);
  if (usable <= table) return 0;
  const Bytes per_point = 2 * (kernel::kFrBytes + setup_point_bytes(group, curve));  // two chunks in flight
  return std::min({max_chunk_points, count, (usable - table) / per_point});
}

namespace {

// What multiply_generator_on_device holds on the device: the table, two slots of scalars and
// points, a stream a slot.
struct SetupBuffers {
  DevicePointer table;
  std::array<DevicePointer, 2> scalars{}, points{};
  std::array<StreamHandle, 2> streams{};
};

// Everything `held` holds given back, on failure too (a co_await cannot sit in a handler); a lost
// device may refuse, which changes nothing for the caller.
asio::awaitable<void> give_back(Device& device, const SetupBuffers& held) {
  for (DevicePointer pointer : {held.table, held.scalars[0], held.scalars[1], held.points[0], held.points[1]}) {
    if (!pointer) continue;
    try {
      co_await device.free(pointer);
    } catch (...) {
    }
  }
  for (StreamHandle stream : held.streams) {
    if (!stream) continue;
    try {
      device.destroy_stream(stream);
    } catch (...) {
    }
  }
}

template <class Description>
asio::awaitable<void> multiply_on_device(Device& device, SetupGroup group,
                                         std::span<const typename Description::Fr> scalars, std::span<std::uint8_t> out,
                                         DeviceSetupOptions options) {
  constexpr kernel::Curve curve = kernel_curve<Description>;
  const std::uint64_t count = scalars.size();
  const std::uint64_t point_bytes = setup_point_bytes(group, curve);
  if (out.size() != count * point_bytes) {
    throw std::invalid_argument(fmt::format("multiply_generator_on_device: {} points take {} bytes, the output has {}",
                                            count, count * point_bytes, out.size()));
  }
  if (options.max_chunk_points == 0) throw std::invalid_argument("multiply_generator_on_device: max_chunk_points is 0");
  if (count == 0) co_return;
  const Bytes free_bytes = device.memory_info().free_bytes;
  const std::uint64_t chunk = setup_chunk_points(group, count, free_bytes, options.max_chunk_points, curve);
  if (chunk == 0) {
    throw std::runtime_error(
        fmt::format("multiply_generator_on_device: {} bytes free on the device hold no chunk", free_bytes));
  }
  const std::uint64_t chunks = (count + chunk - 1) / chunk;
  const char* kernel_name = group == SetupGroup::g1 ? kernel::setup_fixed_base_g1 : kernel::setup_fixed_base_g2;
  const std::vector<std::uint8_t> table = encoded_table<Description>(group);

  // Chunk k uses slot k % 2 (its stream and buffers): chunk k + 1 is uploaded and launched on the
  // other slot before chunk k's points are awaited, so that its upload runs beside chunk k's
  // kernel and chunk k's download beside chunk k + 1's kernel. A slot is reused only once its
  // previous chunk's points have come back.
  SetupBuffers held;
  auto& streams = held.streams;
  auto& scalars_on_device = held.scalars;
  auto& points_on_device = held.points;
  std::exception_ptr failure;
  try {
    for (auto& stream : streams) stream = device.create_stream();
    held.table = co_await device.allocate(table.size());
    for (std::uint64_t slot = 0; slot < std::min<std::uint64_t>(2, chunks); ++slot) {
      scalars_on_device[slot] = co_await device.allocate(chunk * kernel::kFrBytes);
      points_on_device[slot] = co_await device.allocate(chunk * point_bytes);
    }
    co_await device.copy_to_device(held.table, host_range(table.data(), table.size()), streams[0]);
    co_await device.synchronize_stream(streams[0]);  // both streams' kernels read it

    auto start = [&](std::uint64_t k) -> asio::awaitable<void> {
      const std::uint64_t first = k * chunk, n = std::min(chunk, count - first), slot = k % 2;
      co_await device.copy_to_device(scalars_on_device[slot], host_range(scalars.data() + first, n * kernel::kFrBytes),
                                     streams[slot]);
      const kernel::FixedBaseLaunch launch{.kernel = kernel_name,
                                           .point_count = n,
                                           .threads = options.host_threads,
                                           .table = {held.table, table.size()},
                                           .scalars = {scalars_on_device[slot], n * kernel::kFrBytes},
                                           .points = {points_on_device[slot], n * point_bytes},
                                           .curve = curve};
      device.launch(launch.to_launch(), streams[slot]);
    };
    co_await start(0);
    for (std::uint64_t k = 0; k < chunks; ++k) {
      if (k + 1 < chunks) co_await start(k + 1);
      const std::uint64_t first = k * chunk, n = std::min(chunk, count - first), slot = k % 2;
      co_await device.copy_to_host(host_range(out.data() + first * point_bytes, n * point_bytes),
                                   points_on_device[slot], streams[slot]);
      co_await device.synchronize_stream(streams[slot]);
    }
  } catch (...) {
    failure = std::current_exception();
  }
  co_await give_back(device, held);
  if (failure) std::rethrow_exception(failure);
}

template <class Description>
asio::awaitable<std::vector<std::uint8_t>> multiply_into_new(Device& device, SetupGroup group,
                                                             std::span<const typename Description::Fr> scalars,
                                                             DeviceSetupOptions options) {
  std::vector<std::uint8_t> out(scalars.size() * setup_point_bytes(group, kernel_curve<Description>));
  co_await multiply_on_device<Description>(device, group, scalars, std::span<std::uint8_t>(out), options);
  co_return out;
}

}  // namespace

asio::awaitable<void> multiply_generator_on_device(Device& device, SetupGroup group, std::span<const math::Fr> scalars,
                                                   std::span<std::uint8_t> out, DeviceSetupOptions options) {
  return multiply_on_device<math::Bls12_381>(device, group, scalars, out, options);
}

asio::awaitable<void> multiply_generator_on_device(Device& device, SetupGroup group,
                                                   std::span<const math::bn254::Fr> scalars,
                                                   std::span<std::uint8_t> out, DeviceSetupOptions options) {
  return multiply_on_device<math::Bn254>(device, group, scalars, out, options);
}

asio::awaitable<std::vector<std::uint8_t>> multiply_generator_on_device(Device& device, SetupGroup group,
                                                                        std::span<const math::Fr> scalars,
                                                                        DeviceSetupOptions options) {
  return multiply_into_new<math::Bls12_381>(device, group, scalars, options);
}

asio::awaitable<std::vector<std::uint8_t>> multiply_generator_on_device(Device& device, SetupGroup group,
                                                                        std::span<const math::bn254::Fr> scalars,
                                                                        DeviceSetupOptions options) {
  return multiply_into_new<math::Bn254>(device, group, scalars, options);
}

}  // namespace stagehand::groth16
