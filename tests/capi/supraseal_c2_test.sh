#!/usr/bin/env bash
# SupraSeal C2's C ABI from C (supraseal_c2_test.c) on a fixture circuit, every proof checked by
# `snarkjs groth16 verify`: parameters from `stagehand setup --format params`, the circuit's
# assignment and public signals from supraseal_c2_tool, the vk from `stagehand export-vk`; a
# tampered public signal is rejected. Then the same calls on the device path
# (STAGEHAND_SUPRASEAL_CONFIG naming a functional simulator's configuration of two devices): the
# same r and s give the CPU reference's bytes, cuzk's form (a GPU index) on each device too, and a
# configuration that cannot be read is an error naming it.
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
"$test_program" "$work/key.params" "$work/assignment.bin" "$work" 0 || fail "supraseal_c2_test reported failures"
for index in 0 1 2; do
  "$tool" proof-json "$work/proofs.bin" "$index" "$work/proof-$index.json"
  verify "$work/vk.json" "$work/public.json" "$work/proof-$index.json" ok "SupraSeal C2 ABI, $circuit: proof $index"
done
tamper "$work/public.json" "$work/tampered.json"
verify "$work/vk.json" "$work/tampered.json" "$work/proof-0.json" reject "SupraSeal C2 ABI, $circuit: a changed public signal"

cat >"$work/device.toml" <<EOF
[run]
backend = "sim"
[gpus]
count = 2
EOF
mkdir "$work/device"
STAGEHAND_SUPRASEAL_CONFIG="$work/device.toml" "$test_program" "$work/key.params" "$work/assignment.bin" "$work/device" 2 ||
  fail "supraseal_c2_test reported failures on the device path"
cmp -s "$work/proofs.bin" "$work/device/proofs.bin" || fail "the device path's proofs differ from the CPU reference's"
echo "ok: the device path's proofs are the CPU reference's, byte for byte"
"$tool" proof-json "$work/device/proofs.bin" 0 "$work/device-proof.json"
verify "$work/vk.json" "$work/public.json" "$work/device-proof.json" ok "SupraSeal C2 ABI on the device path, $circuit"
mkdir "$work/bad-config"
if STAGEHAND_SUPRASEAL_CONFIG="$work/missing.toml" "$test_program" "$work/key.params" "$work/assignment.bin" \
  "$work/bad-config" 0 >"$work/bad-config.log" 2>&1; then
  fail "a configuration that does not exist was not reported"
fi
grep -q "STAGEHAND_SUPRASEAL_CONFIG=$work/missing.toml" "$work/bad-config.log" ||
  fail "the error does not name the variable and the file: $(head -c 400 "$work/bad-config.log")"
echo "ok: a missing configuration is named"
finish "ok: SupraSeal C2's C ABI from C"
