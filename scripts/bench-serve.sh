#!/usr/bin/env bash
# Proofs per second through `stagehand serve` against `stagehand prove` on the same witnesses,
# in one call: a synthetic circuit (stagehand_make_circuit, test-only keys from `stagehand
# setup`) or a given key and witness, N copies of the witness; `stagehand prove` on all of them
# in one run, then a server with the key loaded once and C concurrent clients posting them with
# wait=true; R rounds, the two alternating. Prints each round's rates, their ratio and how often
# the server read the key, then the medians.
#
#   scripts/bench-serve.sh [--build DIR] [--config F] [--serve-config F] [--proofs N] [--clients C]
#                          [--domain-log2 K] [--rounds R] [--zkey Z --wtns W]
#                          [--arrivals poisson:RATE [--seed S] [--critical-every SECONDS]]
#
# --arrivals poisson:RATE: instead of clients posting as fast as they are answered, the proofs
# arrive as a Poisson stream of RATE proofs per second in all (exponential intervals from awk's
# generator seeded with S, default 1, so that a run repeats), dealt in turn to the C clients;
# each proof is posted (wait=true) at its arrival whether or not the ones before have been
# answered. Each round prints the stream's throughput (proofs over first arrival to last answer),
# the p50 and p99 latency (submit to answer, as curl times it), GPU busy (the server's
# busy_seconds, the wall time with a proof running on a GPU, over the stream's span, each GPU's
# share averaged) and the server's coordinator runs, beside `stagehand prove`'s rate on the same
# witnesses (and its compute engine's busy share, where it reports one: on a GPU).
#
# --serve-config: the server's configuration instead of --config's (an engine configuration,
# config/serve.toml's keys: `stagehand prove` would refuse its [engine] table).
# Defaults: build/, no configuration (a GPU where there is one, otherwise the simulator's
# functional mode), 32 proofs, 8 clients, 2^11, 3 rounds. On the H200 machine (the GPU is taken
# where there is one), e.g.: scripts/bench-serve.sh --domain-log2 20 --proofs 16
# --critical-every SECONDS (with --arrivals): besides the stream, one proof posted with
# priority=critical every SECONDS from the stream's start to its last arrival (the first witness);
# each round prints their count and p99 latency (their GPU time is in the busy share too).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/serve.sh
build=build
config=""
serve_config=""
proofs=32
clients=8
log2=11
rounds=3
zkey=""
wtns=""
arrivals=""
critical_every=""
seed=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --serve-config) serve_config=$2; shift 2 ;;
    --proofs) proofs=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --domain-log2) log2=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --zkey) zkey=$2; shift 2 ;;
    --wtns) wtns=$2; shift 2 ;;
    --arrivals) arrivals=$2; shift 2 ;;
    --critical-every) critical_every=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    *) echo "bench-serve: unknown argument $1 (see the script's header)" >&2; exit 2 ;;
  esac
done
rate=""
if [ -n "$arrivals" ]; then
  rate=${arrivals#poisson:}
  if [ "$rate" = "$arrivals" ] || ! awk -v r="$rate" 'BEGIN { exit !(r + 0 > 0 && r ~ /^[0-9]*\.?[0-9]+$/) }'; then
    echo "bench-serve: --arrivals '$arrivals': expected poisson:RATE, RATE proofs per second above 0 (e.g. poisson:1.5)" >&2
    exit 2
  fi
  [[ "$seed" =~ ^[0-9]+$ ]] || { echo "bench-serve: --seed '$seed' is not a whole number" >&2; exit 2; }
fi
if [ -n "$critical_every" ]; then
  [ -n "$rate" ] || { echo "bench-serve: --critical-every goes with --arrivals poisson:RATE" >&2; exit 2; }
  awk -v s="$critical_every" 'BEGIN { exit !(s ~ /^[0-9]*\.?[0-9]+$/ && s + 0 > 0) }' ||
    { echo "bench-serve: --critical-every '$critical_every': expected seconds above 0 (e.g. 1)" >&2; exit 2; }
fi
stagehand=$build/src/cli/stagehand
make_circuit=$build/tests/groth16/stagehand_make_circuit
[ -x "$stagehand" ] || { echo "bench-serve: $stagehand not built (scripts/build.sh)" >&2; exit 1; }
command -v curl >/dev/null || { echo "bench-serve: curl is needed (scripts/install-deps.sh)" >&2; exit 1; }
config_args=()
[ -n "$config" ] && config_args=(--config "$config")
serve_config_args=("${config_args[@]}")
[ -n "$serve_config" ] && serve_config_args=(--config "$serve_config")

serve_work_dir

if [ -z "$zkey" ]; then
  "$make_circuit" --domain-log2 "$log2" --out "$work/circuit" >/dev/null 2>&1
  "$stagehand" setup --r1cs "$work/circuit/circuit.r1cs" --zkey "$work/circuit/circuit.zkey" --vk "$work/circuit/vk.json" 2>/dev/null
  zkey=$work/circuit/circuit.zkey
  wtns=$work/circuit/circuit.wtns
fi
mkdir -p "$work/witnesses"
for n in $(seq "$proofs"); do cp "$wtns" "$work/witnesses/w$(printf %04d "$n").wtns"; done
now() { date +%s.%N; }
# calc EXPRESSION: floating-point arithmetic without bc.
calc() { awk "BEGIN { print $1 }"; }

# One round: `stagehand prove` (one process, the key read once, every witness in one run), then a
# server with the key loaded once at start and the same witnesses from $clients clients. Appends
# "prove_proving prove_wall serve_seconds" to $work/rounds.
# Each client posts every $clients-th witness; nothing but curl is started per proof, so that the
# harness takes as little as it can of the cores the proofs run on.
witnesses=("$work/witnesses"/*.wtns)
client() {
  local n=$1 code i
  for ((i = n; i < ${#witnesses[@]}; i += clients)); do
    code=$(curl -s -o "$work/answer-$i.json" -w '%{http_code}' --data-binary @"${witnesses[$i]}" "$url/v1/proofs?key=bench&wait=true")
    [ "$code" = 200 ] || echo "proof $i: $code $(head -c 300 "$work/answer-$i.json")" >>"$work/errors"
  done
}
# `stagehand prove` on every witness in one run: sets prove_wall, prove_proving (its proving
# seconds) and prove_busy (its compute engine's busy share, as it prints it; empty where it does not).
prove_all() {
  local start
  start=$(now)
  rm -rf "$work/prove"
  "$stagehand" prove "${config_args[@]}" --zkey "$zkey" --wtns "$work/witnesses" --out-dir "$work/prove" 2>"$work/prove.log"
  prove_wall=$(calc "$(now) - $start")
  prove_proving=$(grep -o 'proofs in [0-9.]* s' "$work/prove.log" | grep -o '[0-9.]*' | head -1)
  prove_busy=$(grep -o 'compute engine busy [0-9.]*%' "$work/prove.log" | grep -o '[0-9.]*%' | head -1 || true)
}
round() {
  local start serve_seconds status key_reads batches set_ups pids n pid
  prove_all
  if [ -n "$rate" ]; then
    stream_round "$1"
    return
  fi
  serve_start "$stagehand" "$work/serve.log" "${serve_config_args[@]}" --key bench="$zkey"
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
  set_ups=$(grep -o '"device_set_ups":[0-9]*' <<<"$status" | grep -o '[0-9]*' | head -1)
  printf '  round %d: prove %.3f s proving (%.3f proofs/s; %.3f s the whole command), serve %.3f s (%.3f proofs/s; %s coordinator runs, key read %s time(s), set up on the devices %s time(s)): %.1f%%\n' \
    "$1" "$prove_proving" "$(calc "$proofs / $prove_proving")" "$prove_wall" "$serve_seconds" "$(calc "$proofs / $serve_seconds")" \
    "$batches" "$key_reads" "${set_ups:-?}" "$(calc "100 * $prove_proving / $serve_seconds")"
  echo "$prove_proving $prove_wall $serve_seconds" >>"$work/rounds"
}

# The Poisson stream (--arrivals): each proof's arrival in microseconds from the stream's start,
# the intervals exponential with mean 1/RATE, from awk's generator seeded with --seed.
mapfile -t offsets < <(awk -v n="$proofs" -v rate="${rate:-1}" -v seed="$seed" \
  'BEGIN { srand(seed); t = 0; for (i = 0; i < n; i++) { t += -log(1 - rand()) / rate; printf "%d\n", t * 1e6 } }')
# Client n posts every $clients-th proof of the stream at its arrival, in the background, so that
# a slow answer delays no later arrival; "CODE SECONDS" (curl's submit to answer) go to timed-I.
stream_client() {
  local n=$1 i wait_us now_us
  for ((i = n; i < ${#witnesses[@]}; i += clients)); do
    now_us=${EPOCHREALTIME/./}
    wait_us=$((stream_start_us + offsets[i] - 10#$now_us))
    if ((wait_us > 0)); then sleep "$((wait_us / 1000000)).$(printf %06d $((wait_us % 1000000)))"; fi
    curl -s -o "$work/answer-$i.json" -w '%{http_code} %{time_total}\n' --data-binary @"${witnesses[$i]}" \
      "$url/v1/proofs?key=bench&wait=true" >"$work/timed-$i" &
  done
  wait
}
# --critical-every: a proof posted with priority=critical every $critical_every s from the stream's
# start until its last arrival, each in the background; "CODE SECONDS" go to critical-K.
critical_injector() {
  local k=0 due_us now_us wait_us last_us=$((stream_start_us + offsets[proofs - 1]))
  local every_us
  every_us=$(awk -v s="$critical_every" 'BEGIN { printf "%d", s * 1e6 }')
  while :; do
    due_us=$((stream_start_us + (k + 1) * every_us))
    ((due_us <= last_us)) || break
    now_us=$((10#${EPOCHREALTIME/./}))
    wait_us=$((due_us - now_us))
    if ((wait_us > 0)); then sleep "$((wait_us / 1000000)).$(printf %06d $((wait_us % 1000000)))"; fi
    curl -s -o "$work/critical-answer-$k.json" -w '%{http_code} %{time_total}\n' --data-binary @"${witnesses[0]}" \
      "$url/v1/proofs?key=bench&wait=true&priority=critical" >"$work/critical-$k" &
    k=$((k + 1))
  done
  wait
}
# The p99 latency of the critical proofs ("-" where none was posted); fails the run on any not 200.
critical_p99() {
  local file code seconds
  : >"$work/critical-latencies"
  for file in "$work"/critical-[0-9]*; do
    [ -e "$file" ] || continue
    read -r code seconds <"$file" || code="none"
    [ "$code" = 200 ] || { echo "bench-serve: a critical proof answered $code" >&2; exit 1; }
    echo "$seconds" >>"$work/critical-latencies"
  done
  if [ -s "$work/critical-latencies" ]; then percentile 0.99 <"$work/critical-latencies"; else echo "-"; fi
}
# The sum of a status's GPUs' busy_seconds, and their count.
gpu_busy_seconds() { grep -o '"busy_seconds":[0-9.eE+-]*' <<<"$1" | awk -F: '{ s += $2 } END { print s + 0 }'; }
gpu_count() { grep -o '"busy_seconds":' <<<"$1" | wc -l; }
# p-th percentile (nearest rank) of the numbers on stdin.
percentile() { sort -g | awk -v p="$1" '{ v[NR] = $1 } END { r = int(p * NR); if (r < p * NR) r++; if (r < 1) r = 1; print v[r] }'; }
# One round of the stream against a fresh server: appends "prove_rate throughput p50 p99 busy runs"
# to $work/stream-rounds.
stream_round() {
  local before after pids n pid end_us span i code seconds throughput p50 p99 busy runs
  serve_start "$stagehand" "$work/serve.log" "${serve_config_args[@]}" --key bench="$zkey"
  before=$(curl -s "$url/v1/status")
  rm -f "$work"/timed-* "$work"/critical-*
  stream_start_us=$((10#${EPOCHREALTIME/./}))
  pids=()
  if [ -n "$critical_every" ]; then
    critical_injector &
    pids+=($!)
  fi
  for n in $(seq 0 $((clients - 1))); do
    stream_client "$n" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  end_us=$((10#${EPOCHREALTIME/./}))
  after=$(curl -s "$url/v1/status")
  kill -TERM "$server_pid"
  wait "$server_pid" || true
  server_pid=""
  : >"$work/latencies"
  for ((i = 0; i < proofs; i++)); do
    read -r code seconds <"$work/timed-$i" || code="none"
    if [ "$code" = 200 ]; then echo "$seconds" >>"$work/latencies"; else echo "proof $i: $code $(head -c 300 "$work/answer-$i.json" 2>/dev/null)" >>"$work/errors"; fi
  done
  if [ -s "$work/errors" ]; then
    echo "bench-serve: failed proofs through serve:" >&2
    cat "$work/errors" >&2
    exit 1
  fi
  span=$(calc "($end_us - $stream_start_us - ${offsets[0]}) / 1e6")
  throughput=$(calc "$proofs / $span")
  p50=$(percentile 0.5 <"$work/latencies")
  p99=$(percentile 0.99 <"$work/latencies")
  busy=$(calc "100 * ($(gpu_busy_seconds "$after") - $(gpu_busy_seconds "$before")) / ($span * $(gpu_count "$after"))")
  runs=$(($(grep -o '"batches":[0-9]*' <<<"$after" | grep -o '[0-9]*') - $(grep -o '"batches":[0-9]*' <<<"$before" | grep -o '[0-9]*')))
  local critical critical_count
  critical=$(critical_p99)
  critical_count=$(wc -l <"$work/critical-latencies")
  printf '  round %d: prove %.3f proofs/s%s; serve at poisson:%s: %.3f proofs/s, latency p50 %.3f s p99 %.3f s, GPU busy %.1f%% (%d coordinator runs)%s\n' \
    "$1" "$(calc "$proofs / $prove_proving")" "${prove_busy:+ (compute engine busy $prove_busy)}" "$rate" "$throughput" "$p50" "$p99" "$busy" "$runs" \
    "$([ "$critical" = - ] || printf '; %d critical proofs, p99 %.3f s' "$critical_count" "$critical")"
  echo "$(calc "$proofs / $prove_proving") $throughput $p50 $p99 $busy $runs $critical" >>"$work/stream-rounds"
}

# One proof first: the files in the page cache and the description of the run.
"$stagehand" prove "${config_args[@]}" --zkey "$zkey" --wtns "${witnesses[0]}" --proof "$work/warm.proof.json" \
  --public "$work/warm.public.json" 2>"$work/warm.log"
echo "bench-serve: $proofs proofs of $(basename "$zkey") ($(grep -o 'domain 2^[0-9]*' "$work/warm.log" | head -1)), $(grep -o 'on [0-9] x [^,]*' "$work/warm.log" | head -1 | sed 's/^on //'), $clients clients, $rounds rounds (prove and serve alternate)${rate:+, arrivals poisson:$rate (seed $seed)}"
for r in $(seq "$rounds"); do round "$r"; done
# Medians over the rounds; the ratio is the median of each round's ratio (the two halves of a
# round run back to back, under the same load).
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
if [ -n "$rate" ]; then
  column_median() { awk -v c="$1" '{ print $c }' "$work/stream-rounds" | median; }
  printf '  median: stagehand prove %.3f proofs/s; serve at poisson:%s (seed %s): %.3f proofs/s, latency p50 %.3f s p99 %.3f s, GPU busy %.1f%%, %s coordinator runs%s\n' \
    "$(column_median 1)" "$rate" "$seed" "$(column_median 2)" "$(column_median 3)" "$(column_median 4)" "$(column_median 5)" "$(column_median 6)" \
    "$([ -z "$critical_every" ] || printf '; a critical proof every %s s: p99 %.3f s' "$critical_every" "$(column_median 7)")"
  exit 0
fi
prove_rate=$(awk -v n="$proofs" '{ print n / $1 }' "$work/rounds" | median)
prove_wall_rate=$(awk -v n="$proofs" '{ print n / $2 }' "$work/rounds" | median)
serve_rate=$(awk -v n="$proofs" '{ print n / $3 }' "$work/rounds" | median)
ratio=$(awk '{ print 100 * $1 / $3 }' "$work/rounds" | median)
printf '  median: stagehand prove %.3f proofs/s (%.3f the whole command), stagehand serve %.3f proofs/s; serve / prove %.1f%%\n' \
  "$prove_rate" "$prove_wall_rate" "$serve_rate" "$ratio"
