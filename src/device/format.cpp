#include "device/format.hpp"

#include <fmt/format.h>

namespace stagehand {

std::string format_bytes(Bytes bytes) {
  auto value = static_cast<double>(bytes);
  if (bytes >= kGiB) return fmt::format("{:.2f} GiB", value / static_cast<double>(kGiB));
  if (bytes >= kMiB) return fmt::format("{:.1f} MiB", value / static_cast<double>(kMiB));
  if (bytes >= kKiB) return fmt::format("{:.1f} KiB", value / static_cast<double>(kKiB));
  return fmt::format("{} B", bytes);
}

std::string format_duration(Nanoseconds duration) {
  auto value = static_cast<double>(duration);
  if (duration >= kSecond || duration <= -kSecond) return fmt::format("{:.3f} s", value / 1e9);
  if (duration >= kMillisecond || duration <= -kMillisecond) return fmt::format("{:.1f} ms", value / 1e6);
  if (duration >= kMicrosecond || duration <= -kMicrosecond) return fmt::format("{:.1f} us", value / 1e3);
  return fmt::format("{} ns", duration);
}

}  // namespace stagehand
