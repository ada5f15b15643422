# reliability: the runs that want many cores or a GPU: the exploration soak of every fixture on
# the CPU (a CPU-only stagehand), compute-sanitizer racecheck over the kernel check's parts, and
# BinFile's read of a 2 GiB file (stagehand_binfile_read_bench). Fails if a soak finds a failure
# under budgeted, finds an incident fixture's incident at another rate than its known one
# (known_rates below, within 2 points), or does not finish, or a racecheck part reports a hazard,
# fails a check or runs out of time. Logs: explore-F.log per fixture, racecheck-P.log per part,
# read.log, summary.txt. Everything stops BUDGET s after the start; the soak (the CPU cores) and
# racecheck (the GPU and one core) run side by side:
#   - soak: `stagehand explore --fixture F --seeds SEEDS --jobs JOBS` for every fixture (FIXTURES),
#     one after another, each until the deadline at most. The whole soak at 100,000 seeds is some
#     2.2 million runs at about 2 ms of CPU each: give it a run of its own (PARTS=soak).
#   - racecheck: the kernel check's parts one process each (stagehand_kernel_check --only), at
#     small sizes, each under its own limit and the deadline; RACECHECK picks some by name
#     (racecheck_parts below), e.g. RACECHECK="msm msm-streamed g2 msm-edge msm-tunings", then the rest.
#   - read: after the soak, 3 rounds over a 2 GiB file in /tmp (60 s at most).
# SEEDS (100000), JOBS (cores - 2), BUDGET (510), PARTS ("soak racecheck read"), RACECHECK (all),
# FIXTURES (fixtures/*.toml); COMPUTE_SANITIZER names the tool (default: compute-sanitizer on PATH
# or in /usr/local/cuda). Without racecheck in PARTS the check needs no GPU.
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="the exploration soak of every fixture, racecheck over the kernel check's parts, a 2 GiB read"
parts=" ${PARTS:-soak racecheck read} "
cpu_targets=(stagehand stagehand_binfile_read_bench)
needs_gpu=0
if [[ $parts == *" racecheck "* ]]; then
  targets=(stagehand_kernel_check)
  needs_gpu=1
fi
read -ra fixtures <<<"${FIXTURES:-$(echo fixtures/*.toml)}"
# The kernel check's every part, one process each at small sizes (name, limit in seconds, kernel
# check arguments).
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
declare -gA known_rates=(
  [01-dual-worker-incident]=94.8 [02-dual-worker-fixed]=2.2 [03-two-lock-overtaken]=88.2
  [13-groth16-prestage-16g]=62.1 [18-groth16-abc-streamed-prestage-16g]=0.9 [22-porep-groth16-incident-prestage]=95.7
)

check_bundle() {
  local fixture
  for fixture in "${fixtures[@]}"; do [[ -f $fixture ]] || die "reliability: missing $fixture"; done
}

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

left() { echo $((budget - (SECONDS - started))); }

# reliability_racecheck: each part under racecheck, one line per part into racecheck-summary.txt.
reliability_racecheck() {
  local entry name limit args code begin limit_now verdict
  for entry in "${racecheck_parts[@]}"; do
    read -r name limit args <<<"$entry"
    [[ -z ${RACECHECK:-} || " $RACECHECK " == *" $name "* ]] || continue
    limit_now=$(left)
    ((limit_now < limit)) && limit=$limit_now
    if ((limit < 10)); then
      echo "racecheck $name: not started, the deadline is near" >>"$logs/racecheck-summary.txt"
      continue
    fi
    begin=$SECONDS
    # shellcheck disable=SC2086  # $args is a word list
    timeout -k 10 "$limit" "$sanitizer" --tool racecheck --error-exitcode 3 "$bin/stagehand_kernel_check" $args \
      >"$logs/racecheck-$name.log" 2>&1
    code=$?
    verdict=passed
    case $code in
      0) ;;
      3) verdict="HAZARD reported" ;;
      124) verdict="TIMEOUT after $limit s" ;;
      *) verdict="FAILED (exit $code)" ;;
    esac
    echo "racecheck $name: $verdict in $((SECONDS - begin)) s; $(grep -c '^ok ' "$logs/racecheck-$name.log") checks ok;" \
      "$(grep -E '^kernel check:' "$logs/racecheck-$name.log" | tail -1)" \
      "$(grep -o 'RACECHECK SUMMARY.*' "$logs/racecheck-$name.log" | tail -1)" >>"$logs/racecheck-summary.txt"
  done
}

# reliability_soak: explore over every fixture, one line each into soak-summary.txt; fails on any
# failure, timeout or incident rate away from the known one.
reliability_soak() {
  local fixture name limit begin code verdict rate status=0
  for fixture in "${fixtures[@]}"; do
    name=$(basename "$fixture" .toml)
    limit=$(left)
    if ((limit < 10)); then
      echo "soak $name: not started, the deadline is near" >>"$logs/soak-summary.txt"
      status=1
      continue
    fi
    begin=$SECONDS
    timeout -k 10 "$limit" "$bin/stagehand-cpu" explore --fixture "$fixture" --seeds "$seeds" --jobs "$jobs" \
      >"$logs/explore-$name.log" 2>"$work/explore-$name.progress"
    code=$?
    ((code == 0)) || status=1
    verdict=passed
    ((code == 124)) && verdict="TIMEOUT after $limit s"
    ((code != 0 && code != 124)) && verdict="FAILED (exit $code)"
    rate=$(incident_rate "$logs/explore-$name.log" "$name")
    if ((code == 0)) && [[ -n $(rate_verdict "$name" "$rate") ]]; then
      verdict="FAILED ($(rate_verdict "$name" "$rate"))"
      status=1
    fi
    echo "soak $name: $verdict in $((SECONDS - begin)) s; incidents in ${rate:-?}% of runs (known ${known_rates[$name]:-0.0}%);" \
      "$(grep -E '^explored' "$logs/explore-$name.log")" \
      "$(grep -E 'failures under budgeted' "$logs/explore-$name.log" | tail -1)" \
      "$( ((code == 124)) && tr '\r' '\n' <"$work/explore-$name.progress" | grep -E '^explore:' | tail -1)" \
      >>"$logs/soak-summary.txt"
  done
  return $status
}

# reliability_read: three rounds over a 2 GiB file, within what is left of the budget.
reliability_read() {
  local limit status=0
  limit=$(left)
  ((limit > 60)) && limit=60
  if ((limit < 10)); then
    echo "read: not started, the deadline is near" >"$logs/read-summary.txt"
    return 1
  fi
  timeout -k 5 "$limit" "$bin/stagehand_binfile_read_bench-cpu" --mib 2048 --rounds 3 --dir /tmp >"$logs/read.log" 2>&1 || status=1
  { echo "read: exit $status"; tail -1 "$logs/read.log"; } >"$logs/read-summary.txt"
  return $status
}

check_run() {
  local cores racecheck_pid="" soak_status=0 read_status=0 racecheck_status=0 status
  budget=${BUDGET:-510}
  cores=$(nproc)
  jobs=${JOBS:-$((cores > 4 ? cores - 2 : cores))}
  seeds=${SEEDS:-100000}
  sanitizer=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
  started=$SECONDS
  {
    echo "cores: $cores, explore jobs: $jobs, seeds: $seeds, budget: $budget s, parts:$parts"
    [[ $parts == *" racecheck "* ]] && { "$sanitizer" --version 2>&1 | tail -1 || true; }
  } | tee -a "$logs/machine.txt"
  if [[ $parts == *" racecheck "* ]]; then
    reliability_racecheck &
    racecheck_pid=$!
  fi
  [[ $parts == *" soak "* ]] && { reliability_soak || soak_status=1; }
  [[ $parts == *" read "* ]] && { reliability_read || read_status=1; }
  if [[ -n $racecheck_pid ]]; then
    wait "$racecheck_pid"
    grep -qvE ': passed in ' "$logs/racecheck-summary.txt" && racecheck_status=1
  fi
  cat "$logs"/soak-summary.txt "$logs"/read-summary.txt "$logs"/racecheck-summary.txt 2>/dev/null | tee "$logs/summary.txt"
  echo "total: $((SECONDS - started)) s" | tee -a "$logs/summary.txt"
  status=$((soak_status || racecheck_status || read_status))
  echo "exit $status (soak $soak_status, racecheck $racecheck_status, read $read_status)"
  figure "$(grep -c ': passed in ' "$logs/summary.txt") of $(grep -c -E '^(soak|racecheck) ' "$logs/summary.txt") soak and racecheck lines passed"
  return $status
}
