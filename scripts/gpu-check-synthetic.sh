#!/usr/bin/env bash
# Builds and runs the synthetic proving-key generator's check (cuda/kernels/synthetic/synthetic.*:
# G1 and G2 points at 1, 7, 1000 and 2^20 − 3 against the CPU reference, scalars, tail items,
# rejected arguments) and times it at 2^24 G1 points, 2^22 G2 points, 2^24 scalars and 2^22 tail
# items (median of CUDA-event-timed runs), with the projected time of the 2^26 partition's whole key:
# on the GPU machine,
#   scripts/gpu-check-synthetic.sh
#
# Needs only nvcc and a C++20 host compiler: it compiles synthetic.cu, the check and
# src/math/curve.cpp, none of the other kernels. Prebuilt binaries in $BUILD are reused when they
# are newer than every source and start on this machine (carry build-cuda/synthetic to skip the
# build there; REUSE=1 trusts them whatever the file times say, since a copy resets them).
# Log: $OUT/synthetic.log (or /tmp/stagehand-synthetic).
#   MAX_LOG (20)   largest checked size   G1_LOG (24) G2_LOG (22) SCALARS_LOG (24) TAIL_LOG (22)
#   REPS (5)       timed runs             ONLY (all)  checks | bench
#   step: build | check (default: build, then check and timing)
# shellcheck source=lib/nvcc-check.sh
source "$(dirname "$0")/lib/nvcc-check.sh"
name=synthetic
cuda_file=$(kernel_source synthetic.cu)
sources="$cuda_file cuda/kernels/synthetic/synthetic.cuh cuda/kernels/synthetic/synthetic.hpp cuda/kernels/ec
         cuda/kernels/ff cuda/kernels/util/common_host.hpp tests/gpu/synthetic_checks.cpp tests/gpu/synthetic_checks.hpp
         tests/gpu/synthetic_check_main.cpp tests/gpu/check_support.hpp src/math"
run_args=(--max-log "${MAX_LOG:-20}" --g1 "${G1_LOG:-24}" --g2 "${G2_LOG:-22}" --scalars "${SCALARS_LOG:-24}"
          --tail "${TAIL_LOG:-22}" --reps "${REPS:-5}" --only "${ONLY:-all}")
nvcc_check_main "$@"
