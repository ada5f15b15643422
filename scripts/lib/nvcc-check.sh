# Shared by the one-call GPU check scripts that build with nvcc alone (gpu-check-batch.sh,
# gpu-check-synthetic.sh): one CUDA file, its check and driver and src/math/curve.cpp into one
# binary; prebuilt binaries reused when they start and are newer than every source (REUSE=1
# trusts carried ones, since a copy resets file times); the run logged into $OUT.
#
# The caller sets, then calls nvcc_check_main "$@":
#   name       the check's name: binary stagehand_<name>_check, log <name>.log
#   cuda_file  the one CUDA source (kernel_source NAME: its path in cuda/kernels/sources.txt)
#              checks: tests/gpu/<name>_checks.cpp (and _check_main.cpp)
#   sources    every file the binary depends on (for the freshness test)
#   run_args   the binary's arguments (an array)
#   extra_cxx  further host sources to compile and link beside those (optional)
set -euo pipefail
# shellcheck source=kernel-sources.sh
source "$(dirname "${BASH_SOURCE[0]}")/kernel-sources.sh"

nvcc_check_main() {
  cd "$(dirname "$0")/.."
  local step=${1:-check}
  BUILD=${BUILD:-build-cuda/$name}
  LOGS=${OUT:-/tmp/stagehand-$name}
  NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  ARCH=${STAGEHAND_CUDA_ARCH:-90}
  mkdir -p "$BUILD/obj" "$LOGS"
  binary=$BUILD/stagehand_${name}_check
  case $step in
    build) nvcc_check_build ;;
    check) shift || true; nvcc_check_build && nvcc_check_run "$@" ;;
    *) echo "usage: $0 [build|check] [extra arguments for stagehand_${name}_check]" >&2; exit 2 ;;
  esac
}

nvcc_check_usable() {
  [[ -x $binary ]] || return 1
  # shellcheck disable=SC2086  # $sources is a word list
  [[ ${REUSE:-0} == 1 || -z $(find $sources -newer "$binary" -type f 2>/dev/null) ]] || return 1
  "$binary" --probe >/dev/null 2>&1 </dev/null
}

nvcc_check_build() {
  if nvcc_check_usable; then
    echo "build: reusing $binary"
    return
  fi
  echo "build: compiling with $NVCC for sm_$ARCH"
  local started=$SECONDS includes="-Isrc -Icuda/kernels -Itests/gpu" object
  object=$(basename "$cuda_file").o
  rm -f "$BUILD"/obj/*.o "$binary"  # a failed compile must not leave an old object to link
  # The CUDA file is the long pole; the host files compile beside it.
  # shellcheck disable=SC2086  # $includes and $cxx are word lists
  "$NVCC" -std=c++20 -O3 -gencode="arch=compute_${ARCH},code=sm_${ARCH}" --expt-relaxed-constexpr -lineinfo $includes \
    -c "$cuda_file" -o "$BUILD/obj/$object" &
  local cxx="g++ -std=c++20 -O3 -pthread -Wno-unknown-pragmas $includes -I$(dirname "$NVCC")/../include"
  $cxx -c "tests/gpu/${name}_checks.cpp" -o "$BUILD/obj/${name}_checks.cpp.o" &
  $cxx -c "tests/gpu/${name}_check_main.cpp" -o "$BUILD/obj/${name}_check_main.cpp.o" &
  $cxx -c src/math/curve.cpp -o "$BUILD/obj/curve.cpp.o" &
  local extra extra_object extra_objects=()
  for extra in ${extra_cxx:-}; do
    extra_object="$BUILD/obj/$(echo "$extra" | tr / _).o"
    extra_objects+=("$extra_object")
    $cxx -c "$extra" -o "$extra_object" &
  done
  local status=0 job
  for job in $(jobs -p); do wait "$job" || status=1; done
  [[ $status == 0 ]] || { echo "build: a compile failed" >&2; exit 1; }
  "$NVCC" -arch="sm_$ARCH" -o "$binary" "$BUILD/obj/$object" "$BUILD/obj/${name}_checks.cpp.o" \
    "$BUILD/obj/${name}_check_main.cpp.o" "$BUILD/obj/curve.cpp.o" ${extra_objects[@]+"${extra_objects[@]}"} -lpthread
  echo "build: done in $((SECONDS - started)) s"
}

nvcc_check_run() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null || true
  local status=0 log="$LOGS/$name.log"
  "$binary" "${run_args[@]}" "$@" >"$log" 2>&1 || status=$?
  # Failures, the timings and the summary; the ok lines are counted.
  grep -v '^ok ' "$log" || true
  { grep -c '^ok ' "$log" || true; } | sed 's/^/check: lines ok: /'  # grep -c exits 1 on none
  echo "check exit status: $status"
  return "$status"
}
