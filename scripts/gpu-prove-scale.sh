#!/usr/bin/env bash
# Real proofs at every scale on a GPU with `stagehand bench prove` (circuit, TEST-ONLY key and
# witness made in memory; each key set resident, fetched ahead or streamed), in three steps:
#
#   scripts/gpu-prove-scale.sh bundle          here: builds stagehand, stagehand_make_circuit,
#       stagehand_pinned_staging and stagehand_zkey_read_bench in build-cuda (nvcc, sm_90), and with
#       CHECK=1 stagehand_kernel_check
#       too, strips and compresses them with the shared libraries the GPU machine lacks into
#       .gpu-scale/ (carry .gpu-scale; stagehand and the kernel check together pass the 64 MiB a
#       call carries, so the check cases want a bundle of their own). BUILD=DIR: from another CUDA
#       build folder than build-cuda. BASELINE=DIR: also DIR's stagehand_zkey_read_bench (a build
#       of an earlier commit), which the zkey cases then run first as the same run's baseline.
#   scripts/gpu-prove-scale.sh run CASE...     there: each CASE is LOG2:PROOFS:POLICY:CAP_GIB:SETS
#       [:EXTRA] (POLICY one or several joined by '+', each in turn on the same key; CAP_GIB 0 = the
#       whole card; SETS auto|resident|fetched-ahead|streamed; EXTRA further bench-prove options
#       with ',' for ' '), one `stagehand bench prove` process each; or
#         staging                      what a pinned staging buffer costs to make (stagehand_pinned_staging)
#         check-setup                  the setup kernels' check and timing (stagehand_kernel_check)
#         check:PARTS                  stagehand_kernel_check --only PARTS; on a failure no case after it runs
#         zkey:LOG2:PROOFS:CAP_GIB...  a circuit file (stagehand_make_circuit), its key by `stagehand
#                                      setup` (timed, written as a .zkey), its read timed
#                                      (stagehand_zkey_read_bench), then PROOFS proofs of it by
#                                      `stagehand prove` under each cap listed (':'-separated)
#       Into $OUT: scale.log (every run's output) and proofs.tar (each run's vk.json and proofs).
#   scripts/gpu-prove-scale.sh verify DIR      here: snarkjs verifies every proof in DIR/proofs.tar
#       against the vk.json beside it, and prints each run's figures from DIR/scale.log.
set -euo pipefail
caller_dir=$PWD
cd "$(dirname "$0")/.."
. scripts/lib/bundle.sh
bundle=.gpu-scale

case "${1:-}" in
bundle)
  export CCACHE_BASEDIR="$PWD"
  build=${BUILD:-build-cuda}
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  binaries=("$build"/src/cli/stagehand "$build"/tests/groth16/stagehand_make_circuit "$build"/cuda/stagehand_pinned_staging
            "$build"/tests/groth16/stagehand_zkey_read_bench)
  [[ ${CHECK:-0} == 1 ]] && binaries+=("$build"/tests/gpu/stagehand_kernel_check)
  cmake --build "$build" -j2 --target $(for binary in "${binaries[@]}"; do basename "$binary"; done)
  if [[ -n ${BASELINE:-} ]]; then
    cmake --build "$BASELINE" -j2 --target stagehand_zkey_read_bench
    mkdir -p "$build/baseline"
    cp "$BASELINE/tests/groth16/stagehand_zkey_read_bench" "$build/baseline/baseline_zkey_read_bench"
    binaries+=("$build/baseline/baseline_zkey_read_bench")
  fi
  pack_binaries "$bundle" "${binaries[@]}"
  ;;
run)
  shift
  start_run "$bundle" gpu-scale
  for case in "$@"; do
    if [[ $case == staging ]]; then
      echo "== pinned staging buffers" | tee -a "$log"
      "$bin/stagehand_pinned_staging" 2>&1 | tee -a "$log" || status=1
      continue
    fi
    if [[ ( $case == check-setup || $case == check:* ) && ! -x $bin/stagehand_kernel_check ]]; then
      echo "$case: the bundle has no stagehand_kernel_check (bundle it with CHECK=1)" | tee -a "$log"
      status=1
      continue
    fi
    if [[ $case == check-setup ]]; then
      echo "== the setup kernels' check" | tee -a "$log"
      "$bin/stagehand_kernel_check" --setup-only 1 --setup-bench 1 2>&1 | grep -v '^ok ' | tee -a "$log" || status=1
      continue
    fi
    if [[ $case == check:* ]]; then
      # The kernel check's parts first: a kernel that fails its check makes the proofs after it pointless.
      echo "== the kernel check, parts ${case#check:}" | tee -a "$log"
      if ! "$bin/stagehand_kernel_check" --only "${case#check:}" --big 0 2>&1 | grep -v '^ok ' | tee -a "$log"; then
        echo "the kernel check failed: the remaining cases are not run" | tee -a "$log"
        status=1
        break
      fi
      continue
    fi
    if [[ $case == zkey:* ]]; then
      IFS=: read -r _ log2 proofs caps <<<"$case"
      dir=$work/zkey-$log2
      mkdir -p "$dir/w"
      echo "== 2^$log2 from a .zkey" | tee -a "$log"
      "$bin/stagehand_make_circuit" --domain-log2 "$log2" --out "$dir" 2>&1 | tee -a "$log"
      /usr/bin/time -f "setup 2^$log2: %e s wall, %M KiB peak host memory" "$bin/stagehand" setup --r1cs "$dir/circuit.r1cs" \
        --zkey "$dir/circuit.zkey" --vk "$dir/vk.json" 2>&1 | grep -v '^WARNING' | tee -a "$log" || status=1
      rm -f "$dir/circuit.r1cs"
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
      continue
    fi
    IFS=: read -r log2 proofs policy cap sets extra <<<"$case"
    name="2^$log2-$proofs-$policy-cap$cap-$sets${extra:+-${extra//[^a-zA-Z0-9]/}}"
    printf '[run]\nbackend = "cuda"\n[gpus]\nvram_cap_gib = %s\n' "$cap" >"$work/$name.toml"
    echo "== $name" | tee -a "$log"
    /usr/bin/time -f "$name: %e s wall, %M KiB peak host memory" "$bin/stagehand" bench prove --config "$work/$name.toml" \
      --domain-log2 "$log2" --proofs "$proofs" $(printf -- '--policy %s ' ${policy//+/ }) --key-sets "$sets" --out-dir "$work/$name" ${extra//,/ } \
      2>&1 | grep -v '^WARNING' | tee -a "$log" || status=1
  done
  tar -C "$work" --exclude='*.toml' --exclude='*.wtns' --exclude='*.zkey' --exclude='*.r1cs' -cf "$out/proofs.tar" .
  exit $status
  ;;
verify)
  dir=$(cd "$caller_dir" && readlink -f "${2:?verify DIR}")
  # The snarkjs the test suite installed (scripts/build.sh's ./build, or a CPU-only build-cpu), else one on the path.
  snarkjs=snarkjs
  for build in build build-cpu; do
    cli=$build/tests/groth16/circuits/node_modules/snarkjs/build/cli.cjs
    if [[ -f $cli ]]; then snarkjs="node $cli"; break; fi
  done
  check=$(mktemp -d)
  tar -C "$check" -xf "$dir/proofs.tar"
  ok=0 bad=0
  for vk in $(find "$check" -name vk.json | sort); do
    run=$(dirname "$vk")
    # N.proof.json beside N.public.json, or a lone proof's proof.json beside public.json.
    compgen -G "$run/*proof.json" >/dev/null || continue
    for proof in "$run"/*proof.json; do
      if $snarkjs groth16 verify "$vk" "${proof%proof.json}public.json" "$proof" 2>&1 | grep -q "OK!"; then ok=$((ok + 1))
      else bad=$((bad + 1)); echo "FAIL: $(basename "$run")/$(basename "$proof") does not verify"; fi
    done
    echo "${run#"$check"/}: $(ls "$run"/*proof.json | wc -l) proofs checked"
  done
  echo "snarkjs: $ok proofs verify, $bad do not"
  grep -E '^== |proofs in|compute engine|per proof, mean|kernels per proof|key.s sets|the key \(|peak host|of device memory|out-of-memory' "$dir/scale.log" || true
  rm -rf "$check"
  [[ $bad -eq 0 ]]
  ;;
*)
  echo "usage: $0 bundle | run CASE... | verify DIR" >&2
  exit 2
  ;;
esac
