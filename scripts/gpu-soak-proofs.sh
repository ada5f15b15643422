#!/usr/bin/env bash
# A stream of real proofs on a GPU with faults injected (FaultyDevice around CudaDevice,
# [device_faults] of the configuration): each affected proof fails with a clear error, the others
# pass the pairing check on their way out, and the engine holds no more device memory after the
# run than before it (its own allocations and its pool's reserve: the device's free memory is
# printed beside it but not compared, as the CUDA runtime keeps some MiB of its own after the
# first launches of a process, which a baseline taken before them counts as a leak).
#
#   scripts/gpu-soak-proofs.sh bundle   here: builds stagehand in build-cuda, strips and compresses
#       it with its shared libraries and the chain circuit's zkey, witness and vk into
#       .gpu-soak/ (carry it there).
#   scripts/gpu-soak-proofs.sh run      there: PROOFS (500) copies of the witness proved in one
#       run under budgeted, two workers, with ALLOCATION (0.005) and KERNEL (0.005) failure
#       probabilities; into $OUT soak.log and sample.tar (20 proofs with their public signals
#       and the vk, for `snarkjs groth16 verify` here). Exit 1 unless every proof either verified
#       or failed with an injected fault's message, and the engine held nothing more after the run.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/bundle.sh
bundle=.gpu-soak
case "${1:-}" in
bundle)
  set -e
  export CCACHE_BASEDIR="$PWD"
  cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-cuda -j2 --target stagehand
  rm -rf "$bundle" && mkdir -p "$bundle/keys"
  strip -o "$bundle/stagehand" build-cuda/src/cli/stagehand
  bundle_libraries "$bundle" "$bundle/stagehand"
  xz -T2 -6 "$bundle/stagehand"
  circuit=$(ls -d build*/tests/groth16/circuits/chain 2>/dev/null | head -1)
  [[ -n $circuit ]] || { echo "no groth16_circuits fixture: run 'ctest -R groth16' in a build first" >&2; exit 1; }
  cp "$circuit/chain.zkey" "$circuit/chain.wtns" "$circuit/vk.json" "$bundle/keys/"
  du -sh "$bundle"
  ;;
run)
  export LD_LIBRARY_PATH="$PWD/$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  out="${OUT:-/tmp/gpu-soak}"
  work=/tmp/gpu-soak-work
  rm -rf "$work" && mkdir -p "$out" "$work/witnesses" "$work/proofs"
  unpack_binaries "$bundle" "$work/bin"
  for i in $(seq -w 1 "${PROOFS:-500}"); do cp "$bundle/keys/chain.wtns" "$work/witnesses/w$i.wtns"; done
  printf '[run]\nbackend = "cuda"\n[device_faults]\nallocation_failure_probability = %s\nkernel_failure_probability = %s\nseed = %s\n' \
    "${ALLOCATION:-0.005}" "${KERNEL:-0.005}" "${SEED:-7}" >"$work/soak.toml"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
  start=$(date +%s)
  timeout 500 "$work/bin/stagehand" prove --config "$work/soak.toml" --zkey "$bundle/keys/chain.zkey" --wtns "$work/witnesses" \
    --out-dir "$work/proofs" --seed 11 >"$out/soak.log" 2>&1
  code=$?
  echo "prove exited $code after $(( $(date +%s) - start )) s"
  done_count=$(grep -c "proof done" "$out/soak.log")
  failed_count=$(grep -c ": FAILED: " "$out/soak.log")
  injected_count=$(grep ": FAILED: " "$out/soak.log" | grep -c "\[injected fault\]")
  echo "proofs: ${PROOFS:-500}, done and verified: $done_count, failed: $failed_count (injected faults: $injected_count)"
  grep -E "proofs? in |pairing check|the engine holds" "$out/soak.log"
  ls "$work/proofs" | head -40 | sed 's/^/proofs\//' | tar -C "$work" -cf "$out/sample.tar" -T - -C "$PWD/$bundle/keys" vk.json
  status=0
  [[ $(( done_count + failed_count )) == "${PROOFS:-500}" && $failed_count == "$injected_count" ]] || status=1
  grep -q "nothing left behind" "$out/soak.log" || status=1
  exit $status
  ;;
*)
  sed -n 2,15p "$0"
  exit 2
  ;;
esac
