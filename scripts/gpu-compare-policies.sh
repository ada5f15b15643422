#!/usr/bin/env bash
# `stagehand bench policies` from two commits on one GPU machine in one call, to show that a
# change moved no figure (or by how much): the same configuration, the card held to its cap,
# each binary in turn, alternating so that neither always runs on a colder or warmer machine.
#
#   scripts/gpu-compare-policies.sh bundle BASE_COMMIT   here: builds stagehand at BASE_COMMIT (in
#       a worktree under build-compare/) and at the working tree (build-cuda), strips and
#       compresses both into .gpu-compare/ (carry it there; under 64 MiB).
#   scripts/gpu-compare-policies.sh run                   there: into $OUT base-N.log, new-N.log
#       and their .json for N = 1..ROUNDS (1), each `bench policies --proofs 1 --partitions
#       PARTITIONS (6) --domain-log2 BIG_LOG (26)` on config/default.toml (vram_cap_gib = 16).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/bundle.sh
bundle=.gpu-compare
case "${1:-}" in
bundle)
  set -e
  base_commit="${2:?give the commit to compare against}"
  export CCACHE_BASEDIR="$PWD"
  cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-cuda -j2 --target stagehand
  worktree=build-compare/base
  [[ -d $worktree ]] || git worktree add --detach "$worktree" "$base_commit" >/dev/null
  git -C "$worktree" checkout -q --detach "$base_commit"
  (cd "$worktree" && export CCACHE_BASEDIR="$PWD" && cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null &&
     cmake --build build-cuda -j2 --target stagehand)
  rm -rf "$bundle" && mkdir -p "$bundle/lib"
  strip -o "$bundle/stagehand-new" build-cuda/src/cli/stagehand
  strip -o "$bundle/stagehand-base" "$worktree/build-cuda/src/cli/stagehand"
  bundle_libraries "$bundle" "$bundle"/stagehand-*
  xz -T2 -6 "$bundle"/stagehand-*
  cp config/default.toml "$bundle/"
  echo "$base_commit" >"$bundle/base-commit.txt"
  git rev-parse HEAD >"$bundle/new-commit.txt"
  du -sh "$bundle"
  ;;
run)
  export LD_LIBRARY_PATH="$PWD/$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  out="${OUT:-/tmp/gpu-compare}"
  bin=/tmp/gpu-compare-bin
  mkdir -p "$out"
  unpack_binaries "$bundle" "$bin"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv,noheader | tee "$out/gpu.txt"
  status=0
  for round in $(seq 1 "${ROUNDS:-1}"); do
    for which in new base; do
      timeout 280 "$bin/stagehand-$which" bench policies --config "$bundle/default.toml" --proofs 1 \
        --partitions "${PARTITIONS:-6}" --domain-log2 "${BIG_LOG:-26}" --trace "/tmp/compare-traces/$which" \
        --json "$out/$which-$round.json" >"$out/$which-$round.log" 2>&1 || status=1
      echo "== $which (round $round, $(cat "$bundle/$which-commit.txt" | cut -c1-7))"
      grep -E "^(policy|serial|prestage|two-lock|budgeted) " "$out/$which-$round.log"
    done
  done
  exit $status
  ;;
*)
  sed -n 2,13p "$0"
  exit 2
  ;;
esac
