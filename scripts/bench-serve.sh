#!/usr/bin/env bash
# Proofs per second through `stagehand serve` against `stagehand prove` on the same witnesses,
# in one call: a synthetic circuit (stagehand_make_circuit, test-only keys from `stagehand
# setup`) or a given key and witness, N copies of the witness; `stagehand prove` on all of them
# in one run, then a server with the key loaded once and C concurrent clients posting them with
# wait=true. Prints both rates, their ratio, and how often the server read the key.
#
#   scripts/bench-serve.sh [--build DIR] [--config F] [--proofs N] [--clients C] [--domain-log2 K]
#                          [--zkey Z --wtns W]
#
# Defaults: build/, no configuration (a GPU where there is one, otherwise the simulator's
# functional mode), 32 proofs, 8 clients, 2^11. On the H200 machine, e.g.:
#   scripts/bench-serve.sh --config config/h200.toml --domain-log2 20 --proofs 16
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/serve.sh
build=build
config=""
proofs=32
clients=8
log2=11
zkey=""
wtns=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --proofs) proofs=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --domain-log2) log2=$2; shift 2 ;;
    --zkey) zkey=$2; shift 2 ;;
    --wtns) wtns=$2; shift 2 ;;
    *) echo "bench-serve: unknown argument $1 (see the script's header)" >&2; exit 2 ;;
  esac
done
stagehand=$build/src/cli/stagehand
make_circuit=$build/tests/groth16/stagehand_make_circuit
[ -x "$stagehand" ] || { echo "bench-serve: $stagehand not built (scripts/build.sh)" >&2; exit 1; }
command -v curl >/dev/null || { echo "bench-serve: curl is needed (scripts/install-deps.sh)" >&2; exit 1; }
config_args=()
[ -n "$config" ] && config_args=(--config "$config")

serve_work_dir

if [ -z "$zkey" ]; then
  "$make_circuit" --domain-log2 "$log2" --out "$work/circuit" >/dev/null
  "$stagehand" setup --r1cs "$work/circuit/circuit.r1cs" --zkey "$work/circuit/circuit.zkey" --vk "$work/circuit/vk.json" 2>/dev/null
  zkey=$work/circuit/circuit.zkey
  wtns=$work/circuit/circuit.wtns
fi
mkdir -p "$work/witnesses"
for n in $(seq "$proofs"); do cp "$wtns" "$work/witnesses/w$(printf %04d "$n").wtns"; done
now() { date +%s.%N; }
# calc EXPRESSION: floating-point arithmetic without bc.
calc() { awk "BEGIN { print $1 }"; }

# stagehand prove: one process, the key read once, every witness in one run.
start=$(now)
"$stagehand" prove "${config_args[@]}" --zkey "$zkey" --wtns "$work/witnesses" --out-dir "$work/prove" 2>"$work/prove.log"
prove_wall=$(calc "$(now) - $start")
prove_proving=$(grep -o 'proofs in [0-9.]* s' "$work/prove.log" | grep -o '[0-9.]*' | head -1)

# stagehand serve: the key loaded once at start, then the same witnesses from $clients clients.
serve_start "$stagehand" "$work/serve.log" "${config_args[@]}" --key bench="$zkey"
client() {
  local n=$1 code
  for file in "$work/witnesses"/*.wtns; do
    index=$(basename "$file" .wtns | tr -dc 0-9)
    [ $((10#$index % clients)) = "$n" ] || continue
    code=$(curl -s -o "$work/answer-$index.json" -w '%{http_code}' --data-binary @"$file" "$url/v1/proofs?key=bench&wait=true")
    [ "$code" = 200 ] || echo "proof $index: $code $(head -c 300 "$work/answer-$index.json")" >>"$work/errors"
  done
}
start=$(now)
pids=()
for n in $(seq 0 $((clients - 1))); do
  client "$n" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
serve_seconds=$(calc "$(now) - $start")
status=$(curl -s "$url/v1/status")
kill -TERM "$server_pid"
wait "$server_pid" || true
server_pid=""
if [ -s "$work/errors" ]; then
  echo "bench-serve: failed proofs through serve:" >&2
  cat "$work/errors" >&2
  exit 1
fi
key_reads=$(grep -c 'key bench: .* read in' "$work/serve.log" || true)
batches=$(grep -o '"batches":[0-9]*' <<<"$status" | grep -o '[0-9]*')

echo "bench-serve: $proofs proofs of $(basename "$zkey") ($(grep -o 'domain 2^[0-9]*' "$work/prove.log" | head -1)), $(grep -o 'on [0-9] x [^,]*' "$work/prove.log" | head -1 | sed 's/^on //')"
printf '  stagehand prove: %.3f s proving (%.3f proofs/s), %.3f s for the whole command (%.3f proofs/s)\n' \
  "$prove_proving" "$(calc "$proofs / $prove_proving")" "$prove_wall" "$(calc "$proofs / $prove_wall")"
printf '  stagehand serve: %.3f s from first request to last answer, %d clients (%.3f proofs/s), %s coordinator runs, key read %s time(s)\n' \
  "$serve_seconds" "$clients" "$(calc "$proofs / $serve_seconds")" "$batches" "$key_reads"
printf '  serve / prove (proving part): %.1f%% of the throughput\n' "$(calc "100 * $prove_proving / $serve_seconds")"
