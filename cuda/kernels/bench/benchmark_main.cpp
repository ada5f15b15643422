// stagehand_kernel_bench [log_size ...] [--no-ntt] [--no-msm] [--no-streamed] [--reps N] [--window-bits C]
//                        [--batch-log B] [--ntt-variants] [--msm-variants] [--msm-profile]
//                        [--no-g2] [--g2-window-bits C[,C...]] [--g2-variants] [--precomputed C[,C...]]
//                        [--scalars full|bits|mostly-bits] [--curve bls12_381|bn254]
#include <cstdlib>
#include <sstream>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "bench/benchmark.hpp"

int main(int argc, char** argv) {
  stagehand::cuda::KernelBenchmarkOptions options;
  std::vector<unsigned> sizes;
  if (argc > 1 && std::string(argv[1]) == "--probe") return 0;  // the script's "does it start here" test
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--no-ntt")
      options.ntt = false;
    else if (argument == "--no-msm")
      options.msm = false;
    else if (argument == "--no-streamed")
      options.msm_streamed = false;
    else if (argument == "--reps" && i + 1 < argc)
      options.ntt_repetitions = options.msm_repetitions = std::atoi(argv[++i]);
    else if (argument == "--window-bits" && i + 1 < argc)
      options.msm_window_bits = std::atoi(argv[++i]);
    else if (argument == "--batch-log" && i + 1 < argc)
      options.streamed_batch_log = std::atoi(argv[++i]);
    else if (argument == "--ntt-variants")
      options.ntt_variants = true;
    else if (argument == "--scalars" && i + 1 < argc) {
      const std::string kind = argv[++i];
      using Scalars = stagehand::cuda::KernelBenchmarkOptions::Scalars;
      if (kind == "full")
        options.scalars = Scalars::full;
      else if (kind == "bits")
        options.scalars = Scalars::bits;
      else if (kind == "mostly-bits")
        options.scalars = Scalars::mostly_bits;
      else {
        std::cerr << "stagehand_kernel_bench: --scalars " << kind << ": expected full, bits or mostly-bits"
                  << std::endl;
        return 2;
      }
    } else if (argument == "--curve" && i + 1 < argc) {
      const std::string curve = argv[++i];
      if (curve == "bn254" || curve == "bn128") {
        options.curve = stagehand::kernel::Curve::bn254;
      } else if (curve != "bls12_381" && curve != "bls12-381") {
        std::cerr << "stagehand_kernel_bench: --curve " << curve << ": expected bls12_381 or bn254" << std::endl;
        return 2;
      }
    } else if (argument == "--msm-variants")
      options.msm_variants = true;
    else if (argument == "--msm-profile")
      options.msm_profile = true;
    else if (argument == "--no-g2")
      options.msm_g2 = false;
    else if (argument == "--g2-variants")
      options.g2_variants = true;
    else if ((argument == "--g2-window-bits" || argument == "--precomputed") && i + 1 < argc) {
      auto& widths = argument == "--precomputed" ? options.precomputed_window_bits : options.g2_window_bits;
      std::stringstream list(argv[++i]);
      for (std::string bits; std::getline(list, bits, ',');) widths.push_back(std::atoi(bits.c_str()));
    } else
      sizes.push_back(static_cast<unsigned>(std::atoi(argument.c_str())));
  }
  if (!sizes.empty()) options.log_sizes = sizes;
  try {
    return stagehand::cuda::run_kernel_benchmark(std::cout, options);
  } catch (const std::exception& error) {
    std::cerr << "stagehand_kernel_bench: " << error.what() << std::endl;
    return 1;
  }
}
