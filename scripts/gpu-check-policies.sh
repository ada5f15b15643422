#!/usr/bin/env bash
# The policies on a GPU in one call: the partition program's kernels checked through the launcher
# table, then `stagehand bench policies` (the four policies with the real kernels on synthetic
# data, the card held to 16 GiB) at a small domain and at 2^26.
#
#   scripts/gpu-check-policies.sh bundle     here: builds stagehand, stagehand_kernel_check and
#       stagehand_synthetic_check in build-cuda (nvcc for sm_90; no GPU needed) and gathers them,
#       stripped and compressed with the shared libraries the GPU machine lacks, stagehand into
#       .gpu-policies/ and the two checks into .gpu-policies-checks/ (carry one or both: together
#       they pass the 64 MiB a call carries, so the checks want a call of their own).
#   scripts/gpu-check-policies.sh run        there: into $OUT kernel_check.log, synthetic.log
#       (where .gpu-policies-checks was carried; with .gpu-policies too, the small run follows),
#       small.log, policies.log (with each policy's kernel time by kernel, to calibrate the
#       simulator), policies.json, incident.log (prestage without the synchronise and trim of the
#       fix) and traces.tar (a Perfetto trace and an SVG picture per policy). PARTITIONS (6),
#       SMALL_LOG (22), BIG_LOG (26) narrow it; POLICIES ("serial budgeted") runs only those at
#       BIG_LOG; CHECKS=0 skips the checks and the small run, INCIDENT=0 the incident; MIXED=1 runs
#       them at BIG_LOG again with the partition program's mixed stream order (mixed.log, mixed.json).
#       ONLY=PARTS passes --only PARTS to the kernel check (e.g. "launchers,partition,groth16-h").
#       GROTH16=1 also runs the PoRep partitions on the Groth16 program (config/h200-porep.toml:
#       kind = "groth16", key = "porep-partition") at BIG_LOG: the policies with a PoRep witness
#       (groth16.log, .json), and budgeted with every scalar uniform (groth16-uniform.log, .json).
#   BUILD=DIR (bundle): build in DIR instead of build-cuda.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/bundle.sh
bundle=.gpu-policies
checks=.gpu-policies-checks
case "${1:-}" in
bundle)
  set -e
  export CCACHE_BASEDIR="$PWD"
  build=${BUILD:-build-cuda}
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j2 --target stagehand stagehand_kernel_check stagehand_synthetic_check
  # Stripped and compressed (pack_binaries): the three binaries are some 100 MB as built, 67 MiB packed.
  pack_binaries "$checks" "$build"/tests/gpu/stagehand_kernel_check "$build"/tests/gpu/stagehand_synthetic_check
  pack_binaries "$bundle" "$build"/src/cli/stagehand
  cp config/default.toml "$bundle/"
  # The PoRep partitions on the Groth16 program (what the measured model's config/h200-porep.toml predicts).
  cp config/h200-porep.toml "$bundle/groth16.toml"
  # The incident: prestage with the free-memory check but without the fix's synchronise and trim.
  sed -e 's/^synchronize_device = true/synchronize_device = false/' -e 's/^trim_pool = true/trim_pool = false/' \
    -e 's/^policies = .*/policies = ["prestage"]/' config/default.toml >"$bundle/incident.toml"
  grep -q '^synchronize_device = false' "$bundle/incident.toml" && grep -q '^trim_pool = false' "$bundle/incident.toml"
  # The partition program's mixed stream order ([workload] stream_order), to compare with the default.
  sed -e 's/^stream_order = "in-order"/stream_order = "mixed"/' config/default.toml >"$bundle/mixed.toml"
  grep -q '^stream_order = "mixed"' "$bundle/mixed.toml"
  du -sh "$bundle" "$checks"
  ;;
run)
  export LD_LIBRARY_PATH="$PWD/$bundle/lib:$PWD/$checks/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  [[ -d $bundle ]] && unpack_binaries "$bundle" "$bundle"
  [[ -d $checks ]] && unpack_binaries "$checks" "$checks"
  out="${OUT:-/tmp/gpu-policies}"
  mkdir -p "$out" /tmp/policy-traces
  status=0
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv,noheader | tee "$out/gpu.txt"
  if [[ ${CHECKS:-1} != 0 && -d $checks ]]; then
    timeout 240 "$checks/stagehand_kernel_check" --max-log 14 --big 0 ${ONLY:+--only "$ONLY"} >"$out/kernel_check.log" 2>&1 || status=1
    grep -E "partition|passed|failed" "$out/kernel_check.log" | tail -20
    timeout 120 "$checks/stagehand_synthetic_check" >"$out/synthetic.log" 2>&1 || status=1
    tail -6 "$out/synthetic.log"
  fi
  [[ -d $bundle ]] || exit $status  # the checks' call of their own
  if [[ ${CHECKS:-1} != 0 ]]; then
    timeout 150 "$bundle/stagehand" bench policies --config "$bundle/default.toml" --proofs 1 --partitions 4 \
      --domain-log2 "${SMALL_LOG:-22}" --trace /tmp/policy-traces/small >"$out/small.log" 2>&1 || status=1
    tail -8 "$out/small.log"
  fi
  only=()
  for policy in ${POLICIES:-}; do only+=(--policy "$policy"); done
  timeout 330 "$bundle/stagehand" bench policies --config "$bundle/default.toml" --proofs 1 --partitions "${PARTITIONS:-6}" \
    "${only[@]}" --domain-log2 "${BIG_LOG:-26}" --trace /tmp/policy-traces/big --json "$out/policies.json" >"$out/policies.log" 2>&1 || status=1
  grep -E "^(policy|serial|prestage|two-lock|budgeted) " "$out/policies.log"
  if [[ ${MIXED:-0} != 0 ]]; then
    timeout 330 "$bundle/stagehand" bench policies --config "$bundle/mixed.toml" --proofs 1 --partitions "${PARTITIONS:-6}" \
      "${only[@]}" --domain-log2 "${BIG_LOG:-26}" --trace /tmp/policy-traces/mixed --json "$out/mixed.json" >"$out/mixed.log" 2>&1 || status=1
    grep -E "^(policy|serial|prestage|two-lock|budgeted) " "$out/mixed.log"
  fi
  if [[ ${GROTH16:-0} != 0 ]]; then
    timeout 400 "$bundle/stagehand" bench policies --config "$bundle/groth16.toml" --proofs 1 --partitions "${PARTITIONS:-6}" \
      "${only[@]}" --domain-log2 "${BIG_LOG:-26}" --trace /tmp/policy-traces/groth16 --json "$out/groth16.json" >"$out/groth16.log" 2>&1 || status=1
    grep -E "^(policy|serial|prestage|two-lock|budgeted) " "$out/groth16.log"
    timeout 300 "$bundle/stagehand" bench policies --config "$bundle/groth16.toml" --proofs 1 --partitions "${PARTITIONS:-6}" \
      --policy budgeted --full-scalars 1 --domain-log2 "${BIG_LOG:-26}" --trace /tmp/policy-traces/groth16-uniform \
      --json "$out/groth16-uniform.json" >"$out/groth16-uniform.log" 2>&1 || status=1
    grep -E "^(policy|budgeted) " "$out/groth16-uniform.log"
  fi
  if [[ ${INCIDENT:-1} != 0 ]]; then
    timeout 120 "$bundle/stagehand" bench policies --config "$bundle/incident.toml" --proofs 1 --partitions "${PARTITIONS:-6}" \
      --domain-log2 "${BIG_LOG:-26}" --trace /tmp/policy-traces/incident >"$out/incident.log" 2>&1 || status=1
    grep -E "^(policy|prestage) |FAILED|out of memory" "$out/incident.log" | head -12
  fi
  tar -C /tmp/policy-traces -cf "$out/traces.tar" . || status=1
  exit $status
  ;;
*)
  sed -n 2,15p "$0"
  exit 2
  ;;
esac
