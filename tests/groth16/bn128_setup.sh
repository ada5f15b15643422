#!/usr/bin/env bash
# `stagehand setup` of BN254 circuits: for each circuit compiled with circom's default prime by
# prepare_bn128.sh, the test-only setup writes a .zkey and vk.json; snarkjs must read the key (its
# exported verification key is stagehand's vk.json), a `stagehand prove` proof on it must pass
# `snarkjs groth16 verify` and be rejected with a public signal changed, and snarkjs's own proof on
# the key must verify too. A circuit, key and witness of different curves are refused naming the
# files and both curves; so is a .params key (BLS12-381's) of a BN254 circuit.
#
#   bn128_setup.sh <stagehand executable> <work dir of prepare_circuits.sh>
set -euo pipefail
stagehand=$1
work_dir=$2
snarkjs="node $work_dir/node_modules/snarkjs/build/cli.cjs"
bn="$work_dir/bn128"
out="$bn/setup"
rm -rf "$out"
mkdir -p "$out"
source "$(dirname "$0")/verify_lib.sh"

# same_vk <a.json> <b.json>: the same verification key, field by field (key order aside).
same_vk() {
  node -e '
    const fs = require("fs");
    const [a, b] = process.argv.slice(1).map((file) => JSON.parse(fs.readFileSync(file, "utf8")));
    delete a.vk_alphabeta_12;
    delete b.vk_alphabeta_12;
    const sorted = (value) => JSON.stringify(value, Object.keys(value).sort());
    process.exit(sorted(a) === sorted(b) ? 0 : 1);
  ' "$1" "$2"
}

for circuit in multiplier chain; do
  dir="$bn/$circuit"
  key="$out/$circuit.zkey"
  "$stagehand" setup --r1cs "$dir/$circuit.r1cs" --zkey "$key" --vk "$out/$circuit.vk.json" --seed 11 2>&1 | tee "$out/$circuit.setup.log" \
    | grep -v WARNING
  if grep -q "BN254 (bn128)" "$out/$circuit.setup.log"; then echo "ok: $circuit: setup names the curve"
  else fail "$circuit: setup does not say the key is BN254's"; fi
  $snarkjs zkey export verificationkey "$key" "$out/$circuit.snarkjs-vk.json"
  if same_vk "$out/$circuit.vk.json" "$out/$circuit.snarkjs-vk.json"; then echo "ok: $circuit: snarkjs reads the key's vk as stagehand wrote it"
  else fail "$circuit: snarkjs's vk of the key differs from stagehand's vk.json"; fi
  if grep -q '"curve": "bn128"' "$out/$circuit.vk.json"; then echo "ok: $circuit: vk.json names the curve bn128"
  else fail "$circuit: vk.json does not say \"curve\": \"bn128\""; fi
  "$stagehand" prove --zkey "$key" --wtns "$dir/$circuit.wtns" --r1cs "$dir/$circuit.r1cs" --seed 5 \
    --proof "$out/$circuit.proof.json" --public "$out/$circuit.public.json"
  verify "$out/$circuit.vk.json" "$out/$circuit.public.json" "$out/$circuit.proof.json" ok "$circuit (BN254, stagehand's setup): the stagehand proof"
  tamper "$out/$circuit.public.json" "$out/$circuit.tampered.json"
  verify "$out/$circuit.vk.json" "$out/$circuit.tampered.json" "$out/$circuit.proof.json" reject \
    "$circuit (BN254, stagehand's setup): the proof with a public signal changed"
  $snarkjs groth16 prove "$key" "$dir/$circuit.wtns" "$out/$circuit.snarkjs.proof.json" "$out/$circuit.snarkjs.public.json"
  verify "$out/$circuit.vk.json" "$out/$circuit.snarkjs.public.json" "$out/$circuit.snarkjs.proof.json" ok \
    "$circuit (BN254, stagehand's setup): snarkjs's proof on the stagehand key"
done

# A witness that satisfies the key's shape but not the circuit: refused with --r1cs at its constraint.
flip_witness_bit "$bn/chain/chain.wtns" "$out/flipped.wtns" 3
set +e
message=$("$stagehand" prove --zkey "$out/chain.zkey" --wtns "$out/flipped.wtns" --r1cs "$bn/chain/chain.r1cs" \
  --proof "$out/flipped.proof.json" --public "$out/flipped.public.json" 2>&1)
status=$?
set -e
if [ $status -eq 1 ] && grep -q "does not satisfy constraint [0-9]* of $bn/chain/chain.r1cs" <<<"$message" && [ ! -e "$out/flipped.proof.json" ]; then
  echo "ok: a BN254 witness that does not satisfy the circuit is refused with --r1cs: $(grep 'does not satisfy' <<<"$message")"
else
  fail "the flipped BN254 witness with --r1cs: exit $status, $message"
fi

# The same seed gives the same key.
"$stagehand" setup --r1cs "$bn/chain/chain.r1cs" --zkey "$out/again.zkey" --vk "$out/again.vk.json" --seed 11 2>/dev/null
if cmp -s "$out/chain.zkey" "$out/again.zkey"; then echo "ok: seed 11 gives the same BN254 key twice"
else fail "seed 11 gave two different BN254 keys"; fi

# expect_refused <what> <pattern>... -- <command...>: exit status 1 and every pattern in the message.
expect_refused() {
  local what=$1 patterns=() message status
  shift
  while [ "$1" != "--" ]; do patterns+=("$1"); shift; done
  shift
  set +e
  message=$("$@" 2>&1)
  status=$?
  set -e
  for pattern in "${patterns[@]}"; do
    if [ $status -ne 1 ] || ! grep -q -- "$pattern" <<<"$message"; then fail "$what: exit $status, no \"$pattern\": $message"; return; fi
  done
  echo "ok: $what is refused: $(tail -1 <<<"$message")"
}
expect_refused "a BLS12-381 circuit with a BN254 key" "$work_dir/chain/chain.r1cs" "$out/chain.zkey" "BLS12-381" "BN254" -- \
  "$stagehand" prove --zkey "$out/chain.zkey" --wtns "$bn/chain/chain.wtns" --r1cs "$work_dir/chain/chain.r1cs" \
  --proof "$out/x.json" --public "$out/y.json"
expect_refused "a BN254 circuit with a BLS12-381 key" "$bn/chain/chain.r1cs" "$work_dir/chain/chain.zkey" "BLS12-381" "BN254" -- \
  "$stagehand" prove --zkey "$work_dir/chain/chain.zkey" --wtns "$work_dir/chain/chain.wtns" --r1cs "$bn/chain/chain.r1cs" \
  --proof "$out/x.json" --public "$out/y.json"
expect_refused "a BN254 circuit with another BN254 circuit's key" "$bn/multiplier/multiplier.r1cs" "$out/chain.zkey" \
  "another circuit" -- \
  "$stagehand" prove --zkey "$out/chain.zkey" --wtns "$bn/chain/chain.wtns" --r1cs "$bn/multiplier/multiplier.r1cs" \
  --proof "$out/x.json" --public "$out/y.json"
expect_refused "a .params key of a BN254 circuit" "$bn/chain/chain.r1cs" "BN254" "BLS12-381" -- \
  "$stagehand" setup --format params --r1cs "$bn/chain/chain.r1cs" --params "$out/x.params"
finish "BN254 setup: snarkjs reads every stagehand key, and every proof on it verifies"
