#!/usr/bin/env bash
# `stagehand serve` on loopback with the fixture keys (prepare_circuits.sh) and a synthetic
# 2^10 circuit (stagehand_make_circuit and `stagehand setup`, whose proofs take long enough to
# fill a queue):
#   - 32 proofs from 8 concurrent clients (wait=true, retrying on 429), every one verified by
#     snarkjs, while bad requests of each kind get their status and message;
#   - a request id sent twice answers one proof, both answers equal, with timings that add up;
#     bad priorities and deadlines, a deadline already past; the timing histograms and the
#     queue's depth by priority in the metrics;
#   - a flood of submissions against a queue of 4 gets 429 with Retry-After; a queued proof is
#     cancelled; a key unloaded with proofs queued makes them first (each waited for by the
#     server, GET ?wait=SECONDS) and then refuses new ones; keys loaded from bytes and from a path;
#   - a second server stopped (SIGTERM) with proofs queued answers every waiting request: 200
#     with a proof that verifies, or 503 saying the engine shut down before the proof ran;
#   - the connections: slow clients holding every place (max_connections) or 300 half-open
#     connections held at once, and GET /v1/status still answers within a second and a proof
#     completes; a bearer token asked over TCP (401 without it or with a wrong one); a request
#     not sent within read_timeout_s answered 408, idle connections closed after idle_timeout_s;
#     the Unix socket made with the configured mode and group, asking for no token.
#
#   serve_test.sh <stagehand> <stagehand_make_circuit> <work dir of prepare_circuits.sh>
set -euo pipefail
stagehand=$1
make_circuit=$2
circuits=$3
snarkjs="node $circuits/node_modules/snarkjs/build/cli.cjs"
snarkjs_module=$circuits/node_modules/snarkjs
source "$(dirname "$0")/../groth16/verify_lib.sh"

source "$(dirname "$0")/../../scripts/lib/serve.sh"
serve_work_dir

# Up to 300 half-open connections at once, in a holder process and in the server.
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 1024 ]; then
  ulimit -n 1024 || { echo "FAIL: ulimit -n is $(ulimit -n) and cannot be raised to 1024 (ulimit -Hn: $(ulimit -Hn))" >&2; exit 1; }
fi

# status_answers <what> [curl arguments]: GET /v1/status answers 200 within a second.
status_answers() {
  local what=$1 answer
  shift
  answer=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 1 "$@" "$url/v1/status" || true)
  if [ "${answer%% *}" = 200 ]; then echo "ok: $what: GET /v1/status answers in ${answer#* } s"; else fail "$what: GET /v1/status: $answer"; fi
}

# exchange <port> <bytes to send>: what the server answers on one connection until it closes it,
# then "<closed>"; "<open>" where it is still open after 30 s (a hang guard, not a measure).
exchange() {
  local port=$1 request=$2
  (
    exec 3<>"/dev/tcp/127.0.0.1/$port"
    printf '%b' "$request" >&3
    if timeout 30 cat <&3; then echo "<closed>"; else echo "<open>"; fi
  ) || true
}

# start_server <config> <log> [serve arguments]: sets server_pid and url.
start_server() {
  local config=$1 log=$2
  shift 2
  if ! serve_start "$stagehand" "$log" --config "$config" "$@"; then
    fail "the server did not start"
    finish unreachable
  fi
}

# A synthetic circuit and its test-only keys.
"$make_circuit" --constraints 1019 --out "$work/synthetic" --seed 5 >/dev/null
"$stagehand" setup --r1cs "$work/synthetic/circuit.r1cs" --zkey "$work/synthetic/circuit.zkey" --vk "$work/synthetic/vk.json" 2>/dev/null

cat >"$work/serve.toml" <<EOF
[run]
backend = "sim"
[engine]
queue_capacity = 4
max_batch = 8
[serve]
max_request_mib = 1
max_connections = 32
request_timeout_s = 120
key_dirs = ["$circuits", "$work/synthetic"]
EOF
start_server "$work/serve.toml" "$work/serve.log" --key multiplier="$circuits/multiplier/multiplier.zkey" \
  --key linear="$circuits/linear/linear.zkey" --key chain="$circuits/chain/chain.zkey"

# ---- 32 proofs from 8 clients, each retrying on 429 as Retry-After asks ----
mkdir -p "$work/answers"
client() {
  local n=$1 circuit code
  local names=(multiplier linear chain)
  for j in 1 2 3 4; do
    circuit=${names[$(((n + j) % 3))]}
    for attempt in $(seq 600); do
      code=$(curl -s -o "$work/answers/$circuit-$n-$j.json" -w '%{http_code}' --data-binary @"$circuits/$circuit/$circuit.wtns" \
        "$url/v1/proofs?key=$circuit&wait=true" || true)
      [ "$code" = 429 ] || break
      sleep 0.1
    done
    [ "$code" = 200 ] || echo "client $n, proof $j ($circuit): $code $(head -c 300 "$work/answers/$circuit-$n-$j.json")" >>"$work/client-errors"
  done
}
clients=()
for n in 1 2 3 4 5 6 7 8; do
  client $n &
  clients+=($!)
done

# ---- meanwhile, bad requests of each kind ----
head -c 300 "$circuits/chain/chain.wtns" >"$work/truncated.wtns"
head -c $((2 * 1024 * 1024)) /dev/zero >"$work/big.bin"
expect 404 "no key named 'nope'" "an unknown key" --data-binary @"$circuits/chain/chain.wtns" "$url/v1/proofs?key=nope"
expect 400 "truncated" "a truncated witness" --data-binary @"$work/truncated.wtns" "$url/v1/proofs?key=chain&wait=true"
expect 400 "another circuit" "a witness for another circuit" --data-binary @"$circuits/chain/chain.wtns" "$url/v1/proofs?key=multiplier"
expect 400 "not even a header" "a body that is no witness" --data-binary "hello" "$url/v1/proofs?key=chain"
expect 413 "over the limit" "a body over serve.max_request_mib" --data-binary @"$work/big.bin" "$url/v1/proofs?key=chain"
expect 400 "must name the key" "no key in the query" --data-binary @"$circuits/chain/chain.wtns" "$url/v1/proofs"
expect 400 "unknown query parameter 'colour'" "an unknown parameter" --data-binary @"$circuits/chain/chain.wtns" "$url/v1/proofs?key=chain&colour=red"
expect 400 "expected true or false" "a bad wait" --data-binary @"$circuits/chain/chain.wtns" "$url/v1/proofs?key=chain&wait=yes"
expect 404 "no route" "an unknown route" "$url/v2/everything"
expect 405 "not allowed" "a wrong method" -X PUT "$url/v1/status"
expect 400 "not a proof id" "a bad proof id" "$url/v1/proofs/abc"
expect 400 "wait=soon: expected the seconds to wait" "a bad wait for a proof's end" "$url/v1/proofs/1?wait=soon"
expect 400 "unknown query parameter 'colour'" "an unknown parameter of a proof's state" "$url/v1/proofs/1?colour=red"
expect 404 "no proof 99999" "an unknown proof" "$url/v1/proofs/99999"
expect 400 "not a key name" "a bad key name" -X POST --data-binary @"$circuits/linear/linear.zkey" "$url/v1/keys/bad%20name"
expect 400 "the request body: not a snarkjs proving key" "a witness sent as a key" --data-binary @"$circuits/linear/linear.wtns" "$url/v1/keys/wrong"
expect 400 "JSON" "a key's JSON without a path" -H 'Content-Type: application/json' -d '{"file": "x"}' "$url/v1/keys/wrong"
expect 400 "cannot open" "a key path that does not exist" -H 'Content-Type: application/json' -d "{\"path\": \"$work/synthetic/nonexistent.zkey\"}" "$url/v1/keys/wrong"
expect 409 "loaded already" "a key loaded twice" -H 'Content-Type: application/json' -d "{\"path\": \"$circuits/chain/chain.zkey\"}" "$url/v1/keys/chain"
expect 404 "no key named 'ghost'" "unloading an unknown key" -X DELETE "$url/v1/keys/ghost"
# Not HTTP at all: a 400, and the connection closed.
garbage=$( (exec 3<>"/dev/tcp/127.0.0.1/${url##*:}"; printf 'NOT HTTP AT ALL\r\n\r\n' >&3; timeout 10 cat <&3) || true)
if grep -q "^HTTP/1.1 400" <<<"$garbage"; then echo "ok: a request that is not HTTP: 400"; else fail "not HTTP: $garbage"; fi

for pid in "${clients[@]}"; do wait "$pid"; done
if [ -s "$work/client-errors" ]; then fail "clients: $(cat "$work/client-errors")"; fi
count=$(ls "$work/answers" | wc -l)
[ "$count" = 32 ] || fail "32 answers expected, $count found"
for circuit in multiplier linear chain; do
  verify_responses "$circuits/$circuit/vk.json" "$work/answers/$circuit"-*.json
done
expect 200 '"done":32' "the status counts the 32 proofs" "$url/v1/status"
expect 200 'stagehand_proofs_total{outcome="done"} 32' "the metrics count them" "$url/metrics"
expect 200 'stagehand_proof_seconds_count 32' "the histogram counts them" "$url/metrics"
expect 200 'stagehand_gpu_pinned_allocations_total{gpu="0"} [1-9]' "the metrics count the pinned buffers made" "$url/metrics"

# ---- priorities, request ids, deadlines and each proof's timings ----
chain_wtns=$circuits/chain/chain.wtns
expect 400 "expected critical, high, normal or low" "a bad priority" --data-binary @"$chain_wtns" "$url/v1/proofs?key=chain&priority=urgent"
expect 400 "expected whole milliseconds" "a deadline that is no number" --data-binary @"$chain_wtns" "$url/v1/proofs?key=chain&deadline_ms=soon"
expect 400 "deadline passed" "a deadline already past" --data-binary @"$chain_wtns" "$url/v1/proofs?key=chain&deadline_ms=-5"
expect 400 "request_id= is empty" "an empty request id" --data-binary @"$chain_wtns" "$url/v1/proofs?key=chain&request_id="
accepted_before=$(curl -s "$url/v1/status" | grep -o '"accepted":[0-9]*' | grep -o '[0-9]*')
for n in 1 2; do
  curl -s -o "$work/request-$n.json" --data-binary @"$chain_wtns" \
    "$url/v1/proofs?key=chain&request_id=farm-job-1&priority=critical&deadline_ms=60000&wait=true"
done
accepted_after=$(curl -s "$url/v1/status" | grep -o '"accepted":[0-9]*' | grep -o '[0-9]*')
[ "$accepted_after" = $((accepted_before + 1)) ] || fail "a request id sent twice: $((accepted_after - accepted_before)) proofs accepted"
# Both answers are one proof's; its timings are all there and add up to its total within 1%.
if node -e '
  const fs = require("fs");
  const [a, b] = process.argv.slice(1).map((f) => JSON.parse(fs.readFileSync(f)));
  const fail = (m) => { console.error(m); process.exit(1); };
  if (a.id !== b.id || a.repeated || b.repeated !== true) fail(`ids ${a.id}, ${b.id}; repeated ${a.repeated}, ${b.repeated}`);
  for (const field of ["proof", "public", "timings", "state"]) {
    if (JSON.stringify(a[field]) !== JSON.stringify(b[field])) fail(`the answers differ in ${field}`);
  }
  if (a.priority !== "critical" || a.request_id !== "farm-job-1") fail(`priority ${a.priority}, request_id ${a.request_id}`);
  const parts = ["queue_s", "setup_s", "host_before_s", "gpu_s", "host_after_s", "check_s"];
  for (const part of [...parts, "total_s"]) {
    if (typeof a.timings[part] !== "number" || a.timings[part] < 0) fail(`timings.${part}: ${a.timings[part]}`);
  }
  const sum = parts.reduce((total, part) => total + a.timings[part], 0);
  if (!(a.timings.total_s > 0) || Math.abs(sum - a.timings.total_s) > 0.01 * a.timings.total_s) fail(`parts ${sum} against ${a.timings.total_s}`);
' "$work/request-1.json" "$work/request-2.json"; then
  echo "ok: a request id sent twice answers one proof, with its timings adding up"
else
  fail "a request id sent twice: $(head -c 600 "$work/request-1.json") / $(head -c 600 "$work/request-2.json")"
fi
verify_responses "$circuits/chain/vk.json" "$work/request-1.json"
expect 409 "names proof" "a request id naming another key's proof" --data-binary @"$circuits/linear/linear.wtns" \
  "$url/v1/proofs?key=linear&request_id=farm-job-1"
expect 200 'stagehand_proof_timing_seconds_count{key="chain",priority="critical",part="total"} 1' "the timing histograms count it" "$url/metrics"
expect 200 'stagehand_proof_timing_seconds_bucket{key="chain",priority="normal",part="gpu",le="+Inf"} [1-9]' "by key, priority and part" "$url/metrics"
expect 200 'stagehand_queue_depth_by_priority{priority="low"} 0' "the queue's depth by priority" "$url/metrics"

# ---- keys from bytes and from a path; a flood against the queue of 4 ----
expect 201 '"key":"synthetic"' "a key from its bytes" --data-binary @"$work/synthetic/circuit.zkey" "$url/v1/keys/synthetic"
expect 201 '"key":"synthetic2"' "a key from a path" -H 'Content-Type: application/json' -d "{\"path\": \"$work/synthetic/circuit.zkey\"}" "$url/v1/keys/synthetic2"
mkdir -p "$work/flood"
flood=()
for n in $(seq 16); do
  curl -s -D "$work/flood/$n.headers" -o "$work/flood/$n.json" --data-binary @"$work/synthetic/circuit.wtns" "$url/v1/proofs?key=synthetic" &
  flood+=($!)
done
for pid in "${flood[@]}"; do wait "$pid"; done
accepted=$(grep -l '^HTTP/1.1 202' "$work/flood"/*.headers | wc -l)
refused=$(grep -l '^HTTP/1.1 429' "$work/flood"/*.headers | wc -l)
with_retry=$(grep -li '^Retry-After: 1' "$work/flood"/*.headers | wc -l)
if [ "$accepted" -ge 1 ] && [ "$refused" -ge 1 ] && [ $((accepted + refused)) = 16 ] && [ "$refused" = "$with_retry" ] &&
  grep -q "queue is full" $(grep -l '^HTTP/1.1 429' "$work/flood"/*.headers | head -1 | sed 's/headers$/json/'); then
  echo "ok: a flood of 16: $accepted accepted, $refused refused with 429 and Retry-After"
else
  fail "the flood: $accepted accepted, $refused refused ($with_retry with Retry-After) of 16"
fi
# A proof of the other key waits while the flood's run (its proofs join it) goes on: a run
# proves one key's proofs, so it stays queued and is cancelled at once. (The flood's own last
# proof is no such proof: it may have joined the running run before the cancel comes.)
for attempt in $(seq 600); do
  code=$(curl -s -o "$work/queued.json" -w '%{http_code}' --data-binary @"$work/synthetic/circuit.wtns" "$url/v1/proofs?key=synthetic2" || true)
  [ "$code" = 429 ] || break
  sleep 0.05
done
[ "$code" = 202 ] || fail "a proof of the second key: expected 202, got $code: $(head -c 400 "$work/queued.json")"
last=$(grep -o '"id":"[0-9]*"' "$work/queued.json" | grep -o '[0-9]*')
expect 200 '"state":"cancelled"' "cancelling a queued proof" -X DELETE "$url/v1/proofs/$last"
expect 200 '"state":"cancelled"' "its state" "$url/v1/proofs/$last"
expect 200 '"state":"cancelled"' "an ended proof's state, at once though a wait is asked" --max-time 10 "$url/v1/proofs/$last?wait=60"
expect 409 "has ended" "cancelling it again" -X DELETE "$url/v1/proofs/$last"

# A key unloaded with proofs queued: they are made first; new ones are refused at once.
ids=()
for n in 1 2 3; do
  for attempt in $(seq 600); do
    code=$(curl -s -o "$work/u$n.json" -w '%{http_code}' --data-binary @"$work/synthetic/circuit.wtns" "$url/v1/proofs?key=synthetic2" || true)
    [ "$code" = 429 ] || break
    sleep 0.05
  done
  ids+=("$(grep -o '[0-9][0-9]*' "$work/u$n.json" | head -1)")
done
expect 200 '"proofs_left":[1-9]' "unloading a key with proofs queued" -X DELETE "$url/v1/keys/synthetic2"
expect 404 "being unloaded" "a proof for a key being unloaded" --data-binary @"$work/synthetic/circuit.wtns" "$url/v1/proofs?key=synthetic2"
# Each one's end, waited for by the server: GET ?wait=SECONDS answers once the proof has ended
# (or the wait has run out, with its state then).
for id in "${ids[@]}"; do
  curl -s -o "$work/unloaded-$id.json" "$url/v1/proofs/$id?wait=120"
  grep -q '"state":"\(done\|failed\|cancelled\)"' "$work/unloaded-$id.json" ||
    fail "proof $id not ended after a wait of 120 s: $(head -c 400 "$work/unloaded-$id.json")"
done
verify_responses "$work/synthetic/vk.json" "$work"/unloaded-*.json
for _ in $(seq 600); do
  curl -s "$url/v1/status" | grep -q '"name":"synthetic2"' || break
  sleep 0.05
done
if grep -q '"name":"synthetic2"' <(curl -s "$url/v1/status"); then fail "synthetic2 still loaded after its proofs"; else echo "ok: the unloaded key is gone once its proofs are done"; fi

# ---- slow clients in every place (max_connections = 32): the longest waiting make room ----
hold_half_open "${url##*:}" 100 || fail "the 100 half-open connections were not all opened"
status_answers "with 100 half-open connections against max_connections = 32"
release_half_open

kill -TERM "$server_pid"
wait "$server_pid" || fail "the server's exit status on SIGTERM: $?"
server_pid=""
made_room=$(grep -o '[0-9]* closed to make room' "$work/serve.log" | grep -o '^[0-9]*' || echo 0)
if [ "$made_room" -ge 68 ]; then echo "ok: $made_room connections closed to make room"
else fail "$made_room connections closed to make room, not 68 or more: $(tail -2 "$work/serve.log")"; fi

# ---- 300 half-open connections held at once; a token asked over TCP ----
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$token" >"$work/token"
chmod 600 "$work/token"
cat >"$work/connections.toml" <<EOF
[run]
backend = "sim"
[serve]
max_connections = 400
read_timeout_s = 120
token_file = "$work/token"
EOF
start_server "$work/connections.toml" "$work/connections.log" --key chain="$circuits/chain/chain.zkey"
auth=(-H "Authorization: Bearer $token")
expect 401 "asks for a token" "a request without the token" "$url/v1/status"
expect 401 "not this server's" "a wrong token of the same length" -H "Authorization: Bearer ${token%?}x" "$url/v1/status"
expect 401 "not this server's" "a prefix of the token" -H "Authorization: Bearer ${token:0:24}" "$url/v1/status"
expect 401 'not \\"Bearer' "another scheme" -H "Authorization: Basic $token" "$url/metrics"
expect 401 "asks for a token" "a proof without the token" --data-binary @"$circuits/chain/chain.wtns" "$url/v1/proofs?key=chain"
expect 200 '"queued":0' "the status with the token" "${auth[@]}" "$url/v1/status"
expect 200 'stagehand_queue_depth 0' "the metrics with the token" -H "authorization: bearer  $token" "$url/metrics"
# The server's descriptors: its own, then one more for each connection it holds.
own=$(ls "/proc/$server_pid/fd" | wc -l)
hold_half_open "${url##*:}" 300 || fail "the 300 half-open connections were not all opened"
for _ in $(seq 200); do
  [ "$(ls "/proc/$server_pid/fd" | wc -l)" -ge $((own + 300)) ] && break
  sleep 0.05
done
held=$(($(ls "/proc/$server_pid/fd" | wc -l) - own))
[ "$held" -ge 300 ] || fail "the server holds $held connections: not all of the 300 half-open ones"
status_answers "with 300 half-open connections held" "${auth[@]}"
code=$(timeout 120 curl -s -o "$work/held-proof.json" -w '%{http_code}' "${auth[@]}" --data-binary @"$circuits/chain/chain.wtns" \
  "$url/v1/proofs?key=chain&wait=true" || true)
[ "$code" = 200 ] || fail "a proof with 300 half-open connections held: $code $(head -c 400 "$work/held-proof.json")"
verify_responses "$circuits/chain/vk.json" "$work/held-proof.json"
held=$(($(ls "/proc/$server_pid/fd" | wc -l) - own))
[ "$held" -ge 300 ] || fail "after the proof the server holds $held connections: half-open ones were closed below max_connections"
release_half_open
kill -TERM "$server_pid"
wait "$server_pid" || fail "the token server's exit status on SIGTERM: $?"
server_pid=""
grep -q " 5 refused without the token" "$work/connections.log" || fail "the token refusals: $(tail -1 "$work/connections.log")"

# ---- read and idle deadlines ----
cat >"$work/deadlines.toml" <<EOF
[run]
backend = "sim"
[serve]
read_timeout_s = 1
idle_timeout_s = 1
EOF
start_server "$work/deadlines.toml" "$work/deadlines.log"
port=${url##*:}
kept=$(exchange "$port" 'GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
if grep -q "^HTTP/1.1 200" <<<"$kept" && ! grep -qi "^connection: close" <<<"$kept" && grep -q "<closed>" <<<"$kept"; then
  echo "ok: a kept-alive connection is closed once idle"
else
  fail "a kept-alive connection after its answer: $kept"
fi
silent=$(exchange "$port" '')
[ "$silent" = "<closed>" ] || fail "a connection that sends nothing: $silent"
slow=$(exchange "$port" 'GET /v1/status HTTP/1.1\r\nHo')
if grep -q "^HTTP/1.1 408" <<<"$slow" && grep -q "serve.read_timeout_s" <<<"$slow" && grep -q "<closed>" <<<"$slow"; then
  echo "ok: a request not sent within read_timeout_s: 408 and closed"
else
  fail "a half-sent request: $slow"
fi
kill -TERM "$server_pid"
wait "$server_pid" || fail "the deadlines server's exit status on SIGTERM: $?"
server_pid=""
grep -q "3 accepted, 0 closed to make room, 1 timed out reading a request, 2 idle" "$work/deadlines.log" ||
  fail "the deadlines' counts: $(tail -1 "$work/deadlines.log")"

# ---- a server stopped with proofs queued answers each waiting request ----
cat >"$work/stop.toml" <<EOF
[run]
backend = "sim"
[engine]
max_batch = 1
EOF
start_server "$work/stop.toml" "$work/stop.log" --key synthetic="$work/synthetic/circuit.zkey"
mkdir -p "$work/stop"
waiting=()
for n in $(seq 8); do
  curl -s -o "$work/stop/$n.json" -w '%{http_code}' --data-binary @"$work/synthetic/circuit.wtns" \
    "$url/v1/proofs?key=synthetic&wait=true" >"$work/stop/$n.code" &
  waiting+=($!)
done
for _ in $(seq 400); do
  curl -s "$url/v1/status" | grep -q '"accepted":8' && break
  sleep 0.02
done
kill -TERM "$server_pid"
for pid in "${waiting[@]}"; do wait "$pid" || true; done
wait "$server_pid" || fail "the stopped server's exit status: $?"
server_pid=""
made=0
failed_clearly=0
for n in $(seq 8); do
  code=$(cat "$work/stop/$n.code")
  if [ "$code" = 200 ]; then
    made=$((made + 1))
  elif [ "$code" = 503 ] && grep -q "the engine shut down before this proof ran" "$work/stop/$n.json"; then
    failed_clearly=$((failed_clearly + 1))
  else
    fail "a request waiting when the server stopped: $code $(cat "$work/stop/$n.json")"
  fi
done
queued_at_stop=$(grep -o 'stopping: [0-9]* queued' "$work/stop.log" | grep -o '[0-9][0-9]*' || echo 0)
if [ $((made + failed_clearly)) = 8 ] && [ "$failed_clearly" -ge 1 ] && [ "$failed_clearly" = "$queued_at_stop" ]; then
  echo "ok: stopped with $queued_at_stop queued: $made made, $failed_clearly answered 503 saying so"
else
  fail "stopped with $queued_at_stop queued: $made made, $failed_clearly failed clearly of 8"
fi
if [ "$made" -ge 1 ]; then
  verify_responses "$work/synthetic/vk.json" $(grep -l '"proof"' "$work/stop"/*.json)
fi

# ---- only on loopback ----
set +e
message=$(timeout 30 "$stagehand" serve --listen 0.0.0.0:0 2>&1)
status=$?
set -e
if [ $status -ne 0 ] && grep -q "not a loopback address" <<<"$message"; then echo "ok: 0.0.0.0 is refused: $message"
else fail "--listen 0.0.0.0:0: exit $status: $message"; fi

# ---- on a Unix socket: its mode and group as configured, no token asked ----
socket_group=$(id -gn)
if [ "$(id -u)" = 0 ] && getent group daemon >/dev/null; then socket_group=daemon; fi
cat >"$work/unix.toml" <<EOF
[run]
backend = "sim"
[serve]
socket_mode = "0640"
socket_group = "$socket_group"
token_file = "$work/token"
EOF
"$stagehand" serve --config "$work/unix.toml" --listen "unix:$work/serve.sock" --key chain="$circuits/chain/chain.zkey" 2>"$work/unix.log" &
server_pid=$!
for _ in $(seq 200); do
  grep -q "listening on unix:" "$work/unix.log" && break
  sleep 0.05
done
mode=$(stat -c '%a %g' "$work/serve.sock" || true)
if [ "$mode" = "640 $(getent group "$socket_group" | cut -d: -f3)" ]; then echo "ok: the socket's mode and group: $mode ($socket_group)"
else fail "the socket's mode and group: '$mode', expected 640 and $socket_group"; fi
code=$(curl -s -o "$work/unix-answer.json" -w '%{http_code}' --unix-socket "$work/serve.sock" --data-binary @"$circuits/chain/chain.wtns" \
  "http://localhost/v1/proofs?key=chain&wait=true" || true)
[ "$code" = 200 ] || fail "a proof over the Unix socket: $code $(cat "$work/unix-answer.json")"
verify_responses "$circuits/chain/vk.json" "$work/unix-answer.json"
kill -TERM "$server_pid"
wait "$server_pid" || fail "the Unix socket server's exit status: $?"
server_pid=""
[ ! -e "$work/serve.sock" ] || fail "the socket file is left behind"

finish "ok: stagehand serve"
