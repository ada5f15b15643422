#include "device/errors.hpp"

namespace stagehand {
namespace {
class DeviceCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "stagehand.device"; }
  std::string message(int value) const override {
    switch (static_cast<DeviceErrc>(value)) {
      case DeviceErrc::out_of_memory: return "out of device memory";
      case DeviceErrc::invalid_value: return "invalid value";
      case DeviceErrc::device_lost: return "device lost";
      case DeviceErrc::kernel_failed: return "kernel failed";
      case DeviceErrc::host_pin_failed: return "pinning host memory failed";
      case DeviceErrc::not_ready: return "not ready";
      case DeviceErrc::unknown_kernel: return "unknown kernel";
    }
    return "unknown device error";
  }
};
}  // namespace

const std::error_category& device_category() {
  static const DeviceCategory category;
  return category;
}

std::error_code make_error_code(DeviceErrc code) { return {static_cast<int>(code), device_category()}; }
std::optional<DeviceErrc> device_errc(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const DeviceError& device_error) {
    return device_error.errc();
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace stagehand
