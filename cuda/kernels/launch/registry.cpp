// The CUDA launcher registry: every group's table (launchers.hpp), looked up in one place.
#include <array>

#include "launch/groth16_launchers.hpp"
#include "launch/launchers.hpp"
#include "launch/partition_launchers.hpp"
#include "util/assert.hpp"

namespace stagehand::cuda {
namespace {

constexpr std::array kTables = {&core_launchers, &batch_addition_launchers, &partition_launchers, &groth16_launchers,
                                &setup_launchers};

}  // namespace

const KernelLauncher* find_launcher(std::string_view name, kernel::Curve curve) {
  for (auto table : kTables) {
    for (const LauncherEntry& entry : table()) {
      if (entry.name == name && entry.curve == curve) return &entry.launcher;
    }
  }
  return nullptr;
}

std::vector<std::string_view> launcher_names(kernel::Curve curve) {
  std::vector<std::string_view> names;
  for (auto table : kTables) {
    for (const LauncherEntry& entry : table()) {
      STAGEHAND_ASSERT(entry.launcher != nullptr, "the launcher table entry {} ({}) has no function", entry.name,
                       kernel::curve_name(entry.curve));
      if (entry.curve == curve) names.push_back(entry.name);
    }
  }
  return names;
}

std::uint64_t kernel_scratch_bytes(std::string_view name, std::uint64_t capacity) {
  if (const std::uint64_t bytes = partition_kernel_scratch_bytes(name, capacity)) return bytes;
  return groth16_kernel_scratch_bytes(name, capacity);
}

}  // namespace stagehand::cuda
