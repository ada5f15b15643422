#!/usr/bin/env bash
# The reliability runs that need the GPU machine's cores or its GPU, in one call of at most 9
# minutes (16 cores, one H200): the exploration soak of the production engine's fixtures 01-05
# at 100k seeds each, compute-sanitizer racecheck over the kernel check's MSM parts, and BinFile's
# read of a 2 GiB file against the mapping it replaced (stagehand_binfile_read_bench) on 16 cores.
#
#   scripts/gpu-reliability.sh bundle   here: builds stagehand and stagehand_binfile_read_bench in
#       build/ (CPU-only where build/ is not configured yet: explore runs the simulator only) and
#       stagehand_kernel_check in build-cuda, strips and compresses them with the shared libraries the GPU machine lacks
#       into .gpu-reliability/ (carry it there; a few MiB).
#   scripts/gpu-reliability.sh run      there: into $OUT reliability.tar (every log, machine.txt,
#       summary.txt) and the summary on stdout. Exit 1 if a soak finds a failure under budgeted
#       or does not finish, or a racecheck part reports a hazard, fails a check or runs out of
#       time.
#
# How the 9 minutes are split. Everything stops 510 s after the start (BUDGET), leaving 30 s of
# the 540 for unpacking, the tar and slack; the two parts run side by side, since the soak needs
# the CPU cores and racecheck mostly the GPU and one core:
#   - soak: `stagehand explore --fixture F --seeds 100000 --jobs 14` for F = 01..05, one after
#     another. On the 2-core development machine (shared, 2026-12-01) 1000 seeds of each cost
#     1.16, 2.80, 2.30, 0.22 and 2.84 ms of CPU per run: 930 CPU-seconds for the 500,000 runs,
#     about 70 s on 14 cores (bench/RESULTS.md: 11,000 runs of all 11 fixtures in 39.5 s on 2 cores
#     agrees). Each fixture may run until the deadline; at 4x the estimate it still finishes.
#   - racecheck: the kernel check's MSM parts one process each (stagehand_kernel_check --only),
#     at small sizes, each under its own limit and the deadline: the earlier racecheck over the
#     whole check (gpu-check-sanitizers.sh) spent its 240 s on the launchers, the partition
#     launchers at 2^18, the NTT and H before the first MSM. Having passed the MSM edge cases and
#     tunings at 2^14 within those 240 s, each small part below should take well under its limit:
#       msm 2^10..2^13 (100 s), msm-streamed 2^14 in batches of 2^11 (100 s), g2 2^1..2^10 (120 s),
#       msm-edge (60 s), msm-tunings 2^12 (100 s): 480 s at most, inside the 510.
#     The first three were not reached before; edge cases and tunings come last.
#   - read: after the soak, 3 rounds of each way over a 2 GiB file in /tmp (60 s at most; under
#     10 s on the 2-core machine, the file's writing included).
# SEEDS (100000), JOBS (cores - 2), BUDGET (510) and PARTS ("soak racecheck read") change the run;
# COMPUTE_SANITIZER names the tool (default: compute-sanitizer on PATH or in /usr/local/cuda).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/bundle.sh
bundle=.gpu-reliability
fixtures=(fixtures/01-dual-worker-incident.toml fixtures/02-dual-worker-fixed.toml fixtures/03-two-lock-overtaken.toml
          fixtures/04-freed-but-pending-h200.toml fixtures/05-pageable-in-lock.toml)
# name, limit in seconds, kernel check arguments
racecheck_parts=(
  "msm 100 --only msm --max-log 13"
  "msm-streamed 100 --only msm-streamed --streamed-log 14"
  "g2 120 --only g2 --g2-log 10"
  "msm-edge 60 --only msm-edge"
  "msm-tunings 100 --only msm-tunings --tunings-log 12"
)
case "${1:-}" in
bundle)
  set -e
  export CCACHE_BASEDIR="$PWD"
  [[ -f build/CMakeCache.txt ]] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTAGEHAND_CUDA=OFF >/dev/null
  cmake --build build -j2 --target stagehand stagehand_binfile_read_bench
  cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-cuda -j2 --target stagehand_kernel_check
  rm -rf "$bundle" && mkdir -p "$bundle/lib"
  strip -o "$bundle/stagehand" build/src/cli/stagehand
  strip -o "$bundle/stagehand_kernel_check" build-cuda/tests/gpu/stagehand_kernel_check
  strip -o "$bundle/stagehand_binfile_read_bench" build/tests/groth16/stagehand_binfile_read_bench
  bundle_libraries "$bundle" "$bundle"/stagehand*
  xz -T2 -6 "$bundle"/stagehand*
  for fixture in "${fixtures[@]}"; do [[ -f $fixture ]] || { echo "missing $fixture" >&2; exit 1; }; done
  du -sh "$bundle"
  ;;
run)
  export LD_LIBRARY_PATH="$PWD/$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  out="${OUT:-/tmp/gpu-reliability}"
  work=/tmp/gpu-reliability-work
  logs=$work/logs
  rm -rf "$work" && mkdir -p "$out" "$logs"
  unpack_binaries "$bundle" "$work/bin"
  bin=$work/bin
  budget=${BUDGET:-510}
  parts=" ${PARTS:-soak racecheck read} "
  cores=$(nproc)
  jobs=${JOBS:-$(( cores > 4 ? cores - 2 : cores ))}
  seeds=${SEEDS:-100000}
  sanitizer=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
  started=$SECONDS
  left() { echo $(( budget - (SECONDS - started) )); }
  {
    date -u +%Y-%m-%dT%H:%M:%SZ
    if command -v nvidia-smi >/dev/null; then nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; else echo "no nvidia-smi"; fi
    echo "cores: $cores, explore jobs: $jobs, seeds: $seeds, budget: $budget s, parts:$parts"
    "$sanitizer" --version 2>&1 | tail -1 || true
  } >"$logs/machine.txt"
  cat "$logs/machine.txt"

  racecheck() {  # one line per part into racecheck-summary.txt
    local entry name limit args code begin limit_now
    for entry in "${racecheck_parts[@]}"; do
      read -r name limit args <<<"$entry"
      limit_now=$(left)
      (( limit_now < limit )) && limit=$limit_now
      if (( limit < 10 )); then
        echo "racecheck $name: not started, the deadline is near" >>"$logs/racecheck-summary.txt"
        continue
      fi
      begin=$SECONDS
      # shellcheck disable=SC2086  # $args is a word list
      timeout -k 10 "$limit" "$sanitizer" --tool racecheck --error-exitcode 3 "$bin/stagehand_kernel_check" $args \
        >"$logs/racecheck-$name.log" 2>&1
      code=$?
      local verdict=passed
      case $code in
        0) ;;
        3) verdict="HAZARD reported" ;;
        124) verdict="TIMEOUT after $limit s" ;;
        *) verdict="FAILED (exit $code)" ;;
      esac
      echo "racecheck $name: $verdict in $(( SECONDS - begin )) s; $(grep -c '^ok ' "$logs/racecheck-$name.log") checks ok;" \
        "$(grep -E '^kernel check:' "$logs/racecheck-$name.log" | tail -1)" \
        "$(grep -o 'RACECHECK SUMMARY.*' "$logs/racecheck-$name.log" | tail -1)" >>"$logs/racecheck-summary.txt"
    done
  }
  racecheck_pid=""
  if [[ $parts == *" racecheck "* ]]; then
    racecheck &
    racecheck_pid=$!
  fi

  soak_status=0
  if [[ $parts == *" soak "* ]]; then
    for fixture in "${fixtures[@]}"; do
      name=$(basename "$fixture" .toml)
      limit=$(left)
      if (( limit < 10 )); then
        echo "soak $name: not started, the deadline is near" >>"$logs/soak-summary.txt"
        soak_status=1
        continue
      fi
      begin=$SECONDS
      timeout -k 10 "$limit" "$bin/stagehand" explore --fixture "$fixture" --seeds "$seeds" --jobs "$jobs" \
        >"$logs/explore-$name.log" 2>"$logs/explore-$name.progress"
      code=$?
      (( code == 0 )) || soak_status=1
      verdict=passed
      (( code == 124 )) && verdict="TIMEOUT after $limit s"
      (( code != 0 && code != 124 )) && verdict="FAILED (exit $code)"
      echo "soak $name: $verdict in $(( SECONDS - begin )) s;" \
        "$(grep -E '^explored' "$logs/explore-$name.log")" \
        "$(grep -E 'failures under budgeted' "$logs/explore-$name.log" | tail -1)" \
        "$( (( code == 124 )) && tr '\r' '\n' <"$logs/explore-$name.progress" | grep -E '^explore:' | tail -1)" \
        >>"$logs/soak-summary.txt"
    done
  fi

  read_status=0
  if [[ $parts == *" read "* ]]; then
    limit=$(left)
    (( limit > 60 )) && limit=60
    if (( limit >= 10 )); then
      timeout -k 5 "$limit" "$bin/stagehand_binfile_read_bench" --mib 2048 --rounds 3 --dir /tmp >"$logs/read.log" 2>&1 || read_status=1
      { echo "read: exit $read_status"; tail -1 "$logs/read.log"; } >"$logs/read-summary.txt"
    else
      echo "read: not started, the deadline is near" >"$logs/read-summary.txt"
    fi
  fi

  racecheck_status=0
  if [[ -n $racecheck_pid ]]; then
    wait "$racecheck_pid"
    grep -qvE ': passed in ' "$logs/racecheck-summary.txt" && racecheck_status=1
  fi
  cat "$logs"/soak-summary.txt "$logs"/read-summary.txt "$logs"/racecheck-summary.txt 2>/dev/null | tee "$logs/summary.txt"
  echo "total: $(( SECONDS - started )) s" | tee -a "$logs/summary.txt"
  tar -C "$work" -cf "$out/reliability.tar" logs
  status=$(( soak_status || racecheck_status || read_status ))
  echo "exit $status (soak $soak_status, racecheck $racecheck_status, read $read_status); logs in $out/reliability.tar"
  exit $status
  ;;
*)
  sed -n 2,14p "$0"
  exit 2
  ;;
esac
