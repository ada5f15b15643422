# kernels[:STEP]: the whole GPU kernel check (stagehand_kernel_check) and the kernel benchmark
# (stagehand_kernel_bench). STEP: check, bench or all (default). Logs: check.log, bench.log.
#   MAX_LOG (22)  largest size of the sweep   BIG (26)  the one large run (0: none)
#   BENCH_SIZES ("20 22 24 26")   MSM_ONLY=1  leave the NTT and H checks out (MSM work)
#   BIG_NTT=0  at 2^BIG check only the MSM    BIG_PARTS ("ntt,h,msm")  which checks run at 2^BIG
#   (the CPU references of ntt and h take about 40 s per transform there: a run can split them)
#   CHECK_ARGS  extra check arguments         BENCH_ARGS  extra bench arguments
#   (e.g. BENCH_ARGS="--no-ntt --msm-variants --msm-profile")
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="the whole kernel check against the CPU reference (2^1..2^22, 2^26) and the kernel benchmark"
step=${arg:-all}
case $step in
  check) targets=(stagehand_kernel_check) ;;
  bench) targets=(stagehand_kernel_bench) ;;
  *) targets=(stagehand_kernel_check stagehand_kernel_bench) ;;
esac

kernels_check() {
  # shellcheck disable=SC2086  # CHECK_ARGS is a word list
  run_logged "$logs/check.log" "$bin/stagehand_kernel_check" --max-log "${MAX_LOG:-22}" --big "${BIG:-26}" \
    --msm-only "${MSM_ONLY:-0}" --big-parts "${BIG_PARTS:-$([[ ${BIG_NTT:-1} == 0 ]] && echo msm || echo ntt,h,msm)}" ${CHECK_ARGS:-}
}

kernels_bench() {
  # shellcheck disable=SC2086  # word lists
  "$bin/stagehand_kernel_bench" ${BENCH_SIZES:-20 22 24 26} ${BENCH_ARGS:-} 2>&1 | tee "$logs/bench.log"
}

check_run() {
  local check_status=0
  case $step in
    check) kernels_check || check_status=$? ;;
    bench) kernels_bench || check_status=$? ;;
    all)
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader || true
      kernels_check || check_status=$?
      kernels_bench
      ;;
    *) echo "kernels: unknown step '$step' (check, bench or all)"; return 2 ;;
  esac
  [[ -f $logs/check.log ]] && figure "$(grep -c '^ok ' "$logs/check.log") checks ok; $(grep -E '^kernel check' "$logs/check.log" | tail -1)"
  return "$check_status"
}
