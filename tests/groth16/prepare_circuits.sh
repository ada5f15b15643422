#!/usr/bin/env bash
# Test setup for tests/groth16 (the ctest fixture "groth16_circuits"): installs the pinned snarkjs
# and circom2 (tests/circuits/package-lock.json) with npm ci into the build tree, compiles each
# circuit with circom --prime bls12381, runs a small powers-of-tau ceremony, the snarkjs Groth16
# setup, exports the verification key and computes the witness.
#
#   prepare_circuits.sh <tests/circuits> <work dir>
#
# Missing node or npm is an error, not a skip: without snarkjs nothing checks the proofs.
set -euo pipefail
script=$(readlink -f "$0")
source_dir=$(readlink -f "$1")
work_dir=$2
power=8  # 256 rows: room for every test circuit; the ceremony takes seconds at this size

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "error: the Groth16 end-to-end tests need Node.js (18 or later) and npm on PATH to install snarkjs and circom2" >&2
  echo "       (node: $(command -v node || echo missing), npm: $(command -v npm || echo missing)); e.g. apt-get install nodejs npm" >&2
  exit 1
fi
major=$(node --version | sed -E 's/^v([0-9]+).*/\1/')
if [ "$major" -lt 18 ]; then
  echo "error: the Groth16 end-to-end tests need Node.js 18 or later; found $(node --version)" >&2
  exit 1
fi

mkdir -p "$work_dir"
cd "$work_dir"
for name in package.json package-lock.json; do
  cmp -s "$source_dir/$name" "$name" 2>/dev/null || cp "$source_dir/$name" "$name"
done
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat node_modules/.stagehand-lock-sha256 2>/dev/null || true)" != "$lock_hash" ]; then
  echo "Installing snarkjs and circom2 with npm ci into $work_dir"
  if ! npm ci --no-audit --no-fund; then
    echo "error: npm ci failed in $work_dir: the tests need snarkjs 0.7.6 and circom2 0.2.23 from the npm registry (or npm's cache)" >&2
    exit 1
  fi
  echo "$lock_hash" > node_modules/.stagehand-lock-sha256
fi
snarkjs="node $work_dir/node_modules/snarkjs/build/cli.cjs"
circom="node $work_dir/node_modules/circom2/cli.js"

# Regenerate everything when the sources or the tools changed.
key=$( (echo "$lock_hash $power"; cat "$source_dir"/*.circom "$source_dir"/*.input.json "$script") | sha256sum | cut -d' ' -f1)
if [ "$(cat .stagehand-circuits-key 2>/dev/null || true)" = "$key" ]; then
  echo "Circuits up to date in $work_dir"
  exit 0
fi
rm -f .stagehand-circuits-key

if [ ! -f pot_final.ptau ]; then
  $snarkjs powersoftau new bls12381 $power pot_0.ptau
  $snarkjs powersoftau contribute pot_0.ptau pot_1.ptau --name=stagehand-test -e="stagehand test entropy"
  $snarkjs powersoftau prepare phase2 pot_1.ptau pot_final.ptau
fi

for circuit in multiplier linear chain; do
  optimisation=""
  [ "$circuit" = linear ] && optimisation="--O0"  # keep the linear constraints
  mkdir -p "$circuit"
  $circom "$source_dir/$circuit.circom" --prime bls12381 --r1cs --wasm $optimisation -o "$circuit"
  $snarkjs groth16 setup "$circuit/$circuit.r1cs" pot_final.ptau "$circuit/key_0.zkey"
  $snarkjs zkey contribute "$circuit/key_0.zkey" "$circuit/$circuit.zkey" --name=stagehand-test -e="stagehand $circuit entropy"
  $snarkjs zkey export verificationkey "$circuit/$circuit.zkey" "$circuit/vk.json"
  $snarkjs wtns calculate "$circuit/${circuit}_js/$circuit.wasm" "$source_dir/$circuit.input.json" "$circuit/$circuit.wtns"
done
echo "$key" > .stagehand-circuits-key
