#!/usr/bin/env bash
# Real proofs on a GPU, checked and timed, in three steps (the whole Groth16 program on the
# device: a/b/c, H, the G1 and G2 MSMs):
#
#   scripts/gpu-bench-proofs.sh bundle [BASELINE]   here: builds stagehand, stagehand_make_circuit
#       and stagehand_kernel_check in build-cuda (nvcc, sm_90), strips and compresses them with
#       the shared libraries the GPU machine lacks and the fixture circuits' keys into
#       .gpu-proofs/ (BUILD=DIR: from another CUDA build folder than build-cuda). BASELINE: an older stagehand binary (CUDA build) to measure beside this one
#       in the same run of the machine (carried as stagehand-baseline). The bundle is more than one
#       call carries (64 MiB): carry the baseline in a call of its own; binaries unpacked by an
#       earlier call on the same machine stay in .gpu-proofs/bin.
#   scripts/gpu-bench-proofs.sh run check           there: the Groth16 kernels' check (groth16_abc,
#       the G2 MSM 2^1..2^22) and the fixture circuits proved on the GPU and on the CPU path
#       (the simulator's functional mode) with the same seed: the proof.json files must be
#       identical. Into $OUT: check.log, proofs.tar.
#   scripts/gpu-bench-proofs.sh run stream LOG2 N   there: a synthetic circuit of domain 2^LOG2
#       (stagehand_make_circuit, `stagehand setup`), one proof alone in a fresh process, then N
#       proofs in one run, with this build and with the baseline when carried. Into $OUT:
#       stream-LOG2.log and proofs-LOG2.tar (vk.json and every proof with its public signals).
#       BUILDS ("stagehand stagehand-baseline") picks the builds, WORKERS passes --workers to
#       this build (the baseline has two), BITS=1 makes the circuit with --bits (a witness mostly
#       of 0s and 1s).
#   scripts/gpu-bench-proofs.sh run serve LOG2 N    there: `stagehand serve` against `stagehand
#       prove` (scripts/bench-serve.sh) on a synthetic circuit of domain 2^LOG2, N proofs from 8
#       clients and N/4 from one, with the key kept set up on the GPU between the engine's batches
#       ([engine] keep_key_on_device = true) and set up for each batch (false), in that order per
#       client count; then the GPU's memory in use with the key set up and after unloading it.
#       Into $OUT: serve-LOG2.log. ROUNDS (default 2) rounds each; ROUNDS=0 the memory check alone.
#       SERVE_VARIANTS ("stagehand:true stagehand:false") lists BUILD:KEEP pairs to run, the
#       baseline's as stagehand-baseline:true.
#   scripts/gpu-bench-proofs.sh run lone LOG2 N     there: N requests one after the other through
#       `stagehand serve` (curl's time and the engine's), this build and the baseline alternating,
#       two rounds. Into $OUT: lone-LOG2.log; with TRACES=1 also lone-traces.tar (this build's
#       trace and picture of every batch).
#   scripts/gpu-bench-proofs.sh run keys LOG2 N     there: N requests one after the other through
#       `stagehand serve`, alternating between two keys, with keep_key_on_device true and false
#       alternating, two rounds, and each key's device set-ups and bytes. Into $OUT: keys-LOG2.log.
#   scripts/gpu-bench-proofs.sh verify DIR          here: snarkjs verifies every proof in DIR's
#       tarballs against the vk.json beside it, and prints the figures of the logs.
set -euo pipefail
caller_dir=$PWD
cd "$(dirname "$0")/.."
. scripts/lib/bundle.sh
bundle=.gpu-proofs
circuits=(multiplier linear chain)

case "${1:-}" in
bundle)
  export CCACHE_BASEDIR="$PWD"
  build=${BUILD:-build-cuda}
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j2 --target stagehand stagehand_make_circuit stagehand_kernel_check
  rm -rf "$bundle" && mkdir -p "$bundle/keys"
  strip -o "$bundle/stagehand" "$build/src/cli/stagehand"
  strip -o "$bundle/stagehand_make_circuit" "$build/tests/groth16/stagehand_make_circuit"
  strip -o "$bundle/stagehand_kernel_check" "$build/tests/gpu/stagehand_kernel_check"
  if [[ -n "${2:-}" ]]; then strip -o "$bundle/stagehand-baseline" "$(cd "$caller_dir" && readlink -f "$2")"; fi
  bundle_libraries "$bundle" "$bundle"/stagehand*
  xz -T2 -6 "$bundle"/stagehand*
  fixture=$(ls -d build*/tests/groth16/circuits 2>/dev/null | head -1)
  [[ -n $fixture ]] || { echo "no groth16_circuits fixture: run 'ctest -R groth16' in a build first" >&2; exit 1; }
  for c in "${circuits[@]}"; do
    cp "$fixture/$c/$c.zkey" "$fixture/$c/$c.wtns" "$bundle/keys/"
    cp "$fixture/$c/vk.json" "$bundle/keys/$c.vk.json"
  done
  printf '[run]\nbackend = "cuda"\n' >"$bundle/cuda.toml"
  printf '[run]\nbackend = "sim"\n' >"$bundle/sim.toml"
  du -sh "$bundle"
  ;;
run)
  export LD_LIBRARY_PATH="$PWD/$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  out="${OUT:-/tmp/gpu-proofs}"
  work=/tmp/gpu-proofs-work
  mkdir -p "$out" "$work"
  # The binaries carried this call, unpacked beside those of earlier calls (the bundle is larger
  # than one call carries: the baseline may come in a call of its own).
  bin=$bundle/bin
  if compgen -G "$bundle/*.xz" >/dev/null; then unpack_binaries "$bundle" "$bin"; fi
  [[ -x $bin/stagehand ]] || { echo "no stagehand in $bin: carry $bundle/stagehand.xz" >&2; exit 1; }
  describe_machine >"$out/machine.txt"
  # make_synthetic_key DIR LOG2: a synthetic circuit of domain 2^LOG2 and its TEST-ONLY key in DIR
  # (kept where an earlier call on the same machine made them).
  make_synthetic_key() {
    local dir=$1 log2=$2
    [[ -f $dir/circuit.zkey ]] && return 0
    mkdir -p "$dir"
    "$bin/stagehand_make_circuit" --domain-log2 "$log2" --out "$dir" >/dev/null 2>&1
    "$bin/stagehand" setup --r1cs "$dir/circuit.r1cs" --zkey "$dir/circuit.zkey" --vk "$dir/vk.json" 2>/dev/null
  }
  case "${2:-}" in
  check)
    log=$out/check.log
    cat "$out/machine.txt" >"$log"
    status=0
    "$bin/stagehand_kernel_check" --msm-only 1 --max-log 12 --big 0 --g2-log 22 2>&1 | tee -a "$log" | grep -v '^ok ' || status=1
    rm -rf "$work/fixtures" && mkdir -p "$work/fixtures"
    for c in "${circuits[@]}"; do
      mkdir -p "$work/fixtures/$c/w"
      cp "$bundle/keys/$c.wtns" "$work/fixtures/$c/w/1.wtns"
      cp "$bundle/keys/$c.wtns" "$work/fixtures/$c/w/2.wtns"
      cp "$bundle/keys/$c.vk.json" "$work/fixtures/$c/vk.json"
      for backend in cuda sim; do
        echo "== $c on $backend, seed 7" | tee -a "$log"
        "$bin/stagehand" prove --config "$bundle/$backend.toml" --zkey "$bundle/keys/$c.zkey" --wtns "$work/fixtures/$c/w" \
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
    tar -C "$work/fixtures" -cf "$out/proofs.tar" .
    exit $status
    ;;
  stream)
    log2="${3:?run stream LOG2 N}"
    count="${4:?run stream LOG2 N}"
    tag=$log2${BITS:+-bits}${WORKERS:+-w$WORKERS}
    log=$out/stream-$tag.log
    cat "$out/machine.txt" >>"$log"
    dir=$work/big-$log2${BITS:+-bits}
    if [[ ! -f $dir/circuit.zkey ]]; then
      rm -rf "$dir" && mkdir -p "$dir"
      "$bin/stagehand_make_circuit" --domain-log2 "$log2" ${BITS:+--bits} --out "$dir" 2>&1 | tee -a "$log"
      /usr/bin/time -f "setup: %e s wall" "$bin/stagehand" setup --r1cs "$dir/circuit.r1cs" --zkey "$dir/circuit.zkey" \
        --vk "$dir/vk.json" 2>&1 | grep -v '^WARNING' | tee -a "$log"
    fi
    mkdir -p "$dir/one" "$dir/many"
    cp "$dir/circuit.wtns" "$dir/one/1.wtns"
    for i in $(seq 1 "$count"); do cp "$dir/circuit.wtns" "$dir/many/$i.wtns"; done
    status=0
    for build in ${BUILDS:-stagehand stagehand-baseline}; do
      [[ -x $bin/$build ]] || continue
      # The baseline predates --workers: it runs with the configuration's two.
      workers=()
      [[ $build == stagehand && -n ${WORKERS:-} ]] && workers=(--workers "$WORKERS")
      out_dir=$dir/out-$build${WORKERS:+-w$WORKERS}
      rm -rf "$out_dir" && mkdir -p "$out_dir"
      echo "== $build: 1 proof alone, 2^$log2" | tee -a "$log"
      /usr/bin/time -f "$build one proof: %e s wall" "$bin/$build" prove --config "$bundle/cuda.toml" --zkey "$dir/circuit.zkey" \
        --wtns "$dir/one" --out-dir "$out_dir/one" 2>&1 | tee -a "$log" || status=1
      echo "== $build: $count proofs in one run, 2^$log2 ${workers[*]}" | tee -a "$log"
      "$bin/$build" prove --config "$bundle/cuda.toml" --zkey "$dir/circuit.zkey" --wtns "$dir/many" "${workers[@]}" \
        --out-dir "$out_dir/many" 2>&1 | tee -a "$log" || status=1
    done
    tar -C "$dir" -cf "$out/proofs-$tag.tar" vk.json $(cd "$dir" && ls -d out-*)
    exit $status
    ;;
  serve)
    log2="${3:?run serve LOG2 N}"
    count="${4:?run serve LOG2 N}"
    log=$out/serve-$log2.log
    cat "$out/machine.txt" >"$log"
    dir=$work/serve-$log2
    make_synthetic_key "$dir" "$log2"
    # bench-serve.sh takes a build folder: the carried binaries in its layout, one per build.
    for build in stagehand stagehand-baseline; do
      [[ -x $bin/$build ]] || continue
      rm -rf "$dir/tree-$build" && mkdir -p "$dir/tree-$build/src/cli" "$dir/tree-$build/tests/groth16"
      ln -s "$PWD/$bin/$build" "$dir/tree-$build/src/cli/stagehand"
      ln -s "$PWD/$bin/stagehand_make_circuit" "$dir/tree-$build/tests/groth16/stagehand_make_circuit"
    done
    if ! command -v curl >/dev/null; then
      # The machine may lack curl: the few forms bench-serve.sh uses, in Python.
      mkdir -p "$dir/shim"
      cat >"$dir/shim/curl" <<'PY'
#!/usr/bin/env python3
import sys, urllib.request, urllib.error
args, out, fmt, data, url = sys.argv[1:], None, None, None, None
i = 0
while i < len(args):
    a = args[i]
    if a == '-s': pass
    elif a == '-o': i += 1; out = args[i]
    elif a == '-w': i += 1; fmt = args[i]
    elif a == '--data-binary': i += 1; data = open(args[i][1:], 'rb').read()
    else: url = a
    i += 1
try:
    r = urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=3600); code, body = r.status, r.read()
except urllib.error.HTTPError as e:
    code, body = e.code, e.read()
(open(out, 'wb').write(body) if out else sys.stdout.buffer.write(body))
if fmt: sys.stdout.write(fmt.replace('%{http_code}', str(code)))
PY
      chmod +x "$dir/shim/curl"
      export PATH="$dir/shim:$PATH"
    fi
    status=0
    for keep in true false; do
      printf '[run]\nbackend = "cuda"\n[engine]\nkeep_key_on_device = %s\n' "$keep" >"$dir/serve-$keep.toml"
    done
    clients_list="8 1"
    [[ ${ROUNDS:-2} == 0 ]] && clients_list=""
    for clients in $clients_list; do
      proofs=$count
      [[ $clients == 1 ]] && proofs=$((count / 4))
      for variant in ${SERVE_VARIANTS:-stagehand:true stagehand:false}; do
        build=${variant%%:*} keep=${variant##*:}
        echo "== $build, keep_key_on_device = $keep, $clients client(s), $proofs proofs, 2^$log2" | tee -a "$log"
        scripts/bench-serve.sh --build "$dir/tree-$build" --config "$bundle/cuda.toml" --serve-config "$dir/serve-$keep.toml" \
          --proofs "$proofs" --clients "$clients" --rounds "${ROUNDS:-2}" --zkey "$dir/circuit.zkey" --wtns "$dir/circuit.wtns" \
          2>&1 | tee -a "$log" || status=1
      done
    done
    # Unloading the key gives its device memory back: the GPU's memory in use (as the engine
    # samples it: the CUDA context's own included) with the key set up, then after the unload.
    . scripts/lib/serve.sh
    serve_start "$bin/stagehand" "$dir/unload.log" --config "$dir/serve-true.toml" --key bench="$dir/circuit.zkey"
    used() { curl -s "$url/v1/status" | grep -o '"device_used_bytes":[0-9]*' | grep -o '[0-9]*$'; }
    curl -s -o /dev/null --data-binary @"$dir/circuit.wtns" "$url/v1/proofs?key=bench&wait=true"
    with_key=$(used)
    curl -s -o /dev/null -X DELETE "$url/v1/keys/bench"
    sleep 2
    without_key=$(used)
    kill -TERM "$server_pid"; wait "$server_pid" || true
    echo "GPU memory in use: $with_key bytes with the key set up, $without_key after unloading it" | tee -a "$log"
    (( without_key < with_key )) || status=1
    exit $status
    ;;
  lone)
    # One request at a time through `stagehand serve` (curl's time for each, and the engine's
    # from submit to the proof's end), with this build and the baseline alternating, two rounds.
    log2="${3:?run lone LOG2 N}"
    count="${4:?run lone LOG2 N}"
    log=$out/lone-$log2.log
    cat "$out/machine.txt" >"$log"
    dir=$work/lone-$log2
    make_synthetic_key "$dir" "$log2"
    . scripts/lib/serve.sh
    # TRACES=1: this build's server writes each batch's trace ([engine] trace_dir), tarred into $OUT.
    if [[ ${TRACES:-0} == 1 ]]; then
      rm -rf "$dir/traces"
      # The bundle's configuration (its [serve] limits too), with the engine's traces on.
      { cat "$bundle/cuda.toml"; printf '[engine]\ntrace_dir = "%s"\ntrace_runs = 100\n' "$dir/traces"; } >"$dir/traced.toml"
    fi
    for round in 1 2; do
      for build in stagehand stagehand-baseline; do
        [[ -x $bin/$build ]] || continue
        config=$bundle/cuda.toml
        [[ ${TRACES:-0} == 1 && $build == stagehand ]] && config=$dir/traced.toml
        serve_start "$bin/$build" "$dir/serve.log" --config "$config" --key bench="$dir/circuit.zkey"
        times=""
        for _ in $(seq "$count"); do
          request=$(curl -s -o "$dir/answer.json" -w '%{time_total}' --data-binary @"$dir/circuit.wtns" "$url/v1/proofs?key=bench&wait=true")
          times="$times $request/$(grep -o '"seconds":[0-9.]*' "$dir/answer.json" | cut -d: -f2 | cut -c1-5)"
        done
        kill -TERM "$server_pid"; wait "$server_pid" || true
        echo "round $round, $build: seconds per request / in the engine:$times" | tee -a "$log"
      done
    done
    if [[ ${TRACES:-0} == 1 ]]; then tar -C "$dir" -cf "$out/lone-traces.tar" traces; fi
    ;;
  keys)
    # Two keys, one request at a time, alternating between them (the same key loaded under two
    # names: two keys to the engine), with the keys kept set up ([engine] keep_key_on_device =
    # true: both stay) and without (false: each request sets its key up, as when the engine kept
    # one key at a time), alternating, two rounds; then each key's set-ups and device bytes.
    log2="${3:?run keys LOG2 N}"
    count="${4:?run keys LOG2 N}"
    log=$out/keys-$log2.log
    cat "$out/machine.txt" >"$log"
    dir=$work/keys-$log2
    make_synthetic_key "$dir" "$log2"
    . scripts/lib/serve.sh
    for round in 1 2; do
      for keep in true false; do
        printf '[run]\nbackend = "cuda"\n[engine]\nkeep_key_on_device = %s\n' "$keep" >"$dir/serve-$keep.toml"
        serve_start "$bin/stagehand" "$dir/serve.log" --config "$dir/serve-$keep.toml" --key a="$dir/circuit.zkey" --key b="$dir/circuit.zkey"
        times=""
        for i in $(seq "$count"); do
          key=a
          (( i % 2 == 0 )) && key=b
          request=$(curl -s -o "$dir/answer.json" -w '%{time_total}' --data-binary @"$dir/circuit.wtns" "$url/v1/proofs?key=$key&wait=true")
          times="$times $key:$request"
        done
        echo "round $round, keep_key_on_device = $keep: seconds per request (keys a, b alternating):$times" | tee -a "$log"
        curl -s "$url/v1/status" | grep -o '"device_used_bytes":[0-9]*\|"device_bytes":[0-9]*\|"device_set_ups":[0-9]*\|"name":"[ab]"' | tr '\n' ' ' | tee -a "$log"
        echo | tee -a "$log"
        kill -TERM "$server_pid"; wait "$server_pid" || true
      done
    done
    ;;
  *)
    echo "run check | run stream LOG2 N | run serve LOG2 N | run lone LOG2 N | run keys LOG2 N" >&2
    exit 2
    ;;
  esac
  ;;
verify)
  dir=$(cd "$caller_dir" && readlink -f "${2:?verify DIR}")
  fixture=$(ls -d build*/tests/groth16/circuits 2>/dev/null | head -1)
  snarkjs="node $fixture/node_modules/snarkjs/build/cli.cjs"
  source tests/groth16/verify_lib.sh
  work=$(mktemp -d)
  for tarball in "$dir"/*.tar; do
    [[ -f $tarball ]] || continue
    name=$(basename "$tarball" .tar)
    mkdir -p "$work/$name"
    tar -C "$work/$name" -xf "$tarball"
    while IFS= read -r proof; do
      public="${proof%.proof.json}.public.json"
      vk=$(dirname "$proof")/../vk.json
      [[ -f $vk ]] || vk=$(dirname "$proof")/../../vk.json
      verify "$vk" "$public" "$proof" ok "$name/${proof#"$work/$name/"}"
    done < <(find "$work/$name" -name '*.proof.json' | sort)
  done
  rm -rf "$work"
  grep -hE 'proofs? in|per proof|busy|identical|DIFFER|kernel check|wall|FAIL' "$dir"/*.log 2>/dev/null || true
  finish "gpu-bench-proofs verify"
  ;;
*)
  sed -n '2,/^set -euo/p' "$0" | sed '$d'
  exit 2
  ;;
esac
