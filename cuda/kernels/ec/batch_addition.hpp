// Batch additions: the sum of every point of a batch, added into an accumulator in device memory.
// The PoRep partition program (src/coordinator/gpu_program.cpp) streams the L, A and B_G1 sets
// (G1) and the B_G2 set (G2) through `batch_addition_g1` and `batch_addition_g2`, one launch per
// streamed segment; successive launches on the same accumulator add up to the set's sum.
//
// How: a grid of blocks, as many as are resident on the GPU at once (at most
// kBatchAdditionMaxBlocks), each thread summing a strided subset of the points with mixed XYZZ
// additions (affine point into an XYZZ register), then a tree in shared memory per block; one
// block partial per block goes to scratch. A second, one-block kernel folds the partials the same
// way and adds the result into the accumulator. Points at infinity (all zero bytes) are skipped;
// P + P and P + (-P) are handled wherever they meet (g2.cuh, curve.cuh).
//
// Memory: the launcher allocates nothing. The write buffer holds the accumulator at a byte offset
// (default 0) and, as scratch, the block partials in its LAST kBatchAdditionScratchBytes bytes
// (the accumulator must end at or before that region). Work on one stream is ordered, so the
// scratch of one launch is free again for the next.
//
// Accumulator format: one XYZZ point X‖Y‖ZZ‖ZZZ, Montgomery form; a coordinate is one Fq
// (48 bytes, G1: 192 bytes in all) or one Fq2 c0‖c1 (96 bytes, G2: 384 bytes). ZZ = 0 is the
// point at infinity, so an accumulator of zero bytes (cudaMemsetAsync 0) is an empty sum;
// argument start = 1 also begins a new sum, ignoring what the slot held. Convert on the host
// with XyzzPoint<F>::to_jacobian (curve.cuh).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "launch/launchers.hpp"

namespace stagehand::cuda {

enum class BatchGroup { g1, g2 };
// Fq's products on the integer pipe, or on the FP64 pipe (FqF64, as the MSM's accumulation): the
// same sums, bit for bit; the checks run both, the benchmark times both.
enum class BatchArithmetic { integer, f64 };
// The form launches take unless told otherwise (the launchers always do). On the H200 G1 was
// faster on the FP64 pipe than on the integer one, and G2 slower, its Fq2 products spilling at 255
// registers, so it stays integer (bench/journal/2026-11-30.md, "G1 batch additions on the FP64
// pipe", has the figures).
constexpr BatchArithmetic default_batch_arithmetic(BatchGroup group) {
  return group == BatchGroup::g1 ? BatchArithmetic::f64 : BatchArithmetic::integer;
}

inline constexpr std::uint64_t kBatchG1PointBytes = 96;    // affine, snarkjs layout
inline constexpr std::uint64_t kBatchG2PointBytes = 192;   // affine x.c0‖x.c1‖y.c0‖y.c1
inline constexpr unsigned kBatchAdditionMaxBlocks = 1024;  // block partials at most
// The last bytes of the write buffer that a launch uses for its block partials: room for
// kBatchAdditionMaxBlocks G2 XYZZ points (384 bytes each); G1 uses half of it.
inline constexpr std::uint64_t kBatchAdditionScratchBytes = std::uint64_t{kBatchAdditionMaxBlocks} * 384;

inline constexpr std::uint64_t batch_point_bytes(BatchGroup group) {
  return group == BatchGroup::g1 ? kBatchG1PointBytes : kBatchG2PointBytes;
}
// Bytes of the XYZZ accumulator.
inline constexpr std::uint64_t batch_accumulator_bytes(BatchGroup group) { return 2 * batch_point_bytes(group); }
// Smallest write buffer for an accumulator at `offset`.
inline constexpr std::uint64_t batch_write_bytes(BatchGroup group, std::uint64_t offset) {
  return offset + batch_accumulator_bytes(group) + kBatchAdditionScratchBytes;
}

// accumulator := (start ? ∞ : accumulator) + Σ points[i]; asynchronous on `stream`.
// points: count affine points (16-byte aligned); write: the write buffer of write_bytes bytes
// (>= batch_write_bytes(group, offset), 16-byte aligned), accumulator at write + offset
// (offset a multiple of 16). Throws std::invalid_argument for a buffer or offset that does not
// fit, std::runtime_error for CUDA errors.
void batch_addition(BatchGroup group, const void* points, std::uint64_t count, void* write, std::uint64_t write_bytes,
                    std::uint64_t offset, bool start, cudaStream_t stream,
                    std::optional<BatchArithmetic> arithmetic = std::nullopt);

// The blocks a launch of `count` points uses on the current GPU (for tests and the benchmark).
unsigned batch_addition_blocks(BatchGroup group, std::uint64_t count,
                               std::optional<BatchArithmetic> arithmetic = std::nullopt);

}  // namespace stagehand::cuda
