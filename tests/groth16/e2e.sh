#!/usr/bin/env bash
# The Groth16 end-to-end test: for each circuit prepared by prepare_circuits.sh (snarkjs keys),
# `stagehand prove` (the device program on the functional simulator) must give a proof that
# `snarkjs groth16 verify` accepts, and the same proof with one public signal changed must be
# rejected. Then `stagehand setup` makes keys for one circuit and a Stagehand proof with them
# must verify too; several witnesses at once must all verify.
#
#   e2e.sh <stagehand executable> <work dir of prepare_circuits.sh>
set -euo pipefail
stagehand=$1
work_dir=$2
snarkjs="node $work_dir/node_modules/snarkjs/build/cli.cjs"
out="$work_dir/e2e"
rm -rf "$out"
mkdir -p "$out"
source "$(dirname "$0")/verify_lib.sh"

for circuit in multiplier linear chain; do
  dir="$work_dir/$circuit"
  "$stagehand" prove --zkey "$dir/$circuit.zkey" --wtns "$dir/$circuit.wtns" \
    --proof "$out/$circuit.proof.json" --public "$out/$circuit.public.json"
  verify "$dir/vk.json" "$out/$circuit.public.json" "$out/$circuit.proof.json" ok "$circuit: the stagehand proof"
  tamper "$out/$circuit.public.json" "$out/$circuit.tampered.json"
  verify "$dir/vk.json" "$out/$circuit.tampered.json" "$out/$circuit.proof.json" reject "$circuit: the proof with a public signal changed"
done

# Several witnesses for one key through one run (a directory and a repeated --wtns).
mkdir -p "$out/many"
cp "$work_dir/chain/chain.wtns" "$out/many/first.wtns"
cp "$work_dir/chain/chain.wtns" "$out/many/second.wtns"
"$stagehand" prove --zkey "$work_dir/chain/chain.zkey" --wtns "$out/many" --wtns "$work_dir/chain/chain.wtns" --out-dir "$out/many/proofs"
for name in first second chain; do
  verify "$work_dir/chain/vk.json" "$out/many/proofs/$name.public.json" "$out/many/proofs/$name.proof.json" ok "chain, batch proof $name"
done

# Keys from `stagehand setup` (test-only), for the circuit with linear constraints and for the chain.
for circuit in linear chain; do
  "$stagehand" setup --r1cs "$work_dir/$circuit/$circuit.r1cs" --zkey "$out/$circuit.own.zkey" --vk "$out/$circuit.own.vk.json"
  "$stagehand" prove --zkey "$out/$circuit.own.zkey" --wtns "$work_dir/$circuit/$circuit.wtns" \
    --proof "$out/$circuit.own.proof.json" --public "$out/$circuit.own.public.json"
  verify "$out/$circuit.own.vk.json" "$out/$circuit.own.public.json" "$out/$circuit.own.proof.json" ok "$circuit: stagehand proof with stagehand setup keys"
  tamper "$out/$circuit.own.public.json" "$out/$circuit.own.tampered.json"
  verify "$out/$circuit.own.vk.json" "$out/$circuit.own.tampered.json" "$out/$circuit.own.proof.json" reject "$circuit: stagehand setup keys, tampered signal"
done
# snarkjs's own prover accepts a stagehand setup key.
$snarkjs groth16 prove "$out/chain.own.zkey" "$work_dir/chain/chain.wtns" "$out/chain.snarkjs.proof.json" "$out/chain.snarkjs.public.json"
verify "$out/chain.own.vk.json" "$out/chain.snarkjs.public.json" "$out/chain.snarkjs.proof.json" ok "chain: snarkjs proof with stagehand setup keys"

# A bad input on the command line is a clear error, not a crash.
set +e
message=$("$stagehand" prove --zkey "$work_dir/chain/chain.zkey" --wtns "$work_dir/linear/linear.wtns" --proof "$out/x.json" --public "$out/y.json" 2>&1)
status=$?
set -e
if [ $status -eq 1 ] && grep -q "another circuit" <<<"$message"; then echo "ok: a witness for another circuit is refused: $message" | tail -1
else fail "a witness for another circuit: exit $status: $message"; fi

# The same batch under the serial policy (a, b, c uploaded from pageable memory inside the lock).
"$stagehand" prove --zkey "$work_dir/chain/chain.zkey" --wtns "$out/many" --out-dir "$out/many/serial" --policy serial
for name in first second; do
  verify "$work_dir/chain/vk.json" "$out/many/serial/$name.public.json" "$out/many/serial/$name.proof.json" ok "chain, serial batch proof $name"
done

# A bad witness in a batch fails its own job only: the others are proved, the exit status is 1.
mkdir -p "$out/mixed"
cp "$work_dir/chain/chain.wtns" "$out/mixed/good.wtns"
cp "$work_dir/linear/linear.wtns" "$out/mixed/other.wtns"
set +e
message=$("$stagehand" prove --zkey "$work_dir/chain/chain.zkey" --wtns "$out/mixed" --out-dir "$out/mixed/proofs" 2>&1)
status=$?
set -e
if [ $status -eq 1 ] && grep -q "other.wtns: FAILED: .*another circuit" <<<"$message"; then echo "ok: the bad witness of a batch fails alone"
else fail "a bad witness in a batch: exit $status: $message"; fi
if grep -q "GPU 0: the engine holds 0 B of device memory after the run, 0 B before, nothing left behind" <<<"$message"; then
  echo "ok: a batch with a failed proof gives back all the device memory it took"
else fail "device memory after a batch with a failed proof: $message"; fi
verify "$work_dir/chain/vk.json" "$out/mixed/proofs/good.public.json" "$out/mixed/proofs/good.proof.json" ok "chain, the good proof of a batch with a bad witness"

# Two witnesses with one name would overwrite each other's proof: refused before any work.
set +e
message=$("$stagehand" prove --zkey "$work_dir/chain/chain.zkey" --wtns "$work_dir/chain/chain.wtns" --wtns "$work_dir/chain/chain.wtns" --out-dir "$out/twice" 2>&1)
status=$?
set -e
if [ $status -eq 1 ] && grep -q "distinct names" <<<"$message"; then echo "ok: two witnesses of one name are refused"
else fail "two witnesses of one name: exit $status: $message"; fi

finish "all Groth16 end-to-end checks passed"
