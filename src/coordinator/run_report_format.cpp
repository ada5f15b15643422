#include "coordinator/run_report_format.hpp"

#include "device/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <ostream>

namespace stagehand {

// Each GPU's share, where a run had several or one of them failed.
void print_device_table(std::ostream& out, const std::vector<RunReport>& reports) {
  const bool wanted = std::any_of(reports.begin(), reports.end(), [](const RunReport& r) {
    return r.per_device.size() > 1 || std::any_of(r.per_device.begin(), r.per_device.end(),
                                                  [](const DeviceReport& d) { return !d.failure.empty(); });
  });
  if (!wanted) return;
  fmt::print(out, "\n{:<10} {:>4} {:>6} {:>7} {:>6} {:>10} {:>7} {:>10} {:>5}  {}\n", "per GPU", "GPU", "jobs",
             "failed", "moved", "GPU s/job", "busy", "VRAM peak", "OOM", "state");
  for (const auto& r : reports) {
    for (const auto& d : r.per_device) {
      fmt::print(out, "{:<10} {:>4} {:>6} {:>7} {:>6} {:>10.3f} {:>6.1f}% {:>10} {:>5}  {}\n", r.policy, d.device,
                 d.jobs_completed, d.jobs_failed, d.jobs_moved_away, d.gpu_seconds_per_job,
                 100 * d.compute_busy_fraction, format_bytes(d.vram_peak_bytes), d.oom_count,
                 d.failure.empty() ? "ok" : d.failure);
    }
  }
}

void print_report_table(std::ostream& out, const std::vector<RunReport>& reports) {
  fmt::print(out, "{:<10} {:>9} {:>9} {:>9} {:>7} {:>9} {:>9} {:>10} {:>10} {:>10} {:>5} {:>9} {:>9}\n", "policy",
             "s/proof", "parts/s", "GPU s/pt", "busy", "lock s", "upload s", "PCIe pin", "PCIe page", "VRAM peak",
             "OOM", "fallback", "pre GB/s");
  for (const auto& r : reports) {
    fmt::print(
        out, "{:<10} {:>9.3f} {:>9.3f} {:>9.3f} {:>6.1f}% {:>9.2f} {:>9.2f} {:>10} {:>10} {:>10} {:>5} {:>9} {:>9}\n",
        r.policy, r.seconds_per_proof, r.partitions_per_second, r.gpu_seconds_per_partition,
        100 * r.compute_busy_fraction, r.lock_wait_seconds, r.upload_wait_seconds, format_bytes(r.pcie_bytes_pinned),
        format_bytes(r.pcie_bytes_pageable), format_bytes(r.vram_peak_bytes), r.oom_count, r.fallback_count,
        r.prestage_gbps > 0 ? fmt::format("{:.1f}", r.prestage_gbps) : std::string("-"));
  }
  print_device_table(out, reports);
  for (const auto& r : reports) {
    if (r.jobs_retried > 0)
      fmt::print(out, "{}: {} partitions moved to another GPU when theirs was lost\n", r.policy, r.jobs_retried);
    if (r.partitions_completed < r.partitions) {
      fmt::print(out, "{}: {} of {} partitions failed", r.policy, r.partitions - r.partitions_completed, r.partitions);
      for (const auto& job : r.jobs) {
        if (!job.completed()) {
          fmt::print(out, "; the first, partition {}: {}", job.index, job.error);
          break;
        }
      }
      fmt::print(out, "\n");
    }
  }
}

void print_kernel_table(std::ostream& out, const RunReport& report) {
  std::vector<std::pair<std::string, KernelTotals>> rows(report.kernel_totals.begin(), report.kernel_totals.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.busy_ns > b.second.busy_ns; });
  const double partitions = std::max(1, report.partitions_completed);
  fmt::print(out, "{}: kernel time by kernel\n{:<22} {:>9} {:>14} {:>11} {:>13} {:>12}\n", report.policy, "kernel",
             "launches", "work units", "total ms", "ms/partition", "ns/unit");
  for (const auto& [name, totals] : rows) {
    const double ms = static_cast<double>(totals.busy_ns) / 1e6;
    fmt::print(out, "{:<22} {:>9} {:>14} {:>11.1f} {:>13.2f} {:>12.4f}\n", name, totals.launches, totals.work_units, ms,
               ms / partitions,
               totals.work_units ? static_cast<double>(totals.busy_ns) / static_cast<double>(totals.work_units) : 0.0);
  }
}

std::string report_json(const std::vector<RunReport>& reports) {
  nlohmann::json policies = nlohmann::json::array();
  for (const auto& r : reports) {
    policies.push_back({{"policy", r.policy},
                        {"seconds_per_proof", r.seconds_per_proof},
                        {"partitions_per_second", r.partitions_per_second},
                        {"gpu_seconds_per_partition", r.gpu_seconds_per_partition},
                        {"compute_busy_fraction", r.compute_busy_fraction},
                        {"lock_wait_seconds", r.lock_wait_seconds},
                        {"upload_wait_seconds", r.upload_wait_seconds},
                        {"prestage_gbps", r.prestage_gbps},
                        {"pcie_bytes_pinned", r.pcie_bytes_pinned},
                        {"pcie_bytes_pageable", r.pcie_bytes_pageable},
                        {"vram_peak_bytes", r.vram_peak_bytes},
                        {"oom_count", r.oom_count},
                        {"fallback_count", r.fallback_count},
                        {"partitions", r.partitions},
                        {"partitions_completed", r.partitions_completed},
                        {"devices", r.devices},
                        {"jobs_retried", r.jobs_retried}});
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : r.per_device) {
      devices.push_back({{"device", d.device},
                         {"name", d.name},
                         {"jobs_completed", d.jobs_completed},
                         {"jobs_failed", d.jobs_failed},
                         {"jobs_moved_away", d.jobs_moved_away},
                         {"gpu_seconds_per_job", d.gpu_seconds_per_job},
                         {"compute_busy_fraction", d.compute_busy_fraction},
                         {"vram_peak_bytes", d.vram_peak_bytes},
                         {"oom_count", d.oom_count},
                         {"failure", d.failure}});
    }
    policies.back()["per_device"] = devices;
    // Kernel time by kernel, in the device model's units (to calibrate it against a real run).
    nlohmann::json kernels = nlohmann::json::object();
    for (const auto& [name, totals] : r.kernel_totals) {
      kernels[name] = {{"launches", totals.launches}, {"work_units", totals.work_units}, {"busy_ns", totals.busy_ns}};
    }
    policies.back()["kernels"] = kernels;
  }
  return nlohmann::json{{"policies", policies}}.dump(2);
}

void write_report_json(const std::filesystem::path& path, const std::vector<RunReport>& reports) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path);
  if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", path.string()));
  out << report_json(reports) << '\n';
}

std::string headline_figures(const RunReport& r) {
  // Small proofs take milliseconds: three significant digits there, the table's three decimals above.
  auto per_proof = r.seconds_per_proof >= 0.1 ? fmt::format("{:.3f}", r.seconds_per_proof)
                                              : fmt::format("{:.3g}", r.seconds_per_proof);
  std::string figures = fmt::format("{} s/proof, compute busy {:.1f}%, VRAM peak {}, OOM {}", per_proof,
                                    100 * r.compute_busy_fraction, format_bytes(r.vram_peak_bytes), r.oom_count);
  if (r.partitions_completed < r.partitions) {
    figures += fmt::format(", {} of {} partitions failed", r.partitions - r.partitions_completed, r.partitions);
  }
  if (r.jobs_retried > 0) figures += fmt::format(", {} moved to another GPU", r.jobs_retried);
  if (r.fallback_count > 0)
    figures += fmt::format(", {} fallback{}", r.fallback_count, r.fallback_count == 1 ? "" : "s");
  return figures;
}

}  // namespace stagehand
