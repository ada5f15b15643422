#!/usr/bin/env bash
# Configures and builds Stagehand in ./build (Release). The CUDA backend and kernels are built
# when nvcc is found; pass -DSTAGEHAND_CUDA=OFF in CMAKE_ARGS to leave them out.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on relative paths under the project, so a fresh clone elsewhere still hits.
export CCACHE_BASEDIR="$PWD"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null
cmake --build build -j "$(nproc)"
