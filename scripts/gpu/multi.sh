# multi[:GPUS]: several GPUs of one host (GPUS, default 2): every CudaDevice call on its own GPU
# (cuda_current_device_test); `bench policies` at 2^26 under a 16 GiB cap per card, budgeted, 2
# proofs per GPU, on one GPU and on all of them (partitions per second compared); a stream of
# real 2^22 proofs (`bench prove`, 16 GiB cap), 6 per GPU, on one GPU and on all of them (proofs
# per second compared); the same stream on all of them with GPU 1 lost at its 40th kernel launch
# (the fault adaptor around CudaDevice): every proof must still be made, on the others.
# Logs: scale.log (every run's output), proofs.tar (each stream's vk.json and proofs), for
# scripts/gpu.sh verify multi DIR.
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="one GPU against all of a host's (multi:GPUS): current device, bench policies, a proof stream, a GPU lost"
targets=(stagehand cuda_current_device_test)

# multi_config NAME COUNT [LINE...]: a configuration for COUNT GPUs under a 16 GiB cap each.
multi_config() {
  local file=$work/$1.toml count=$2 line
  shift 2
  printf '[run]\nbackend = "cuda"\n[gpus]\ncount = %s\nvram_cap_gib = 16\n' "$count" >"$file"
  for line in "$@"; do printf '%s\n' "$line" >>"$file"; done
  echo "$file"
}

# multi_stream NAME COUNT [LINE...]: the 2^22 proof stream on COUNT GPUs.
multi_stream() {
  local name=$1 count=$2
  shift 2
  echo "== bench prove, 2^22, $name" | tee -a "$log"
  /usr/bin/time -f "$name: %e s wall, %M KiB peak host memory" "$bin/stagehand" bench prove --config "$(multi_config "$name" "$count" "$@")" \
    --domain-log2 22 --proofs $((6 * count)) --policy budgeted --out-dir "$work/runs/$name" 2>&1 | grep -v '^WARNING' | tee -a "$log"
}

check_run() {
  local gpus=${arg:-2} count status=0
  log=$logs/scale.log
  cat "$logs/machine.txt" >"$log"
  mkdir -p "$work/runs"
  echo "== every CudaDevice call on its own GPU" | tee -a "$log"
  "$bin/cuda_current_device_test" --report_level=short 2>&1 | tee -a "$log" || status=1
  for count in 1 "$gpus"; do
    echo "== bench policies, 2^26, budgeted, $count GPU(s)" | tee -a "$log"
    "$bin/stagehand" bench policies --config "$(multi_config "policies-$count" "$count")" --policy budgeted --domain-log2 26 \
      --proofs $((2 * count)) --trace "$work/policies-$count" --json "$logs/policies-$count.json" 2>&1 | tee -a "$log" || status=1
  done
  multi_stream "proofs-1-gpu" 1 || status=1
  multi_stream "proofs-$gpus-gpus" "$gpus" || status=1
  multi_stream "proofs-$gpus-gpus-gpu1-lost" "$gpus" "[faults]" "device = 1" "lose_device_at_launch = 40" || status=1
  tar -C "$work/runs" -cf "$logs/proofs.tar" .
  figure "$(grep -E ': [0-9.]+ s wall' "$log" | tr '\n' ';' | cut -c1-200)"
  return $status
}

check_verify() {
  local logs_dir
  logs_dir=$(unpack_logs "$1" "$(tag_of "$spec")") || return 2
  verify_proof_runs "$logs_dir/proofs.tar"
}
