# Starting `stagehand serve` from a script (tests/service/serve_test.sh, scripts/bench-serve.sh).
# Source it: . scripts/lib/serve.sh
#
# serve_work_dir: a temporary folder in $work, removed at exit with the server (if any) stopped.
serve_work_dir() {
  work=$(mktemp -d)
  server_pid=""
  trap serve_clean_up EXIT
}
serve_clean_up() {
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
    port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$log" | sed 's/.*://' || true)
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
