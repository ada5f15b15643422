#pragma once
// The run's figures for a person (a table) and for a program (JSON).

#include "coordinator/coordinator.hpp"

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace stagehand {

// The policies' figures, then each GPU's share where a run had several GPUs or one failed.
void print_report_table(std::ostream& out, const std::vector<RunReport>& reports);
// Each GPU's jobs, moved jobs, GPU seconds per job, busy, VRAM peak and state; nothing where
// every run had one GPU and it worked to the end.
void print_device_table(std::ostream& out, const std::vector<RunReport>& reports);
// Where one run's kernel time went, by kernel name: launches, total, per partition, ns per work
// unit (the unit of the device model's cost table, so that a real run calibrates the model).
void print_kernel_table(std::ostream& out, const RunReport& report);
// {"policies":[{"policy", "seconds_per_proof", ...}]}; throws std::runtime_error naming the path.
void write_report_json(const std::filesystem::path& path, const std::vector<RunReport>& reports);
std::string report_json(const std::vector<RunReport>& reports);
// The figures a picture's lane shows beside its name, as the table prints them.
std::string headline_figures(const RunReport& report);

}  // namespace stagehand
