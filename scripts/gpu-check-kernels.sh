#!/usr/bin/env bash
# Builds the CUDA kernels with their check and benchmark, and runs both: the whole GPU
# kernel check and the kernel benchmark in one call (on the GPU machine: `scripts/gpu-check-kernels.sh`).
#
#   scripts/gpu-check-kernels.sh [build|check|bench|all] [extra arguments for the step]
#
# The build needs only nvcc, a C++20 host compiler and src/math: no Boost, fmt or CMake, so it
# works on a bare GPU machine. Prebuilt binaries in $BUILD are reused when they are newer than
# every source and start on this machine (carry build-cuda/direct to skip the build there).
# Logs go to $OUT (or /tmp/stagehand-kernels) as check.log and bench.log.
#   MAX_LOG (22)  largest size of the sweep   BIG (26)  the one large run (0: none)
#   BENCH_SIZES ("20 22 24 26")               JOBS (nproc)  parallel compiles
#   REUSE=1  use the binaries in $BUILD if they start, however old
#   MSM_ONLY=1  leave the NTT and H checks out (MSM work)   BIG_NTT=0  at 2^BIG check only the MSM
#   BIG_PARTS ("ntt,h,msm")  which checks run at 2^BIG (the CPU references of ntt and h take
#   about 40 s per transform there, so a call with a time limit can split them)
#   BENCH_ARGS  extra bench arguments
#   (e.g. "--no-ntt --msm-variants --msm-profile")
set -euo pipefail
cd "$(dirname "$0")/.."
step=${1:-all}
shift || true
BUILD=${BUILD:-build-cuda/direct}
LOGS=${OUT:-/tmp/stagehand-kernels}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ARCH=${STAGEHAND_CUDA_ARCH:-90}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$BUILD/obj" "$LOGS"

# shellcheck source=lib/kernel-sources.sh
source scripts/lib/kernel-sources.sh
# The kernel library (cuda/kernels/sources.txt), the CPU reference it links, the check and the
# benchmark's mains.
cuda_sources=$(kernel_sources cu)
library_cxx_sources="$(kernel_sources cpp) src/math/curve.cpp src/math/h_polynomial.cpp src/math/msm.cpp src/math/ntt.cpp"
check_sources="tests/gpu/kernel_checks.cpp tests/gpu/groth16_kernel_checks.cpp tests/gpu/launcher_checks.cpp tests/gpu/setup_checks.cpp
               tests/gpu/check_main.cpp"
bench_sources="cuda/kernels/bench/benchmark_main.cpp"
cxx_sources="$library_cxx_sources $check_sources $bench_sources"
includes="-Isrc -Icuda/kernels -Itests/gpu"
cuda_flags="-std=c++20 -O3 -gencode=arch=compute_${ARCH},code=sm_${ARCH} --expt-relaxed-constexpr -lineinfo $includes"
cxx_flags="-std=c++20 -O3 -pthread $includes -I$(dirname "$NVCC")/../include"

# One object per source, named after its whole path (ntt/ntt.cu and src/math/ntt.cpp differ).
object() { echo "$BUILD/obj/$(echo "$1" | tr / _).o"; }

binaries_usable() {
  for binary in stagehand_kernel_check stagehand_kernel_bench; do
    [[ -x $BUILD/$binary ]] || return 1
    # REUSE=1 trusts carried binaries whatever the file times say (a copy resets them).
    [[ ${REUSE:-0} == 1 || -z $(find cuda/kernels src/math tests/gpu -newer "$BUILD/$binary" -type f 2>/dev/null) ]] ||
      return 1
    "$BUILD/$binary" --probe >/dev/null 2>&1 </dev/null || return 1
  done
}

build() {
  if binaries_usable; then
    echo "build: reusing $BUILD (up to date)"
    return
  fi
  echo "build: compiling with $NVCC for sm_$ARCH, $JOBS jobs"
  local started=$SECONDS
  {
    for source in $cuda_sources; do echo "$NVCC $cuda_flags -c $source -o $(object "$source")"; done
    for source in $cxx_sources; do echo "g++ $cxx_flags -c $source -o $(object "$source")"; done
  } | xargs -P "$JOBS" -I{} sh -c '{}'
  local common="" checks="" source
  for source in $cuda_sources $library_cxx_sources; do common+=" $(object "$source")"; done
  for source in $check_sources; do checks+=" $(object "$source")"; done
  # shellcheck disable=SC2086
  "$NVCC" -arch=sm_$ARCH -o "$BUILD/stagehand_kernel_check" $common $checks -lpthread
  # shellcheck disable=SC2086
  "$NVCC" -arch=sm_$ARCH -o "$BUILD/stagehand_kernel_bench" $common "$(object "$bench_sources")" -lpthread
  echo "build: done in $((SECONDS - started)) s"
}

check() {
  # The check's own exit status (a pipeline through grep would report grep's).
  local status=0
  "$BUILD/stagehand_kernel_check" --max-log "${MAX_LOG:-22}" --big "${BIG:-26}" --msm-only "${MSM_ONLY:-0}" \
    --big-parts "${BIG_PARTS:-$([[ ${BIG_NTT:-1} == 0 ]] && echo msm || echo ntt,h,msm)}" "$@" \
    >"$LOGS/check.log" 2>&1 || status=$?
  grep -v '^ok ' "$LOGS/check.log" || true
  grep -c '^ok ' "$LOGS/check.log" | sed 's/^/check: lines ok: /'
  return "$status"
}

bench() {
  # shellcheck disable=SC2086
  "$BUILD/stagehand_kernel_bench" ${BENCH_SIZES:-20 22 24 26} ${BENCH_ARGS:-} "$@" 2>&1 | tee "$LOGS/bench.log"
}

case $step in
  build) build ;;
  check) build && check "$@" ;;
  bench) build && bench "$@" ;;
  all)
    build
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader || true
    check_status=0
    check || check_status=$?
    bench
    echo "check exit status: $check_status"
    exit "$check_status"
    ;;
  *) echo "usage: $0 [build|check|bench|all]" >&2; exit 2 ;;
esac
