#include "device/setup_launches.hpp"

#include <stdexcept>
#include <string>

namespace stagehand::kernel {

KernelLaunch FixedBaseLaunch::to_launch() const {
  KernelLaunch launch{kernel, point_count, {threads}, {table, scalars}, {points}};
  launch.curve = curve;
  return launch;
}

FixedBaseLaunch FixedBaseLaunch::from_launch(const KernelLaunch& launch) {
  if (launch.reads.size() < 2 || launch.writes.empty()) {
    throw std::invalid_argument("kernel " + launch.name + ": expects reads [table, scalars] and writes [points]; got " +
                                std::to_string(launch.reads.size()) + " reads and " +
                                std::to_string(launch.writes.size()) + " writes");
  }
  const std::uint64_t threads = launch.arguments.empty() ? 0 : launch.arguments[0];
  return {launch.name, launch.work_units, threads, launch.reads[0], launch.reads[1], launch.writes[0], launch.curve};
}

}  // namespace stagehand::kernel
