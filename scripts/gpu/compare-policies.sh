# compare-policies:BASE_COMMIT: `stagehand bench policies` from two commits on one GPU machine in
# one run, to show that a change moved no figure (or by how much): the same configuration, the
# card held to its cap, each binary in turn, alternating so that neither always runs on a colder
# or warmer machine. The bundle builds stagehand at BASE_COMMIT too (in a worktree under
# build-compare/) and carries both. Logs: base-N.log, new-N.log and their .json for N = 1..ROUNDS,
# each `bench policies --proofs 1 --partitions PARTITIONS --domain-log2 BIG_LOG` on
# config/default.toml (vram_cap_gib = 16).
#   ROUNDS (1)  PARTITIONS (6)  BIG_LOG (26)
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="bench policies at 2^26 from this tree and from a base commit, alternating (compare-policies:COMMIT)"
targets=(stagehand)

check_bundle() {
  [[ -n $arg ]] || die "compare-policies: give the commit to compare against (compare-policies:COMMIT)"
  local worktree=build-compare/base
  [[ -d $worktree ]] || git worktree add --detach "$worktree" "$arg" >/dev/null
  git -C "$worktree" checkout -q --detach "$arg"
  (cd "$worktree" && export CCACHE_BASEDIR="$PWD" && cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null &&
     nice -n 5 cmake --build build-cuda -j "${JOBS:-2}" --target stagehand)
  pack_binary "$worktree/build-cuda/src/cli/stagehand" stagehand-base
  git -C "$worktree" rev-parse HEAD >"$bundle/base-commit"
}

check_run() {
  local status=0 round which binary commit
  for round in $(seq 1 "${ROUNDS:-1}"); do
    for which in new base; do
      binary=$bin/stagehand commit=$bundle/commit
      [[ $which == base ]] && binary=$bin/stagehand-base commit=$bundle/base-commit
      timeout 280 "$binary" bench policies --config config/default.toml --proofs 1 \
        --partitions "${PARTITIONS:-6}" --domain-log2 "${BIG_LOG:-26}" --trace "$work/traces/$which" \
        --json "$logs/$which-$round.json" >"$logs/$which-$round.log" 2>&1 || status=1
      echo "== $which (round $round, $(cut -c1-7 "$commit"))"
      grep -E "^(policy|serial|prestage|two-lock|budgeted) " "$logs/$which-$round.log"
    done
  done
  figure "budgeted new / base: $(grep -h -E '^budgeted ' "$logs/new-1.log" "$logs/base-1.log" | tr -s ' ' | cut -c1-70 | tr '\n' '/')"
  return $status
}
