#!/usr/bin/env bash
# The test suite: install what is missing, build, and run every test through ctest. Tests
# labelled gpu report themselves skipped where no GPU is present. Extra arguments go to ctest,
# e.g. scripts/test.sh -L sim
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The layout first: a file that .clang-format would lay out otherwise fails in seconds, not after the build.
scripts/format.sh --check
scripts/build.sh
ctest --test-dir build --output-on-failure --no-tests=error -j "$(nproc)" "$@"
