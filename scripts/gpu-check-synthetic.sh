#!/usr/bin/env bash
# Builds and runs the synthetic proving-key generator's check (cuda/kernels/synthetic.*: G1 and G2
# points at 1, 7, 1000 and 2^20 − 3 against the CPU reference, scalars, tail items, rejected
# arguments) and times it at 2^24 G1 points, 2^22 G2 points, 2^24 scalars and 2^22 tail items
# (median of CUDA-event-timed runs), with the projected time of the 2^26 partition's whole key:
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
set -euo pipefail
cd "$(dirname "$0")/.."
step=${1:-check}
BUILD=${BUILD:-build-cuda/synthetic}
LOGS=${OUT:-/tmp/stagehand-synthetic}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ARCH=${STAGEHAND_CUDA_ARCH:-90}
mkdir -p "$BUILD/obj" "$LOGS"
binary=$BUILD/stagehand_synthetic_check

includes="-Isrc -Icuda/kernels -Itests/gpu"
sources="cuda/kernels/synthetic.cu cuda/kernels/synthetic.cuh cuda/kernels/synthetic.hpp cuda/kernels/g2.cuh
         cuda/kernels/curve.cuh cuda/kernels/field.cuh cuda/kernels/common_host.hpp tests/gpu/synthetic_checks.cpp
         tests/gpu/synthetic_checks.hpp tests/gpu/synthetic_check_main.cpp src/math"

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
  # The CUDA file is the long pole (about 30 s); the host files compile beside it.
  # shellcheck disable=SC2086  # $includes and $cxx are word lists
  "$NVCC" -std=c++20 -O3 -gencode="arch=compute_${ARCH},code=sm_${ARCH}" --expt-relaxed-constexpr -lineinfo $includes \
    -c cuda/kernels/synthetic.cu -o "$BUILD/obj/synthetic.cu.o" &
  local cuda_root cxx
  cuda_root=$(dirname "$NVCC")/..
  cxx="g++ -std=c++20 -O3 -pthread -Wno-unknown-pragmas $includes -I$cuda_root/include"
  $cxx -c tests/gpu/synthetic_checks.cpp -o "$BUILD/obj/synthetic_checks.cpp.o" &
  $cxx -c tests/gpu/synthetic_check_main.cpp -o "$BUILD/obj/synthetic_check_main.cpp.o" &
  $cxx -c src/math/curve.cpp -o "$BUILD/obj/curve.cpp.o" &
  local status=0
  for job in $(jobs -p); do wait "$job" || status=1; done
  [[ $status == 0 ]] || { echo "build: a compile failed" >&2; exit 1; }
  "$NVCC" -arch="sm_$ARCH" -o "$binary" "$BUILD/obj/synthetic.cu.o" "$BUILD/obj/synthetic_checks.cpp.o" \
    "$BUILD/obj/synthetic_check_main.cpp.o" "$BUILD/obj/curve.cpp.o" -lpthread
  echo "build: done in $((SECONDS - started)) s"
}

check() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null || true
  local status=0
  "$binary" --max-log "${MAX_LOG:-20}" --g1 "${G1_LOG:-24}" --g2 "${G2_LOG:-22}" --scalars "${SCALARS_LOG:-24}" \
    --tail "${TAIL_LOG:-22}" --reps "${REPS:-5}" --only "${ONLY:-all}" "$@" >"$LOGS/synthetic.log" 2>&1 || status=$?
  # Failures, the timings, the projection and the summary; the ok lines are counted.
  grep -v '^ok ' "$LOGS/synthetic.log" || true
  { grep -c '^ok ' "$LOGS/synthetic.log" || true; } | sed 's/^/check: lines ok: /'  # grep -c exits 1 on none
  echo "check exit status: $status"
  return "$status"
}

case $step in
  build) build ;;
  check) shift || true; build && check "$@" ;;
  *) echo "usage: $0 [build|check] [extra arguments for stagehand_synthetic_check]" >&2; exit 2 ;;
esac
