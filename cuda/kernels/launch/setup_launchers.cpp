// setup_fixed_base_g1/_g2 on the device: the KernelLaunch read and checked, then
// setup/fixed_base.hpp's kernel.
#include "launch/setup_launchers.hpp"

#include "device/kernel_abi.hpp"
#include "device/setup_launches.hpp"
#include "launch/launch_args.hpp"
#include "setup/fixed_base.hpp"

namespace stagehand::cuda {
namespace {

// One source for both curves: the byte sizes it checks are K's.
template <FixedBaseGroup Group, kernel::Curve K>
void launch_setup_fixed_base(const KernelLaunch& launch, cudaStream_t stream) {
  need_curve(launch, K);
  need(launch, 0, 2, 1);
  const auto typed = kernel::FixedBaseLaunch::from_launch(launch);
  const std::uint64_t n = typed.point_count;
  if (n == 0) return;
  const void* table = address(launch, typed.table, fixed_base_table_bytes(Group, K));
  const void* scalars = address(launch, typed.scalars, n * kernel::curve_sizes(K).fr);
  void* points = address(launch, typed.points, n * fixed_base_point_bytes(Group, K));
  for (const void* pointer : {table, scalars, static_cast<const void*>(points)}) {
    if ((reinterpret_cast<std::uintptr_t>(pointer) & 15) != 0) reject(launch, "every buffer must be 16-byte aligned");
  }
  fixed_base_multiply(Group, table, scalars, points, n, stream, K);
}

constexpr LauncherEntry kSetupLaunchers[] = {
    {kernel::setup_fixed_base_g1, &launch_setup_fixed_base<FixedBaseGroup::g1, kernel::Curve::bls12_381>},
    {kernel::setup_fixed_base_g2, &launch_setup_fixed_base<FixedBaseGroup::g2, kernel::Curve::bls12_381>},
    {kernel::setup_fixed_base_g1, &launch_setup_fixed_base<FixedBaseGroup::g1, kernel::Curve::bn254>,
     kernel::Curve::bn254},
    {kernel::setup_fixed_base_g2, &launch_setup_fixed_base<FixedBaseGroup::g2, kernel::Curve::bn254>,
     kernel::Curve::bn254},
};

}  // namespace

std::span<const LauncherEntry> setup_launchers() { return kSetupLaunchers; }

}  // namespace stagehand::cuda
