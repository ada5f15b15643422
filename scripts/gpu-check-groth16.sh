#!/usr/bin/env bash
# `stagehand prove` on a GPU (CudaDevice), checked by `snarkjs groth16 verify`, in three steps:
#
#   scripts/gpu-check-groth16.sh bundle [BIG_DIR]   here: builds stagehand in build-cuda (nvcc, sm_90,
#       no GPU needed) and gathers into .gpu-groth16/ the binary, the shared libraries the GPU
#       machine lacks, and the zkeys/witnesses of the groth16_circuits fixture (multiplier, linear,
#       chain; from build*/tests/groth16/circuits), plus BIG_DIR/big.{zkey,wtns,vk.json} when given
#       (the 2^16 chain of bench/RESULTS.md). Carry .gpu-groth16 to the GPU machine.
#   scripts/gpu-check-groth16.sh run                there: proves every circuit with backend "cuda"
#       (then the largest again with backend "sim", the CPU path, for timing) into $OUT.
#   scripts/gpu-check-groth16.sh verify DIR         here: `snarkjs groth16 verify` on what came back
#       (DIR = the files from $OUT), with the fixture's node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=.gpu-groth16
circuits=(multiplier linear chain)

fixture_dir() {
  local dir
  for dir in build*/tests/groth16/circuits; do
    [[ -f $dir/chain/chain.zkey && -d $dir/node_modules ]] && { echo "$dir"; return; }
  done
  echo "no groth16_circuits fixture found: run 'ctest -R groth16' in a build directory first" >&2
  exit 1
}

case "${1:-}" in
bundle)
  export CCACHE_BASEDIR="$PWD"
  ninja -C build-cuda -j2 stagehand
  fixture=$(fixture_dir)
  rm -rf "$bundle" && mkdir -p "$bundle/lib" "$bundle/keys"
  cp build-cuda/src/cli/stagehand "$bundle/"
  ldd "$bundle/stagehand" | awk '/=> \// {print $3}' | grep -E 'boost|fmt|toml|cudart' | xargs -r -I{} cp -L {} "$bundle/lib/"
  for c in "${circuits[@]}"; do
    cp "$fixture/$c/$c.zkey" "$fixture/$c/$c.wtns" "$fixture/$c/vk.json" "$bundle/keys/"
    mv "$bundle/keys/vk.json" "$bundle/keys/$c.vk.json"
  done
  if [[ -n "${2:-}" && -f "$2/big.zkey" ]]; then cp "$2/big.zkey" "$2/big.wtns" "$2/big.vk.json" "$bundle/keys/"; fi
  printf '[run]\nbackend = "cuda"\n' >"$bundle/cuda.toml"
  printf '[run]\nbackend = "sim"\n' >"$bundle/sim.toml"
  du -sh "$bundle"
  ;;
run)
  export LD_LIBRARY_PATH="$PWD/$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  out="${OUT:-/tmp/gpu-groth16}"
  mkdir -p "$out"
  log="$out/prove.log"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$log"
  names=()
  for zkey in "$bundle"/keys/*.zkey; do names+=("$(basename "$zkey" .zkey)"); done
  mkdir -p /tmp/proofs
  status=0
  for c in "${names[@]}"; do
    mkdir -p "/tmp/proofs/$c" && cp "$bundle/keys/$c.wtns" "/tmp/proofs/$c/"
    # A second copy of the witness: the second proof shows the steady state (domain and MSM
    # buffers cached, kernels loaded).
    cp "$bundle/keys/$c.wtns" "/tmp/proofs/$c/${c}2.wtns"
    timeout 90 "$bundle/stagehand" prove --config "$bundle/cuda.toml" --zkey "$bundle/keys/$c.zkey" --wtns "/tmp/proofs/$c" \
      --out-dir "/tmp/proofs/$c/out" 2>&1 | tee -a "$log" || status=1
  done
  # All proofs into one tarball (the files back from $OUT are few).
  tar -C /tmp/proofs -cf "$out/proofs.tar" $(cd /tmp/proofs && ls -d */out) || status=1
  largest=$(ls -S "$bundle"/keys/*.zkey | head -1)
  c=$(basename "$largest" .zkey)
  echo "== CPU path (backend sim) on $c" | tee -a "$log"
  timeout 90 "$bundle/stagehand" prove --config "$bundle/sim.toml" --zkey "$largest" --wtns "/tmp/proofs/$c" \
    --out-dir /tmp/proofs/cpu 2>&1 | tee -a "$log" || status=1
  nproc | sed 's/^/host cores: /' | tee -a "$log"
  exit $status
  ;;
verify)
  dir="${2:?verify DIR}"
  fixture=$(fixture_dir)
  snarkjs="$fixture/node_modules/.bin/snarkjs"
  work=$(mktemp -d)
  tar -C "$work" -xf "$dir/proofs.tar"
  failed=0
  for proofs in "$work"/*/out; do
    c=$(basename "$(dirname "$proofs")")
    for proof in "$proofs"/*.proof.json; do
      public="${proof%.proof.json}.public.json"
      if "$snarkjs" groth16 verify "$bundle/keys/$c.vk.json" "$public" "$proof" | grep -q "OK"; then
        echo "$c $(basename "$proof"): verified"
      else
        echo "$c $(basename "$proof"): NOT verified"
        failed=1
      fi
    done
  done
  rm -rf "$work"
  exit $failed
  ;;
*)
  sed -n 2,13p "$0"
  exit 2
  ;;
esac
