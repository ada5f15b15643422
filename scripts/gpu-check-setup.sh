#!/usr/bin/env bash
# Builds and runs the test-only setup kernels' check (cuda/kernels/setup/fixed_base.*: setup_fixed_base_g1
# and _g2 through their launchers over 2^12 random scalars and the edge cases against the CPU
# reference, refused arguments) and times them at 2^20 and 2^24 G1 points and 2^20 and 2^22 G2
# points (median of CUDA-event-timed runs), with the projected kernel time of a 2^26 setup: on the
# GPU machine,
#   scripts/gpu-check-setup.sh
#
# Needs only nvcc and a C++20 host compiler: it compiles fixed_base.cu, its launchers, the check
# and src/math/curve.cpp, none of the other kernels. Prebuilt binaries in $BUILD are reused when
# they are newer than every source and start on this machine (carry build-cuda/setup to skip the
# build there; REUSE=1 trusts them whatever the file times say, since a copy resets them).
# Log: $OUT/setup.log (or /tmp/stagehand-setup).
#   LOG (12)   checked size   G1_LOG (20) G1_LARGE (24) G2_LOG (20) G2_LARGE (22)  timed sizes (0 skips)
#   REPS (3)   timed runs     ONLY (all)  checks | bench
#   step: build | check (default: build, then check and timing)
# shellcheck source=lib/nvcc-check.sh
source "$(dirname "$0")/lib/nvcc-check.sh"
name=setup
cuda_file=$(kernel_source fixed_base.cu)
extra_cxx=$(kernel_source setup_launchers.cpp)
sources="$cuda_file $extra_cxx cuda/kernels/setup cuda/kernels/launch/setup_launchers.hpp cuda/kernels/launch/launchers.hpp
         cuda/kernels/launch/launch_args.hpp cuda/kernels/ec cuda/kernels/ff cuda/kernels/synthetic/synthetic.cuh
         cuda/kernels/util/common_host.hpp src/device/kernel_abi.hpp src/device/types.hpp src/groth16/fixed_base.hpp
         tests/gpu/setup_checks.cpp tests/gpu/setup_checks.hpp tests/gpu/setup_check_main.cpp tests/gpu/check_support.hpp
         tests/gpu/kernel_check_helpers.hpp cuda/kernels/msm/msm.hpp cuda/kernels/ntt/ntt.hpp
         cuda/kernels/synthetic/sample_data.hpp src/math"
run_args=(--log "${LOG:-12}" --g1 "${G1_LOG:-20}" --g1-large "${G1_LARGE:-24}" --g2 "${G2_LOG:-20}"
          --g2-large "${G2_LARGE:-22}" --reps "${REPS:-3}" --only "${ONLY:-all}")
nvcc_check_main "$@"
