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
set -euo pipefail
cd "$(dirname "$0")/.."
step=${1:-check}
BUILD=${BUILD:-build-cuda/batch}
LOGS=${OUT:-/tmp/stagehand-batch}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ARCH=${STAGEHAND_CUDA_ARCH:-90}
mkdir -p "$BUILD/obj" "$LOGS"
binary=$BUILD/stagehand_batch_check

includes="-Isrc -Icuda/kernels -Itests/gpu"
sources="cuda/kernels/batch_addition.cu cuda/kernels/batch_addition.hpp cuda/kernels/g2.cuh cuda/kernels/curve.cuh
         cuda/kernels/field.cuh cuda/kernels/common.cuh cuda/kernels/launchers.hpp tests/gpu/batch_checks.cpp
         tests/gpu/batch_checks.hpp tests/gpu/batch_check_main.cpp src/math"

usable() {
  [[ -x $binary ]] || return 1
  # shellcheck disable=SC2086  # $sources is a word list
  [[ ${REUSE:-0} == 1 || -z $(find $sources -newer "$binary" -type f 2>/dev/null) ]] || return 1
  "$binary" --probe >/dev/null 2>&1 </dev/null
}

build() {
  if usable; then
    echo "build: reusing $binary"
    return
  fi
  echo "build: compiling with $NVCC for sm_$ARCH"
  local started=$SECONDS
  rm -f "$BUILD"/obj/*.o "$binary"  # a failed compile must not leave an old object to link
  # shellcheck disable=SC2086  # $includes and $cxx are word lists
  # The CUDA file is the long pole (about a minute); the host files compile beside it.
  "$NVCC" -std=c++20 -O3 -gencode="arch=compute_${ARCH},code=sm_${ARCH}" --expt-relaxed-constexpr -lineinfo $includes \
    -c cuda/kernels/batch_addition.cu -o "$BUILD/obj/batch_addition.cu.o" &
  local cuda_root cxx
  cuda_root=$(dirname "$NVCC")/..
  cxx="g++ -std=c++20 -O3 -pthread $includes -I$cuda_root/include"
  $cxx -c tests/gpu/batch_checks.cpp -o "$BUILD/obj/batch_checks.cpp.o" &
  $cxx -c tests/gpu/batch_check_main.cpp -o "$BUILD/obj/batch_check_main.cpp.o" &
  $cxx -c src/math/curve.cpp -o "$BUILD/obj/curve.cpp.o" &
  local status=0
  for job in $(jobs -p); do wait "$job" || status=1; done
  [[ $status == 0 ]] || { echo "build: a compile failed" >&2; exit 1; }
  "$NVCC" -arch="sm_$ARCH" -o "$binary" "$BUILD/obj/batch_addition.cu.o" "$BUILD/obj/batch_checks.cpp.o" \
    "$BUILD/obj/batch_check_main.cpp.o" "$BUILD/obj/curve.cpp.o" -lpthread
  echo "build: done in $((SECONDS - started)) s"
}

check() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null || true
  local status=0
  "$binary" --max-log "${MAX_LOG:-20}" --bench "${BENCH_LOG:-22}" --reps "${REPS:-20}" --group "${GROUP:-both}" "$@" \
    >"$LOGS/batch.log" 2>&1 || status=$?
  # Failures, the timings and the summary; the ok lines are counted.
  grep -v '^ok ' "$LOGS/batch.log" || true
  { grep -c '^ok ' "$LOGS/batch.log" || true; } | sed 's/^/check: lines ok: /'  # grep -c exits 1 on none
  echo "check exit status: $status"
  return "$status"
}

case $step in
  build) build ;;
  check) shift || true; build && check "$@" ;;
  *) echo "usage: $0 [build|check] [extra arguments for stagehand_batch_check]" >&2; exit 2 ;;
esac
