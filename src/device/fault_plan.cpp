#include "device/fault_plan.hpp"

namespace stagehand {
namespace {

// The fields SimDevice injects, copied from `from` into `to`: the one list of them.
void copy_simulated_fields(FaultPlan& to, const FaultPlan& from) {
  to.fail_allocation_number = from.fail_allocation_number;
  to.fail_host_pin_number = from.fail_host_pin_number;
  to.fail_kernel_name = from.fail_kernel_name;
  to.fail_kernel_occurrence = from.fail_kernel_occurrence;
  to.lose_device_at_ns = from.lose_device_at_ns;
  to.pcie_slowdown_factor = from.pcie_slowdown_factor;
  to.pcie_slowdown_from_ns = from.pcie_slowdown_from_ns;
}

}  // namespace

bool FaultPlan::any() const {
  FaultPlan none;
  none.device = device;
  none.seed = seed;
  return *this != none;
}

FaultPlan FaultPlan::simulated_part() const {
  FaultPlan part;
  part.device = device;
  copy_simulated_fields(part, *this);
  return part;
}

FaultPlan FaultPlan::adaptor_part() const {
  FaultPlan part = *this;
  copy_simulated_fields(part, FaultPlan{});
  return part;
}

}  // namespace stagehand
