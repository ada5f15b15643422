#!/usr/bin/env bash
# The reliability runs that need the GPU machine's cores or its GPU, in one call of at most 9
# minutes (16 cores, one H200): the exploration soak of every fixture, compute-sanitizer racecheck
# over the kernel check's parts, and BinFile's read of a 2 GiB file on 16 cores
# (stagehand_binfile_read_bench).
#
#   scripts/gpu-reliability.sh bundle   here: builds stagehand and stagehand_binfile_read_bench in
#       build/ (CPU-only where build/ is not configured yet: explore runs the simulator only) and
#       stagehand_kernel_check in build-cuda, strips and compresses them with the shared libraries
#       the GPU machine lacks into .gpu-reliability/ (carry it there; a few MiB).
#   scripts/gpu-reliability.sh run      there: into $OUT reliability.tar (every log, machine.txt,
#       summary.txt) and the summary on stdout. Exit 1 if a soak finds a failure under budgeted,
#       finds an incident fixture's incident at another rate than its known one (known_rates
#       below, within 2 points), or does not finish, or a racecheck part reports a hazard, fails
#       a check or runs out of time.
#
# Everything stops BUDGET (510) s after the start, leaving 30 s of a 540 s call for unpacking, the
# tar and slack; the soak (the CPU cores) and racecheck (the GPU and one core) run side by side:
#   - soak: `stagehand explore --fixture F --seeds SEEDS --jobs JOBS` for every fixture, one after
#     another, each until the deadline at most. The whole soak at 100,000 seeds is about 2.2
#     million runs at about 2 ms of CPU each: give it a call of its own (PARTS=soak).
#   - racecheck: the kernel check's parts one process each (stagehand_kernel_check --only), at
#     small sizes, each under its own limit and the deadline. All of them take more than one
#     call: RACECHECK picks some by name (racecheck_parts below), e.g. one call with
#     RACECHECK="msm msm-streamed g2 msm-edge msm-tunings" and one with the rest.
#   - read: after the soak, 3 rounds over a 2 GiB file in /tmp (60 s at most).
# SEEDS (100000), JOBS (cores - 2), BUDGET (510), PARTS ("soak racecheck read") and RACECHECK (all)
# change the run; COMPUTE_SANITIZER names the tool (default: compute-sanitizer on PATH or in
# /usr/local/cuda).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/bundle.sh
bundle=.gpu-reliability
# Every fixture: the production engine's policies (which must keep finding their incidents) and
# the budgeted ones (which must find nothing).
read -ra fixtures <<<"${FIXTURES:-$(echo fixtures/*.toml)}"
# The kernel check's every part, one process each at small sizes (name, limit in seconds, kernel
# check arguments); RACECHECK="name ..." runs some of them (two calls cover them all inside
# the budget: "msm msm-streamed g2 msm-edge msm-tunings" and the rest).
racecheck_parts=(
  "msm 100 --only msm --max-log 13"
  "msm-streamed 100 --only msm-streamed --streamed-log 14"
  "g2 120 --only g2 --g2-log 10"
  "msm-edge 60 --only msm-edge"
  "msm-tunings 240 --only msm-tunings --tunings-log 12"
  "setup 60 --only setup --setup-log 8"
  "launchers 60 --only launchers"
  "partition 120 --only partition"
  "abc 90 --only abc"
  "groth16-h 60 --only groth16-h"
  "groth16-streamed 90 --only groth16-streamed"
  "msm-precomputed 90 --only msm-precomputed"
  "ntt 60 --only ntt --max-log 12"
  "h 60 --only h --max-log 12"
)
# The incident fixtures' known rates: the percentage of runs with the incident (expected findings
# under the fixture's own policies) in `stagehand explore --seeds 10000` (bench/RESULTS.md). Every
# other fixture must find none. The runs are deterministic for a seed: 100,000 seeds differ from
# 10,000 by sampling only.
declare -A known_rates=(
  [01-dual-worker-incident]=94.8 [02-dual-worker-fixed]=2.2 [03-two-lock-overtaken]=88.2
  [13-groth16-prestage-16g]=62.1 [18-groth16-abc-streamed-prestage-16g]=0.9 [22-porep-groth16-incident-prestage]=95.7
)
# incident_rate LOG NAME: findings per 100 runs in NAME's row of explore's table ("none": 0).
incident_rate() {
  awk -v name="$2" '$1 == name {
    runs = $2; found = 0; line = $0
    while (match(line, /: [0-9]+/)) { found += substr(line, RSTART + 2, RLENGTH - 2); line = substr(line, RSTART + RLENGTH) }
    printf "%.1f", (runs > 0 ? 100 * found / runs : 0); exit }' "$1"
}
# rate_verdict NAME RATE: "" where RATE is NAME's known rate within 2 points, else what is wrong.
rate_verdict() {
  local known=${known_rates[$1]:-0.0}
  awk -v rate="$2" -v known="$known" 'BEGIN { d = rate - known; if (d < -2 || d > 2) printf "incident rate %s%%, known %s%%", rate, known }'
}
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
      [[ -z ${RACECHECK:-} || " $RACECHECK " == *" $name "* ]] || continue
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
      rate=$(incident_rate "$logs/explore-$name.log" "$name")
      if (( code == 0 )) && [[ -n $(rate_verdict "$name" "$rate") ]]; then
        verdict="FAILED ($(rate_verdict "$name" "$rate"))"
        soak_status=1
      fi
      echo "soak $name: $verdict in $(( SECONDS - begin )) s; incidents in ${rate:-?}% of runs (known ${known_rates[$name]:-0.0}%);" \
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
