// Launchers for the test-only setup's kernels (src/groth16/device_setup.hpp), over
// setup/fixed_base.hpp. They register with the launcher registry (launch/registry.cpp) through
// setup_launchers() (launchers.hpp).
//
// name                  work_units    arguments         reads               writes
// setup_fixed_base_g1   point_count   [] or [threads]   [table, scalars]    [points]
//   table: kernel::kFixedBaseTableEntries 96-byte affine G1 points, entry 256·w + d = d·2^(8w)·G
//   (zeros for d = 0); scalars: 32-byte Montgomery Fr; points[i] = scalars[i]·G, 96-byte affine
//   (zeros for a zero scalar). Every buffer 16-byte aligned.
// setup_fixed_base_g2   point_count   [] or [threads]   [table, scalars]    [points]
//   the same over G2, 192-byte entries and points.
// `threads` (host threads in the simulator's version) is ignored here. No scratch. Both kernels
// have a BN254 launcher too, over 64-byte G1 and 128-byte G2 entries and points.
#pragma once

#include "launch/launchers.hpp"
