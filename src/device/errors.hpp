#pragma once
// Telling device errors apart where they arrive as exception_ptr (a failed job, a watcher's wait).

#include "device/types.hpp"

#include <exception>
#include <optional>

namespace stagehand {

// The device's error code, when `error` is a DeviceError; nothing otherwise.
std::optional<DeviceErrc> device_errc(std::exception_ptr error);
inline bool is_out_of_memory(std::exception_ptr error) { return device_errc(error) == DeviceErrc::out_of_memory; }
inline bool is_device_lost(std::exception_ptr error) { return device_errc(error) == DeviceErrc::device_lost; }

}  // namespace stagehand
