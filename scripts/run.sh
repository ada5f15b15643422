#!/usr/bin/env bash
# The main job: install what is missing, build, and run `stagehand run` with the default config
# (all four policies side by side on the simulated H200 held to 16 GiB). Extra arguments go to
# `stagehand run`, e.g. scripts/run.sh --policy budgeted --json out/run.json
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build/src/cli/stagehand run --config config/default.toml "$@"
# The picture of every policy on one axis as a PNG too, for viewers that do not show SVG; with
# --trace DIR the picture lies beside DIR instead and is left as it is.
if [ -f out/run.svg ] && command -v rsvg-convert >/dev/null 2>&1 && [ out/run.svg -nt out/run.png -o ! -f out/run.png ]; then
  rsvg-convert -o out/run.png out/run.svg
  echo "picture: out/run.svg, out/run.png" >&2
fi
