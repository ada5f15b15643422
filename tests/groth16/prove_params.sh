#!/usr/bin/env bash
# `stagehand prove --params F --r1cs R --wtns W` on the fixture circuits: parameters from `stagehand
# setup --format params`, the proof verified by `snarkjs groth16 verify` against `stagehand
# export-vk`'s vk (a tampered public signal rejected), the same --seed giving the same proof, and
# --filecoin-proof's 192 bytes decoded by @noble/curves (zcash's compressed encoding) into the
# proof.json's points. With --config naming a functional simulator's deployment the proofs go
# through the device path (proving/assignment_batch.hpp, as the C ABI's) and the same --seed gives
# the CPU reference's bytes, its key sets resident, partly streamed or all streamed on capped
# devices; a device too small even for streaming is an error that says so. Options that do not go
# together, and a witness of another circuit, are errors that say so.
#
#   prove_params.sh <stagehand> <circuits dir> <noble dir (node_modules/@noble/curves inside)>
set -euo pipefail
stagehand=$1
circuits=$2
noble=$3
source "$(dirname "$0")/verify_lib.sh"
snarkjs="node $circuits/node_modules/snarkjs/build/cli.cjs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# filecoin_matches <proof.bin> <proof.json>: the 192 bytes are A, B, C of proof.json compressed.
filecoin_matches() {
  node --input-type=module - "$noble" "$1" "$2" <<'NODE'
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const [noble, binary, json] = process.argv.slice(2);
const { bls12_381 } = await import(pathToFileURL(resolve(noble, 'node_modules/@noble/curves/bls12-381.js')).href);
const bytes = readFileSync(binary);
if (bytes.length !== 192) throw new Error(`${binary}: ${bytes.length} bytes, not 192`);
const proof = JSON.parse(readFileSync(json, 'utf8'));
const a = bls12_381.G1.Point.fromHex(bytes.subarray(0, 48)).toAffine();
const b = bls12_381.G2.Point.fromHex(bytes.subarray(48, 144)).toAffine();
const c = bls12_381.G1.Point.fromHex(bytes.subarray(144, 192)).toAffine();
const same = (value, text) => value === BigInt(text);
const ok = same(a.x, proof.pi_a[0]) && same(a.y, proof.pi_a[1]) && same(c.x, proof.pi_c[0]) && same(c.y, proof.pi_c[1]) &&
  same(b.x.c0, proof.pi_b[0][0]) && same(b.x.c1, proof.pi_b[0][1]) && same(b.y.c0, proof.pi_b[1][0]) && same(b.y.c1, proof.pi_b[1][1]);
if (!ok) throw new Error(`${binary} does not hold ${json}'s points`);
NODE
}

for circuit in multiplier linear chain; do
  r1cs=$circuits/$circuit/$circuit.r1cs
  wtns=$circuits/$circuit/$circuit.wtns
  "$stagehand" setup --format params --r1cs "$r1cs" --params "$work/$circuit.params" --seed 13 2>/dev/null
  "$stagehand" export-vk --params "$work/$circuit.params" --out "$work/$circuit.vk.json" 2>/dev/null
  for run in 1 2; do
    "$stagehand" prove --params "$work/$circuit.params" --r1cs "$r1cs" --wtns "$wtns" --seed 5 \
      --proof "$work/$circuit.proof-$run.json" --public "$work/$circuit.public.json" --filecoin-proof "$work/$circuit.proof-$run.bin" 2>/dev/null ||
      fail "stagehand prove --params failed on $circuit"
  done
  verify "$work/$circuit.vk.json" "$work/$circuit.public.json" "$work/$circuit.proof-1.json" ok "stagehand prove --params, $circuit"
  tamper "$work/$circuit.public.json" "$work/$circuit.tampered.json"
  verify "$work/$circuit.vk.json" "$work/$circuit.tampered.json" "$work/$circuit.proof-1.json" reject \
    "stagehand prove --params, $circuit: a changed public signal"
  cmp -s "$work/$circuit.proof-1.bin" "$work/$circuit.proof-2.bin" || fail "$circuit: the same --seed gave two proofs"
  if filecoin_matches "$work/$circuit.proof-1.bin" "$work/$circuit.proof-1.json"; then
    echo "ok: $circuit: --filecoin-proof holds proof.json's points, compressed as noble reads them"
  else
    fail "$circuit: --filecoin-proof does not decode to proof.json's points"
  fi
done

# The device path on the functional simulator: the same --seed, the same bytes as the CPU's above.
printf '[run]\nbackend = "sim"\n' >"$work/sim.toml"
for circuit in multiplier linear chain; do
  r1cs=$circuits/$circuit/$circuit.r1cs
  "$stagehand" prove --params "$work/$circuit.params" --r1cs "$r1cs" --wtns "$circuits/$circuit/$circuit.wtns" --seed 5 \
    --config "$work/sim.toml" --proof "$work/$circuit.device.json" --public "$work/$circuit.device-public.json" \
    --filecoin-proof "$work/$circuit.device.bin" 2>"$work/$circuit.device.log" ||
    fail "stagehand prove --params --config failed on $circuit: $(cat "$work/$circuit.device.log")"
  grep -q "proving on 1 x simulated" "$work/$circuit.device.log" || fail "$circuit: --config did not prove on the simulator"
  if cmp -s "$work/$circuit.proof-1.bin" "$work/$circuit.device.bin" && cmp -s "$work/$circuit.proof-1.json" "$work/$circuit.device.json"
  then echo "ok: $circuit: the device path's proof is the CPU reference's, byte for byte"
  else fail "$circuit: the device path's proof differs from the CPU reference's"; fi
done
# chain's key on capped devices (2 KiB stream buffers): some sets streamed, then all; the same bytes.
for case in "0.00007 a, b_g1 resident; h, l, b_g2 streamed" "0.00005 h, l, a, b_g1, b_g2 streamed"; do
  cap=${case%% *}
  sets=${case#* }
  printf '[run]\nbackend = "sim"\n[gpus]\nvram_cap_gib = %s\nsafety_margin_mib = 0\n' "$cap" >"$work/capped.toml"
  c=$circuits/chain/chain
  "$stagehand" prove --params "$work/chain.params" --r1cs "$c.r1cs" --wtns "$c.wtns" --seed 5 --config "$work/capped.toml" \
    --stream-buffer-mib 0.002 --proof "$work/capped.json" --public "$work/capped-public.json" \
    --filecoin-proof "$work/capped.bin" 2>"$work/capped.log" || fail "chain capped at $cap GiB: $(cat "$work/capped.log")"
  grep -qF "the key's sets: $sets" "$work/capped.log" || fail "chain capped at $cap GiB: not '$sets': $(cat "$work/capped.log")"
  if cmp -s "$work/chain.proof-1.bin" "$work/capped.bin"; then echo "ok: chain, $sets: the CPU reference's bytes"
  else fail "chain, $sets: the proof differs from the CPU reference's"; fi
done

# `stagehand serve` on the simulator with the .params keys (loaded by path with their .r1cs) beside
# chain's .zkey, proved interleaved: each proof verified by snarkjs against export-vk's vk, and with
# [engine] seed = 5 proof ID of a .params key is `prove --params --seed 5+ID-1`'s, byte for byte; an
# .r1cs of another circuit, a path outside key_dirs and a witness of another circuit refused; the
# status naming each key's format and curve; a .params key unloaded.
snarkjs_module=$circuits/node_modules/snarkjs
source "$(dirname "$0")/../../scripts/lib/serve.sh"
# The server is stopped and $work removed at exit (serve.sh's serve_clean_up).
server_pid=""
holder_pid=""
trap serve_clean_up EXIT
printf '[run]\nbackend = "sim"\n[engine]\nthreads = 1\nseed = 5\n[serve]\nkey_dirs = ["%s", "%s"]\n' "$work" "$circuits" \
  >"$work/serve.toml"
# serve_params_proof <key> <wtns> <answer file>: 200 with a proof of BLS12-381.
serve_params_proof() {
  local code
  code=$(curl -s -o "$3" -w '%{http_code}' --data-binary @"$2" "$url/v1/proofs?key=$1&wait=true" || true)
  if [ "$code" = 200 ]; then echo "ok: a proof of key $1 from serve"; else fail "a proof of key $1 from serve: $code $(head -c 400 "$3")"; fi
}
if serve_start "$stagehand" "$work/serve.log" --config "$work/serve.toml" --key chain_zkey="$circuits/chain/chain.zkey"; then
  for circuit in multiplier chain; do
    expect 201 "\"key\":\"$circuit\"" "a .params key loaded with its .r1cs" -H 'Content-Type: application/json' \
      -d "{\"params\": \"$work/$circuit.params\", \"r1cs\": \"$circuits/$circuit/$circuit.r1cs\"}" "$url/v1/keys/$circuit"
  done
  for circuit in multiplier chain; do
    serve_params_proof "$circuit" "$circuits/$circuit/$circuit.wtns" "$work/serve-$circuit-1.json"
    serve_params_proof chain_zkey "$circuits/chain/chain.wtns" "$work/serve-zkey-$circuit.json"
    serve_params_proof "$circuit" "$circuits/$circuit/$circuit.wtns" "$work/serve-$circuit-2.json"
    verify_responses "$work/$circuit.vk.json" "$work/serve-$circuit"-*.json
    # The engine's r and s are its seed plus the proof's id less one: `prove --seed` of that.
    id=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).id)' "$work/serve-$circuit-1.json")
    "$stagehand" prove --params "$work/$circuit.params" --r1cs "$circuits/$circuit/$circuit.r1cs" \
      --wtns "$circuits/$circuit/$circuit.wtns" --seed $((5 + id - 1)) --proof "$work/$circuit.served-seed.json" \
      --public "$work/$circuit.served-public.json" 2>/dev/null || fail "stagehand prove --params --seed $((5 + id - 1)) failed"
    if node -e '
      const fs = require("fs");
      const served = JSON.parse(fs.readFileSync(process.argv[1], "utf8")).proof;
      const cpu = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
      process.exit(JSON.stringify(served) === JSON.stringify(cpu) ? 0 : 1);
    ' "$work/serve-$circuit-1.json" "$work/$circuit.served-seed.json"; then
      echo "ok: $circuit: serve's proof $id is prove --params --seed $((5 + id - 1))'s"
    else fail "$circuit: serve's proof $id differs from prove --params --seed $((5 + id - 1))'s"; fi
  done
  verify_responses "$circuits/chain/vk.json" "$work"/serve-zkey-*.json
  expect 400 "is not the circuit of $work/multiplier.params" "an .r1cs of another circuit" -H 'Content-Type: application/json' \
    -d "{\"params\": \"$work/multiplier.params\", \"r1cs\": \"$circuits/chain/chain.r1cs\"}" "$url/v1/keys/wrong"
  expect 403 "outside the directories keys may be read from" "a .params key outside key_dirs" -H 'Content-Type: application/json' \
    -d '{"params": "/etc/passwd", "r1cs": "/etc/passwd"}' "$url/v1/keys/outside"
  expect 400 "values, but the circuit $circuits/chain/chain.r1cs has" "a witness of another circuit" --data-binary @"$circuits/multiplier/multiplier.wtns" \
    "$url/v1/proofs?key=chain"
  curl -s "$url/v1/status" >"$work/status.json"
  if node -e '
    const keys = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).keys;
    const seen = Object.fromEntries(keys.map((key) => [key.name, key.format + " " + key.curve]));
    process.exit(seen.chain === "params bls12381" && seen.multiplier === "params bls12381" && seen.chain_zkey === "zkey bls12381" ? 0 : 1);
  ' "$work/status.json"; then echo "ok: the status lists the .params keys with their format and curve"
  else fail "the status's keys: $(head -c 600 "$work/status.json")"; fi
  expect 200 '"proofs_left":0' "a .params key unloaded" -X DELETE "$url/v1/keys/multiplier"
  expect 404 "no key named 'multiplier'" "a proof of the unloaded .params key" --data-binary @"$circuits/multiplier/multiplier.wtns" \
    "$url/v1/proofs?key=multiplier"
else
  fail "stagehand serve did not start"
fi

# expect_error TEXT COMMAND...: the command fails and says TEXT
expect_error() {
  local text=$1
  shift
  if "$@" >"$work/out.log" 2>&1; then fail "'$*' succeeded"; return; fi
  if grep -qF -- "$text" "$work/out.log"; then echo "ok: refused: $text"; else fail "'$*' did not say '$text': $(cat "$work/out.log")"; fi
}
m=$circuits/multiplier/multiplier
expect_error "needs --r1cs" "$stagehand" prove --params "$work/multiplier.params" --wtns "$m.wtns"
expect_error "give one key" "$stagehand" prove --params "$work/multiplier.params" --zkey "$m.zkey" --r1cs "$m.r1cs" --wtns "$m.wtns"
expect_error "give one key" "$stagehand" prove --wtns "$m.wtns"
expect_error "--filecoin-proof: goes with --params" "$stagehand" prove --zkey "$m.zkey" --wtns "$m.wtns" --filecoin-proof "$work/x.bin"
expect_error "do not apply" "$stagehand" prove --params "$work/multiplier.params" --r1cs "$m.r1cs" --wtns "$m.wtns" --no-verify
expect_error "chain.wtns with $m.r1cs against $work/multiplier.params: the witness has" \
  "$stagehand" prove --params "$work/multiplier.params" --r1cs "$m.r1cs" --wtns "$circuits/chain/chain.wtns" --proof "$work/x.json"
expect_error "chain.wtns with $circuits/chain/chain.r1cs against $work/multiplier.params: circuit 0: aux_assignment_size is" \
  "$stagehand" prove --params "$work/multiplier.params" --r1cs "$circuits/chain/chain.r1cs" --wtns "$circuits/chain/chain.wtns" --proof "$work/x.json"
printf '[run]\nbackend = "sim"\n[gpus]\nvram_cap_gib = 0.00001\nsafety_margin_mib = 0\n' >"$work/tiny.toml"
expect_error "even with every set streamed" "$stagehand" prove --params "$work/chain.params" --r1cs "$circuits/chain/chain.r1cs" \
  --wtns "$circuits/chain/chain.wtns" --config "$work/tiny.toml" --proof "$work/x.json"
[ ! -e "$work/x.json" ] && [ ! -e "$work/x.bin" ] || fail "a refused prove wrote a file"
finish "ok: stagehand prove --params"
