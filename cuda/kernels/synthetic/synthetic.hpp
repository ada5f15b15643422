// Synthetic proving-key data generated on the device, for `stagehand bench policies`:
// valid, distinct G1 and G2 points and uniformly random Fr scalars at domain 2^26 in a fraction
// of a second, instead of minutes on the CPU. The method and its costs are in synthetic.cuh.
//
// Point i of a call (i in [0, count)) is (first_index + i + 1)·G, affine, in the layout of
// src/groth16/encoding and math::G1Affine/G2Affine's Montgomery limbs: G1 x‖y (96 bytes), G2
// x.c0‖x.c1‖y.c0‖y.c1 (192 bytes). So a set written in segments (first_index = the segment's
// start) is the same bytes as written at once, and any two points of a set, or of sets with
// disjoint index ranges, differ. Scalars are uniform below r; scalar i is a function of (seed,
// first_index + i) only.
//
// Memory: nothing is allocated and no scratch is needed: each thread uses its own output slots
// as the scratch of its batch inversion. Every function is asynchronous on `stream`; output
// buffers must be 16-byte aligned. Throws std::invalid_argument for arguments that do not fit,
// std::runtime_error for CUDA errors.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace stagehand::cuda {

inline constexpr std::uint64_t kSyntheticG1Bytes = 96;
inline constexpr std::uint64_t kSyntheticG2Bytes = 192;
inline constexpr std::uint64_t kSyntheticScalarBytes = 32;
// A tail MSM item: a G1 point then its canonical scalar.
inline constexpr std::uint64_t kSyntheticTailItemBytes = kSyntheticG1Bytes + kSyntheticScalarBytes;

enum class SyntheticGroup { g1, g2 };

// points: count × 96 bytes. first_index + count must be below 2^64.
void generate_g1_points(void* points, std::uint64_t count, std::uint64_t first_index, cudaStream_t stream);
// points: count × 192 bytes.
void generate_g2_points(void* points, std::uint64_t count, std::uint64_t first_index, cudaStream_t stream);

// The general form: point i at out + i·stride (stride >= the point's bytes, a multiple of 16;
// bytes of a slot past the point are not touched), `chunk` consecutive points per thread (0: the
// default plan, synthetic_default_chunk). The bytes written do not depend on the chunk.
// No scratch: there is no synthetic_scratch_bytes because none is needed.
void generate_points(SyntheticGroup group, void* out, std::uint64_t stride, std::uint64_t count,
                     std::uint64_t first_index, std::uint64_t chunk, cudaStream_t stream);
// The default chunk on the current GPU: one wave of resident threads, 32..1024 points each.
std::uint64_t synthetic_default_chunk(SyntheticGroup group, std::uint64_t count);

// scalars: count × 32 bytes, scalar i = the generator's value for (seed, first_index + i),
// canonical or Montgomery (value·2^256 mod r) little-endian words.
void generate_scalars(void* scalars, std::uint64_t count, std::uint64_t seed, bool montgomery, cudaStream_t stream,
                      std::uint64_t first_index = 0);

// items: count × 128 bytes; item i = (first_index + i + 1)·G1 (as generate_g1_points) then the
// canonical scalar of (seed, first_index + i) (as generate_scalars).
void generate_tail_items(void* items, std::uint64_t count, std::uint64_t first_index, std::uint64_t seed,
                         cudaStream_t stream);

}  // namespace stagehand::cuda
