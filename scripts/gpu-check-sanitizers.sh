#!/usr/bin/env bash
# compute-sanitizer over the kernel check and one proof on a GPU, in one call, beside the plain
# kernel check and the synthetic-data check:
#
#   scripts/gpu-check-sanitizers.sh bundle   here: builds stagehand, stagehand_kernel_check and
#       stagehand_synthetic_check in build-cuda, strips and compresses them with the shared
#       libraries the GPU machine lacks and the chain circuit's zkey and witness (from a build's
#       groth16_circuits fixture) into .gpu-sanitizers/ (carry it there; under 64 MiB).
#   scripts/gpu-check-sanitizers.sh run      there: into $OUT kernel_check.log (2^1..2^14, no big
#       size), synthetic.log, memcheck-kernels.log and racecheck-kernels.log (the kernel check
#       to 2^12 under memcheck, 2^10 under racecheck), memcheck-tunings.log and
#       racecheck-tunings.log (every MSM tuning at those sizes), memcheck-streamed.log (a streamed
#       set's batch kernels), memcheck-prove.log and racecheck-prove.log (one proof of the chain
#       circuit with backend "cuda"), proof.json and public.json. STEPS="name ..." runs only
#       those steps. Exit 1 if any step fails or a tool reports an error.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/bundle.sh
bundle=.gpu-sanitizers
case "${1:-}" in
bundle)
  set -e
  export CCACHE_BASEDIR="$PWD"
  cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-cuda -j2 --target stagehand stagehand_kernel_check stagehand_synthetic_check
  rm -rf "$bundle" && mkdir -p "$bundle/lib" "$bundle/keys"
  strip -o "$bundle/stagehand" build-cuda/src/cli/stagehand
  strip -o "$bundle/stagehand_kernel_check" build-cuda/tests/gpu/stagehand_kernel_check
  strip -o "$bundle/stagehand_synthetic_check" build-cuda/tests/gpu/stagehand_synthetic_check
  bundle_libraries "$bundle" "$bundle"/stagehand*
  xz -T2 -6 "$bundle"/stagehand*
  circuit=$(ls -d build*/tests/groth16/circuits/chain 2>/dev/null | head -1)
  [[ -n $circuit ]] || { echo "no groth16_circuits fixture: run 'ctest -R groth16' in a build first" >&2; exit 1; }
  cp "$circuit/chain.zkey" "$circuit/chain.wtns" "$circuit/vk.json" "$bundle/keys/"
  printf '[run]\nbackend = "cuda"\n' >"$bundle/cuda.toml"
  du -sh "$bundle"
  ;;
run)
  export LD_LIBRARY_PATH="$PWD/$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  out="${OUT:-/tmp/gpu-sanitizers}"
  bin=/tmp/gpu-sanitizers-bin
  mkdir -p "$out"
  unpack_binaries "$bundle" "$bin"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
  status=0
  # STEPS picks steps by name (default: all); each has its own time limit, so that a slow tool
  # cannot take the whole call.
  steps=" ${STEPS:-kernel_check synthetic memcheck-kernels memcheck-tunings memcheck-streamed memcheck-prove racecheck-kernels racecheck-tunings racecheck-prove} "
  step() {  # name, timeout, command...
    local name=$1 limit=$2
    shift 2
    [[ $steps == *" $name "* ]] || return 0
    timeout "$limit" "$@" >"$out/$name.log" 2>&1 || status=1
    echo "== $name: $(tail -1 "$out/$name.log")"
  }
  check=("$bin/stagehand_kernel_check")
  prove=("$bin/stagehand" prove --config "$bundle/cuda.toml" --zkey "$bundle/keys/chain.zkey" --wtns "$bundle/keys/chain.wtns" --seed 5
    --proof "$out/proof.json" --public "$out/public.json")
  step kernel_check 200 "${check[@]}" --max-log 14 --big 0
  step synthetic 120 "$bin/stagehand_synthetic_check"
  # racecheck runs each launch far slower than memcheck: its checks at 2^10, memcheck's at 2^12;
  # the MSM's tunings (every item-sum form) in a step of their own.
  parts=setup,launchers,partition,abc,g2,msm-edge,ntt,h,msm,msm-streamed
  for tool in memcheck racecheck; do
    max_log=12
    [[ $tool == racecheck ]] && max_log=10
    sanitize=(compute-sanitizer --tool "$tool" --error-exitcode 3)
    step "$tool-kernels" 150 "${sanitize[@]}" "${check[@]}" --only $parts --max-log $max_log --g2-log $max_log --streamed-log $max_log --setup-log $max_log --big 0
    step "$tool-tunings" 120 "${sanitize[@]}" "${check[@]}" --only msm-tunings --tunings-log $max_log
    step "$tool-prove" 90 "${sanitize[@]}" "${prove[@]}"
  done
  step memcheck-streamed 120 compute-sanitizer --tool memcheck --error-exitcode 3 "${check[@]}" --only groth16-streamed
  cp "$bundle/keys/vk.json" "$out/vk.json"
  exit $status
  ;;
*)
  sed -n 2,16p "$0"
  exit 2
  ;;
esac
