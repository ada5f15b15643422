#!/usr/bin/env bash
# Where the arithmetic kernels lose time, in one GPU call: the integer-pipe and field-multiplication
# throughput benchmark (bench/field_throughput.cu), then Nsight Compute on the MSM's bucket
# accumulation (item_sum_kernel) and the NTT's pass kernel at 2^22 with the pipe and warp-stall
# sections. On the GPU machine:
#
#   scripts/gpu-profile-kernels.sh [pipes|ncu|all]
#
# Binaries: build-cuda/pipes/field_throughput (built here when missing or older than its sources:
# nvcc only) and build-cuda/direct/stagehand_kernel_bench (scripts/gpu-check-kernels.sh build).
# Logs into $OUT (or /tmp/stagehand-profile): pipes.log, ncu.log.
#   BENCH  the benchmark binary (build-cuda/direct/stagehand_kernel_bench)
#   KERNELS ("item_sum_kernel ntt_radix4_pass_kernel")  the kernels profiled, one ncu run each
#   NCU_BENCH_ARGS ("22 --reps 1 --no-streamed --no-g2")  what the benchmark runs under ncu
#   (the G2 MSM's accumulation: KERNELS=item_sum_kernel NCU_BENCH_ARGS="22 --reps 1 --no-ntt --no-msm")
set -euo pipefail
cd "$(dirname "$0")/.."
step=${1:-all}
LOGS=${OUT:-/tmp/stagehand-profile}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ARCH=${STAGEHAND_CUDA_ARCH:-90}
pipes=build-cuda/pipes/field_throughput
mkdir -p "$LOGS" "$(dirname "$pipes")"

build_pipes() {
  if [[ -x $pipes && ( ${REUSE:-0} == 1 || -z $(find bench/field_throughput.cu bench/cuda_check.hpp cuda/kernels/ff cuda/kernels/ec/curve.cuh -newer "$pipes") ) ]]; then
    return
  fi
  "$NVCC" -std=c++20 -O3 -gencode="arch=compute_${ARCH},code=sm_${ARCH}" --expt-relaxed-constexpr -Icuda/kernels \
    bench/field_throughput.cu -o "$pipes"
}

run_pipes() {
  build_pipes
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
  "$pipes" | tee "$LOGS/pipes.log"
}

run_ncu() {
  local bench=${BENCH:-build-cuda/direct/stagehand_kernel_bench}
  [[ -x $bench ]] || { echo "missing $bench (scripts/gpu-check-kernels.sh build)" >&2; return 1; }
  # The first launches after the benchmark's warm-up: the accumulation of a 2^22 MSM on the
  # device, and the three passes of a 2^22 forward NTT (one ncu run per kernel: --launch-count
  # counts the launches of every kernel the filter lets through).
  : >"$LOGS/ncu.log"
  local kernel
  for kernel in ${KERNELS:-item_sum_kernel ntt_radix4_pass_kernel}; do
    ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip 2 --launch-count 3 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats \
      --section SchedulerStats --section Occupancy --section LaunchStats --metrics "$(metrics)" \
      "$bench" ${NCU_BENCH_ARGS:-22 --reps 1 --no-streamed --no-g2} >>"$LOGS/ncu.log" 2>&1 || true
  done
  grep -E "item_sum_kernel|ntt_radix4_pass_kernel|Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc A|No Eligible|sm__inst_executed_pipe|sm__pipe_|issue_stalled" "$LOGS/ncu.log" | head -120
}

# The pipes' shares of the instructions and of the cycles, and the warp-stall reasons (cycles a
# warp spends stalled for each reason, per issued instruction).
metrics() {
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

case $step in
  pipes) run_pipes ;;
  ncu) run_ncu ;;
  all) run_pipes; run_ncu ;;
  *) echo "usage: $0 [pipes|ncu|all]" >&2; exit 2 ;;
esac
