#!/usr/bin/env bash
# Builds the GPU tests and tools here (nvcc compiles for sm_90 without a GPU) and gathers them,
# with the shared libraries the GPU machine lacks, into .gpu-bundle/ to carry there.
# Then on the GPU machine: scripts/gpu-check-device.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/bundle.sh
export CCACHE_BASEDIR="$PWD"
cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-cuda -j "$(nproc)" --target stagehand cuda_device_contract_test cuda_current_device_test gpu_kernels_test
rm -rf .gpu-bundle && mkdir -p .gpu-bundle/lib
cp build-cuda/src/cli/stagehand build-cuda/tests/cuda/cuda_device_contract_test \
  build-cuda/tests/cuda/cuda_current_device_test build-cuda/tests/gpu/gpu_kernels_test .gpu-bundle/
bundle_libraries .gpu-bundle .gpu-bundle/stagehand .gpu-bundle/*_test
du -sh .gpu-bundle
