// Host-side launchers that the CUDA Device backend calls for Device::launch(KernelLaunch, stream).
//
// Every launcher is asynchronous on the given stream, allocates no device memory, and throws
// std::invalid_argument when a launch's arguments or buffers do not fit its convention below
// (std::runtime_error for CUDA errors). DevicePointer::address is the raw device pointer; a
// buffer's `bytes` must be at least what the kernel touches. Fr values are 32-byte Montgomery
// form (R = 2^256), G1 points 96-byte affine Montgomery form (snarkjs layout, infinity = zeros):
// BLS12-381's sizes; a kernel's BN254 launcher (LauncherEntry::curve) takes kernel::curve_sizes'
// (64-byte G1 points, 96-byte Jacobian sums, ...). The core kernels' arguments are decoded in
// launch/core_launches.hpp.
//
// name                   work_units     arguments                              reads                 writes
// busy_wait              nanoseconds    [] or [fault 0|1]                      -                     -
//   spins one thread on %globaltimer for work_units ns (the Device contract's stand-in kernel);
//   with fault 1 it then traps, which loses the CUDA context (the contract's failed kernel).
// ntt_domain_init        2^log_size     [log_size, ω w0..w3, g w0..w3]         -                     [domain]
//   ω a primitive 2^log_size-th root, g the coset generator, each four 64-bit Montgomery words;
//   domain takes ntt_domain_bytes(log_size) (ntt.hpp). Build once per (size, ω, g).
// ntt_forward            2^log_size     [log_size]                             [domain]              [values]
// ntt_inverse            (same)
// coset_ntt              (same)          coefficients -> evaluations on g·⟨ω⟩
// coset_intt             (same)          evaluations on g·⟨ω⟩ -> coefficients
//   in place on values (32·2^log_size bytes), natural order in and out.
// h_pointwise            count          [] or [factor w0..w3]                  [b, c]                [a]
//   a[i] = (a[i]·b[i] − c[i])·factor (factor 1 when absent).
// h_polynomial_snarkjs   2^log_size     [log_size]                             [domain]              [a, b, c]
// h_polynomial_classic   (same)
//   the two forms of src/math/h_polynomial.hpp, result in a; b and c are overwritten.
// h_classic_product      2^log_size     [log_size]                             [domain]              [a, b]
// h_classic_finish       2^log_size     [log_size]                             [domain]              [a, c]
//   h_polynomial_classic in two halves (kernel_abi.hpp), result in a; b and c are overwritten.
// msm_g1                 point_count    [scalars_montgomery 0|1, window_bits (0 = auto)]
//                                                                              [points, scalars]     [window_sums, scratch]
//   window_sums takes msm_result_bytes(plan), scratch msm_scratch_bytes(plan) with
//   plan = msm_plan(point_count, window_bits) (msm.hpp); the host finishes with
//   msm_combine_windows once window_sums has been copied back.
// batch_addition_g1      point_count    [] or [start 0|1] or [start, offset]   [points]              [accumulator + scratch]
// batch_addition_g2      (same; 192-byte affine G2 points x.c0‖x.c1‖y.c0‖y.c1)
//   accumulator := (start ? ∞ : accumulator) + Σ points (points at infinity count as zero): the
//   XYZZ point at byte `offset` (default 0, a multiple of 16) of writes[0], 192 bytes for G1 and
//   384 for G2 (batch_addition.hpp gives the format; zero bytes are ∞, so a zeroed slot is an empty
//   sum). Without arguments successive launches accumulate. Scratch: the block partial sums take
//   the last kBatchAdditionScratchBytes (384 KiB) of writes[0], which must therefore hold
//   batch_write_bytes(group, offset) (the partition program's 8 MiB bucket buffer does).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <span>
#include <string_view>
#include <vector>

#include "device/kernel_abi.hpp"
#include "device/types.hpp"

namespace stagehand::cuda {

using KernelLauncher = void (*)(const stagehand::KernelLaunch&, cudaStream_t);

// One kernel's launcher under its kernel_abi.hpp name, for one curve: a kernel instantiated for
// both curves has an entry for each (its launchers read the byte sizes of the entry's curve,
// kernel::curve_sizes). The curve comes last so that a table of BLS12-381's kernels only can leave
// it out.
struct LauncherEntry {
  std::string_view name;
  KernelLauncher launcher;
  kernel::Curve curve = kernel::Curve::bls12_381;
};

// Tables as one, in order: a group's table for each curve made once, then joined (the registry
// reads each group's table as one span).
template <std::size_t... N>
constexpr std::array<LauncherEntry, (N + ...)> joined(const std::array<LauncherEntry, N>&... tables) {
  std::array<LauncherEntry, (N + ...)> all{};
  std::size_t next = 0;
  ((std::copy(tables.begin(), tables.end(), all.begin() + next), next += N), ...);
  return all;
}

// The launcher tables, one per group of kernels, each defined beside its launchers. The registry
// (launch/registry.cpp) is their union; a new group is one table there.
std::span<const LauncherEntry> core_launchers();            // the kernels above (launchers.cu)
std::span<const LauncherEntry> batch_addition_launchers();  // ec/batch_addition.hpp
std::span<const LauncherEntry> partition_launchers();       // launch/partition_launchers.hpp
std::span<const LauncherEntry> groth16_launchers();         // launch/groth16_launchers.hpp
std::span<const LauncherEntry> setup_launchers();           // launch/setup_launchers.hpp

// The registry's lookup: nullptr for a (name, curve) no table has.
const KernelLauncher* find_launcher(std::string_view name, kernel::Curve curve = kernel::Curve::bls12_381);

// Every name registered for `curve`, in the tables' order: for diagnostics and the test that holds
// the registry to kernel::kAll (tests/gpu/launcher_registry_test.cpp).
std::vector<std::string_view> launcher_names(kernel::Curve curve = kernel::Curve::bls12_381);

// Device scratch a launch of `name` takes as its last write buffer when its largest launch has
// `capacity` work units (partition_launchers.hpp, groth16_launchers.hpp); 0 when it takes none.
std::uint64_t kernel_scratch_bytes(std::string_view name, std::uint64_t capacity);

// The stand-in kernel on its own.
void busy_wait(std::uint64_t nanoseconds, cudaStream_t stream, bool fault = false);

}  // namespace stagehand::cuda
