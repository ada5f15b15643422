# soak-proofs: a stream of real proofs on a GPU with faults injected (FaultyDevice around
# CudaDevice, [faults] of the configuration): each affected proof fails with a clear error,
# the others pass the pairing check on their way out, and the engine holds no more device memory
# after the run than before it (its own allocations and its pool's reserve: the device's free
# memory is printed beside it but not compared, as the CUDA runtime keeps some MiB of its own after
# the first launches of a process, which a baseline taken before them counts as a leak).
# PROOFS (500) copies of the chain circuit's witness proved in one run under budgeted, two workers,
# with ALLOCATION (0.005) and KERNEL (0.005) failure probabilities (SEED 7). Logs: soak.log and
# sample.tar (40 proofs with their public signals and the vk, for `snarkjs groth16 verify`). Fails
# unless every proof either verified or failed with an injected fault's message, and the engine
# held nothing more after the run.
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="500 real proofs with allocation and kernel faults injected: each fails cleanly or verifies, nothing leaks"
targets=(stagehand)
keys=(chain)

check_run() {
  local i start code done_count failed_count injected_count status=0 proofs=${PROOFS:-500}
  mkdir -p "$work/witnesses" "$work/proofs"
  for i in $(seq -w 1 "$proofs"); do cp "$bundle/keys/chain.wtns" "$work/witnesses/w$i.wtns"; done
  printf '[run]\nbackend = "cuda"\n[faults]\nallocation_failure_probability = %s\nkernel_error_probability = %s\nseed = %s\n' \
    "${ALLOCATION:-0.005}" "${KERNEL:-0.005}" "${SEED:-7}" >"$work/soak.toml"
  start=$(date +%s)
  timeout 500 "$bin/stagehand" prove --config "$work/soak.toml" --zkey "$bundle/keys/chain.zkey" --wtns "$work/witnesses" \
    --out-dir "$work/proofs" --seed 11 >"$logs/soak.log" 2>&1
  code=$?
  echo "prove exited $code after $(($(date +%s) - start)) s"
  done_count=$(grep -c "proof done" "$logs/soak.log")
  failed_count=$(grep -c ": FAILED: " "$logs/soak.log")
  injected_count=$(grep ": FAILED: " "$logs/soak.log" | grep -c "\[injected fault\]")
  echo "proofs: $proofs, done and verified: $done_count, failed: $failed_count (injected faults: $injected_count)"
  grep -E "proofs? in |pairing check|the engine holds" "$logs/soak.log"
  cp "$bundle/keys/chain.vk.json" "$work/vk.json"
  # shellcheck disable=SC2012  # the proofs' names are the run's own
  ls "$work/proofs" | head -40 | sed 's/^/proofs\//' | tar -C "$work" -cf "$logs/sample.tar" -T - vk.json
  [[ $((done_count + failed_count)) == "$proofs" && $failed_count == "$injected_count" ]] || status=1
  grep -q "nothing left behind" "$logs/soak.log" || status=1
  figure "$done_count of $proofs proofs verified, $failed_count failed ($injected_count by injected faults)"
  return $status
}
