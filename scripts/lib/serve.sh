# Starting `stagehand serve` from a script (tests/service/*.sh, scripts/bench-serve.sh), and
# checking its answers. Source it: . scripts/lib/serve.sh
#
# serve_work_dir: a temporary folder in $work, removed at exit with the server (if any) stopped
# and the half-open connections (hold_half_open) closed.
serve_work_dir() {
  work=$(mktemp -d)
  server_pid=""
  holder_pid=""
  trap serve_clean_up EXIT
}
serve_clean_up() {
  release_half_open
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}

# serve_start <stagehand> <log> [serve arguments]: starts the server on a free loopback port in
# the background, waits until it says where it listens, and sets server_pid and url
# (http://127.0.0.1:PORT). Returns 1, with the server's log on stderr, when it does not start.
serve_start() {
  local stagehand=$1 log=$2
  shift 2
  "$stagehand" serve --listen 127.0.0.1:0 "$@" 2>"$log" &
  server_pid=$!
  url=""
  local port
  for _ in $(seq 600); do
    port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$log" 2>/dev/null | sed 's/.*://' || true)
    if [ -n "$port" ]; then
      url="http://127.0.0.1:$port"
      return 0
    fi
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.05
  done
  echo "stagehand serve did not start:" >&2
  cat "$log" >&2
  return 1
}

# hold_half_open <port> <count>: a process that opens <count> connections to 127.0.0.1:<port>,
# sends on each the start of a request's head and nothing more, and holds them until
# release_half_open (at most 300 s). Returns once all are open (1 where they were not); sets
# holder_pid. Needs <count> descriptors more than the caller's (ulimit -n).
hold_half_open() {
  local port=$1 count=$2 ready ready_fd line=""
  ready=$(mktemp -u -p "$work")
  mkfifo "$ready"
  (
    trap '' PIPE
    for _ in $(seq "$count"); do
      exec {fd}<>"/dev/tcp/127.0.0.1/$port"
      printf 'POST /v1/proofs?key=chain HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le' >&"$fd" || true
    done
    echo ready >"$ready"
    exec sleep 300
  ) &
  holder_pid=$!
  # Opened read-write, the FIFO's open does not wait for the writer; read -t guards a holder that died.
  exec {ready_fd}<>"$ready"
  read -r -t 60 -u "$ready_fd" line || true
  exec {ready_fd}<&-
  rm -f "$ready"
  [ "$line" = ready ]
}
release_half_open() {
  if [ -n "${holder_pid:-}" ]; then
    kill "$holder_pid" 2>/dev/null || true
    wait "$holder_pid" 2>/dev/null || true
  fi
  holder_pid=""
}

# expect <status> <text in the body> <what> <curl arguments...>: one request's status and body
# (fail, from tests/groth16/verify_lib.sh, counts a mismatch).
expect() {
  local want=$1 text=$2 what=$3
  shift 3
  local body code
  body=$(mktemp -p "$work")
  code=$(curl -s -o "$body" -w '%{http_code}' "$@" || true)
  if [ "$code" = "$want" ] && grep -q -- "$text" "$body"; then
    echo "ok: $what: $code $(head -c 160 "$body")"
  else
    fail "$what: expected $want with '$text', got $code: $(head -c 400 "$body")"
  fi
}
