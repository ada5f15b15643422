# params:"CASE...": Filecoin's .params keys and SupraSeal C2's C ABI on a GPU, the cases (separated
# by spaces) in order:
#   abi        the fixture circuits multiplier and chain: parameters from `stagehand setup --format
#              params`, their assignments from supraseal_c2_tool, then supraseal_c2_test's calls on
#              the CPU reference and on the device path with backend "cuda" (STAGEHAND_SUPRASEAL_CONFIG):
#              the device path's 384-byte proofs must be the CPU reference's byte for byte, and each
#              becomes a proof.json for snarkjs (scripts/gpu.sh verify params DIR).
#   LOG2:PROOFS:CAP_GIB[:EXTRA]  `stagehand bench prove --format params`: a PoRep-shaped key of
#              random points and PROOFS circuits of one assignment through the device path, CAP_GIB 0
#              the whole card; EXTRA further options with ',' for ' '. Timed with the process's peak
#              host memory; its trace (and picture, .svg) brought back.
# Logs: params.log (every case's output), proofs.tar (the abi case's vk.json, proofs, public signals).
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="SupraSeal C2's ABI on the GPU against the CPU reference, and bench prove --format params (params:\"abi LOG2:N:CAP ...\")"
targets=(stagehand)
[[ " $arg " == *" abi "* ]] && targets+=(supraseal_c2_tool supraseal_c2_test)

check_bundle() {
  [[ " $arg " == *" abi "* ]] || return 0
  # supraseal_c2_test calls libstagehand.so.0 (its soname), which pack_binary's list of libraries
  # leaves out: copied under that name, not the versioned file's the link points to.
  cp -L build-cuda/src/capi/libstagehand.so.0 "$staging/lib/libstagehand.so.0"
  local dir circuit
  dir=$(circuits_dir)
  for circuit in multiplier chain; do cp "$dir/$circuit/$circuit.r1cs" "$dir/$circuit/$circuit.wtns" "$bundle/keys/"; done
}

check_run() {
  local case status=0
  log=$logs/params.log
  cat "$logs/machine.txt" >"$log"
  [[ -n $arg ]] || { echo "params: name the cases (params:\"abi 22:4:0 ...\")"; return 2; }
  for case in $arg; do
    case $case in
      abi) params_abi || status=1 ;;
      *) params_bench "$case" || status=1 ;;
    esac
  done
  tar -C "$work" -cf "$logs/proofs.tar" --exclude=logs --exclude='*.params' --exclude='*.bin' .
  figure "$(grep -E 'GPU seconds per partition|byte for byte' "$log" | tail -1 | cut -c1-200)"
  return $status
}

# params_abi: the C ABI's proofs on the CPU reference and on the GPU, compared byte for byte.
params_abi() {
  local circuit dir index status=0
  printf '[run]\nbackend = "cuda"\n[gpus]\ncount = 1\n' >"$work/cuda.toml"
  for circuit in multiplier chain; do
    dir=$work/$circuit
    mkdir -p "$dir/cpu" "$dir/gpu"
    echo "== the C ABI on $circuit" | tee -a "$log"
    "$bin/stagehand" setup --format params --r1cs "$bundle/keys/$circuit.r1cs" --params "$dir/key.params" --seed 7 \
      --vk "$dir/vk.json" 2>&1 | grep -v '^WARNING' | tee -a "$log"
    "$bin/supraseal_c2_tool" assignment "$bundle/keys/$circuit.r1cs" "$bundle/keys/$circuit.wtns" "$dir/assignment.bin" \
      "$dir/public.json" 2>&1 | tee -a "$log"
    "$bin/supraseal_c2_test" "$dir/key.params" "$dir/assignment.bin" "$dir/cpu" 0 >>"$log" 2>&1 ||
      { echo "$circuit: the CPU reference's calls failed" | tee -a "$log"; status=1; continue; }
    STAGEHAND_SUPRASEAL_CONFIG=$work/cuda.toml /usr/bin/time -f "$circuit on the GPU: %e s wall, %M KiB peak host memory" \
      "$bin/supraseal_c2_test" "$dir/key.params" "$dir/assignment.bin" "$dir/gpu" 1 >>"$log" 2>&1 ||
      { echo "$circuit: the device path's calls failed" | tee -a "$log"; status=1; continue; }
    grep -E '^FAIL|on the GPU' "$log" | tail -3
    if cmp -s "$dir/cpu/proofs.bin" "$dir/gpu/proofs.bin"; then
      echo "$circuit: the GPU's proofs are the CPU reference's, byte for byte" | tee -a "$log"
    else
      echo "$circuit: the GPU's proofs differ from the CPU reference's" | tee -a "$log"
      status=1
    fi
    for index in 0 1 2; do "$bin/supraseal_c2_tool" proof-json "$dir/gpu/proofs.bin" "$index" "$dir/$index.proof.json"; done
    for index in 1 2; do cp "$dir/public.json" "$dir/$index.public.json"; done
    mv "$dir/public.json" "$dir/0.public.json"
  done
  return $status
}

# params_bench LOG2:PROOFS:CAP[:EXTRA]: one `stagehand bench prove --format params`.
params_bench() {
  local log2 proofs cap extra name
  IFS=: read -r log2 proofs cap extra <<<"$1"
  name="params-2^$log2-$proofs-cap$cap${extra:+-${extra//[^a-zA-Z0-9]/}}"
  printf '[run]\nbackend = "cuda"\n[gpus]\nvram_cap_gib = %s\n' "$cap" >"$work/$name.toml"
  echo "== $name" | tee -a "$log"
  # shellcheck disable=SC2086  # EXTRA is a word list
  /usr/bin/time -f "$name: %e s wall, %M KiB peak host memory" "$bin/stagehand" bench prove --format params \
    --config "$work/$name.toml" --domain-log2 "$log2" --proofs "$proofs" --out-dir "$work/$name" \
    --trace "$work/$name.trace.json" ${extra//,/ } 2>&1 |
    grep -v '^WARNING' | tee -a "$log"
  local status=${PIPESTATUS[0]}
  rm -rf "${work:?}/$name"
  return "$status"
}

check_verify() {
  local logs_dir status=0
  logs_dir=$(unpack_logs "$1" "$(tag_of "$spec")") || return 2
  verify_proof_runs "$logs_dir/proofs.tar" || status=1
  grep -E '^== |byte for byte|differ|^FAIL|GPU seconds|compute busy|out of memory|VRAM peak|peak host|made on|proofs at' \
    "$logs_dir/params.log" || true
  return $status
}
