#pragma once
// The test-only setup's point multiplications on a Device: scalars[i]·G for the generator G of
// G1 or G2, through the setup_fixed_base_g1/_g2 kernels (device/kernel_abi.hpp). Written against
// the Device interface only, so it runs on CudaDevice and on the simulator's functional mode
// (sim/kernels/setup_kernels.hpp) alike.
//
// One source for both curves: the scalars' field picks the curve (math::Fr BLS12-381's,
// math::bn254::Fr BN254's), whose table the launches carry and whose kernel instance they name
// (KernelLaunch::curve). The table of G's multiples (fixed_base.hpp) is built here with src/math
// and uploaded once; the scalars go up and the points come down in chunks of at most
// options.max_chunk_points that fit half the device's free memory, on two streams so that one
// chunk's copies overlap the other's kernel. The output is the snarkjs encoding of encoding.hpp:
// affine, Montgomery form, a zero scalar's point (infinity) all zeros; G1 96 bytes and G2 192 a
// point over BLS12-381, 64 and 128 over BN254 (a .zkey's).

#include "device/device.hpp"
#include "device/kernel_abi.hpp"
#include "math/bn254.hpp"
#include "math/fr.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace stagehand::groth16 {

enum class SetupGroup { g1, g2 };

struct DeviceSetupOptions {
  // The most points per launch; fewer where the device's free memory asks for it.
  std::uint64_t max_chunk_points = std::uint64_t{1} << 24;
  // Host threads of the simulator's host function (ignored on a GPU); 0: every hardware thread.
  unsigned host_threads = 0;
};

// 96 (G1) or 192 (G2) over BLS12-381, 64 or 128 over BN254.
std::size_t setup_point_bytes(SetupGroup group, kernel::Curve curve = kernel::Curve::bls12_381);

// The kernels' table: FixedBase(generator).table() in the encoding above, entry 256·w + d =
// d·2^(8w)·G.
std::vector<std::uint8_t> fixed_base_table_bytes(SetupGroup group, kernel::Curve curve = kernel::Curve::bls12_381);

// Points per chunk for `count` points when the device has `free_bytes` free: at most
// max_chunk_points, and two chunks' scalars and points with the table in half of free_bytes
// (0 where not even one point fits).
std::uint64_t setup_chunk_points(SetupGroup group, std::uint64_t count, Bytes free_bytes,
                                 std::uint64_t max_chunk_points, kernel::Curve curve = kernel::Curve::bls12_381);

// scalars[i]·G encoded into out[i·setup_point_bytes(group, curve), ...); out must hold every point.
// Throws std::invalid_argument for an output of the wrong size, std::runtime_error where the
// device's free memory holds no chunk, DeviceError for the device's failures (the device memory
// is freed either way).
asio::awaitable<void> multiply_generator_on_device(Device& device, SetupGroup group, std::span<const math::Fr> scalars,
                                                   std::span<std::uint8_t> out, DeviceSetupOptions options = {});
asio::awaitable<void> multiply_generator_on_device(Device& device, SetupGroup group,
                                                   std::span<const math::bn254::Fr> scalars,
                                                   std::span<std::uint8_t> out, DeviceSetupOptions options = {});
// The same into a new buffer of scalars.size() points.
asio::awaitable<std::vector<std::uint8_t>> multiply_generator_on_device(Device& device, SetupGroup group,
                                                                        std::span<const math::Fr> scalars,
                                                                        DeviceSetupOptions options = {});
asio::awaitable<std::vector<std::uint8_t>> multiply_generator_on_device(Device& device, SetupGroup group,
                                                                        std::span<const math::bn254::Fr> scalars,
                                                                        DeviceSetupOptions options = {});

}  // namespace stagehand::groth16
