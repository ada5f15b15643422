#include "device/setup_launches.hpp"

#include "device/launch_reading.hpp"

namespace stagehand::kernel {

KernelLaunch FixedBaseLaunch::to_launch() const {
  KernelLaunch launch{kernel, point_count, {threads}, {table, scalars}, {points}};
  launch.curve = curve;
  return launch;
}

FixedBaseLaunch FixedBaseLaunch::from_launch(const KernelLaunch& launch) {
  detail::require(launch, 0, 2, 1, "arguments [] or [threads], reads [table, scalars] and writes [points]");
  const std::uint64_t threads = detail::argument_or_zero(launch, 0);
  return {launch.name, launch.work_units, threads, launch.reads[0], launch.reads[1], launch.writes[0], launch.curve};
}

}  // namespace stagehand::kernel
