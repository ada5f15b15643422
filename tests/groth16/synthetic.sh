#!/usr/bin/env bash
# The synthetic-circuit end-to-end test: stagehand_make_circuit writes a circuit and witness,
# snarkjs checks the witness against the .r1cs (`wtns check`), `stagehand setup` makes the keys,
# `stagehand prove` (functional simulator) proves, `snarkjs groth16 verify` must accept the proof
# and reject it with a public signal changed; snarkjs's own prover on the same key must verify too.
# Two sizes: 1019 constraints (the most a 2^10 domain holds with 4 public signals) and 1020 (2^11).
#
#   synthetic.sh <stagehand> <stagehand_make_circuit> <work dir of prepare_circuits.sh>
set -euo pipefail
stagehand=$1
make_circuit=$2
work_dir=$3
snarkjs="node $work_dir/node_modules/snarkjs/build/cli.cjs"
out="$work_dir/synthetic"
rm -rf "$out"
mkdir -p "$out"
source "$(dirname "$0")/verify_lib.sh"

for case in 1019:10 1020:11; do
  constraints=${case%:*}
  log2=${case#*:}
  dir="$out/n$constraints"
  "$make_circuit" --constraints $constraints --out "$dir" --seed $constraints
  check=$($snarkjs wtns check "$dir/circuit.r1cs" "$dir/circuit.wtns" 2>&1 || true)
  if grep -q "WITNESS IS CORRECT" <<<"$check"; then
    echo "ok: $constraints constraints: snarkjs finds the witness correct"
  else
    fail "$constraints constraints: snarkjs wtns check does not accept the witness"
  fi
  "$stagehand" setup --r1cs "$dir/circuit.r1cs" --zkey "$dir/circuit.zkey" --vk "$dir/vk.json" --seed 7 2>&1 | grep -v WARNING
  "$stagehand" prove --zkey "$dir/circuit.zkey" --wtns "$dir/circuit.wtns" --proof "$dir/proof.json" --public "$dir/public.json" \
    2>&1 | tee "$dir/prove.log"
  if grep -q "domain 2^$log2," "$dir/prove.log"; then echo "ok: $constraints constraints: domain 2^$log2"
  else fail "$constraints constraints: the key's domain is not 2^$log2"; fi
  verify "$dir/vk.json" "$dir/public.json" "$dir/proof.json" ok "$constraints constraints: the stagehand proof"
  tamper "$dir/public.json" "$dir/tampered.json"
  verify "$dir/vk.json" "$dir/tampered.json" "$dir/proof.json" reject "$constraints constraints: the proof with a public signal changed"
  $snarkjs groth16 prove "$dir/circuit.zkey" "$dir/circuit.wtns" "$dir/snarkjs.proof.json" "$dir/snarkjs.public.json"
  verify "$dir/vk.json" "$dir/snarkjs.public.json" "$dir/snarkjs.proof.json" ok "$constraints constraints: snarkjs's proof on the stagehand key"
done

finish "all synthetic-circuit checks passed"
