// `stagehand bench kernels`: NTT and MSM timings on the current CUDA device.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

#include "device/kernel_abi.hpp"

namespace stagehand::cuda {

struct KernelBenchmarkOptions {
  std::vector<unsigned> log_sizes{20, 22, 24, 26};
  unsigned ntt_repetitions = 9;
  unsigned msm_repetitions = 5;
  bool ntt = true;
  bool msm = true;
  bool msm_streamed = true;
  unsigned msm_window_bits = 0;          // 0 = the plan's choice
  unsigned streamed_batch_log = 0;       // 0 = n/4 points per batch (at least 2^18)
  bool ntt_variants = false;             // also time the forward NTT's multiplication forms (NttVariant)
  bool msm_variants = false;             // also time the MSM's tuning switches (MsmTuning) against each other
  bool msm_profile = false;              // also print each MSM's time per phase (one extra, untimed run)
  bool msm_g2 = true;                    // the G2 MSM (points on the device), beside G1's
  std::vector<unsigned> g2_window_bits;  // the G2 MSM at each of these widths (empty: the plan's choice)
  bool g2_variants = false;              // also time G2's item sums (integer and FP64, with and without prefetch)
  // The G1 and G2 MSMs over precomputed bases (msm_precompute_bases) at each of these widths (0:
  // the plan's choice), beside the others; empty: not run. Sizes whose copies do not fit the
  // device's free memory print a line saying so.
  std::vector<unsigned> precomputed_window_bits;
  // The MSMs' scalars: uniform in [0, r) ("full"), each 0 or 1 ("bits": a witness of booleans),
  // or nine in ten 0 or 1 and the rest full ("mostly-bits": a circuit of bit decompositions
  // beside its products).
  enum class Scalars { full, bits, mostly_bits };
  Scalars scalars = Scalars::full;
  // The curve whose kernels run: BN254's benchmark times its NTT kinds, H form and G1 and G2 MSMs
  // (benchmark_support.hpp's bench_bn254; of the switches above it reads ntt, msm, msm_g2,
  // msm_window_bits, ntt_variants and the repetitions).
  kernel::Curve curve = kernel::Curve::bls12_381;
  int device = 0;
  std::uint64_t seed = 1;
};

// Prints a table (median, min and max of the repetitions, CUDA-event timed, data already on the
// device; the streamed MSM timed end to end by the host clock). Returns 0, or 1 with a message
// when no CUDA device is usable.
int run_kernel_benchmark(std::ostream& out, const KernelBenchmarkOptions& options);

}  // namespace stagehand::cuda
