#!/usr/bin/env bash
# On the GPU machine, with .gpu-bundle/ carried there (scripts/gpu-bundle.sh): the Device
# contract on CudaDevice, every CudaDevice call on its own GPU (needs two GPUs: on one it reports
# itself skipped, which is no failure) and the kernels' quick checks, logs into $OUT when it is set.
set -uo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH="$PWD/.gpu-bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out="${OUT:-/tmp}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
status=0
.gpu-bundle/cuda_device_contract_test --log_level=test_suite --report_level=short 2>&1 | tee "$out/cuda_device_contract.log" || status=1
.gpu-bundle/cuda_current_device_test --log_level=test_suite --report_level=short 2>&1 | tee "$out/cuda_current_device.log"
case ${PIPESTATUS[0]} in
  0) ;;
  77) echo "cuda_current_device_test: skipped, fewer than two GPUs" ;;
  *) status=1 ;;
esac
.gpu-bundle/gpu_kernels_test --report_level=short 2>&1 | tail -20 | tee "$out/gpu_kernels.log" || status=1
exit $status
