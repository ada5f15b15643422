#!/usr/bin/env bash
# Builds and runs the batch-addition check (batch_addition_g1/g2 against the CPU reference at
# 1, 2, 1000, 2^20 points and the edge cases) and times each kernel at 2^22 points already on the
# device (median of CUDA-event-timed runs, points/s): on the GPU machine,
#   scripts/gpu-check-batch.sh
#
# Needs only nvcc and a C++20 host compiler: it compiles batch_addition.cu, the check and
# src/math/curve.cpp, and none of the NTT or MSM kernels, so it builds in about a minute and does
# not depend on them. Prebuilt binaries in $BUILD are reused when they are newer than every source
# and start on this machine (carry build-cuda/batch to skip the build there; REUSE=1 trusts them
# whatever the file times say, since a copy resets them). Log: $OUT/batch.log (or /tmp).
#   MAX_LOG (20)  largest checked size    BENCH_LOG (22)  timed size (0: no timing)
#   REPS (20)     timed runs              GROUP (both)    g1, g2 or both
#   step: build | check (default: build, then check and timing)
# shellcheck source=lib/nvcc-check.sh
source "$(dirname "$0")/lib/nvcc-check.sh"
name=batch
cuda_file=$(kernel_source batch_addition.cu)
sources="$cuda_file cuda/kernels/ec cuda/kernels/ff cuda/kernels/util cuda/kernels/launch/launchers.hpp
         cuda/kernels/launch/launch_args.hpp tests/gpu/batch_checks.cpp tests/gpu/batch_checks.hpp
         tests/gpu/batch_check_main.cpp tests/gpu/check_support.hpp src/math src/device/kernel_abi.hpp src/device/types.hpp"
run_args=(--max-log "${MAX_LOG:-20}" --bench "${BENCH_LOG:-22}" --reps "${REPS:-20}" --group "${GROUP:-both}")
nvcc_check_main "$@"
