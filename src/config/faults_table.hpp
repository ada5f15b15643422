#pragma once
// The [faults] table of a run configuration, an engine's configuration or a fixture: one parser
// for the one fault vocabulary (device/fault_plan.hpp). Its keys are FaultPlan's fields, with
// times in milliseconds (lose_device_at_ms, copy_delay_ms, copy_delay_from_ms,
// pcie_slowdown_from_ms); config/default.toml shows each with its default.

#include "config/config_table.hpp"
#include "device/fault_plan.hpp"

namespace stagehand {

// The root's [faults] table (none: no faults) for a run of `gpus` GPUs. Throws ConfigError naming
// the file, line and key for an unknown key, a wrong type or a value out of range, and for the
// table's old name [device_faults], which it names the new one for.
FaultPlan read_faults_table(const ConfigTable& root, int gpus);

}  // namespace stagehand
