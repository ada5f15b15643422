# profile-kernels[:STEP]: where the arithmetic kernels lose time: the integer-pipe and
# field-multiplication throughput benchmark (bench/field_throughput.cu), then Nsight Compute on
# the MSM's bucket accumulation (item_sum_kernel) and the NTT's pass kernel at 2^22 with the pipe
# and warp-stall sections. STEP: pipes, ncu or all (default). Logs: pipes.log, ncu.log.
#   KERNELS ("item_sum_kernel ntt_radix4_pass_kernel")  the kernels profiled, one ncu run each
#   NCU_BENCH_ARGS ("22 --reps 1 --no-streamed --no-g2")  what the kernel benchmark runs under ncu
#   (the G2 MSM's accumulation: KERNELS=item_sum_kernel NCU_BENCH_ARGS="22 --reps 1 --no-ntt --no-msm")
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="field-arithmetic pipe throughput, and Nsight Compute on the MSM accumulation and the NTT pass"
step=${arg:-all}
case $step in
  pipes) targets=(stagehand_field_throughput) ;;
  ncu) targets=(stagehand_kernel_bench) ;;
  *) targets=(stagehand_field_throughput stagehand_kernel_bench) ;;
esac

profile_pipes() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
  "$bin/stagehand_field_throughput" | tee "$logs/pipes.log"
}

profile_ncu() {
  # The first launches after the benchmark's warm-up: the accumulation of a 2^22 MSM on the
  # device, and the three passes of a 2^22 forward NTT (one ncu run per kernel: --launch-count
  # counts the launches of every kernel the filter lets through).
  : >"$logs/ncu.log"
  local kernel
  for kernel in ${KERNELS:-item_sum_kernel ntt_radix4_pass_kernel}; do
    # shellcheck disable=SC2086  # NCU_BENCH_ARGS is a word list
    ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip 2 --launch-count 3 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats \
      --section SchedulerStats --section Occupancy --section LaunchStats --metrics "$(profile_metrics)" \
      "$bin/stagehand_kernel_bench" ${NCU_BENCH_ARGS:-22 --reps 1 --no-streamed --no-g2} >>"$logs/ncu.log" 2>&1 || true
  done
  grep -E "item_sum_kernel|ntt_radix4_pass_kernel|Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc A|No Eligible|sm__inst_executed_pipe|sm__pipe_|issue_stalled" "$logs/ncu.log" | head -120
}

# The pipes' shares of the instructions and of the cycles, and the warp-stall reasons (cycles a
# warp spends stalled for each reason, per issued instruction).
profile_metrics() {
  local list=() pipe reason
  for pipe in alu fma fmaheavy fmalite lsu; do
    list+=("sm__inst_executed_pipe_${pipe}.avg.pct_of_peak_sustained_active" "sm__pipe_${pipe}_cycles_active.avg.pct_of_peak_sustained_active")
  done
  for reason in long_scoreboard short_scoreboard wait math_pipe_throttle not_selected selected dispatch_stall \
    mio_throttle lg_throttle barrier no_instruction branch_resolving; do
    list+=("smsp__average_warps_issue_stalled_${reason}_per_issue_active.ratio")
  done
  local IFS=,
  echo "${list[*]}"
}

check_run() {
  case $step in
    pipes) profile_pipes ;;
    ncu) profile_ncu ;;
    all) profile_pipes; profile_ncu ;;
    *) echo "profile-kernels: unknown step '$step' (pipes, ncu or all)"; return 2 ;;
  esac
}
