#!/usr/bin/env bash
# The main job: install what is missing, build, and run `stagehand run` with the default config
# (all four policies side by side on the simulated H200 held to 16 GiB). Extra arguments go to
# `stagehand run`, e.g. scripts/run.sh --policy budgeted --json out/run.json
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec build/src/cli/stagehand run --config config/default.toml "$@"
