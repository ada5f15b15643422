# setup: the test-only setup's kernels (cuda/kernels/setup/fixed_base.*: setup_fixed_base_g1 and
# _g2 through their launchers over 2^12 random scalars and the edge cases against the CPU
# reference, refused arguments), timed at 2^20 and 2^24 G1 points and 2^20 and 2^22 G2 points
# (median of CUDA-event-timed runs), with the projected kernel time of a 2^26 setup. Log: setup.log.
#   LOG (12)   checked size   G1_LOG (20) G1_LARGE (24) G2_LOG (20) G2_LARGE (22)  timed sizes (0 skips)
#   REPS (3)   timed runs     ONLY (all)  checks | bench
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="the test-only setup's fixed-base multiplications against the CPU reference, timed"
targets=(stagehand_setup_check)

check_run() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null || true
  local status=0
  run_logged "$logs/setup.log" "$bin/stagehand_setup_check" --log "${LOG:-12}" --g1 "${G1_LOG:-20}" \
    --g1-large "${G1_LARGE:-24}" --g2 "${G2_LOG:-20}" --g2-large "${G2_LARGE:-22}" --reps "${REPS:-3}" \
    --only "${ONLY:-all}" || status=$?
  figure "$(grep -v '^ok ' "$logs/setup.log" | tail -1)"
  return "$status"
}
