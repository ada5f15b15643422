#!/usr/bin/env bash
# SupraSeal C2's C ABI from C (supraseal_c2_test.c) on a fixture circuit, every proof checked by
# `snarkjs groth16 verify`: parameters from `stagehand setup --format params`, the circuit's
# assignment and public signals from supraseal_c2_tool, the vk from `stagehand export-vk`; a
# tampered public signal is rejected.
#
#   supraseal_c2_test.sh <stagehand> <supraseal_c2_tool> <supraseal_c2_test> <circuits dir>
set -euo pipefail
stagehand=$1
tool=$2
test_program=$3
circuits=$4
source "$(dirname "$0")/../groth16/verify_lib.sh"
snarkjs="node $circuits/node_modules/snarkjs/build/cli.cjs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

circuit=multiplier
"$stagehand" setup --format params --r1cs "$circuits/$circuit/$circuit.r1cs" --params "$work/key.params" --seed 7 2>/dev/null
"$stagehand" export-vk --params "$work/key.params" --out "$work/vk.json" 2>/dev/null
"$tool" assignment "$circuits/$circuit/$circuit.r1cs" "$circuits/$circuit/$circuit.wtns" "$work/assignment.bin" "$work/public.json"
"$test_program" "$work/key.params" "$work/assignment.bin" "$work" || fail "supraseal_c2_test reported failures"
for index in 0 1 2; do
  "$tool" proof-json "$work/proofs.bin" "$index" "$work/proof-$index.json"
  verify "$work/vk.json" "$work/public.json" "$work/proof-$index.json" ok "SupraSeal C2 ABI, $circuit: proof $index"
done
tamper "$work/public.json" "$work/tampered.json"
verify "$work/vk.json" "$work/tampered.json" "$work/proof-0.json" reject "SupraSeal C2 ABI, $circuit: a changed public signal"
finish "ok: SupraSeal C2's C ABI from C"
