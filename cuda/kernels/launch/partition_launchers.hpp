// Launchers for the PoRep-shaped partition program's kernels (src/coordinator/gpu_program.cpp),
// so that the same program that the simulator times runs on a GPU with real kernels. The names
// and buffers are the program's; they register with the launcher registry (launch/registry.cpp)
// through partition_launchers() (launchers.hpp).
//
// name          work_units      arguments                      reads                    writes
// ntt_twiddles  2^log_size / 2  [log_size]                     -                        [twiddles]
//   builds the NTT domain of size 2^log_size (snarkjs's roots: ω = 5^((r-1)/n), g = ω_2n) in
//   twiddles, which must hold ntt_domain_bytes(log_size): the program gives 16·2^log_size bytes,
//   or partition_kernel_scratch_bytes(kernel::ntt_twiddles, 2^log_size) where that is more
//   (up to 2^22).
// ntt           2^log_size      [log_size, kind]               [values, twiddles]       [values]
//   kind 0 forward, 1 inverse, 2 coset forward, 3 coset inverse (NttKind order); in place.
// msm_batch     point_count     [first, capacity, start]       [points, scalars]        [results, scratch]
//   adds Σ_i scalars[first + i]·points[i] (Montgomery scalars: the H evaluations the NTTs left)
//   into the MSM's buckets kept in scratch (msm_g1_accumulate); start 1 begins a new MSM. Every
//   batch of one MSM uses the window width planned for `capacity` points (the largest batch), and
//   scratch holds partition_kernel_scratch_bytes(kernel::msm_batch, capacity). results is not
//   written: the window sums come from msm_reduce.
// msm_reduce    1               [capacity]                     [results, other results] [results, scratch]
//   the window sums of the MSM whose buckets are in scratch (msm_g1_reduce) into the start of
//   results, window_count Jacobian points; the buckets are consumed.
// tail_msm      item_count      [start, capacity]              [items]                  [scratch]
//   items of 128 bytes, a G1 point (96) then its canonical scalar (32), accumulated into the
//   tail's buckets in scratch, which start afresh when start is 1 (as msm_batch's). Every launch
//   uses the window width planned for `capacity` items (the largest launch); scratch:
//   partition_kernel_scratch_bytes(kernel::tail_msm, capacity).
// tail_reduce   1               [offset, capacity]             []                       [sums, scratch]
//   the tail's buckets reduced (consumed) and the MSM written into the XYZZ accumulator at byte
//   `offset` of sums (192 bytes, the batch additions' format). One reduction for the whole tail:
//   one reduction per launch paid its fixed cost six times a partition at 2^26 (measured on the
//   H200).
// The other kernels of the program have launchers of their own: h_pointwise (launchers.hpp) and
// batch_addition_g1/g2 (batch_addition.hpp).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "launch/launchers.hpp"

namespace stagehand::cuda {

// The scratch a launch of `name` takes as its last write buffer, for `capacity` work units (the
// most any launch of that MSM will have); 0 for kernels without scratch.
std::uint64_t partition_kernel_scratch_bytes(std::string_view name, std::uint64_t capacity);

}  // namespace stagehand::cuda
