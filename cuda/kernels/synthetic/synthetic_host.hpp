// Synthetic proving-key data for host memory: the generators of synthetic.hpp run on the current
// CUDA device in chunks of about 512 MiB, each chunk copied back into `target` (pinned or
// ordinary host memory) before the next is made. Item i of a call is the generator's item
// first_index + i, so the bytes are those of synthetic.hpp's functions called once on the whole
// range. Plain host functions: no CUDA types, for callers outside cuda/.
//
// Synchronous: each returns once `target` holds every item. Throws std::invalid_argument when
// `target` is smaller than count items (or for the generators' own argument errors),
// std::runtime_error for CUDA errors.
#pragma once

#include <cstdint>

#include "device/types.hpp"

namespace stagehand::cuda {

// count G1 points (96 bytes each): (first_index + i + 1)·G.
void fill_g1_points(HostRange target, std::uint64_t count, std::uint64_t first_index);
// count G2 points (192 bytes each): (first_index + i + 1)·G.
void fill_g2_points(HostRange target, std::uint64_t count, std::uint64_t first_index);
// count tail items (128 bytes each): the G1 point of first_index + i, then the canonical scalar of
// (seed, first_index + i).
void fill_tail_items(HostRange target, std::uint64_t count, std::uint64_t first_index, std::uint64_t seed);
// count scalars (32 bytes each) of (seed, first_index + i), canonical or Montgomery form.
void fill_scalars(HostRange target, std::uint64_t count, std::uint64_t seed, bool montgomery,
                  std::uint64_t first_index = 0);

}  // namespace stagehand::cuda
