#!/usr/bin/env bash
# The synthetic-circuit end-to-end test: stagehand_make_circuit writes a circuit and witness,
# snarkjs checks the witness against the .r1cs (`wtns check`), `stagehand setup` makes the keys,
# `stagehand prove` (functional simulator) proves, `snarkjs groth16 verify` must accept the proof
# and reject it with a public signal changed; snarkjs's own prover on the same key must verify too.
# `stagehand prove` checks each proof itself (the pairing check, on by default) and prints its
# cost; on the 2^10 circuit a witness with one bit of w[3] flipped must be refused: by the pairing
# check (exit 1, no proof written), with --r1cs at its first failing constraint, and with
# --no-verify the proof it then writes must be one snarkjs rejects.
# Two sizes: 1019 constraints (the most a 2^10 domain holds with 4 public signals) and 1020 (2^11),
# and the 2^10 one again with bit decompositions (--bits: most witness values 0 or 1). Then
# `stagehand bench prove` (circuit, key and witness in memory) with the key sets in each placement.
# Then BN254: BLS12-381's synthetic bytes unchanged for a seed, the BN254 circuit by snarkjs's wtns
# check, and `bench prove --curve bn254`'s proofs verified by snarkjs.
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

# The third case: a witness mostly of 0s and 1s (--bits), as real circuits' are.
for case in 1019:10 1020:11 1019:10:bits; do
  IFS=: read -r constraints log2 bits <<<"$case"
  dir="$out/n$constraints${bits:+-bits}"
  name="$constraints constraints${bits:+, bits}"
  "$make_circuit" --constraints $constraints --out "$dir" --seed $constraints ${bits:+--bits}
  check=$($snarkjs wtns check "$dir/circuit.r1cs" "$dir/circuit.wtns" 2>&1 || true)
  if grep -q "WITNESS IS CORRECT" <<<"$check"; then
    echo "ok: $name: snarkjs finds the witness correct"
  else
    fail "$name: snarkjs wtns check does not accept the witness"
  fi
  "$stagehand" setup --r1cs "$dir/circuit.r1cs" --zkey "$dir/circuit.zkey" --vk "$dir/vk.json" --seed 7 2>&1 | grep -v WARNING
  "$stagehand" prove --zkey "$dir/circuit.zkey" --wtns "$dir/circuit.wtns" --proof "$dir/proof.json" --public "$dir/public.json" \
    2>&1 | tee "$dir/prove.log"
  if grep -q "domain 2^$log2," "$dir/prove.log"; then echo "ok: $name: domain 2^$log2"
  else fail "$name: the key's domain is not 2^$log2"; fi
  verify "$dir/vk.json" "$dir/public.json" "$dir/proof.json" ok "$name: the stagehand proof"
  tamper "$dir/public.json" "$dir/tampered.json"
  verify "$dir/vk.json" "$dir/tampered.json" "$dir/proof.json" reject "$name: the proof with a public signal changed"
  $snarkjs groth16 prove "$dir/circuit.zkey" "$dir/circuit.wtns" "$dir/snarkjs.proof.json" "$dir/snarkjs.public.json"
  verify "$dir/vk.json" "$dir/snarkjs.public.json" "$dir/snarkjs.proof.json" ok "$name: snarkjs's proof on the stagehand key"
  if grep -q "pairing check .* ms per proof" "$dir/prove.log"; then echo "ok: $name: $(grep 'pairing check' "$dir/prove.log")"
  else fail "$name: prove does not report its pairing check"; fi
done

# The 2^10 circuit with one bit of w[3] flipped: a witness of the right shape that does not satisfy it.
dir="$out/n1019"
flip_witness_bit "$dir/circuit.wtns" "$dir/flipped.wtns" 3
check=$($snarkjs wtns check "$dir/circuit.r1cs" "$dir/flipped.wtns" 2>&1 || true)
if grep -q "WITNESS IS CORRECT" <<<"$check"; then fail "snarkjs accepts the flipped witness"; else echo "ok: snarkjs rejects the flipped witness"; fi
set +e
message=$("$stagehand" prove --zkey "$dir/circuit.zkey" --wtns "$dir/flipped.wtns" --proof "$dir/flipped.proof.json" --public "$dir/flipped.public.json" 2>&1)
status=$?
set -e
if [ $status -eq 1 ] && grep -q "FAILED: the proof does not verify" <<<"$message" && [ ! -e "$dir/flipped.proof.json" ]; then
  echo "ok: the flipped witness: the pairing check refuses its proof, nothing written"
else fail "the flipped witness: exit $status, proof file $(ls "$dir/flipped.proof.json" 2>/dev/null || echo absent): $message"; fi
set +e
message=$("$stagehand" prove --zkey "$dir/circuit.zkey" --wtns "$dir/flipped.wtns" --r1cs "$dir/circuit.r1cs" --proof "$dir/flipped.proof.json" --public "$dir/flipped.public.json" 2>&1)
status=$?
set -e
if [ $status -eq 1 ] && grep -q "does not satisfy constraint [0-9]* of" <<<"$message" && [ ! -e "$dir/flipped.proof.json" ]; then
  echo "ok: the flipped witness with --r1cs: $(grep -o 'does not satisfy constraint [0-9]*' <<<"$message")"
else fail "the flipped witness with --r1cs: exit $status: $message"; fi
"$stagehand" prove --zkey "$dir/circuit.zkey" --wtns "$dir/circuit.wtns" --r1cs "$dir/circuit.r1cs" --proof "$dir/r1cs.proof.json" --public "$dir/r1cs.public.json"
verify "$dir/vk.json" "$dir/r1cs.public.json" "$dir/r1cs.proof.json" ok "the good witness, checked with --r1cs"
"$stagehand" prove --zkey "$dir/circuit.zkey" --wtns "$dir/flipped.wtns" --no-verify --proof "$dir/flipped.proof.json" --public "$dir/flipped.public.json"
verify "$dir/vk.json" "$dir/flipped.public.json" "$dir/flipped.proof.json" reject "the flipped witness's proof, written with --no-verify,"

# `stagehand bench prove`: the circuit, key and witnesses in memory, the key's sets in each
# placement (streamed through buffers of 1 KiB: several batches per set), streamed with every a/b/c
# step (streamed: the constraint matrix too, in chunks through the same buffers); three proofs, so that with two workers the third parses its witness into a finished
# proof's buffer (a/b/c on the host); every proof it writes must verify against the vk.json beside it.
for case in resident:device precomputed:host fetched-ahead:host streamed:device streamed:host streamed:streamed resident:streamed auto:device; do
  IFS=: read -r placement abc <<<"$case"
  {
    dir="$out/bench-$placement-$abc"
    "$stagehand" bench prove --domain-log2 9 --proofs 3 --out-dir "$dir" --key-sets $placement --abc $abc \
      --stream-buffer-mib 0.001 2>&1 | grep -v WARNING > "$dir.log" || fail "bench prove ($placement, a/b/c on the $abc) failed: $(cat "$dir.log")"
    if grep -q "the key's sets: .*$([ $placement = auto ] && echo resident || echo $placement)" "$dir.log"; then
      echo "ok: bench prove: $(grep -o "the key's sets: .*" "$dir.log")"
    else fail "bench prove: the sets are not $placement: $(cat "$dir.log")"; fi
    for i in 1 2 3; do
      verify "$dir/vk.json" "$dir/$i.public.json" "$dir/$i.proof.json" ok "bench prove proof $i ($placement sets, a/b/c on the $abc)"
    done
  }
done

# Two simulated GPUs, the second lost at its tenth kernel launch (inside its first or second
# proof): its running proofs fail with the device's error and are proved again on the first GPU;
# every proof of the run is written and verifies.
dir="$out/bench-two-gpus-one-lost"
mkdir -p "$dir"
printf '[gpus]\ncount = 2\n[faults]\ndevice = 1\nlose_device_at_launch = 10\n' >"$dir.toml"
"$stagehand" bench prove --config "$dir.toml" --domain-log2 9 --proofs 6 --out-dir "$dir" 2>&1 | grep -v WARNING >"$dir.log" ||
  fail "bench prove on two GPUs, one lost, failed: $(cat "$dir.log")"
if grep -qE "[1-9][0-9]* proofs? moved to another GPU" "$dir.log" && grep -q "6 of 6 proofs" "$dir.log"; then
  echo "ok: bench prove on two GPUs: $(grep -oE "[0-9]+ proofs? moved to another GPU" "$dir.log") when GPU 1 was lost"
else fail "bench prove on two GPUs: no proof moved, or not every proof made: $(cat "$dir.log")"; fi
for i in 1 2 3 4 5 6; do
  verify "$dir/vk.json" "$dir/$i.public.json" "$dir/$i.proof.json" ok "bench prove proof $i (two GPUs, GPU 1 lost)"
done

# `stagehand bench prove --format params`: PoRep-shaped random parameters and one assignment in
# memory, three circuits under serial and budgeted; a random key's proofs cannot verify, so each
# policy's 384-byte proofs must be the other's (the schedule changes, the bytes do not), and
# another share of full scalars must change them.
dir="$out/bench-params"
"$stagehand" bench prove --format params --domain-log2 9 --proofs 3 --out-dir "$dir" --policy serial --policy budgeted \
  >"$dir.log" 2>&1 || fail "bench prove --format params failed: $(cat "$dir.log")"
if [ "$(grep -c "3 of 3 proofs at 2^9" "$dir.log")" = 2 ] && [ "$(grep -cE "out of memory +0$" "$dir.log")" = 2 ]; then
  echo "ok: bench prove --format params: every proof under both policies, no OOM"
else fail "bench prove --format params: not every proof made, or an OOM: $(cat "$dir.log")"; fi
[ "$(stat -c %s "$dir/serial/proofs.bin")" = 1152 ] || fail "bench prove --format params: proofs.bin is not three proofs"
cmp -s "$dir/serial/proofs.bin" "$dir/budgeted/proofs.bin" && echo "ok: bench prove --format params: the same bytes under both policies" ||
  fail "bench prove --format params: serial's and budgeted's proofs differ"
"$stagehand" bench prove --format params --domain-log2 9 --proofs 3 --out-dir "$dir-full" --full-share 1 >"$dir-full.log" 2>&1 ||
  fail "bench prove --format params --full-share 1 failed: $(cat "$dir-full.log")"
cmp -s "$dir/serial/proofs.bin" "$dir-full/proofs.bin" && fail "bench prove --format params: --full-share changed nothing" ||
  echo "ok: bench prove --format params: another share of full scalars gives other proofs"

# --params-file: the same key written as a .params file, read back and proved from gives the same
# bytes, whether the run wrote the file or found it; a file of another shape is named.
for run in write read; do
  "$stagehand" bench prove --format params --domain-log2 9 --proofs 3 --out-dir "$dir-$run" --policy serial \
    --params-file "$out/bench.params" >"$dir-$run.log" 2>&1 || fail "bench prove --params-file ($run) failed: $(cat "$dir-$run.log")"
  cmp -s "$dir/serial/proofs.bin" "$dir-$run/proofs.bin" || fail "bench prove --params-file ($run): other proofs than the key in memory's"
  grep -q "bench.params (.*) read and checked, ready to prove, in" "$dir-$run.log" || fail "bench prove --params-file ($run): no load time"
done
grep -q "made on" "$dir-read.log" && fail "bench prove --params-file: a key made where the file was there to read"
"$stagehand" bench prove --format params --domain-log2 9 --proofs 2 --out-dir "$dir-traced" --trace "$out/params-trace.json" \
  >"$dir-traced.log" 2>&1 || fail "bench prove --format params --trace failed: $(cat "$dir-traced.log")"
node -e 'const t = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); const e = t.traceEvents || t;
  if (!e.some((x) => x.ph === "X")) process.exit(1);' "$out/params-trace.json" && grep -q "<svg" "$out/params-trace.svg" &&
  echo "ok: bench prove --format params --trace: a trace with spans and its picture" ||
  fail "bench prove --format params --trace: no trace with spans, or no picture"
echo "ok: bench prove --params-file: the key written, read back and proved from gives the same bytes"
if "$stagehand" bench prove --format params --domain-log2 10 --proofs 1 --out-dir "$dir-other" \
  --params-file "$out/bench.params" >"$dir-other.log" 2>&1; then fail "bench prove --params-file: a 2^9 key taken for 2^10"; fi
grep -q "bench.params: a key of 511 h.*--domain-log2 10" "$dir-other.log" &&
  echo "ok: bench prove --params-file: a key of another shape is named" ||
  fail "bench prove --params-file: the shape error does not say so: $(cat "$dir-other.log")"

# The synthetic circuits over BN254's Fr: BLS12-381's must keep their bytes for a seed (these are
# the hashes of the files the generator wrote before it took the curve as a parameter).
for case in "--domain-log2 8 --seed 1:bb40ba028d68fa8dc2af3cca1345c4378b0cfb7954ad0a3a060d7565e6b35742:50188d2373fbbfb25315a1f9548a8687ce2350f33493b020b130b7609b52a3c2" \
  "--constraints 60 --seed 3 --bits:e703a868479f77e341c3d29a5cb864a1673f1dee69a09b1d9f6ea8e39c104ab3:0a440f09fe00825648b910f395cc8f475fd242de08e2237bb6b6ece3c45b5cc4"; do
  IFS=: read -r arguments r1cs_hash wtns_hash <<<"$case"
  dir="$out/fixed-${arguments//[ -]/}"
  "$make_circuit" $arguments --out "$dir" 2>/dev/null
  if [ "$(sha256sum <"$dir/circuit.r1cs" | cut -d' ' -f1)" = "$r1cs_hash" ] &&
    [ "$(sha256sum <"$dir/circuit.wtns" | cut -d' ' -f1)" = "$wtns_hash" ]; then
    echo "ok: stagehand_make_circuit $arguments: BLS12-381's r1cs and wtns bytes as before"
  else fail "stagehand_make_circuit $arguments: BLS12-381's circuit changed its bytes"; fi
done
# The BN254 circuit's witness must satisfy its .r1cs by snarkjs's reading (bn128's prime).
dir="$out/bn254-circuit"
"$make_circuit" --curve bn254 --constraints 1019 --seed 5 --bits --out "$dir"
check=$($snarkjs wtns check "$dir/circuit.r1cs" "$dir/circuit.wtns" 2>&1 || true)
if grep -q "WITNESS IS CORRECT" <<<"$check"; then echo "ok: the BN254 synthetic circuit: snarkjs finds the witness correct"
else fail "the BN254 synthetic circuit: snarkjs wtns check does not accept the witness: $check"; fi

# `stagehand bench prove --curve bn254`: the circuit over BN254, its key by BN254's TEST-ONLY setup,
# three proofs through the engine on the functional simulator; snarkjs verifies each as bn128's.
dir="$out/bench-bn254"
"$stagehand" bench prove --curve bn254 --domain-log2 8 --proofs 3 --out-dir "$dir" 2>&1 | grep -v WARNING >"$dir.log" ||
  fail "bench prove --curve bn254 failed: $(cat "$dir.log")"
grep -q "3 of 3 proofs" "$dir.log" || fail "bench prove --curve bn254: not every proof made: $(cat "$dir.log")"
grep -q '"curve": "bn128"' "$dir/vk.json" || fail "bench prove --curve bn254: vk.json does not say bn128"
for i in 1 2 3; do
  grep -q '"curve": "bn128"' "$dir/$i.proof.json" || fail "bench prove --curve bn254: proof $i does not say bn128"
  verify "$dir/vk.json" "$dir/$i.public.json" "$dir/$i.proof.json" ok "bench prove --curve bn254 proof $i"
done
tamper "$dir/1.public.json" "$dir/tampered.json"
verify "$dir/vk.json" "$dir/tampered.json" "$dir/1.proof.json" reject "bench prove --curve bn254 proof 1 with a public signal changed"
if "$stagehand" bench prove --curve bn254 --format params --domain-log2 8 --proofs 1 --out-dir "$dir-params" \
  >"$dir-params.log" 2>&1; then fail "bench prove: --format params taken with --curve bn254"; fi
grep -q "format params.*BLS12-381.*curve bn254" "$dir-params.log" &&
  echo "ok: bench prove --curve bn254 --format params is refused naming both" ||
  fail "bench prove --curve bn254 --format params: the error does not name both: $(cat "$dir-params.log")"

finish "all synthetic-circuit checks passed"
