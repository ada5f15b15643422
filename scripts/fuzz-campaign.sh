#!/usr/bin/env bash
# A long libFuzzer campaign (a million executions of a reader, say) on a small machine: run in
# pieces of PIECE executions, PARALLEL pieces side by side (one a core), each piece's count added
# to a progress file, so that the campaign can run in the background, be stopped, and go on later
# from where it was, with the corpus it has grown.
#
#   scripts/fuzz-campaign.sh start TARGET [RUNS]   in the background (nohup): pieces until RUNS
#                                                  executions in all (default 1000000)
#   scripts/fuzz-campaign.sh run TARGET [RUNS]     the same in the foreground
#   scripts/fuzz-campaign.sh status [TARGET...]    executions so far, pieces, corpus, findings
#   scripts/fuzz-campaign.sh stop TARGET           ends the background campaign (its count kept)
#
# TARGET: one of scripts/lib/fuzz.sh's fuzz_targets. The fuzzers are built in build-asan as
# scripts/fuzz.sh builds them (FUZZ_REBUILD=0 keeps what is there). A campaign's files are in
# build-asan/fuzz-campaign/TARGET: corpus/ (the inputs it added), progress (a line a piece:
# time, executions, total, exit status), log-N (piece N's libFuzzer output) and any finding
# (crash-*, leak-*, timeout-*, oom-*), which stops the campaign and is reported by status: keep it
# as a reproducer in tests/fuzz/crashes/TARGET/ once fixed. When RUNS are reached, the campaign's
# inputs that add coverage are merged into tests/fuzz/corpus/TARGET (the seed corpus that ctest
# replays; MERGE=0 leaves it alone): commit them.
# PIECE (default 50000) and PARALLEL (default nproc) shape the pieces.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/fuzz.sh

usage() { sed -n 2,20p "$0" >&2; exit 2; }
campaign_dir() { echo "build-asan/fuzz-campaign/$1"; }
# The executions counted so far (third field of each progress line).
executions() { awk '{ total = $3 } END { print total + 0 }' "$(campaign_dir "$1")/progress" 2>/dev/null || echo 0; }
findings() { ls "$(campaign_dir "$1")"/{crash,leak,timeout,oom}-* 2>/dev/null || true; }

# One piece of `runs` executions into log-N; echoes the executions libFuzzer counted.
run_piece() {
  local target=$1 runs=$2 piece=$3 dir
  dir=$(campaign_dir "$target")
  local status=0
  TMPDIR=${TMPDIR:-/tmp} nice -n 10 build-asan/tests/fuzz/fuzz_"$target" -runs="$runs" -seed="$piece" \
    "${fuzz_common_options[@]}" -print_final_stats=1 -artifact_prefix="$dir/" \
    "$dir/corpus" "tests/fuzz/corpus/$target" >"$dir/log-$piece" 2>&1 || status=$?
  local counted
  counted=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$dir/log-$piece" | awk '{ print $2 }' | tail -1)
  echo "${counted:-0} $status"
}

campaign() {
  local target=$1 goal=$2 dir piece_runs=${PIECE:-50000} parallel=${PARALLEL:-$(nproc)}
  fuzz_check_target "$target"
  dir=$(campaign_dir "$target")
  mkdir -p "$dir/corpus"
  [ "${FUZZ_REBUILD:-1}" = 1 ] || [ ! -x "build-asan/tests/fuzz/fuzz_$target" ] && fuzz_build "$target"
  fuzz_sanitizer_options
  local piece total
  piece=$(( $(wc -l 2>/dev/null <"$dir/progress" || echo 0) + 1 ))
  total=$(executions "$target")
  echo "fuzz-campaign: $target from $total to $goal executions, pieces of $piece_runs, $parallel side by side"
  while (( total < goal )); do
    [ -z "$(findings "$target")" ] || { echo "fuzz-campaign: $target has a finding: $(findings "$target")"; return 1; }
    local pids=() first=$piece i
    for (( i = 0; i < parallel; ++i )); do
      run_piece "$target" "$piece_runs" $(( first + i )) >"$dir/result-$(( first + i ))" &
      pids+=($!)
    done
    wait "${pids[@]}" || true
    for (( i = 0; i < parallel; ++i )); do
      local counted status
      read -r counted status <"$dir/result-$(( first + i ))"
      rm -f "$dir/result-$(( first + i ))"
      total=$(( total + counted ))
      echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $counted $total $status" >>"$dir/progress"
    done
    piece=$(( first + parallel ))
    echo "fuzz-campaign: $target $total of $goal executions"
  done
  [ -z "$(findings "$target")" ] || { echo "fuzz-campaign: $target has a finding: $(findings "$target")"; return 1; }
  if [ "${MERGE:-1}" = 1 ]; then
    build-asan/tests/fuzz/fuzz_"$target" -merge=1 -max_len=65536 "tests/fuzz/corpus/$target" "$dir/corpus" >"$dir/merge.log" 2>&1
    echo "fuzz-campaign: merged into tests/fuzz/corpus/$target ($(ls "tests/fuzz/corpus/$target" | wc -l) files)"
  fi
  echo "fuzz-campaign: $target done: $total executions, no finding"
}

status() {
  local target dir
  for target in "${@:-${fuzz_targets[@]}}"; do
    dir=$(campaign_dir "$target")
    [ -d "$dir" ] || { echo "$target: no campaign"; continue; }
    local running=no
    [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null && running=yes
    local first last
    first=$(head -1 "$dir/progress" 2>/dev/null | cut -d' ' -f1)
    last=$(tail -1 "$dir/progress" 2>/dev/null | cut -d' ' -f1)
    echo "$target: $(executions "$target") executions in $(wc -l 2>/dev/null <"$dir/progress" || echo 0) pieces" \
         "(${first:-none} to ${last:-none}), running: $running, corpus $(ls "$dir/corpus" | wc -l) added," \
         "findings: $(findings "$target" | wc -l) $(findings "$target" | tr '\n' ' ')"
  done
}

case "${1:-}" in
run) [ $# -ge 2 ] || usage; campaign "$2" "${3:-1000000}" ;;
start)
  [ $# -ge 2 ] || usage
  fuzz_check_target "$2"
  dir=$(campaign_dir "$2")
  mkdir -p "$dir"
  nohup "$0" run "$2" "${3:-1000000}" >>"$dir/campaign.log" 2>&1 &
  echo $! >"$dir/pid"
  echo "fuzz-campaign: $2 started (pid $!); its log: $dir/campaign.log; scripts/fuzz-campaign.sh status $2"
  ;;
stop)
  [ $# -ge 2 ] || usage
  dir=$(campaign_dir "$2")
  [ -f "$dir/pid" ] || { echo "fuzz-campaign: no campaign of $2 to stop" >&2; exit 1; }
  pkill -P "$(cat "$dir/pid")" 2>/dev/null || true
  kill "$(cat "$dir/pid")" 2>/dev/null || true
  pkill -f "fuzz_$2 -runs=" 2>/dev/null || true
  rm -f "$dir/pid"
  echo "fuzz-campaign: $2 stopped at $(executions "$2") executions"
  ;;
status) shift; status "$@" ;;
*) usage ;;
esac
