#!/usr/bin/env bash
# `stagehand prove` on a GPU (CudaDevice), checked by `snarkjs groth16 verify`, in three steps:
#
#   scripts/gpu-check-groth16.sh bundle [BIG_DIR]   here: builds stagehand and stagehand_make_circuit
#       in build-cuda (nvcc, sm_90, no GPU needed) and gathers into .gpu-groth16/ the binaries, the
#       shared libraries the GPU machine lacks, and the zkeys/witnesses of the groth16_circuits
#       fixture when one is built (multiplier, linear, chain; from build*/tests/groth16/circuits),
#       plus BIG_DIR/big.{zkey,wtns,vk.json} when given (the 2^16 chain of bench/RESULTS.md).
#       Carry .gpu-groth16 to the GPU machine.
#   scripts/gpu-check-groth16.sh run                there: proves every circuit with backend "cuda"
#       (then the largest again with backend "sim", the CPU path, for timing) into $OUT.
#   scripts/gpu-check-groth16.sh verify DIR         here: `snarkjs groth16 verify` on what came back
#       (DIR = the files from $OUT), with the fixture's node_modules.
#
# A large synthetic circuit, made, set up and proved on the GPU machine (a 2^20 key is ~750 MB,
# more than can be carried there):
#   scripts/gpu-check-groth16.sh run-big LOG2 [--no-cuda]   there: stagehand_make_circuit
#       --domain-log2 LOG2, `stagehand setup`, with backend "cuda" one proof alone (latency) then
#       four as coordinator jobs under budgeted and under serial (throughput), and one proof with
#       backend "sim" (the CPU path, same machine), each step timed and the whole held under
#       330 s. Into $OUT: vk.json, public.json, proof.json (the lone cuda proof),
#       steady.proof.json (the fourth of the budgeted run), cpu.proof.json, big.log, and the
#       budgeted run's trace (budgeted.trace.json, for Perfetto) with its picture (.svg). --no-cuda
#       skips the cuda proofs (to try the mode on a machine without a GPU).
#   scripts/gpu-check-groth16.sh verify-big DIR     here: snarkjs verifies each proof in DIR against
#       DIR/vk.json and DIR/public.json, rejects one with a public signal changed, and prints the
#       timings from DIR/big.log.
#
# BUILD_DIR (default build-cuda) and BUNDLE (default .gpu-groth16) override where the binaries come
# from and where the bundle goes (e.g. BUILD_DIR=build-b BUNDLE=build-b/bundle-cpu to try run-big
# with a CPU-only build).
set -euo pipefail
caller_dir=$PWD
cd "$(dirname "$0")/.."
. scripts/lib/bundle.sh
bundle=${BUNDLE:-.gpu-groth16}
build_dir=${BUILD_DIR:-build-cuda}
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
  ninja -C "$build_dir" -j2 stagehand stagehand_make_circuit
  rm -rf "$bundle" && mkdir -p "$bundle/lib" "$bundle/keys"
  cp "$build_dir/src/cli/stagehand" "$build_dir/tests/groth16/stagehand_make_circuit" "$bundle/"
  bundle_libraries "$bundle" "$bundle/stagehand" "$bundle/stagehand_make_circuit"
  if fixture=$(fixture_dir); then
    for c in "${circuits[@]}"; do
      cp "$fixture/$c/$c.zkey" "$fixture/$c/$c.wtns" "$fixture/$c/vk.json" "$bundle/keys/"
      mv "$bundle/keys/vk.json" "$bundle/keys/$c.vk.json"
    done
  else
    echo "(no fixture keys in the bundle: 'run' needs them, 'run-big' does not)"
  fi
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
run-big)
  log2="${2:?run-big LOG2 [--no-cuda]}"
  [[ $log2 =~ ^[0-9]+$ ]] && ((log2 >= 3 && log2 <= 28)) || { echo "run-big: LOG2 must be 3..28, not '$log2'" >&2; exit 2; }
  cuda=1
  case "${3:-}" in "") ;; --no-cuda) cuda=0 ;; *) echo "run-big: unknown option '$3' (only --no-cuda)" >&2; exit 2 ;; esac
  export LD_LIBRARY_PATH="$PWD/$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  out="${OUT:-/tmp/gpu-groth16-big}"
  work="${BIG_WORK:-/tmp/stagehand-big}"  # the circuit and the key stay here: too large to bring back
  mkdir -p "$out"
  rm -rf "$work" && mkdir -p "$work/w"
  log="$out/big.log"
  : >"$log"
  deadline=$((SECONDS + 330))  # the whole run, with the machine's start outside it, under 6 minutes
  summary=()
  # step <name> <limit s> <command...>: runs it under the limit (cut to what is left of the
  # deadline), output into the log, and records its wall time.
  step() {
    local name=$1 limit=$2 left=$((deadline - SECONDS)) start end took status=0
    shift 2
    ((left < limit)) && limit=$left
    if ((limit <= 0)); then
      echo "== $name: skipped, out of time" | tee -a "$log"
      summary+=("$name: skipped, out of time")
      return 1
    fi
    echo "== $name (limit $limit s): $*" | tee -a "$log"
    start=$(date +%s.%N)
    timeout "$limit" "$@" 2>&1 | { grep -v '^WARNING' || true; } | tee -a "$log" || status=$?
    end=$(date +%s.%N)
    took=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
    echo "== $name: $took s wall, exit $status" | tee -a "$log"
    summary+=("$name: $took s wall, exit $status")
    return $status
  }
  {
    date -u '+%Y-%m-%d %H:%M:%S UTC'
    echo "host: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
    grep -m1 'model name' /proc/cpuinfo || true
  } | tee -a "$log"
  if ((cuda)); then
    { nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "nvidia-smi failed"; } | tee -a "$log"
  fi
  status=0
  step "make circuit 2^$log2" 60 "$bundle/stagehand_make_circuit" --domain-log2 "$log2" --out "$work" || exit 1
  step "stagehand setup" 200 "$bundle/stagehand" setup --r1cs "$work/circuit.r1cs" --zkey "$work/circuit.zkey" --vk "$out/vk.json" || exit 1
  ls -l "$work/circuit.r1cs" "$work/circuit.wtns" "$work/circuit.zkey" | tee -a "$log"
  cp "$work/circuit.wtns" "$work/w/1.wtns"
  mkdir -p "$work/w4"
  for i in 1 2 3 4; do cp "$work/circuit.wtns" "$work/w4/$i.wtns"; done
  if ((cuda)); then
    # One proof alone: the latency, with the CUDA context and module load of a new process.
    if step "prove, backend cuda, 1 proof" 90 "$bundle/stagehand" prove --config "$bundle/cuda.toml" --zkey "$work/circuit.zkey" \
      --wtns "$work/w/1.wtns" --proof "$out/proof.json" --public "$out/public.json"; then
      # Four proofs as coordinator jobs (two workers): the throughput, budgeted, then serial.
      if step "prove, backend cuda, 4 proofs, budgeted" 120 "$bundle/stagehand" prove --config "$bundle/cuda.toml" \
        --zkey "$work/circuit.zkey" --wtns "$work/w4" --out-dir "$work/cuda" --trace "$out/budgeted.trace.json"; then
        cp "$work/cuda/4.proof.json" "$out/steady.proof.json"
        cmp -s "$out/public.json" "$work/cuda/4.public.json" || { echo "the proofs' public signals differ" | tee -a "$log"; status=1; }
      else
        status=1
      fi
      step "prove, backend cuda, 4 proofs, serial" 120 "$bundle/stagehand" prove --config "$bundle/cuda.toml" --policy serial \
        --zkey "$work/circuit.zkey" --wtns "$work/w4" --out-dir "$work/cuda-serial" || status=1
    else
      status=1
    fi
  fi
  if step "prove, backend sim (CPU path)" 180 "$bundle/stagehand" prove --config "$bundle/sim.toml" --zkey "$work/circuit.zkey" \
    --wtns "$work/w/1.wtns" --proof "$out/cpu.proof.json" --public "$work/cpu.public.json"; then
    if [[ -f $out/public.json ]]; then
      cmp -s "$out/public.json" "$work/cpu.public.json" || { echo "the CPU proof's public signals differ" | tee -a "$log"; status=1; }
    else
      cp "$work/cpu.public.json" "$out/public.json"
    fi
  else
    status=1
  fi
  {
    echo "== summary (2^$log2, $(nproc) cores)"
    printf '%s\n' "${summary[@]}"
    grep -E 'proof done at|proofs? in|key computed at|, read in' "$log" | grep -v '^==' || true
  } | tee -a "$log.summary"
  cat "$log.summary" >>"$log" && rm -f "$log.summary"
  rm -rf "$work"
  exit $status
  ;;
verify-big)
  dir=$(cd "$caller_dir" && readlink -f "${2:?verify-big DIR}")
  fixture=$(fixture_dir)
  snarkjs="node $fixture/node_modules/snarkjs/build/cli.cjs"
  source tests/groth16/verify_lib.sh
  [[ -f $dir/vk.json && -f $dir/public.json ]] || { echo "$dir: no vk.json and public.json" >&2; exit 1; }
  found=0
  for name in proof steady.proof cpu.proof; do
    [[ -f $dir/$name.json ]] || { echo "($name.json: not there)"; continue; }
    found=$((found + 1))
    verify "$dir/vk.json" "$dir/public.json" "$dir/$name.json" ok "$name.json"
    last="$dir/$name.json"
  done
  ((found > 0)) || fail "no proof in $dir"
  if ((found > 0)); then
    work=$(mktemp -d)
    tamper "$dir/public.json" "$work/tampered.json"
    verify "$dir/vk.json" "$work/tampered.json" "$last" reject "$(basename "$last") with a public signal changed"
    rm -rf "$work"
  fi
  [[ -f $dir/big.log ]] && sed -n '/^== summary/,$p' "$dir/big.log"
  finish "verify-big: $found proof(s) verified by snarkjs"
  ;;
*)
  sed -n '2,/^set -euo/p' "$0" | sed '$d'
  exit 2
  ;;
esac
