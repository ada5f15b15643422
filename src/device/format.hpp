#pragma once
// Human-readable sizes and durations for messages, tables and trace details.

#include "device/types.hpp"

#include <string>

namespace stagehand {

// "8.00 GiB", "512.0 MiB", "96 B".
std::string format_bytes(Bytes bytes);
// "252.8 ms", "38.7 us", "1.820 s".
std::string format_duration(Nanoseconds duration);

}  // namespace stagehand
