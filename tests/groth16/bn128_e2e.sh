#!/usr/bin/env bash
# The BN254 end-to-end test: for each circuit prepared by prepare_bn128.sh (circom's default
# prime, snarkjs's own bn128 setup), `stagehand prove --config` naming a functional simulator's
# deployment (the engine and the device program, as for BLS12-381's keys) must give a proof that
# `snarkjs groth16 verify` accepts, with "curve": "bn128", and the same proof with one public
# signal changed must be rejected. A fixed --seed gives the same proof twice. A BN254 witness
# against a BLS12-381 key, and the reverse, are refused with both curves named. Then `stagehand
# serve` on the simulator with a BN254 and a BLS12-381 key loaded side by side: every proof of
# each verified by snarkjs, the status naming each key's curve, a witness of the other curve
# refused (400) naming both.
#
#   bn128_e2e.sh <stagehand executable> <work dir of prepare_circuits.sh>
set -euo pipefail
stagehand=$1
work_dir=$2
snarkjs="node $work_dir/node_modules/snarkjs/build/cli.cjs"
snarkjs_module=$(realpath "$work_dir/node_modules/snarkjs")  # require() takes no path relative to the caller
bn="$work_dir/bn128"
out="$bn/e2e"
rm -rf "$out"
mkdir -p "$out"
source "$(dirname "$0")/verify_lib.sh"
printf '[run]\nbackend = "sim"\n' >"$out/sim.toml"
sim=(--config "$out/sim.toml")

for circuit in multiplier chain; do
  dir="$bn/$circuit"
  "$stagehand" prove --zkey "$dir/$circuit.zkey" --wtns "$dir/$circuit.wtns" --seed 7 "${sim[@]}" \
    --proof "$out/$circuit.proof.json" --public "$out/$circuit.public.json" 2>"$out/$circuit.log" ||
    fail "$circuit: stagehand prove failed: $(cat "$out/$circuit.log")"
  if grep -q "on 1 x simulated .* (functional)" "$out/$circuit.log"; then echo "ok: $circuit: proved on the functional simulator"
  else fail "$circuit: --config did not prove on the functional simulator: $(cat "$out/$circuit.log")"; fi
  verify "$dir/vk.json" "$out/$circuit.public.json" "$out/$circuit.proof.json" ok "$circuit (BN254): the stagehand proof for seed 7"
  tamper "$out/$circuit.public.json" "$out/$circuit.tampered.json"
  verify "$dir/vk.json" "$out/$circuit.tampered.json" "$out/$circuit.proof.json" reject "$circuit (BN254): the proof with a public signal changed"
  if grep -q '"curve": "bn128"' "$out/$circuit.proof.json"; then echo "ok: $circuit: proof.json names the curve bn128"
  else fail "$circuit: proof.json does not say \"curve\": \"bn128\": $(cat "$out/$circuit.proof.json")"; fi
done

# The same seed gives the same proof; the system's randomness another one, which verifies too.
"$stagehand" prove --zkey "$bn/chain/chain.zkey" --wtns "$bn/chain/chain.wtns" --seed 7 "${sim[@]}" --proof "$out/again.proof.json" --public "$out/again.public.json"
if cmp -s "$out/chain.proof.json" "$out/again.proof.json"; then echo "ok: seed 7 gives the same BN254 proof twice"
else fail "seed 7 gave two different BN254 proofs"; fi
"$stagehand" prove --zkey "$bn/chain/chain.zkey" --wtns "$bn/chain/chain.wtns" "${sim[@]}" --proof "$out/random.proof.json" --public "$out/random.public.json"
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
  "$stagehand" prove --zkey "$work_dir/chain/chain.zkey" --wtns "$bn/chain/chain.wtns" "${sim[@]}" --proof "$out/x.json" --public "$out/y.json"
expect_refused "a BLS12-381 witness against a BN254 key" "chain/chain.wtns" "BLS12-381" "BN254" -- \
  "$stagehand" prove --zkey "$bn/chain/chain.zkey" --wtns "$work_dir/chain/chain.wtns" "${sim[@]}" --proof "$out/x.json" --public "$out/y.json"

# ---- stagehand serve on the simulator: BN254 keys beside a BLS12-381 key ----
source "$(dirname "$0")/../../scripts/lib/serve.sh"
serve_work_dir
# serve_proof <key> <wtns> <answer file> <curve>: a proof from the server, its proof.json of <curve>.
serve_proof() {
  local code
  code=$(curl -s -o "$3" -w '%{http_code}' --data-binary @"$2" "$url/v1/proofs?key=$1&wait=true" || true)
  if [ "$code" = 200 ] && node -e '
    const answer = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    process.exit(answer.proof && answer.proof.curve === process.argv[2] ? 0 : 1);
  ' "$3" "$4"; then echo "ok: a proof of key $1 from serve, of curve $4"
  else fail "a proof of key $1 from serve: $code $(head -c 400 "$3")"; fi
}
if serve_start "$stagehand" "$work/serve.log" "${sim[@]}" --key bn_multiplier="$bn/multiplier/multiplier.zkey" \
  --key bn_chain="$bn/chain/chain.zkey" --key bls_chain="$work_dir/chain/chain.zkey"; then
  for circuit in multiplier chain; do
    for n in 1 2; do serve_proof "bn_$circuit" "$bn/$circuit/$circuit.wtns" "$work/bn_$circuit-$n.json" bn128; done
    verify_responses "$bn/$circuit/vk.json" "$work/bn_$circuit"-*.json
  done
  serve_proof bls_chain "$work_dir/chain/chain.wtns" "$work/bls_chain.json" bls12381
  verify_responses "$work_dir/chain/vk.json" "$work/bls_chain.json"
  expect 400 "BLS12-381, where BN254 is expected" "a BLS12-381 witness for a BN254 key" --data-binary @"$work_dir/chain/chain.wtns" "$url/v1/proofs?key=bn_chain"
  expect 400 "BN254, where BLS12-381 is expected" "a BN254 witness for a BLS12-381 key" --data-binary @"$bn/chain/chain.wtns" "$url/v1/proofs?key=bls_chain"
  curl -s "$url/v1/status" >"$work/status.json"
  if node -e '
    const keys = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).keys;
    const curves = Object.fromEntries(keys.map((key) => [key.name, key.curve]));
    const want = {bn_multiplier: "bn128", bn_chain: "bn128", bls_chain: "bls12381"};
    process.exit(JSON.stringify(curves, Object.keys(want).sort()) === JSON.stringify(want, Object.keys(want).sort()) ? 0 : 1);
  ' "$work/status.json"; then echo "ok: the status names each key's curve"
  else fail "the status's keys and curves: $(head -c 600 "$work/status.json")"; fi
else
  fail "stagehand serve did not start with the BN254 keys"
fi
finish "BN254: every stagehand proof (prove and serve) verifies with snarkjs and every changed signal is rejected"
