# device: the Device contract on CudaDevice, every CudaDevice call on its own GPU (needs two GPUs:
# on one it reports itself skipped, which is no failure) and the kernels' quick checks.
# Logs: cuda_device_contract.log, cuda_current_device.log, gpu_kernels.log.
# shellcheck shell=bash disable=SC2034,SC2154  # declarations read by, and variables set by, scripts/gpu.sh
description="the Device contract on CudaDevice, each CudaDevice call on its own GPU, the kernels' quick checks"
targets=(cuda_device_contract_test cuda_current_device_test gpu_kernels_test)

check_run() {
  local status=0
  "$bin/cuda_device_contract_test" --log_level=test_suite --report_level=short 2>&1 | tee "$logs/cuda_device_contract.log" || status=1
  "$bin/cuda_current_device_test" --log_level=test_suite --report_level=short 2>&1 | tee "$logs/cuda_current_device.log"
  case ${PIPESTATUS[0]} in
    0) ;;
    77) echo "cuda_current_device_test: skipped, fewer than two GPUs" ;;
    *) status=1 ;;
  esac
  "$bin/gpu_kernels_test" --report_level=short 2>&1 | tail -20 | tee "$logs/gpu_kernels.log" || status=1
  figure "$(grep -h -E '^\*\*\*|No errors|failure' "$logs"/*.log | tr '\n' ' ' | cut -c1-200)"
  return $status
}
