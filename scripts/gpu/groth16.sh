# groth16[:big:LOG2[:no-cuda]]: `stagehand prove` on a GPU (CudaDevice), for `snarkjs groth16
# verify` here (scripts/gpu.sh verify groth16 DIR, or groth16:big DIR).
#   groth16: proves every fixture circuit (multiplier, linear, chain; and BIG_DIR/big.{zkey,wtns,
#     vk.json} when BIG_DIR is set at bundle time: the 2^16 chain) twice with backend "cuda" (the
#     second proof shows the steady state: domain and MSM buffers cached, kernels loaded), then
#     the largest with backend "sim" (the CPU path) for timing. Logs: prove.log, proofs.tar.
#   groth16:big:LOG2: a synthetic circuit made, set up and proved on the GPU machine (a 2^20 key
#     is some 750 MB, more than a bundle may weigh): stagehand_make_circuit --domain-log2 LOG2,
#     `stagehand setup`, with backend "cuda" one proof alone (latency) then four as coordinator
#     jobs under budgeted and under serial (throughput), and one proof with backend "sim" (the CPU
#     path, same machine), each step timed and the whole held under 330 s. Logs: vk.json,
#     public.json, proof.json (the lone cuda proof), steady.proof.json (the fourth of the budgeted
#     run), cpu.proof.json, big.log, budgeted.trace.json (Perfetto) and its picture (.svg).
#     :no-cuda skips the cuda proofs (the mode on a machine without a GPU).
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="stagehand prove of the fixture circuits (or groth16:big:LOG2, a synthetic one) for snarkjs"
mode=${arg%%:*}
if [[ $mode == big ]]; then
  targets=(stagehand stagehand_make_circuit)
  [[ $arg == *:no-cuda ]] && needs_gpu=0
else
  targets=(stagehand)
  keys=(multiplier linear chain)
fi

check_bundle() {
  [[ $mode != big && -n ${BIG_DIR:-} ]] || return 0
  [[ -f $BIG_DIR/big.zkey ]] || die "groth16: no $BIG_DIR/big.zkey (BIG_DIR)"
  cp "$BIG_DIR/big.zkey" "$BIG_DIR/big.wtns" "$BIG_DIR/big.vk.json" "$bundle/keys/"
}

check_run() {
  printf '[run]\nbackend = "cuda"\n' >"$work/cuda.toml"
  printf '[run]\nbackend = "sim"\n' >"$work/sim.toml"
  case $mode in
    "") groth16_fixtures ;;
    big) groth16_big ;;
    *) echo "groth16: unknown mode '$arg' (none, or big:LOG2[:no-cuda])"; return 2 ;;
  esac
}

groth16_fixtures() {
  local log=$logs/prove.log names=() zkey c status=0 largest
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$log"
  for zkey in "$bundle"/keys/*.zkey; do names+=("$(basename "$zkey" .zkey)"); done
  for c in "${names[@]}"; do
    mkdir -p "$work/proofs/$c" && cp "$bundle/keys/$c.wtns" "$work/proofs/$c/"
    cp "$bundle/keys/$c.wtns" "$work/proofs/$c/${c}2.wtns"
    timeout 90 "$bin/stagehand" prove --config "$work/cuda.toml" --zkey "$bundle/keys/$c.zkey" --wtns "$work/proofs/$c" \
      --out-dir "$work/proofs/$c/out" 2>&1 | tee -a "$log" || status=1
  done
  (cd "$work/proofs" && tar -cf "$logs/proofs.tar" ./*/out) || status=1
  # shellcheck disable=SC2012  # ls -S: the largest; the names are the bundle's own
  largest=$(ls -S "$bundle"/keys/*.zkey | head -1)
  c=$(basename "$largest" .zkey)
  echo "== CPU path (backend sim) on $c" | tee -a "$log"
  timeout 90 "$bin/stagehand" prove --config "$work/sim.toml" --zkey "$largest" --wtns "$work/proofs/$c" \
    --out-dir "$work/proofs/cpu" 2>&1 | tee -a "$log" || status=1
  nproc | sed 's/^/host cores: /' | tee -a "$log"
  figure "$(find "$work"/proofs/*/out -name '*.proof.json' 2>/dev/null | wc -l) GPU proofs of ${#names[@]} circuits"
  return $status
}

# big_step <name> <limit s> <command...>: runs it under the limit (cut to what is left of the
# deadline), output into the log, and records its wall time in the summary.
big_step() {
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

# big_cuda_proofs DIR: one proof alone (the latency, with the CUDA context and module load of a new
# process), then four as coordinator jobs (two workers: the throughput), budgeted, then serial.
big_cuda_proofs() {
  local dir=$1
  big_step "prove, backend cuda, 1 proof" 90 "$bin/stagehand" prove --config "$work/cuda.toml" --zkey "$dir/circuit.zkey" \
    --wtns "$dir/w/1.wtns" --proof "$logs/proof.json" --public "$logs/public.json" || return 1
  local status=0
  if big_step "prove, backend cuda, 4 proofs, budgeted" 120 "$bin/stagehand" prove --config "$work/cuda.toml" \
    --zkey "$dir/circuit.zkey" --wtns "$dir/w4" --out-dir "$dir/cuda" --trace "$logs/budgeted.trace.json"; then
    cp "$dir/cuda/4.proof.json" "$logs/steady.proof.json"
    cmp -s "$logs/public.json" "$dir/cuda/4.public.json" || { echo "the proofs' public signals differ" | tee -a "$log"; status=1; }
  else
    status=1
  fi
  big_step "prove, backend cuda, 4 proofs, serial" 120 "$bin/stagehand" prove --config "$work/cuda.toml" --policy serial \
    --zkey "$dir/circuit.zkey" --wtns "$dir/w4" --out-dir "$dir/cuda-serial" || status=1
  return $status
}

groth16_big() {
  local log2 cuda=1 dir=$work/big status=0 i
  log=$logs/big.log summary=()
  IFS=: read -r _ log2 _ <<<"$arg"
  if ! [[ $log2 =~ ^[0-9]+$ ]] || ((log2 < 3 || log2 > 28)); then
    echo "groth16:big: LOG2 must be 3..28, not '$log2'"
    return 2
  fi
  case ${arg#big:"$log2"} in "") ;; :no-cuda) cuda=0 ;; *) echo "groth16:big: unknown option '${arg#big:"$log2"}' (only :no-cuda)"; return 2 ;; esac
  mkdir -p "$dir/w"
  : >"$log"
  deadline=$((SECONDS + 330))
  {
    echo "host: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
    grep -m1 'model name' /proc/cpuinfo || true
  } | tee -a "$log"
  big_step "make circuit 2^$log2" 60 "$bin/stagehand_make_circuit" --domain-log2 "$log2" --out "$dir" || return 1
  big_step "stagehand setup" 200 "$bin/stagehand" setup --r1cs "$dir/circuit.r1cs" --zkey "$dir/circuit.zkey" --vk "$logs/vk.json" || return 1
  # shellcheck disable=SC2012  # the files' sizes in the log
  ls -l "$dir/circuit.r1cs" "$dir/circuit.wtns" "$dir/circuit.zkey" | tee -a "$log"
  cp "$dir/circuit.wtns" "$dir/w/1.wtns"
  mkdir -p "$dir/w4"
  for i in 1 2 3 4; do cp "$dir/circuit.wtns" "$dir/w4/$i.wtns"; done
  if ((cuda)); then big_cuda_proofs "$dir" || status=1; fi
  if big_step "prove, backend sim (CPU path)" 180 "$bin/stagehand" prove --config "$work/sim.toml" --zkey "$dir/circuit.zkey" \
    --wtns "$dir/w/1.wtns" --proof "$logs/cpu.proof.json" --public "$dir/cpu.public.json"; then
    if [[ -f $logs/public.json ]]; then
      cmp -s "$logs/public.json" "$dir/cpu.public.json" || { echo "the CPU proof's public signals differ" | tee -a "$log"; status=1; }
    else
      cp "$dir/cpu.public.json" "$logs/public.json"
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
  figure "$(printf '%s; ' "${summary[@]}" | cut -c1-200)"
  return $status
}

check_verify() {
  local logs_dir snarkjs failed=0 proofs c proof public extracted
  logs_dir=$(unpack_logs "$1" "$(tag_of "$spec")") || return 2
  snarkjs=$(snarkjs_cli)
  if [[ $mode == big ]]; then
    groth16_verify_big "$logs_dir" "$snarkjs"
    return
  fi
  extracted=$(mktemp -d)
  tar -C "$extracted" -xf "$logs_dir/proofs.tar"
  for proofs in "$extracted"/*/out; do
    c=$(basename "$(dirname "$proofs")")
    for proof in "$proofs"/*.proof.json; do
      public="${proof%.proof.json}.public.json"
      if $snarkjs groth16 verify "$bundle/keys/$c.vk.json" "$public" "$proof" | grep -q "OK"; then
        echo "$c $(basename "$proof"): verified"
      else
        echo "$c $(basename "$proof"): NOT verified"
        failed=1
      fi
    done
  done
  rm -rf "$extracted"
  return $failed
}

# groth16_verify_big DIR SNARKJS: each proof in DIR against DIR/vk.json and DIR/public.json, one
# rejected with a public signal changed, and the timings from DIR/big.log.
groth16_verify_big() {
  local dir=$1 found=0 name last scratch
  snarkjs=$2
  # shellcheck source=tests/groth16/verify_lib.sh
  source tests/groth16/verify_lib.sh
  [[ -f $dir/vk.json && -f $dir/public.json ]] || { echo "$dir: no vk.json and public.json" >&2; return 1; }
  for name in proof steady.proof cpu.proof; do
    [[ -f $dir/$name.json ]] || { echo "($name.json: not there)"; continue; }
    found=$((found + 1))
    verify "$dir/vk.json" "$dir/public.json" "$dir/$name.json" ok "$name.json"
    last="$dir/$name.json"
  done
  ((found > 0)) || fail "no proof in $dir"
  if ((found > 0)); then
    scratch=$(mktemp -d)
    tamper "$dir/public.json" "$scratch/tampered.json"
    verify "$dir/vk.json" "$scratch/tampered.json" "$last" reject "$(basename "$last") with a public signal changed"
    rm -rf "$scratch"
  fi
  [[ -f $dir/big.log ]] && sed -n '/^== summary/,$p' "$dir/big.log"
  finish "verify groth16:big: $found proof(s) verified by snarkjs"
}
