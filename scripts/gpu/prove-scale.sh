# prove-scale:"CASE...": real proofs at every scale with `stagehand bench prove` (circuit,
# TEST-ONLY key and witness made in memory; each key set resident, fetched ahead or streamed), the
# cases (separated by spaces) in order, one process each:
#   LOG2:PROOFS:POLICY:CAP_GIB:SETS[:EXTRA]  POLICY one or several joined by '+', each in turn on
#       the same key; CAP_GIB 0 = the whole card; SETS auto|resident|fetched-ahead|streamed; EXTRA
#       further bench-prove options with ',' for ' '
#   staging                      what a pinned staging buffer costs to make (stagehand_pinned_staging)
#   check-setup                  the setup kernels' check and timing (stagehand_kernel_check)
#   check:PARTS                  stagehand_kernel_check --only PARTS; on a failure no case after it runs
#   zkey:LOG2:PROOFS:CAP_GIB...  a circuit file (stagehand_make_circuit), its key by `stagehand setup`
#                                (timed, written as a .zkey), its read timed (stagehand_zkey_read_bench),
#                                then PROOFS proofs of it by `stagehand prove` under each cap listed
#                                (':'-separated)
# Logs: scale.log (every run's output) and proofs.tar (each run's vk.json and proofs), for
# scripts/gpu.sh verify prove-scale:"CASE..." DIR. BASELINE=DIR at bundle time: also DIR's
# stagehand_zkey_read_bench (a build of an earlier commit), which the zkey cases run first.
# e.g. scripts/gpu.sh run "prove-scale:staging 26:4:budgeted:16:auto:--trace,F"
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="real proofs at every scale with bench prove (prove-scale:\"LOG2:PROOFS:POLICY:CAP:SETS ...\")"
targets=(stagehand stagehand_make_circuit stagehand_pinned_staging stagehand_zkey_read_bench)
[[ " $arg" == *" check"* ]] && targets+=(stagehand_kernel_check)

check_bundle() {
  [[ -n ${BASELINE:-} ]] || return 0
  (cd "$caller_dir" && nice -n 5 cmake --build "$BASELINE" -j "${JOBS:-2}" --target stagehand_zkey_read_bench)
  pack_binary "$(cd "$caller_dir" && readlink -f "$BASELINE/tests/groth16/stagehand_zkey_read_bench")" baseline_zkey_read_bench
}

check_run() {
  local case status=0
  log=$logs/scale.log
  cat "$logs/machine.txt" >"$log"
  [[ -n $arg ]] || { echo "prove-scale: name the cases (prove-scale:\"CASE ...\")"; return 2; }
  for case in $arg; do
    case $case in
      staging)
        echo "== pinned staging buffers" | tee -a "$log"
        "$bin/stagehand_pinned_staging" 2>&1 | tee -a "$log" || status=1
        ;;
      check-setup)
        echo "== the setup kernels' check" | tee -a "$log"
        "$bin/stagehand_kernel_check" --setup-only 1 --setup-bench 1 2>&1 | grep -v '^ok ' | tee -a "$log" || status=1
        ;;
      check:*)
        # The kernel check's parts first: a kernel that fails its check makes the proofs after it pointless.
        echo "== the kernel check, parts ${case#check:}" | tee -a "$log"
        if ! "$bin/stagehand_kernel_check" --only "${case#check:}" --big 0 2>&1 | grep -v '^ok ' | tee -a "$log"; then
          echo "the kernel check failed: the remaining cases are not run" | tee -a "$log"
          status=1
          break
        fi
        ;;
      zkey:*) scale_zkey "$case" || status=1 ;;
      *) scale_bench "$case" || status=1 ;;
    esac
  done
  tar -C "$work" --exclude='*.toml' --exclude='*.wtns' --exclude='*.zkey' --exclude='*.r1cs' --exclude=logs -cf "$logs/proofs.tar" .
  figure "$(grep -E 'per proof, mean|proofs in' "$log" | tail -1 | cut -c1-200)"
  return $status
}

# scale_zkey zkey:LOG2:PROOFS:CAP...: a key written by `stagehand setup`, read, and proved from.
scale_zkey() {
  local log2 proofs caps dir cap run_dir i status=0
  IFS=: read -r _ log2 proofs caps <<<"$1"
  dir=$work/zkey-$log2
  mkdir -p "$dir/w"
  echo "== 2^$log2 from a .zkey" | tee -a "$log"
  "$bin/stagehand_make_circuit" --domain-log2 "$log2" --out "$dir" 2>&1 | tee -a "$log"
  /usr/bin/time -f "setup 2^$log2: %e s wall, %M KiB peak host memory" "$bin/stagehand" setup --r1cs "$dir/circuit.r1cs" \
    --zkey "$dir/circuit.zkey" --vk "$dir/vk.json" 2>&1 | grep -v '^WARNING' | tee -a "$log" || status=1
  rm -f "$dir/circuit.r1cs"
  # shellcheck disable=SC2012  # the key's size in the log
  ls -l "$dir/circuit.zkey" | tee -a "$log"
  if [[ -x $bin/baseline_zkey_read_bench ]]; then
    echo "== the baseline's read (BASELINE)" | tee -a "$log"
    /usr/bin/time -f "baseline read bench: %M KiB peak host memory" "$bin/baseline_zkey_read_bench" "$dir/circuit.zkey" 2>&1 |
      tee -a "$log" || status=1
    echo "== this build's read" | tee -a "$log"
  fi
  "$bin/stagehand_zkey_read_bench" "$dir/circuit.zkey" 2>&1 | tee -a "$log" || status=1
  for i in $(seq 1 "$proofs"); do ln -sf ../circuit.wtns "$dir/w/$i.wtns"; done
  for cap in ${caps//:/ }; do
    run_dir=$dir/cap$cap
    mkdir -p "$run_dir"
    cp "$dir/vk.json" "$run_dir/vk.json"
    printf '[run]\nbackend = "cuda"\n[gpus]\nvram_cap_gib = %s\n' "$cap" >"$work/zkey-$log2-cap$cap.toml"
    echo "== 2^$log2 from its .zkey, cap $cap GiB" | tee -a "$log"
    /usr/bin/time -f "prove 2^$log2 cap $cap: %e s wall, %M KiB peak host memory" "$bin/stagehand" prove \
      --config "$work/zkey-$log2-cap$cap.toml" --zkey "$dir/circuit.zkey" --wtns "$dir/w" --out-dir "$run_dir" 2>&1 | tee -a "$log" || status=1
  done
  rm -rf "$dir/circuit.zkey" "$dir/circuit.wtns" "$dir/w"
  return $status
}

# scale_bench LOG2:PROOFS:POLICY:CAP:SETS[:EXTRA]: one `stagehand bench prove`.
scale_bench() {
  local log2 proofs policy cap sets extra name
  IFS=: read -r log2 proofs policy cap sets extra <<<"$1"
  name="2^$log2-$proofs-$policy-cap$cap-$sets${extra:+-${extra//[^a-zA-Z0-9]/}}"
  printf '[run]\nbackend = "cuda"\n[gpus]\nvram_cap_gib = %s\n' "$cap" >"$work/$name.toml"
  echo "== $name" | tee -a "$log"
  # shellcheck disable=SC2046,SC2086  # the policies and EXTRA are word lists
  /usr/bin/time -f "$name: %e s wall, %M KiB peak host memory" "$bin/stagehand" bench prove --config "$work/$name.toml" \
    --domain-log2 "$log2" --proofs "$proofs" $(printf -- '--policy %s ' ${policy//+/ }) --key-sets "$sets" --out-dir "$work/$name" ${extra//,/ } \
    2>&1 | grep -v '^WARNING' | tee -a "$log"
}

check_verify() {
  local logs_dir status=0
  logs_dir=$(unpack_logs "$1" "$(tag_of "$spec")") || return 2
  verify_proof_runs "$logs_dir/proofs.tar" || status=1
  grep -E '^== |proofs in|compute engine|per proof, mean|kernels per proof|key.s sets|the key \(|peak host|of device memory|out-of-memory' "$logs_dir/scale.log" || true
  return $status
}
