// GPU checks of the synthetic proving-key generator (cuda/kernels/synthetic.hpp) against the CPU
// reference (src/math), and its timing. Shared by the Boost.Test suite (gpu_synthetic_test, label
// gpu) and the one-call driver (stagehand_synthetic_check, scripts/gpu/synthetic.sh).
// Depends on src/math and synthetic.cu only, so that the driver links none of the other kernels.
//
// Every output buffer is poisoned first (0xff bytes: never a reduced Montgomery Fq nor a scalar
// below r, so an unwritten point or scalar cannot pass) and has guard slots after the output that
// must keep the poison.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "check_support.hpp"

#include "synthetic/synthetic.hpp"

namespace stagehand::cuda::synthetic_checks {

using check_support::gpu_present;
using check_support::Result;

// Counts 1, 7, 1000 and 2^max_log − 3 at an odd first_index (and 0, the scalar-1 start, and one
// near 2^63): every point decodes, lies on the curve and equals (first_index + i + 1)·G from the
// CPU reference (all of them, and a sample by direct scalar multiplication); no two are equal;
// the guard keeps its poison; two runs give the same bytes; explicit chunks (1, 7, 33) and two
// segments give the same bytes as the default plan; a 128-byte stride leaves the spare bytes alone.
Result check_points(std::ostream& out, SyntheticGroup group, unsigned max_log);

// Counts 1, 7, 1000, 2^max_log: every scalar below r (canonical) or a reduced Montgomery value
// that round-trips to the canonical one of the same seed; equal to the host emulation of the same
// generator; distinct; different seeds differ everywhere; deterministic; first_index slices;
// about half of the values above r/2.
Result check_scalars(std::ostream& out, unsigned max_log);

// 128-byte items at 1000 and 2^max_log − 1: the point part equals generate_g1_points', the scalar
// part generate_scalars' canonical output, for the same first_index and seed.
Result check_tail_items(std::ostream& out, unsigned max_log);

// Arguments that do not fit are refused before anything runs.
Result check_arguments(std::ostream& out);

struct BenchSizes {
  unsigned g1_log = 24;
  unsigned g2_log = 22;
  unsigned scalars_log = 24;
  unsigned tail_log = 22;
  int repetitions = 5;
};

// Median of CUDA-event-timed runs per generator (a size of 0 skips it; a sample of each timed
// output is checked against the reference), points or scalars per second, and the projected time
// to generate the 2^26 partition's whole key (H, L, A, B_G1, B_G2, tail; and a/b/c) at those rates.
Result bench(std::ostream& out, const BenchSizes& sizes);

}  // namespace stagehand::cuda::synthetic_checks
