#pragma once
// The Groth16 program's launches as typed values: one struct per kernel family with its
// arguments and buffers by name, to_launch() for the program (src/workloads/groth16/) and
// from_launch() for the CUDA launchers (cuda/kernels/launch/groth16_launchers.cu) and the
// simulator's host functions (sim/kernels/groth16_kernels.cpp). Each pair is the one place that
// knows the positions kernel_abi.hpp's table describes. from_launch() throws std::invalid_argument
// naming the kernel and what is missing where a launch has fewer arguments or buffers than its
// kernel takes; the sizes of the buffers are the kernel's to check. Each carries the curve its
// launch computes over, as KernelLaunch::curve, both ways.

#include <cstdint>
#include <optional>
#include <string>

#include "device/types.hpp"

namespace stagehand::kernel {

// groth16_h_evaluate: `values` (a polynomial on the domain of 2^log_size points) in place to the
// coset; scratch, where the device asks for one, holds the NTT domain.
struct HEvaluateLaunch {
  std::uint64_t log_size = 0;
  std::uint64_t threads = 0;  // host threads, for the simulator
  BufferUse values;
  std::optional<BufferUse> scratch = std::nullopt;

  Curve curve = Curve::bls12_381;  // whose instantiation runs (KernelLaunch::curve)

  KernelLaunch to_launch() const;
  static HEvaluateLaunch from_launch(const KernelLaunch& launch);
};

// groth16_h_combine: a = a·b − c over the domain.
struct HCombineLaunch {
  std::uint64_t log_size = 0;
  std::uint64_t threads = 0;
  BufferUse a, b, c;

  Curve curve = Curve::bls12_381;  // whose instantiation runs (KernelLaunch::curve)

  KernelLaunch to_launch() const;
  static HCombineLaunch from_launch(const KernelLaunch& launch);
};

// groth16_msm_g1/_g2 (window_bits absent) and groth16_msm_g1/_g2_precomputed (window_bits: the
// copies' width; bases: every copy): the sum of scalars[i]·bases[i] into result.
struct MsmLaunch {
  std::string kernel;
  std::uint64_t points = 0;
  std::uint64_t threads = 0;
  std::optional<std::uint64_t> window_bits = std::nullopt;
  BufferUse bases, scalars, result;
  std::optional<BufferUse> scratch = std::nullopt;
  std::uint64_t light_units = 0;

  Curve curve = Curve::bls12_381;  // whose instantiation runs (KernelLaunch::curve)

  KernelLaunch to_launch() const;
  static MsmLaunch from_launch(const KernelLaunch& launch);
};

// groth16_msm_g1/_g2_batch: one batch of `points` bases added into the MSM's running state in
// scratch (add false: afresh); capacity, the largest batch's point count, the same for every batch.
struct MsmBatchLaunch {
  std::string kernel;
  std::uint64_t points = 0;
  std::uint64_t threads = 0;
  std::uint64_t capacity = 0;
  bool add = false;
  BufferUse bases, scalars;
  std::optional<BufferUse> scratch = std::nullopt;
  std::uint64_t light_units = 0;

  Curve curve = Curve::bls12_381;  // whose instantiation runs (KernelLaunch::curve)

  KernelLaunch to_launch() const;
  static MsmBatchLaunch from_launch(const KernelLaunch& launch);
};

// groth16_msm_g1/_g2_reduce: the running state in scratch into result.
struct MsmReduceLaunch {
  std::string kernel;
  std::uint64_t capacity = 0;
  BufferUse result;
  std::optional<BufferUse> scratch = std::nullopt;
  std::uint64_t light_units = 0;

  Curve curve = Curve::bls12_381;  // whose instantiation runs (KernelLaunch::curve)

  KernelLaunch to_launch() const;
  static MsmReduceLaunch from_launch(const KernelLaunch& launch);
};

// groth16_precompute_g1/_g2: precomputed_copies(window_bits) copies of the `points` bases into copies.
struct PrecomputeLaunch {
  std::string kernel;
  std::uint64_t points = 0;
  std::uint64_t window_bits = 0;
  BufferUse bases, copies;

  Curve curve = Curve::bls12_381;  // whose instantiation runs (KernelLaunch::curve)

  KernelLaunch to_launch() const;
  static PrecomputeLaunch from_launch(const KernelLaunch& launch);
};

// groth16_abc over `rows` rows of the constraint matrix; a chunk of it names its first entries
// (absent: the whole matrix, whose first entries are 0).
struct AbcLaunch {
  struct ChunkStart {
    std::uint64_t first_a = 0;
    std::uint64_t first_b = 0;
  };
  std::uint64_t rows = 0;
  std::uint64_t entries_a = 0;
  std::uint64_t entries_b = 0;
  std::uint64_t threads = 0;
  std::optional<ChunkStart> chunk = std::nullopt;
  BufferUse witness, matrix, a, b, c;

  Curve curve = Curve::bls12_381;  // whose instantiation runs (KernelLaunch::curve)

  KernelLaunch to_launch() const;
  static AbcLaunch from_launch(const KernelLaunch& launch);
};

}  // namespace stagehand::kernel
