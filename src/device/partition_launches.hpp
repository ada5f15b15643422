#pragma once
// The partition program's launches and the batch additions' as typed values (the pattern of
// groth16_launches.hpp): one struct per kernel with its arguments and buffers by name, to_launch()
// for the program (src/workloads/porep/partition_program.cpp) and from_launch() for the CUDA
// launchers (cuda/kernels/launch/partition_launchers.cu, cuda/kernels/ec/batch_addition.cu) and
// the host functions that stand in for them (tests/workloads/partition_program_test.cpp). Each
// pair is the one place that knows the positions of kernel_abi.hpp's rows for ntt_twiddles, ntt,
// msm_batch, msm_reduce, tail_msm, tail_reduce and batch_addition_g1/_g2.
//
// from_launch() throws std::invalid_argument naming the kernel and the layout it expects where a
// launch has fewer arguments, reads or writes than its kernel takes; the buffers' sizes are the
// kernel's to check. to_launch() asserts what the program guarantees (a batch within its
// capacity, a buffer that holds its work units).

#include <cstdint>
#include <optional>
#include <string>

#include "device/kernel_abi.hpp"
#include "device/types.hpp"

namespace stagehand::kernel {

// ntt_twiddles: the NTT domain of 2^log_size points into twiddles.
struct NttTwiddlesLaunch {
  std::uint64_t log_size = 0;
  BufferUse twiddles;

  KernelLaunch to_launch() const;
  static NttTwiddlesLaunch from_launch(const KernelLaunch& launch);
};

// ntt: `values` (2^log_size Fr) transformed in place by `kind`, with the domain in twiddles. The
// launch reads and writes the same values buffer; from_launch() refuses one whose read differs.
struct NttLaunch {
  std::uint64_t log_size = 0;
  NttKind kind = NttKind::forward;
  BufferUse values, twiddles;

  KernelLaunch to_launch() const;
  static NttLaunch from_launch(const KernelLaunch& launch);
};

// msm_batch: Σ scalars[first + i]·bases[i] over the batch's `points` bases added into the MSM's
// buckets in scratch (start: afresh); capacity, the largest batch's point count, the same for
// every batch of the MSM. results is declared written; msm_reduce fills it.
struct PartitionMsmBatchLaunch {
  std::uint64_t points = 0;
  std::uint64_t first = 0;
  std::uint64_t capacity = 0;
  bool start = false;
  BufferUse bases, scalars, results;
  std::optional<BufferUse> scratch = std::nullopt;

  KernelLaunch to_launch() const;
  static PartitionMsmBatchLaunch from_launch(const KernelLaunch& launch);
};

// msm_reduce: the window sums of the MSM whose buckets are in scratch into the start of results;
// other_results, the other half's buckets, is read so that the reduction waits for them.
struct PartitionMsmReduceLaunch {
  std::uint64_t capacity = 0;
  BufferUse results, other_results;
  std::optional<BufferUse> scratch = std::nullopt;

  KernelLaunch to_launch() const;
  static PartitionMsmReduceLaunch from_launch(const KernelLaunch& launch);
};

// tail_msm: `item_count` items of kTailItemBytes (a G1 point, then its scalar) accumulated into
// the tail's buckets in scratch (start: afresh); capacity, the largest launch's item count.
struct TailMsmLaunch {
  static constexpr std::uint64_t kTailItemBytes = kG1AffineBytes + kFrBytes;
  std::uint64_t item_count = 0;
  bool start = false;
  std::uint64_t capacity = 0;
  BufferUse items;
  std::optional<BufferUse> scratch = std::nullopt;

  KernelLaunch to_launch() const;
  static TailMsmLaunch from_launch(const KernelLaunch& launch);
};

// tail_reduce: the tail's buckets in scratch reduced into the XYZZ accumulator at byte `offset`
// of sums.
struct TailReduceLaunch {
  std::uint64_t offset = 0;
  std::uint64_t capacity = 0;
  BufferUse sums;
  std::optional<BufferUse> scratch = std::nullopt;

  KernelLaunch to_launch() const;
  static TailReduceLaunch from_launch(const KernelLaunch& launch);
};

// batch_addition_g1/_g2: accumulator := (start ? ∞ : accumulator) + Σ points, the accumulator an
// XYZZ point at byte `offset` of the write buffer, whose last bytes are the kernel's scratch.
// from_launch() reads a launch without arguments as start 0 at offset 0, and with one as start at
// offset 0 (kernel_abi.hpp: [] or [start] or [start, offset]); to_launch() writes both.
struct BatchAdditionLaunch {
  std::string kernel;  // batch_addition_g1 or batch_addition_g2
  std::uint64_t point_count = 0;
  bool start = false;
  std::uint64_t offset = 0;
  BufferUse points, write;

  KernelLaunch to_launch() const;
  static BatchAdditionLaunch from_launch(const KernelLaunch& launch);
};

}  // namespace stagehand::kernel
