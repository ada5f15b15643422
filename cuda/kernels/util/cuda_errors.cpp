// What CUDA's errors mean to the Device interface: which kind of DeviceError each is, and which
// of them spend the context for the rest of the process.
#include "util/cuda_check.hpp"

#include <fmt/format.h>

namespace stagehand::cuda {

namespace {
// The errors after which the CUDA context is unusable ("sticky"): a kernel that faulted, a device
// exception. Every later call in the process returns the same error and nothing clears it, so
// for the coordinator the GPU is lost (driver_types.h: "the process must be terminated").
bool loses_the_context(cudaError_t status) {
  switch (status) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorContained:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorMpsClientTerminated:
    case cudaErrorExternalDevice: return true;
    default: return false;
  }
}

DeviceErrc errc_of(cudaError_t status) {
  if (loses_the_context(status)) return DeviceErrc::device_lost;
  switch (status) {
    case cudaErrorMemoryAllocation: return DeviceErrc::out_of_memory;
    case cudaErrorLaunchOutOfResources: return DeviceErrc::kernel_failed;  // refused at launch; the context goes on
    case cudaErrorNoDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorInsufficientDriver: return DeviceErrc::device_lost;
    case cudaErrorHostMemoryAlreadyRegistered:
    case cudaErrorHostMemoryNotRegistered: return DeviceErrc::host_pin_failed;
    case cudaErrorNotReady: return DeviceErrc::not_ready;
    default: return DeviceErrc::invalid_value;
  }
}

}  // namespace

DeviceError cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  const char* lost = loses_the_context(status) ? "; the GPU's context is lost until the process restarts" : "";
  return DeviceError(errc_of(status), fmt::format("{} failed: {} ({}) at {}:{}{}", call, cudaGetErrorString(status),
                                                  cudaGetErrorName(status), file, line, lost));
}

void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so that the next call does not see it
  throw cuda_error(status, call, file, line);
}

}  // namespace stagehand::cuda
