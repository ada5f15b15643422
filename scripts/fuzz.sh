#!/usr/bin/env bash
# Runs one libFuzzer target for a while (long runs, and CI's short ones):
#
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer options]   TARGET: zkey wtns r1cs params run_config fixture
#   scripts/fuzz.sh all SECONDS                          each target for SECONDS
#
# The fuzzers are built in build-asan (clang-14, ASan + UBSan; scripts/sanitize.sh build asan).
# They read the seed corpus tests/fuzz/corpus/TARGET and write what they add under
# build-asan/fuzz/TARGET/corpus. A crash is written to build-asan/fuzz/TARGET/crash-* and fails the
# run; keep it as a reproducer in tests/fuzz/crashes/TARGET/ (ctest replays it with
# -DSTAGEHAND_FUZZ_REPLAY_CRASHES=ON). MERGE=1 merges the new inputs into the seed corpus
# (libFuzzer -merge=1 keeps only those that add coverage; keep the corpus small).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh TARGET|all SECONDS [libFuzzer options]}
seconds=${2:?usage: scripts/fuzz.sh TARGET|all SECONDS [libFuzzer options]}
shift 2
. scripts/lib/fuzz.sh
if [ "$target" = all ]; then
  [ "${FUZZ_REBUILD:-1}" = 1 ] && fuzz_build "${fuzz_targets[@]}"
  status=0
  for t in "${fuzz_targets[@]}"; do FUZZ_REBUILD=0 "$0" "$t" "$seconds" "$@" || status=1; done
  exit $status
fi
fuzz_check_target "$target"

if [ ! -x build-asan/tests/fuzz/fuzz_$target ] || [ "${FUZZ_REBUILD:-1}" = 1 ]; then
  fuzz_build "$target"
fi
work=build-asan/fuzz/$target
mkdir -p "$work/corpus"
fuzz_sanitizer_options
echo "fuzz: $target for $seconds s"
status=0
# One scratch file per process under TMPDIR (the readers take paths).
TMPDIR=${TMPDIR:-/tmp} build-asan/tests/fuzz/fuzz_$target -max_total_time="$seconds" "${fuzz_common_options[@]}" \
  -print_final_stats=1 -artifact_prefix="$work/" "$@" "$work/corpus" "tests/fuzz/corpus/$target" \
  > "$work/log" 2>&1 || status=$?
grep -E "^#[0-9]+.*DONE|stat::number_of_executed_units|ERROR|SUMMARY" "$work/log" | tail -5 || true
if [ "$status" != 0 ]; then
  echo "fuzz: $target FOUND A CRASH (exit $status); the log: $work/log; the input(s):"
  ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* 2>/dev/null || true
  exit 1
fi
if [ "${MERGE:-0}" = 1 ]; then
  build-asan/tests/fuzz/fuzz_$target -merge=1 -max_len=65536 "tests/fuzz/corpus/$target" "$work/corpus" >/dev/null 2>&1
  echo "fuzz: merged into tests/fuzz/corpus/$target ($(ls tests/fuzz/corpus/$target | wc -l) files)"
fi
