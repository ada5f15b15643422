# synthetic: the synthetic proving-key generator (cuda/kernels/synthetic/synthetic.*: G1 and G2
# points at 1, 7, 1000 and 2^20 - 3 against the CPU reference, scalars, tail items, rejected
# arguments), timed at 2^24 G1 points, 2^22 G2 points, 2^24 scalars and 2^22 tail items (median of
# CUDA-event-timed runs), with the projected time of the 2^26 partition's whole key. Log: synthetic.log.
#   MAX_LOG (20)   largest checked size   G1_LOG (24) G2_LOG (22) SCALARS_LOG (24) TAIL_LOG (22)
#   REPS (5)       timed runs             ONLY (all)  checks | bench
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="the synthetic proving-key generator against the CPU reference, timed up to 2^24"
targets=(stagehand_synthetic_check)

check_run() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null || true
  local status=0
  run_logged "$logs/synthetic.log" "$bin/stagehand_synthetic_check" --max-log "${MAX_LOG:-20}" --g1 "${G1_LOG:-24}" \
    --g2 "${G2_LOG:-22}" --scalars "${SCALARS_LOG:-24}" --tail "${TAIL_LOG:-22}" --reps "${REPS:-5}" \
    --only "${ONLY:-all}" || status=$?
  figure "$(grep -v '^ok ' "$logs/synthetic.log" | tail -1)"
  return "$status"
}
