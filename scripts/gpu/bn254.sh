# bn254: BN254's kernels (issue 51): stagehand_kernel_check's BN254 parts (the NTT kinds and their
# variants, h_pointwise and both H forms, the Groth16 program's H step, the G1 MSM through msm_g1 and
# groth16_msm_g1 with its streamed and precomputed forms, the G2 MSM's, at 2^1..2^LOG against
# src/math's bn254 reference; groth16_abc; the setup's fixed-base kernels; a launch of a kernel
# with no BN254 instance refused by CudaDevice), then the kernel benchmark over BN254 (its NTT
# kinds, the snarkjs H form, the G1 and G2 MSMs, each MSM result verified). Logs: check.log,
# bench.log. Figure: the G1 MSM at 2^20.
#   LOG (20)   largest size of the check's sweep   BENCH_SIZES ("20 22 24 26")
#   PARTS      the check's parts (default: every bn254-* part)   STEP: check, bench or all (default)
#   CHECK_ARGS, BENCH_ARGS  extra arguments (e.g. BENCH_ARGS="--ntt-variants")
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="BN254's kernels against the CPU reference (2^1..2^20) and timed (2^20..2^26)"
step=${arg:-all}
case $step in
  check) targets=(stagehand_kernel_check) ;;
  bench) targets=(stagehand_kernel_bench) ;;
  *) targets=(stagehand_kernel_check stagehand_kernel_bench) ;;
esac

bn254_parts="bn254-ntt,bn254-h,bn254-msm-g1,bn254-msm-g2,bn254-abc,bn254-setup,bn254-wrong-curve"

bn254_check() {
  # shellcheck disable=SC2086  # CHECK_ARGS is a word list
  run_logged "$logs/check.log" "$bin/stagehand_kernel_check" --only "${PARTS:-$bn254_parts}" \
    --bn254-log "${LOG:-20}" ${CHECK_ARGS:-}
}

bn254_bench() {
  # shellcheck disable=SC2086  # word lists
  "$bin/stagehand_kernel_bench" --curve bn254 ${BENCH_SIZES:-20 22 24 26} ${BENCH_ARGS:-} 2>&1 |
    tee "$logs/bench.log"
}

check_run() {
  local check_status=0
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader || true
  case $step in
    check) bn254_check || check_status=$? ;;
    bench) bn254_bench || check_status=$? ;;
    all)
      bn254_check || check_status=$?
      bn254_bench || check_status=$?
      ;;
    *) echo "bn254: unknown step '$step' (check, bench or all)"; return 2 ;;
  esac
  # A wrong MSM result in the benchmark fails the run as a failed check does.
  if [[ -f $logs/bench.log ]] && grep -q 'WRONG RESULT' "$logs/bench.log"; then check_status=1; fi
  local figures=""
  [[ -f $logs/check.log ]] && figures="$(grep -E '^kernel check' "$logs/check.log" | tail -1); "
  [[ -f $logs/bench.log ]] && figures+="G1 MSM 2^20: $(awk '$1 == "bn254" && $2 == "msm_g1" && $4 == 20 { print $5 " ms" }' "$logs/bench.log")"
  figure "$figures"
  return "$check_status"
}
