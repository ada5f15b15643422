#!/usr/bin/env bash
# Test setup for the BN254 tests (the ctest fixture "groth16_bn128_circuits"), after
# prepare_circuits.sh (whose snarkjs and circom2 it uses): compiles two circuits with circom's
# default prime (--prime bn128), runs a small bn128 powers-of-tau ceremony, snarkjs's Groth16
# setup, a contribution and a beacon, exports the verification key and computes the witness with
# the circuit's wasm. Everything goes to <work dir>/bn128.
#
#   prepare_bn128.sh <tests/circuits> <work dir of prepare_circuits.sh>
set -euo pipefail
script=$(readlink -f "$0")
source_dir=$(readlink -f "$1")
work_dir=$(readlink -f "$2")
power=7  # 128 rows: room for the chain's 101 constraints and its public signals
snarkjs="node $work_dir/node_modules/snarkjs/build/cli.cjs"
circom="node $work_dir/node_modules/circom2/cli.js"
if [ ! -f "$work_dir/node_modules/snarkjs/build/cli.cjs" ]; then
  echo "error: no snarkjs in $work_dir/node_modules: run prepare_circuits.sh (the fixture groth16_circuits) first" >&2
  exit 1
fi
out="$work_dir/bn128"
mkdir -p "$out"
cd "$out"

key=$( (echo "$power"; cat "$work_dir/package-lock.json" "$source_dir"/multiplier.* "$source_dir"/chain.* "$script") | sha256sum | cut -d' ' -f1)
if [ "$(cat .stagehand-circuits-key 2>/dev/null || true)" = "$key" ]; then
  echo "BN254 circuits up to date in $out"
  exit 0
fi
rm -f .stagehand-circuits-key pot_final.ptau

$snarkjs powersoftau new bn128 $power pot_0.ptau
$snarkjs powersoftau contribute pot_0.ptau pot_1.ptau --name=stagehand-test -e="stagehand bn128 test entropy"
$snarkjs powersoftau prepare phase2 pot_1.ptau pot_final.ptau

for circuit in multiplier chain; do
  mkdir -p "$circuit"
  $circom "$source_dir/$circuit.circom" --prime bn128 --r1cs --wasm -o "$circuit"
  $snarkjs groth16 setup "$circuit/$circuit.r1cs" pot_final.ptau "$circuit/key_0.zkey"
  $snarkjs zkey contribute "$circuit/key_0.zkey" "$circuit/key_1.zkey" --name=stagehand-test -e="stagehand bn128 $circuit entropy"
  $snarkjs zkey beacon "$circuit/key_1.zkey" "$circuit/$circuit.zkey" \
    0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f 10 --name=stagehand-beacon
  $snarkjs zkey export verificationkey "$circuit/$circuit.zkey" "$circuit/vk.json"
  $snarkjs wtns calculate "$circuit/${circuit}_js/$circuit.wasm" "$source_dir/$circuit.input.json" "$circuit/$circuit.wtns"
done
echo "$key" > .stagehand-circuits-key
