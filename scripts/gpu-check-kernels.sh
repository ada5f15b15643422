#!/usr/bin/env bash
# Builds the CUDA kernels with their check and benchmark, and runs both: the whole GPU
# verification of issue 6 in one call (on the GPU machine: `scripts/gpu-check-kernels.sh`).
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

cuda_sources="cuda/kernels/ntt.cu cuda/kernels/msm.cu cuda/kernels/launchers.cu cuda/kernels/groth16_launchers.cu
              cuda/kernels/batch_addition.cu cuda/kernels/partition_launchers.cu
              cuda/kernels/benchmark.cu"
cxx_sources="cuda/kernels/msm_host.cpp cuda/kernels/sample_data.cpp src/math/curve.cpp src/math/h_polynomial.cpp
             src/math/msm.cpp src/math/ntt.cpp tests/gpu/kernel_checks.cpp tests/gpu/check_main.cpp
             cuda/kernels/benchmark_main.cpp"
includes="-Isrc -Icuda/kernels -Itests/gpu"
cuda_flags="-std=c++20 -O3 -gencode=arch=compute_${ARCH},code=sm_${ARCH} --expt-relaxed-constexpr -lineinfo $includes"
cxx_flags="-std=c++20 -O3 -pthread $includes -I$(dirname "$NVCC")/../include"

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
    for source in $cuda_sources; do echo "$NVCC $cuda_flags -c $source -o $BUILD/obj/$(basename "$source").o"; done
    for source in $cxx_sources; do echo "g++ $cxx_flags -c $source -o $BUILD/obj/$(basename "$source").o"; done
  } | xargs -P "$JOBS" -I{} sh -c '{}'
  local common="$BUILD/obj/ntt.cu.o $BUILD/obj/msm.cu.o $BUILD/obj/launchers.cu.o $BUILD/obj/groth16_launchers.cu.o
                $BUILD/obj/batch_addition.cu.o $BUILD/obj/partition_launchers.cu.o $BUILD/obj/benchmark.cu.o
                $BUILD/obj/msm_host.cpp.o $BUILD/obj/sample_data.cpp.o $BUILD/obj/curve.cpp.o
                $BUILD/obj/h_polynomial.cpp.o $BUILD/obj/msm.cpp.o $BUILD/obj/ntt.cpp.o"
  # shellcheck disable=SC2086
  "$NVCC" -arch=sm_$ARCH -o "$BUILD/stagehand_kernel_check" $common "$BUILD/obj/kernel_checks.cpp.o" \
    "$BUILD/obj/check_main.cpp.o" -lpthread
  # shellcheck disable=SC2086
  "$NVCC" -arch=sm_$ARCH -o "$BUILD/stagehand_kernel_bench" $common "$BUILD/obj/benchmark_main.cpp.o" -lpthread
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
