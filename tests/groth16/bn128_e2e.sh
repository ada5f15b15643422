#!/usr/bin/env bash
# The BN254 end-to-end test: for each circuit prepared by prepare_bn128.sh (circom's default
# prime, snarkjs's own bn128 setup), `stagehand prove` (the CPU reference: BN254 keys are not
# proved on the engine yet) must give a proof that `snarkjs groth16 verify` accepts, with
# "curve": "bn128", and the same proof with one public signal changed must be rejected. A fixed
# --seed gives the same proof twice. A BN254 witness against a BLS12-381 key, and the reverse,
# are refused with both curves named.
#
#   bn128_e2e.sh <stagehand executable> <work dir of prepare_circuits.sh>
set -euo pipefail
stagehand=$1
work_dir=$2
snarkjs="node $work_dir/node_modules/snarkjs/build/cli.cjs"
bn="$work_dir/bn128"
out="$bn/e2e"
rm -rf "$out"
mkdir -p "$out"
source "$(dirname "$0")/verify_lib.sh"

for circuit in multiplier chain; do
  dir="$bn/$circuit"
  "$stagehand" prove --zkey "$dir/$circuit.zkey" --wtns "$dir/$circuit.wtns" --seed 7 \
    --proof "$out/$circuit.proof.json" --public "$out/$circuit.public.json"
  verify "$dir/vk.json" "$out/$circuit.public.json" "$out/$circuit.proof.json" ok "$circuit (BN254): the stagehand proof for seed 7"
  tamper "$out/$circuit.public.json" "$out/$circuit.tampered.json"
  verify "$dir/vk.json" "$out/$circuit.tampered.json" "$out/$circuit.proof.json" reject "$circuit (BN254): the proof with a public signal changed"
  if grep -q '"curve": "bn128"' "$out/$circuit.proof.json"; then echo "ok: $circuit: proof.json names the curve bn128"
  else fail "$circuit: proof.json does not say \"curve\": \"bn128\": $(cat "$out/$circuit.proof.json")"; fi
done

# The same seed gives the same proof; the system's randomness another one, which verifies too.
"$stagehand" prove --zkey "$bn/chain/chain.zkey" --wtns "$bn/chain/chain.wtns" --seed 7 --proof "$out/again.proof.json" --public "$out/again.public.json"
if cmp -s "$out/chain.proof.json" "$out/again.proof.json"; then echo "ok: seed 7 gives the same BN254 proof twice"
else fail "seed 7 gave two different BN254 proofs"; fi
"$stagehand" prove --zkey "$bn/chain/chain.zkey" --wtns "$bn/chain/chain.wtns" --proof "$out/random.proof.json" --public "$out/random.public.json"
verify "$bn/chain/vk.json" "$out/random.public.json" "$out/random.proof.json" ok "chain (BN254): a proof with the system's r and s"
if cmp -s "$out/chain.proof.json" "$out/random.proof.json"; then fail "the system's r and s gave seed 7's proof"; fi

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
expect_refused "a BN254 witness against a BLS12-381 key" "bn128/chain/chain.wtns" "BN254" "BLS12-381" -- \
  "$stagehand" prove --zkey "$work_dir/chain/chain.zkey" --wtns "$bn/chain/chain.wtns" --proof "$out/x.json" --public "$out/y.json"
expect_refused "a BLS12-381 witness against a BN254 key" "chain/chain.wtns" "BLS12-381" "BN254" -- \
  "$stagehand" prove --zkey "$bn/chain/chain.zkey" --wtns "$work_dir/chain/chain.wtns" --proof "$out/x.json" --public "$out/y.json"
finish "BN254: every stagehand proof verifies with snarkjs and every changed signal is rejected"
