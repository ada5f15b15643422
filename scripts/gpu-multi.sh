#!/usr/bin/env bash
# Several GPUs of one host (the two-GPU machine kind), in three steps:
#
#   scripts/gpu-multi.sh bundle     here: builds stagehand and cuda_current_device_test in
#       build-cuda, strips and compresses them with the shared libraries the GPU machine lacks
#       into .gpu-multi/ (carry .gpu-multi).
#   scripts/gpu-multi.sh run [GPUS] there, on a machine with GPUS (default 2) GPUs:
#         every CudaDevice call on its own GPU (cuda_current_device_test);
#         `bench policies` at 2^26 under a 16 GiB cap per card, budgeted, 2 proofs per GPU, on one
#         GPU and on all of them (partitions per second compared);
#         a stream of real 2^22 proofs (`bench prove`, 16 GiB cap), 6 per GPU, on one GPU and on
#         all of them (proofs per second compared);
#         the same stream on all of them with GPU 1 lost at its 40th kernel launch (the fault
#         adaptor around CudaDevice): every proof must still be made, on the others.
#       Into $OUT: scale.log (every run's output) and proofs.tar (each stream's vk.json and proofs).
#   scripts/gpu-prove-scale.sh verify DIR   here: snarkjs verifies every proof in DIR/proofs.tar.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/bundle.sh
bundle=.gpu-multi

case "${1:-}" in
bundle)
  export CCACHE_BASEDIR="$PWD"
  cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-cuda -j2 --target stagehand cuda_current_device_test
  pack_binaries "$bundle" build-cuda/src/cli/stagehand build-cuda/tests/cuda/cuda_current_device_test
  ;;
run)
  gpus=${2:-2}
  start_run "$bundle" gpu-multi
  echo "== every CudaDevice call on its own GPU" | tee -a "$log"
  "$bin/cuda_current_device_test" --report_level=short 2>&1 | tee -a "$log" || status=1
  # A configuration for COUNT GPUs under a 16 GiB cap each, with EXTRA lines.
  config() {
    local file=$work/$1.toml count=$2
    shift 2
    printf '[run]\nbackend = "cuda"\n[gpus]\ncount = %s\nvram_cap_gib = 16\n' "$count" >"$file"
    for line in "$@"; do printf '%s\n' "$line" >>"$file"; done
    echo "$file"
  }
  for count in 1 "$gpus"; do
    echo "== bench policies, 2^26, budgeted, $count GPU(s)" | tee -a "$log"
    "$bin/stagehand" bench policies --config "$(config policies-$count "$count")" --policy budgeted --domain-log2 26 \
      --proofs $((2 * count)) --trace "$work/policies-$count" --json "$out/policies-$count.json" 2>&1 | tee -a "$log" || status=1
  done
  stream() {
    local name=$1 count=$2
    shift 2
    echo "== bench prove, 2^22, $name" | tee -a "$log"
    /usr/bin/time -f "$name: %e s wall, %M KiB peak host memory" "$bin/stagehand" bench prove --config "$(config "$name" "$count" "$@")" \
      --domain-log2 22 --proofs $((6 * count)) --policy budgeted --out-dir "$work/$name" 2>&1 | grep -v '^WARNING' | tee -a "$log" || status=1
  }
  stream "proofs-1-gpu" 1
  stream "proofs-$gpus-gpus" "$gpus"
  stream "proofs-$gpus-gpus-gpu1-lost" "$gpus" "[device_faults]" "device = 1" "lose_device_at_launch = 40"
  tar -C "$work" --exclude='*.toml' --exclude='policies-*' -cf "$out/proofs.tar" .
  exit $status
  ;;
*)
  echo "usage: $0 bundle | run [GPUS]   (then scripts/gpu-prove-scale.sh verify DIR)" >&2
  exit 2
  ;;
esac
