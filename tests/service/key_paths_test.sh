#!/usr/bin/env bash
# What a client can make `stagehand serve` read, through the server with curl (no npm: the key
# comes from stagehand_make_circuit and `stagehand setup`):
#   - without [serve] key_dirs, a key by path is refused (403) saying how to allow it, and a key
#     body over max_request_mib is answered 413 from its Content-Length alone, its body unsent;
#   - with key_dirs: paths outside, ".." escapes, symbolic links out, /dev/zero, /dev/urandom,
#     /etc/passwd and /proc files are refused with 403; a FIFO without a writer, a folder and a
#     file that is no key inside with 400; each answered (curl -m 5 guards against a hang) with
#     none of the file's bytes;
#   - then the server still answers /v1/status and proves with keys loaded by path, a .zkey's and
#     a .params key's with its .r1cs (each of its files refused outside key_dirs or not regular).
# (A key truncated while the server reads it: tests/service/key_files_test.cpp, where the read
# hook makes "while" deterministic.)
#
#   key_paths_test.sh <stagehand> <stagehand_make_circuit>
set -euo pipefail
stagehand=$1
make_circuit=$2
source "$(dirname "$0")/../groth16/verify_lib.sh"
source "$(dirname "$0")/../../scripts/lib/serve.sh"
serve_work_dir

keys=$work/keys
mkdir -p "$keys/folder" "$work/outside" "$work/keys-old"
"$make_circuit" --constraints 20 --out "$work/circuit" --seed 3 >/dev/null
"$stagehand" setup --r1cs "$work/circuit/circuit.r1cs" --zkey "$keys/small.zkey" --vk "$work/circuit/vk.json" --seed 1 \
  --threads 1 >/dev/null 2>&1
"$stagehand" setup --format params --r1cs "$work/circuit/circuit.r1cs" --params "$keys/small.params" --seed 1 --threads 1 \
  >/dev/null 2>&1
cp "$work/circuit/circuit.r1cs" "$keys/small.r1cs"
cp "$keys/small.params" "$work/outside/outside.params"
cp "$keys/small.zkey" "$work/outside/outside.zkey"
cp "$keys/small.zkey" "$work/keys-old/old.zkey"
printf 'root:x:0:0:root:/root:/bin/bash\n' >"$work/outside/secret"
cp "$work/outside/secret" "$keys/passwd"
mkfifo "$keys/key.fifo"
ln -s "$work/outside/outside.zkey" "$keys/out.zkey"
ln -s "$work/outside/secret" "$keys/secret"
ln -s /dev/zero "$keys/zero.zkey"
ln -s /proc/self/environ "$keys/environ"
ln -s "$keys/small.zkey" "$keys/alias.zkey"

# load <status> <text> <path> [name]: a key by path, answered within 5 s with <status>, <text>
# in the body and none of the bytes of the secret or of the server's environment.
load() {
  local want=$1 text=$2 path=$3 name=${4:-k} body code
  body=$(mktemp -p "$work")
  code=$(curl -s -m 5 -o "$body" -w '%{http_code}' -H 'Content-Type: application/json' -d "{\"path\": \"$path\"}" \
    "$url/v1/keys/$name" || true)
  if [ "$code" = "$want" ] && grep -qF -- "$text" "$body" && ! grep -q 'root:\|PATH=' "$body"; then
    echo "ok: $path: $code $(head -c 200 "$body")"
  else
    fail "$path: expected $want with '$text' and no file content, got $code: $(head -c 400 "$body")"
  fi
}

# ---- without key_dirs ----
cat >"$work/off.toml" <<EOF
[run]
backend = "sim"
[engine]
threads = 1
[serve]
max_request_mib = 1
EOF
serve_start "$stagehand" "$work/off.log" --config "$work/off.toml" || { fail "the server did not start"; finish unreachable; }
load 403 "loading keys by path is off: list the directories keys may be read from in the configuration's [serve] key_dirs" \
  "$keys/small.zkey"
# A key's body of 10 GiB announced: 413 from the header, before a byte of the body is sent.
answer=$( (exec 3<>"/dev/tcp/127.0.0.1/${url##*:}"
  printf 'POST /v1/keys/big HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\nContent-Length: 10737418240\r\n\r\n' >&3
  timeout 5 head -c 400 <&3) || true)
if grep -q "^HTTP/1.1 413" <<<"$answer" && grep -q "over the limit" <<<"$answer"; then echo "ok: a 10 GiB key body: 413 before it is sent"
else fail "a 10 GiB key body announced: $answer"; fi
head -c $((2 * 1024 * 1024)) /dev/zero >"$work/big.zkey"
expect 413 "over the limit" "a key body over serve.max_request_mib" --data-binary @"$work/big.zkey" "$url/v1/keys/big"
kill -TERM "$server_pid"
wait "$server_pid" || fail "the server's exit status on SIGTERM: $?"
server_pid=""

# ---- with key_dirs ----
sed "s|^\[serve\]|[serve]\nkey_dirs = [\"$keys\"]|" "$work/off.toml" >"$work/on.toml"
serve_start "$stagehand" "$work/on.log" --config "$work/on.toml" || { fail "the server did not start"; finish unreachable; }
outside="outside the directories keys may be read from"
for path in "$work/outside/outside.zkey" "$keys/../outside/outside.zkey" "$keys/out.zkey" "$keys/secret" "$keys/zero.zkey" \
  "$keys/environ" /dev/zero /dev/urandom /proc/self/environ /etc/passwd "$work/keys-old/old.zkey"; do
  load 403 "$outside" "$path"
done
load 400 "is a FIFO or pipe, not a regular file" "$keys/key.fifo"
load 400 "is a directory, not a regular file" "$keys/folder"
load 400 "not a snarkjs proving key (.zkey) file (its magic is not" "$keys/passwd"
load 400 "cannot open the key" "$keys/absent.zkey"
load 400 "is not an absolute path" "keys/small.zkey"
# Still serving: its status, keys under key_dirs (one through a link inside), and a proof.
expect 200 '"queued"' "the status after the refusals" "$url/v1/status"
load 201 '"key":"small"' "$keys/small.zkey" small
load 201 '"key":"alias"' "$keys/alias.zkey" alias
expect 200 '"proof"' "a proof of a key loaded by path" --data-binary @"$work/circuit/circuit.wtns" "$url/v1/proofs?key=alias&wait=true"
# A .params key: both of its files under key_dirs, each checked as a .zkey's path is.
params_body() { printf '{"params": "%s", "r1cs": "%s"}' "$1" "$2"; }
expect 403 "$outside" "a .params key outside key_dirs" -H 'Content-Type: application/json' \
  -d "$(params_body "$work/outside/outside.params" "$keys/small.r1cs")" "$url/v1/keys/p"
expect 403 "$outside" "a .params key's .r1cs outside key_dirs" -H 'Content-Type: application/json' \
  -d "$(params_body "$keys/small.params" /etc/passwd)" "$url/v1/keys/p"
expect 400 "is a FIFO or pipe, not a regular file" "a .params key's .r1cs that is a FIFO" -H 'Content-Type: application/json' \
  -d "$(params_body "$keys/small.params" "$keys/key.fifo")" "$url/v1/keys/p"
expect 400 'the JSON body takes {' "a .params key without its .r1cs" -H 'Content-Type: application/json' \
  -d "{\"params\": \"$keys/small.params\"}" "$url/v1/keys/p"
expect 201 '"key":"p"' "a .params key loaded with its .r1cs" -H 'Content-Type: application/json' \
  -d "$(params_body "$keys/small.params" "$keys/small.r1cs")" "$url/v1/keys/p"
expect 200 '"proof"' "a proof of the .params key" --data-binary @"$work/circuit/circuit.wtns" "$url/v1/proofs?key=p&wait=true"
expect 200 '"format":"params"' "the status lists the .params key" "$url/v1/status"
kill -TERM "$server_pid"
wait "$server_pid" || fail "the server's exit status on SIGTERM: $?"
server_pid=""

# ---- a key directory that does not exist: the configuration's error, at start ----
sed "s|^\[serve\]|[serve]\nkey_dirs = [\"$work/absent\"]|" "$work/off.toml" >"$work/absent.toml"
set +e
message=$(timeout 30 "$stagehand" serve --config "$work/absent.toml" --listen 127.0.0.1:0 2>&1)
status=$?
set -e
if [ $status -ne 0 ] && grep -qF "absent.toml:6: key 'serve.key_dirs': '$work/absent': No such file or directory" <<<"$message"; then
  echo "ok: a key directory that does not exist: $message"
else fail "key_dirs naming no directory: exit $status: $message"; fi

finish "ok: stagehand serve reads keys from key_dirs only"
