# sanitizers: compute-sanitizer over the kernel check and one proof, beside the plain kernel check
# and the synthetic-data check. Logs: kernel_check.log (2^1..2^14, no big size), synthetic.log,
# memcheck-kernels.log and racecheck-kernels.log (the kernel check to 2^12 under memcheck, 2^10
# under racecheck), memcheck-tunings.log and racecheck-tunings.log (every MSM tuning at those
# sizes), memcheck-streamed.log (a streamed set's batch kernels), memcheck-prove.log and
# racecheck-prove.log (one proof of the chain circuit with backend "cuda"), proof.json,
# public.json and vk.json. Fails if any step fails or a tool reports an error.
#   STEPS ("name ...")  runs only those steps (default: all; the bundle leaves out what they lack)
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="compute-sanitizer memcheck and racecheck over the kernel check and one proof"
steps=" ${STEPS:-kernel_check synthetic memcheck-kernels memcheck-tunings memcheck-streamed memcheck-prove racecheck-kernels racecheck-tunings racecheck-prove} "
targets=()
[[ $steps == *-prove* ]] && targets+=(stagehand) && keys=(chain)
[[ $steps =~ kernel_check|-kernels|-tunings|-streamed ]] && targets+=(stagehand_kernel_check)
[[ $steps == *" synthetic "* ]] && targets+=(stagehand_synthetic_check)

check_run() {
  local status=0 check prove parts tool max_log sanitize
  printf '[run]\nbackend = "cuda"\n' >"$work/cuda.toml"
  # Each step has its own time limit, so that a slow tool cannot take the whole run.
  step() {  # name, timeout, command...
    local name=$1 limit=$2
    shift 2
    [[ $steps == *" $name "* ]] || return 0
    timeout "$limit" "$@" >"$logs/$name.log" 2>&1 || status=1
    echo "== $name: $(tail -1 "$logs/$name.log")"
  }
  check=("$bin/stagehand_kernel_check")
  prove=("$bin/stagehand" prove --config "$work/cuda.toml" --zkey "$bundle/keys/chain.zkey" --wtns "$bundle/keys/chain.wtns" --seed 5
    --proof "$logs/proof.json" --public "$logs/public.json")
  step kernel_check 200 "${check[@]}" --max-log 14 --big 0
  step synthetic 120 "$bin/stagehand_synthetic_check"
  # racecheck runs each launch far slower than memcheck: its checks at 2^10, memcheck's at 2^12;
  # the MSM's tunings (every item-sum form) in a step of their own.
  parts=setup,launchers,partition,abc,g2,msm-edge,ntt,h,msm,msm-streamed
  for tool in memcheck racecheck; do
    max_log=12
    [[ $tool == racecheck ]] && max_log=10
    sanitize=(compute-sanitizer --tool "$tool" --error-exitcode 3)
    step "$tool-kernels" 150 "${sanitize[@]}" "${check[@]}" --only $parts --max-log $max_log --g2-log $max_log --streamed-log $max_log --setup-log $max_log --big 0
    step "$tool-tunings" 120 "${sanitize[@]}" "${check[@]}" --only msm-tunings --tunings-log $max_log
    step "$tool-prove" 90 "${sanitize[@]}" "${prove[@]}"
  done
  step memcheck-streamed 120 compute-sanitizer --tool memcheck --error-exitcode 3 "${check[@]}" --only groth16-streamed
  [[ -f $bundle/keys/chain.vk.json ]] && cp "$bundle/keys/chain.vk.json" "$logs/vk.json"
  figure "$(grep -h -o 'ERROR SUMMARY: [0-9]* errors\|RACECHECK SUMMARY: [0-9]* hazards' "$logs"/*check-*.log 2>/dev/null | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
  return $status
}
