#include "config/faults_table.hpp"

#include "device/kernel_abi.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <climits>

namespace stagehand {
namespace {

std::uint64_t count_in(const ConfigTable& table, std::string_view key, std::uint64_t fallback, std::int64_t minimum) {
  return static_cast<std::uint64_t>(table.integer_in(key, static_cast<std::int64_t>(fallback), minimum, INT64_MAX));
}

Nanoseconds milliseconds_in(const ConfigTable& table, std::string_view key, Nanoseconds fallback, double minimum,
                            double maximum) {
  const double ms = table.number_in(key, static_cast<double>(fallback) / 1e6, minimum, maximum);
  return static_cast<Nanoseconds>(ms * 1e6);
}

std::string kernel_in(const ConfigTable& table, std::string_view key) {
  auto name = table.string(key).value_or("");
  if (!name.empty() && !kernel::is_known(name)) {
    table.fail(key, fmt::format("'{}' is not a kernel (src/device/kernel_abi.hpp declares: {})", name,
                                fmt::join(kernel::kAll, ", ")));
  }
  return name;
}

FaultPlan read_faults(const ConfigTable& table, int gpus) {
  FaultPlan plan;
  plan.device = static_cast<int>(table.integer_in("device", plan.device, -1, gpus - 1));
  plan.fail_allocation_number = count_in(table, "fail_allocation_number", plan.fail_allocation_number, 0);
  plan.fail_host_pin_number = count_in(table, "fail_host_pin_number", plan.fail_host_pin_number, 0);
  plan.fail_kernel_name = kernel_in(table, "fail_kernel_name");
  plan.fail_kernel_occurrence = count_in(table, "fail_kernel_occurrence", plan.fail_kernel_occurrence, 1);
  // -1 (never) or a time; a negative time has no other meaning.
  const double lose_ms = table.number_in("lose_device_at_ms", -1, -1, 1e12);
  plan.lose_device_at_ns = lose_ms < 0 ? -1 : static_cast<Nanoseconds>(lose_ms * 1e6);
  plan.lose_device_at_launch = count_in(table, "lose_device_at_launch", plan.lose_device_at_launch, 0);
  plan.allocation_failure_probability =
      table.number_in("allocation_failure_probability", plan.allocation_failure_probability, 0, 1);
  plan.kernel_error_name = kernel_in(table, "kernel_error_name");
  plan.kernel_error_occurrence = count_in(table, "kernel_error_occurrence", plan.kernel_error_occurrence, 1);
  plan.kernel_error_probability = table.number_in("kernel_error_probability", plan.kernel_error_probability, 0, 1);
  plan.seed = count_in(table, "seed", plan.seed, 0);
  plan.copy_delay_ns = milliseconds_in(table, "copy_delay_ms", plan.copy_delay_ns, 0, 1e6);
  plan.copy_delay_from_ns = milliseconds_in(table, "copy_delay_from_ms", plan.copy_delay_from_ns, 0, 1e12);
  plan.pcie_slowdown_factor = table.number_in("pcie_slowdown_factor", plan.pcie_slowdown_factor, 1.0, 1000.0);
  plan.pcie_slowdown_from_ns = milliseconds_in(table, "pcie_slowdown_from_ms", plan.pcie_slowdown_from_ns, 0, 1e12);
  table.reject_unknown_keys();
  return plan;
}

}  // namespace

FaultPlan read_faults_table(const ConfigTable& root, int gpus) {
  // Refused rather than read as before: a table nothing reads would hide the faults it asks for.
  if (root.contains("device_faults")) {
    root.fail("device_faults",
              "this table is now [faults], one table for every backend (its keys: config/default.toml; a "
              "kernel failure that fails one job while its GPU goes on is kernel_error_name)");
  }
  auto table = root.table("faults");
  return table ? read_faults(*table, gpus) : FaultPlan{};
}

}  // namespace stagehand
