# bench-proofs:MODE: real proofs on a GPU, checked and timed (the whole Groth16 program on the
# device: a/b/c, H, the G1 and G2 MSMs). BASELINE=FILE at bundle time: an older stagehand binary
# (CUDA build) measured beside this one (stagehand-baseline). Synthetic circuits and their keys stay
# in /tmp/gpu-keys between runs.
#   check          the Groth16 kernels' check (groth16_abc, the G2 MSM 2^1..2^22) and the fixture
#                  circuits proved on the GPU and on the CPU path (the simulator's functional mode)
#                  with the same seed: the proof.json files must be identical. Logs: check.log, proofs.tar.
#   stream:LOG2:N  a synthetic circuit of domain 2^LOG2 (stagehand_make_circuit, `stagehand setup`),
#                  one proof alone in a fresh process, then N proofs in one run, with this build and
#                  the baseline when carried. Logs: stream-LOG2.log, proofs-LOG2.tar (vk.json and
#                  every proof with its public signals). BUILDS ("stagehand stagehand-baseline")
#                  picks the builds, WORKERS passes --workers to this build (the baseline has two),
#                  BITS=1 makes the circuit with --bits (a witness mostly of 0s and 1s).
#   serve:LOG2:N   `stagehand serve` against `stagehand prove` (scripts/bench-serve.sh), N proofs
#                  from 8 clients and N/4 from one, with the key kept set up on the GPU between the
#                  engine's batches ([engine] keep_key_on_device = true) and set up for each batch
#                  (false), in that order per client count; then the GPU's memory in use with the
#                  key set up and after unloading it. Log: serve-LOG2.log. ROUNDS (2) rounds each;
#                  ROUNDS=0 the memory check alone. SERVE_VARIANTS ("stagehand:true stagehand:false")
#                  lists BUILD:KEEP pairs, the baseline's as stagehand-baseline:true.
#   lone:LOG2:N    N requests one after the other through `stagehand serve` (curl's time and the
#                  engine's), this build and the baseline alternating, two rounds. Log: lone-LOG2.log;
#                  with TRACES=1 also lone-traces.tar (this build's trace and picture of every batch).
#   keys:LOG2:N    N requests one after the other through `stagehand serve`, alternating between two
#                  keys, with keep_key_on_device true and false alternating, two rounds, and each
#                  key's device set-ups and bytes. Log: keys-LOG2.log.
# scripts/gpu.sh verify bench-proofs:MODE DIR: snarkjs verifies every proof in the run's tarballs.
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="real proofs checked and timed: bench-proofs:check, :stream:LOG2:N, :serve:LOG2:N, :lone:LOG2:N, :keys:LOG2:N"
IFS=: read -r mode log2 count _ <<<"$arg"
targets=(stagehand stagehand_make_circuit)
[[ $mode == check ]] && targets+=(stagehand_kernel_check) && keys=(multiplier linear chain)

check_bundle() {
  [[ -n ${BASELINE:-} ]] || return 0
  pack_binary "$(cd "$caller_dir" && readlink -f "$BASELINE")" stagehand-baseline
}

check_run() {
  printf '[run]\nbackend = "cuda"\n' >"$work/cuda.toml"
  printf '[run]\nbackend = "sim"\n' >"$work/sim.toml"
  [[ $mode == check || ( $log2 =~ ^[0-9]+$ && $count =~ ^[0-9]+$ ) ]] ||
    { echo "bench-proofs: '$arg': expected check or MODE:LOG2:N"; return 2; }
  case $mode in
    check) proofs_check ;;
    stream) proofs_stream ;;
    serve) proofs_serve ;;
    lone) proofs_lone ;;
    keys) proofs_keys ;;
    *) echo "bench-proofs: unknown mode '$mode' (check, stream, serve, lone, keys)"; return 2 ;;
  esac
}

# make_synthetic_key DIR LOG2: a synthetic circuit of domain 2^LOG2 and its TEST-ONLY key in DIR
# (kept where an earlier run on the same machine made them).
make_synthetic_key() {
  local dir=$1 log2=$2
  [[ -f $dir/circuit.zkey ]] && return 0
  mkdir -p "$dir"
  "$bin/stagehand_make_circuit" --domain-log2 "$log2" --out "$dir" >/dev/null 2>&1
  "$bin/stagehand" setup --r1cs "$dir/circuit.r1cs" --zkey "$dir/circuit.zkey" --vk "$dir/vk.json" 2>/dev/null
}

proofs_check() {
  local log=$logs/check.log status=0 c backend p
  cat "$logs/machine.txt" >"$log"
  "$bin/stagehand_kernel_check" --msm-only 1 --max-log 12 --big 0 --g2-log 22 2>&1 | tee -a "$log" | grep -v '^ok ' || status=1
  mkdir -p "$work/fixtures"
  for c in multiplier linear chain; do
    mkdir -p "$work/fixtures/$c/w"
    cp "$bundle/keys/$c.wtns" "$work/fixtures/$c/w/1.wtns"
    cp "$bundle/keys/$c.wtns" "$work/fixtures/$c/w/2.wtns"
    cp "$bundle/keys/$c.vk.json" "$work/fixtures/$c/vk.json"
    for backend in cuda sim; do
      echo "== $c on $backend, seed 7" | tee -a "$log"
      "$bin/stagehand" prove --config "$work/$backend.toml" --zkey "$bundle/keys/$c.zkey" --wtns "$work/fixtures/$c/w" \
        --seed 7 --out-dir "$work/fixtures/$c/$backend" 2>&1 | tee -a "$log" || status=1
    done
    for p in 1 2; do
      if cmp -s "$work/fixtures/$c/cuda/$p.proof.json" "$work/fixtures/$c/sim/$p.proof.json"; then
        echo "$c proof $p: GPU and CPU path identical" | tee -a "$log"
      else
        echo "$c proof $p: GPU and CPU path DIFFER" | tee -a "$log"
        status=1
      fi
    done
  done
  tar -C "$work/fixtures" -cf "$logs/proofs.tar" .
  figure "$(grep -c 'GPU and CPU path identical' "$log") of 6 proofs identical on the GPU and the CPU path"
  return $status
}

proofs_stream() {
  local tag=$log2${BITS:+-bits}${WORKERS:+-w$WORKERS} dir build workers out_dir status=0 i
  local log=$logs/stream-$tag.log
  cat "$logs/machine.txt" >>"$log"
  dir=/tmp/gpu-keys/big-$log2${BITS:+-bits}
  if [[ ! -f $dir/circuit.zkey ]]; then
    rm -rf "$dir" && mkdir -p "$dir"
    "$bin/stagehand_make_circuit" --domain-log2 "$log2" ${BITS:+--bits} --out "$dir" 2>&1 | tee -a "$log"
    /usr/bin/time -f "setup: %e s wall" "$bin/stagehand" setup --r1cs "$dir/circuit.r1cs" --zkey "$dir/circuit.zkey" \
      --vk "$dir/vk.json" 2>&1 | grep -v '^WARNING' | tee -a "$log"
  fi
  rm -rf "$dir/one" "$dir/many" "$dir"/out-* && mkdir -p "$dir/one" "$dir/many"
  cp "$dir/circuit.wtns" "$dir/one/1.wtns"
  for i in $(seq 1 "$count"); do cp "$dir/circuit.wtns" "$dir/many/$i.wtns"; done
  for build in ${BUILDS:-stagehand stagehand-baseline}; do
    [[ -x $bin/$build ]] || continue
    # The baseline predates --workers: it runs with the configuration's two.
    workers=()
    [[ $build == stagehand && -n ${WORKERS:-} ]] && workers=(--workers "$WORKERS")
    out_dir=$dir/out-$build${WORKERS:+-w$WORKERS}
    mkdir -p "$out_dir"
    echo "== $build: 1 proof alone, 2^$log2" | tee -a "$log"
    /usr/bin/time -f "$build one proof: %e s wall" "$bin/$build" prove --config "$work/cuda.toml" --zkey "$dir/circuit.zkey" \
      --wtns "$dir/one" --out-dir "$out_dir/one" 2>&1 | tee -a "$log" || status=1
    echo "== $build: $count proofs in one run, 2^$log2 ${workers[*]}" | tee -a "$log"
    "$bin/$build" prove --config "$work/cuda.toml" --zkey "$dir/circuit.zkey" --wtns "$dir/many" ${workers[@]+"${workers[@]}"} \
      --out-dir "$out_dir/many" 2>&1 | tee -a "$log" || status=1
  done
  (cd "$dir" && tar -cf "$logs/proofs-$tag.tar" vk.json out-*)
  figure "$(grep -E 'proofs in' "$log" | tail -1 | cut -c1-200)"
  return $status
}

proofs_serve() {
  local log=$logs/serve-$log2.log dir=/tmp/gpu-keys/serve-$log2 build keep clients proofs variant clients_list status=0
  cat "$logs/machine.txt" >"$log"
  make_synthetic_key "$dir" "$log2"
  # bench-serve.sh takes a build folder: the carried binaries in its layout, one per build.
  for build in stagehand stagehand-baseline; do
    [[ -x $bin/$build ]] && serve_tree "$work/tree-$build" "$bin/$build"
  done
  ensure_curl "$work/shim"
  for keep in true false; do
    printf '[run]\nbackend = "cuda"\n[engine]\nkeep_key_on_device = %s\n' "$keep" >"$work/serve-$keep.toml"
  done
  clients_list="8 1"
  [[ ${ROUNDS:-2} == 0 ]] && clients_list=""
  for clients in $clients_list; do
    proofs=$count
    [[ $clients == 1 ]] && proofs=$((count / 4))
    for variant in ${SERVE_VARIANTS:-stagehand:true stagehand:false}; do
      build=${variant%%:*} keep=${variant##*:}
      echo "== $build, keep_key_on_device = $keep, $clients client(s), $proofs proofs, 2^$log2" | tee -a "$log"
      scripts/bench-serve.sh --build "$work/tree-$build" --config "$work/cuda.toml" --serve-config "$work/serve-$keep.toml" \
        --proofs "$proofs" --clients "$clients" --rounds "${ROUNDS:-2}" --zkey "$dir/circuit.zkey" --wtns "$dir/circuit.wtns" \
        2>&1 | tee -a "$log" || status=1
    done
  done
  proofs_unload "$dir" "$log" || status=1
  figure "$(grep -E 'median:' "$log" | head -1 | cut -c1-200)"
  return $status
}

# proofs_unload DIR LOG: unloading the key gives its device memory back: the GPU's memory in use
# (as the engine samples it: the CUDA context's own included) with the key set up, then after.
proofs_unload() {
  local dir=$1 log=$2 with_key without_key
  # shellcheck source=scripts/lib/serve.sh
  . scripts/lib/serve.sh
  serve_start "$bin/stagehand" "$work/unload.log" --config "$work/serve-true.toml" --key bench="$dir/circuit.zkey" || return 1
  used() { curl -s "$url/v1/status" | grep -o '"device_used_bytes":[0-9]*' | grep -o '[0-9]*$'; }
  curl -s -o /dev/null --data-binary @"$dir/circuit.wtns" "$url/v1/proofs?key=bench&wait=true"
  with_key=$(used)
  curl -s -o /dev/null -X DELETE "$url/v1/keys/bench"
  sleep 2
  without_key=$(used)
  kill -TERM "$server_pid"; wait "$server_pid" || true
  echo "GPU memory in use: $with_key bytes with the key set up, $without_key after unloading it" | tee -a "$log"
  ((without_key < with_key))
}

# One request at a time through `stagehand serve` (curl's time for each, and the engine's from
# submit to the proof's end), with this build and the baseline alternating, two rounds.
proofs_lone() {
  local log=$logs/lone-$log2.log dir=/tmp/gpu-keys/lone-$log2 round build config times request
  cat "$logs/machine.txt" >"$log"
  make_synthetic_key "$dir" "$log2"
  ensure_curl "$work/shim"
  # shellcheck source=scripts/lib/serve.sh
  . scripts/lib/serve.sh
  # TRACES=1: this build's server writes each batch's trace ([engine] trace_dir), tarred into the logs.
  if [[ ${TRACES:-0} == 1 ]]; then
    { cat "$work/cuda.toml"; printf '[engine]\ntrace_dir = "%s"\ntrace_runs = 100\n' "$work/traces"; } >"$work/traced.toml"
  fi
  for round in 1 2; do
    for build in stagehand stagehand-baseline; do
      [[ -x $bin/$build ]] || continue
      config=$work/cuda.toml
      [[ ${TRACES:-0} == 1 && $build == stagehand ]] && config=$work/traced.toml
      serve_start "$bin/$build" "$work/serve.log" --config "$config" --key bench="$dir/circuit.zkey" || return 1
      times=""
      for _ in $(seq "$count"); do
        request=$(curl -s -o "$work/answer.json" -w '%{time_total}' --data-binary @"$dir/circuit.wtns" "$url/v1/proofs?key=bench&wait=true")
        times="$times $request/$(grep -o '"seconds":[0-9.]*' "$work/answer.json" | cut -d: -f2 | cut -c1-5)"
      done
      kill -TERM "$server_pid"; wait "$server_pid" || true
      echo "round $round, $build: seconds per request / in the engine:$times" | tee -a "$log"
    done
  done
  if [[ ${TRACES:-0} == 1 ]]; then tar -C "$work" -cf "$logs/lone-traces.tar" traces; fi
  figure "$(tail -1 "$log" | cut -c1-200)"
}

# Two keys, one request at a time, alternating between them (the same key loaded under two
# names: two keys to the engine), with the keys kept set up ([engine] keep_key_on_device = true:
# both stay) and without (false: each request sets its key up, as when the engine kept one key at
# a time), alternating, two rounds; then each key's set-ups and device bytes.
proofs_keys() {
  local log=$logs/keys-$log2.log dir=/tmp/gpu-keys/keys-$log2 round keep times i key request
  cat "$logs/machine.txt" >"$log"
  make_synthetic_key "$dir" "$log2"
  ensure_curl "$work/shim"
  # shellcheck source=scripts/lib/serve.sh
  . scripts/lib/serve.sh
  for round in 1 2; do
    for keep in true false; do
      printf '[run]\nbackend = "cuda"\n[engine]\nkeep_key_on_device = %s\n' "$keep" >"$work/serve-$keep.toml"
      serve_start "$bin/stagehand" "$work/serve.log" --config "$work/serve-$keep.toml" --key a="$dir/circuit.zkey" --key b="$dir/circuit.zkey" || return 1
      times=""
      for i in $(seq "$count"); do
        key=a
        (( i % 2 == 0 )) && key=b
        request=$(curl -s -o "$work/answer.json" -w '%{time_total}' --data-binary @"$dir/circuit.wtns" "$url/v1/proofs?key=$key&wait=true")
        times="$times $key:$request"
      done
      echo "round $round, keep_key_on_device = $keep: seconds per request (keys a, b alternating):$times" | tee -a "$log"
      curl -s "$url/v1/status" | grep -o '"device_used_bytes":[0-9]*\|"device_bytes":[0-9]*\|"device_set_ups":[0-9]*\|"name":"[ab]"' | tr '\n' ' ' | tee -a "$log"
      echo | tee -a "$log"
      kill -TERM "$server_pid"; wait "$server_pid" || true
    done
  done
  figure "$(grep -E '^round 2, keep_key_on_device = true' "$log" | cut -c1-200)"
}

check_verify() {
  local logs_dir snarkjs scratch tarball name proof public vk
  logs_dir=$(unpack_logs "$1" "$(tag_of "$spec")") || return 2
  snarkjs=$(snarkjs_cli)
  # shellcheck source=tests/groth16/verify_lib.sh
  source tests/groth16/verify_lib.sh
  scratch=$(mktemp -d)
  for tarball in "$logs_dir"/*.tar; do
    [[ -f $tarball ]] || continue
    name=$(basename "$tarball" .tar)
    mkdir -p "$scratch/$name"
    tar -C "$scratch/$name" -xf "$tarball"
    while IFS= read -r proof; do
      public="${proof%.proof.json}.public.json"
      vk=$(dirname "$proof")/../vk.json
      [[ -f $vk ]] || vk=$(dirname "$proof")/../../vk.json
      verify "$vk" "$public" "$proof" ok "$name/${proof#"$scratch/$name/"}"
    done < <(find "$scratch/$name" -name '*.proof.json' | sort)
  done
  rm -rf "$scratch"
  grep -hE 'proofs? in|per proof|busy|identical|DIFFER|kernel check|wall|FAIL' "$logs_dir"/*.log 2>/dev/null || true
  finish "verify bench-proofs"
}
