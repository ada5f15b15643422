# policies: the partition program's kernels checked through the launcher table, then `stagehand
# bench policies` (the four policies with the real kernels on synthetic data, the card held to
# 16 GiB) at a small domain and at 2^26. Logs: kernel_check.log, synthetic.log, small.log,
# policies.log (with each policy's kernel time by kernel, to calibrate the simulator),
# policies.json, incident.log (prestage without the synchronise and trim of the fix) and
# traces.tar (a Perfetto trace and an SVG picture per policy).
#   PARTITIONS (6), SMALL_LOG (22), BIG_LOG (26)  the runs' sizes
#   POLICIES ("serial budgeted")  runs only those at BIG_LOG
#   CHECKS=0  skips the checks and the small run (and leaves their binaries out of the bundle)
#   INCIDENT=0  skips the incident
#   MIXED=1  runs them at BIG_LOG again with the partition program's mixed stream order (mixed.log, .json)
#   ONLY=PARTS  passes --only PARTS to the kernel check (e.g. "launchers,partition,groth16-h")
#   GROTH16=1  also runs the PoRep partitions on the Groth16 program (config/h200-porep.toml: kind =
#     "groth16", key = "porep-partition") at BIG_LOG: the policies with a PoRep witness
#     (groth16.log, .json), and budgeted with every scalar uniform (groth16-uniform.log, .json)
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="the partition program's launchers, then bench policies at 2^22 and 2^26 under a 16 GiB cap"
targets=(stagehand)
[[ ${CHECKS:-1} != 0 ]] && targets+=(stagehand_kernel_check stagehand_synthetic_check)

# policies_configs DIR: the incident's (prestage with the free-memory check but without the fix's
# synchronise and trim) and the mixed stream order's ([workload] stream_order) configurations.
policies_configs() {
  sed -e 's/^synchronize_device = true/synchronize_device = false/' -e 's/^trim_pool = true/trim_pool = false/' \
    -e 's/^policies = .*/policies = ["prestage"]/' config/default.toml >"$1/incident.toml"
  grep -q '^synchronize_device = false' "$1/incident.toml" && grep -q '^trim_pool = false' "$1/incident.toml" || return 1
  sed -e 's/^stream_order = "in-order"/stream_order = "mixed"/' config/default.toml >"$1/mixed.toml"
  grep -q '^stream_order = "mixed"' "$1/mixed.toml"
}

# policies_bench NAME CONFIG LIMIT ARG...: one `bench policies` at BIG_LOG into NAME.log and .json.
policies_bench() {
  local name=$1 config=$2 limit=$3
  shift 3
  timeout "$limit" "$bin/stagehand" bench policies --config "$config" --proofs 1 --partitions "${PARTITIONS:-6}" \
    "$@" --domain-log2 "${BIG_LOG:-26}" --trace "$work/traces/$name" --json "$logs/$name.json" >"$logs/$name.log" 2>&1
}

check_run() {
  local status=0 only=() policy
  mkdir -p "$work/traces"
  policies_configs "$work" || { echo "policies: config/default.toml lost the keys the incident and mixed runs change"; return 1; }
  if [[ ${CHECKS:-1} != 0 ]]; then
    timeout 240 "$bin/stagehand_kernel_check" --max-log 14 --big 0 ${ONLY:+--only "$ONLY"} >"$logs/kernel_check.log" 2>&1 || status=1
    grep -E "partition|passed|failed" "$logs/kernel_check.log" | tail -20
    timeout 120 "$bin/stagehand_synthetic_check" >"$logs/synthetic.log" 2>&1 || status=1
    tail -6 "$logs/synthetic.log"
    timeout 150 "$bin/stagehand" bench policies --config config/default.toml --proofs 1 --partitions 4 \
      --domain-log2 "${SMALL_LOG:-22}" --trace "$work/traces/small" >"$logs/small.log" 2>&1 || status=1
    tail -8 "$logs/small.log"
  fi
  for policy in ${POLICIES:-}; do only+=(--policy "$policy"); done
  policies_bench policies config/default.toml 330 ${only[@]+"${only[@]}"} || status=1
  grep -E "^(policy|serial|prestage|two-lock|budgeted) " "$logs/policies.log"
  figure "$(grep -E '^budgeted ' "$logs/policies.log" | head -1 | tr -s ' ' | cut -c1-160)"
  if [[ ${MIXED:-0} != 0 ]]; then
    policies_bench mixed "$work/mixed.toml" 330 ${only[@]+"${only[@]}"} || status=1
    grep -E "^(policy|serial|prestage|two-lock|budgeted) " "$logs/mixed.log"
  fi
  if [[ ${GROTH16:-0} != 0 ]]; then
    policies_bench groth16 config/h200-porep.toml 400 ${only[@]+"${only[@]}"} || status=1
    grep -E "^(policy|serial|prestage|two-lock|budgeted) " "$logs/groth16.log"
    policies_bench groth16-uniform config/h200-porep.toml 300 --policy budgeted --full-scalars 1 || status=1
    grep -E "^(policy|budgeted) " "$logs/groth16-uniform.log"
  fi
  if [[ ${INCIDENT:-1} != 0 ]]; then
    timeout 120 "$bin/stagehand" bench policies --config "$work/incident.toml" --proofs 1 --partitions "${PARTITIONS:-6}" \
      --domain-log2 "${BIG_LOG:-26}" --trace "$work/traces/incident" >"$logs/incident.log" 2>&1 || status=1
    grep -E "^(policy|prestage) |FAILED|out of memory" "$logs/incident.log" | head -12
  fi
  tar -C "$work/traces" -cf "$logs/traces.tar" . || status=1
  return $status
}
