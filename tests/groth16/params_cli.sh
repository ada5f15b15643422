#!/usr/bin/env bash
# `stagehand setup --format params` and `stagehand export-vk` from the command line: the setup
# says loudly that its key is TEST-ONLY, export-vk's vk.json has the snarkjs setup's alpha, beta,
# gamma, delta and nPublic for the same circuit and seed (ic is over another domain), the output
# options of each format are enforced, and a damaged .params file is an error naming its section.
#
#   params_cli.sh <stagehand> <stagehand_make_circuit>
set -euo pipefail
stagehand=$1
make_circuit=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "params_cli.sh: FAIL: $*" >&2; exit 1; }

"$make_circuit" --constraints 30 --out "$work" --seed 30 >/dev/null 2>&1
"$stagehand" setup --format params --r1cs "$work/circuit.r1cs" --params "$work/c.params" --seed 7 2>"$work/setup.log"
grep -q "TEST-ONLY trusted setup" "$work/setup.log" || fail "setup --format params did not warn that its key is TEST-ONLY"
grep -q "a TEST-ONLY key: unsafe for real use" "$work/setup.log" || fail "setup --format params did not end with its warning"
"$stagehand" export-vk --params "$work/c.params" --out "$work/vk.json" 2>/dev/null
"$stagehand" export-vk --params "$work/c.params" >"$work/vk-stdout.json"
cmp -s "$work/vk.json" "$work/vk-stdout.json" || fail "export-vk wrote another vk to standard output than to --out"
"$stagehand" setup --r1cs "$work/circuit.r1cs" --zkey "$work/c.zkey" --vk "$work/vk-zkey.json" --seed 7 2>/dev/null
python3 - "$work/vk.json" "$work/vk-zkey.json" <<'PYTHON' || fail "the exported vk differs from the snarkjs setup's"
import json, sys
params, zkey = (json.load(open(path)) for path in sys.argv[1:3])
same = ["protocol", "curve", "nPublic", "vk_alpha_1", "vk_beta_2", "vk_gamma_2", "vk_delta_2"]
bad = [field for field in same if params[field] != zkey[field]]
assert not bad, f"fields differ: {bad}"
assert params["protocol"] == "groth16" and params["curve"] == "bls12381" and params["nPublic"] == 4, params
assert len(params["IC"]) == len(zkey["IC"]) == 5, (len(params["IC"]), len(zkey["IC"]))
PYTHON

# Each format's outputs, and no other's.
expect_error() {  # expect_error TEXT COMMAND...: the command fails and says TEXT
  local text=$1
  shift
  if "$@" >"$work/out.log" 2>&1; then fail "'$*' succeeded"; fi
  grep -qF -- "$text" "$work/out.log" || fail "'$*' did not say '$text': $(cat "$work/out.log")"
}
expect_error "--format params writes to --params FILE" "$stagehand" setup --format params --r1cs "$work/circuit.r1cs"
expect_error "--format params writes no .zkey" \
  "$stagehand" setup --format params --r1cs "$work/circuit.r1cs" --params "$work/x.params" --zkey "$work/x.zkey"
expect_error "--params goes with --format params" \
  "$stagehand" setup --r1cs "$work/circuit.r1cs" --zkey "$work/x.zkey" --vk "$work/x.json" --params "$work/x.params"
[ ! -e "$work/x.params" ] && [ ! -e "$work/x.zkey" ] || fail "a refused setup wrote a file"

# A damaged file: cut within h's points, and a .zkey given for a .params.
head -c 3000 "$work/c.params" >"$work/cut.params"
expect_error "cut.params: section h: truncated" "$stagehand" export-vk --params "$work/cut.params"
expect_error "c.zkey: section vk: point 0 (alpha_g1)" "$stagehand" export-vk --params "$work/c.zkey"
echo "params_cli.sh: setup --format params and export-vk pass"
