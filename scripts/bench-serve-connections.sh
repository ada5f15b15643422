#!/usr/bin/env bash
# GET /v1/status's latency through `stagehand serve` with and without N half-open connections
# held against it (each sent the start of a request's head and nothing more): R requests each,
# one after another, on the simulator with no key. Prints the median, the 99th percentile and the
# slowest, and the connections the server held and closed to make room.
#
#   scripts/bench-serve-connections.sh [--build DIR] [--connections N] [--requests R] [--max-connections M]
#
# Defaults: build/, 300 connections, 200 requests, max_connections 512 (all of them held; a
# smaller M has the server close the longest waiting to make room).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/serve.sh
build=build
connections=300
requests=200
max_connections=512
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --max-connections) max_connections=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((connections + 64)) ]; then ulimit -n $((connections + 64)); fi
serve_work_dir
cat >"$work/serve.toml" <<EOF
[run]
backend = "sim"
[serve]
max_connections = $max_connections
read_timeout_s = 600
EOF
serve_start "$build/src/cli/stagehand" "$work/serve.log" --config "$work/serve.toml"

# latencies <what>: R sequential requests; their median, 99th percentile and slowest in ms.
latencies() {
  for _ in $(seq "$requests"); do
    curl -s -o /dev/null --max-time 10 -w '%{http_code} %{time_total}\n' "$url/v1/status" || echo "000 10"
  done >"$work/times"
  local failed
  failed=$(grep -vc '^200 ' "$work/times" || true)
  sort -k2 -g "$work/times" | awk -v what="$1" -v failed="$failed" '{ t[NR] = $2 * 1000 } END {
    printf "%-40s median %.3f ms, p99 %.3f ms, slowest %.3f ms (%d requests, %d not 200)\n",
      what, t[int((NR + 1) / 2)], t[int(NR * 0.99 + 0.5)], t[NR], NR, failed }'
}

latencies "no other connection"
own=$(ls "/proc/$server_pid/fd" | wc -l)
hold_half_open "${url##*:}" "$connections" || { echo "the half-open connections were not all opened" >&2; exit 1; }
expected=$((connections < max_connections ? connections : max_connections - 1))
for _ in $(seq 200); do
  [ $(($(ls "/proc/$server_pid/fd" | wc -l) - own)) -ge "$expected" ] && break
  sleep 0.05
done
held=$(($(ls "/proc/$server_pid/fd" | wc -l) - own))
latencies "$connections half-open ($held held)"
release_half_open
kill -TERM "$server_pid"
wait "$server_pid" || true
server_pid=""
grep "connections:" "$work/serve.log"
