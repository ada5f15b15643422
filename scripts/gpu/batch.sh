# batch: the batch additions (batch_addition_g1/g2 against the CPU reference at 1, 2, 1000, 2^20
# points and the edge cases) and each kernel timed at 2^22 points already on the device (median of
# CUDA-event-timed runs, points/s). Log: batch.log.
#   MAX_LOG (20)  largest checked size    BENCH_LOG (22)  timed size (0: no timing)
#   REPS (20)     timed runs              GROUP (both)    g1, g2 or both
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="the batch additions in G1 and G2 against the CPU reference, timed at 2^22 points"
targets=(stagehand_batch_check)

check_run() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null || true
  local status=0
  run_logged "$logs/batch.log" "$bin/stagehand_batch_check" --max-log "${MAX_LOG:-20}" --bench "${BENCH_LOG:-22}" \
    --reps "${REPS:-20}" --group "${GROUP:-both}" || status=$?
  figure "$(grep -v '^ok ' "$logs/batch.log" | tail -1)"
  return "$status"
}
