# Shared by the Groth16 end-to-end scripts (e2e.sh, synthetic.sh): source it after setting
# $snarkjs. Counts failures in $failures; finish() reports them and sets the exit status.
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# verify <vk> <public> <proof> <expect: ok|reject> <what>
verify() {
  local output status
  set +e
  output=$($snarkjs groth16 verify "$1" "$2" "$3" 2>&1)
  status=$?
  set -e
  if [ "$4" = ok ]; then
    if [ $status -eq 0 ] && grep -q "OK!" <<<"$output"; then echo "ok: $5 verifies"; else fail "$5 does not verify (exit $status): $output"; fi
  else
    if [ $status -ne 0 ]; then echo "ok: $5 is rejected (exit $status)"; else fail "$5 was accepted: $output"; fi
  fi
}

# A copy of public.json with its first signal changed (plus one, mod nothing: still a valid field element).
tamper() {
  node -e '
    const fs = require("fs");
    const signals = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    signals[0] = (BigInt(signals[0]) + 1n).toString();
    fs.writeFileSync(process.argv[2], JSON.stringify(signals));
  ' "$1" "$2"
}

# flip_witness_bit <in.wtns> <out.wtns> <index>: a copy of the witness with the lowest bit of
# w[index] flipped (section 2 holds the values, 32 bytes each, little-endian).
flip_witness_bit() {
  node -e '
    const fs = require("fs");
    const bytes = fs.readFileSync(process.argv[1]);
    const index = Number(process.argv[3]);
    let offset = 12;
    for (let section = 0; section < bytes.readUInt32LE(8); section++) {
      const id = bytes.readUInt32LE(offset);
      const size = Number(bytes.readBigUInt64LE(offset + 4));
      if (id === 2) { bytes[offset + 12 + 32 * index] ^= 1; fs.writeFileSync(process.argv[2], bytes); process.exit(0); }
      offset += 12 + size;
    }
    throw new Error("no section 2 in " + process.argv[1]);
  ' "$1" "$2" "$3"
}

# finish <what passed>
finish() {
  if [ $failures -ne 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
  fi
  echo "$1"
}

# verify_responses <vk> <response.json>...: `stagehand serve` answers ({"proof": ..., "public":
# [...]}), each checked by snarkjs's groth16.verify in one node process (one CLI process per
# proof would take most of a second each). $snarkjs_module: the snarkjs package's folder.
verify_responses() {
  local output status
  set +e
  output=$(node -e '
    const snarkjs = require(process.argv[1]);
    const fs = require("fs");
    (async () => {
      const vk = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
      let bad = 0;
      for (const file of process.argv.slice(3)) {
        const answer = JSON.parse(fs.readFileSync(file, "utf8"));
        const ok = answer.proof !== undefined && await snarkjs.groth16.verify(vk, answer.public, answer.proof);
        if (!ok) { console.log("does not verify: " + file); bad++; }
      }
      console.log((process.argv.length - 3 - bad) + " of " + (process.argv.length - 3) + " verify");
      process.exit(bad === 0 ? 0 : 1);
    })().catch((error) => { console.log(String(error)); process.exit(2); });
  ' "$snarkjs_module" "$@" 2>&1)
  status=$?
  set -e
  if [ $status -eq 0 ]; then echo "ok: $output (snarkjs groth16.verify, $1)"; else fail "snarkjs: $output"; fi
}
