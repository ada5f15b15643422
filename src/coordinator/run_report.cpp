#include "coordinator/run_report.hpp"

#include <range/v3/algorithm/count_if.hpp>
#include <range/v3/numeric/accumulate.hpp>
#include <range/v3/view/filter.hpp>
#include <range/v3/view/transform.hpp>

#include <algorithm>

namespace stagehand {
namespace {

double seconds(Nanoseconds duration) { return static_cast<double>(duration) / 1e9; }

// What the jobs' records add up to.
void add_job_figures(RunReport& report, const std::vector<JobRecord>& jobs) {
  using namespace ranges;
  auto completed = jobs | views::filter(&JobRecord::completed);
  report.partitions_completed = static_cast<int>(count_if(jobs, &JobRecord::completed));
  const Nanoseconds lock_held = accumulate(
      completed | views::transform([](const JobRecord& job) { return job.lock_released_ns - job.lock_acquired_ns; }),
      Nanoseconds{0});
  auto waited_for_lock =
      jobs |
      views::filter([](const JobRecord& job) { return job.lock_acquired_ns >= 0 && job.lock_requested_ns >= 0; }) |
      views::transform([](const JobRecord& job) { return seconds(job.lock_acquired_ns - job.lock_requested_ns); });
  report.lock_wait_seconds = accumulate(waited_for_lock, 0.0);
  report.upload_wait_seconds =
      accumulate(jobs | views::transform([](const JobRecord& job) { return seconds(job.waited_for_inputs_ns); }), 0.0);
  const Bytes prestage_bytes = accumulate(jobs | views::transform(&JobRecord::prestage_copy_bytes), Bytes{0});
  const Nanoseconds prestage_ns = accumulate(jobs | views::transform(&JobRecord::prestage_copy_ns), Nanoseconds{0});
  report.prestage_gbps = prestage_ns > 0 ? static_cast<double>(prestage_bytes) / static_cast<double>(prestage_ns) : 0;
  report.gpu_seconds_per_partition =
      report.partitions_completed > 0 ? seconds(lock_held) / report.partitions_completed : 0;
}

// From a device's first kernel to its last (0 before any ran).
Nanoseconds kernel_span_ns(const DeviceCounters& counters) {
  return counters.first_kernel_start_ns >= 0 ? counters.last_kernel_end_ns - counters.first_kernel_start_ns : 0;
}

double busy_fraction(double busy_ns, double span_ns) { return span_ns > 0 ? busy_ns / span_ns : 0; }

// What the devices counted: the compute engine's busy time from its first kernel to its last,
// PCIe bytes, the memory peak, out-of-memory errors, time by kernel.
void add_device_figures(RunReport& report, const std::vector<Device*>& devices) {
  double busy = 0;
  double span = 0;
  for (auto* device : devices) {
    const auto& counters = device->counters();
    busy += static_cast<double>(counters.compute_busy_ns);
    span += static_cast<double>(kernel_span_ns(counters));
    report.pcie_bytes_pinned += counters.pinned_bytes_copied;
    report.pcie_bytes_pageable += counters.pageable_bytes_copied;
    report.vram_peak_bytes = std::max(report.vram_peak_bytes, counters.peak_memory_used_bytes);
    report.oom_count += counters.out_of_memory_count;
    for (const auto& [name, totals] : counters.kernel_totals) {
      auto& sum = report.kernel_totals[name];
      sum.launches += totals.launches;
      sum.work_units += totals.work_units;
      sum.busy_ns += totals.busy_ns;
    }
  }
  report.compute_busy_fraction = busy_fraction(busy, span);
  report.compute_idle_seconds_per_partition =
      report.partitions_completed > 0 ? (span - busy) / 1e9 / report.partitions_completed : 0;
}

// Each GPU's jobs and counters.
std::vector<DeviceReport> device_reports(const std::vector<Device*>& devices, const std::vector<JobRecord>& jobs,
                                         const std::vector<std::string>& failures) {
  std::vector<DeviceReport> reports;
  for (std::size_t index = 0; index < devices.size(); ++index) {
    const int gpu = static_cast<int>(index);
    const auto& counters = devices[index]->counters();
    DeviceReport report;
    report.device = gpu;
    report.name = devices[index]->properties().name;
    Nanoseconds held = 0;
    for (const auto& job : jobs) {
      if (job.first_device == gpu) ++report.jobs_moved_away;
      if (job.device != gpu) continue;
      if (job.completed()) {
        ++report.jobs_completed;
        held += job.lock_released_ns - job.lock_acquired_ns;
      } else {
        ++report.jobs_failed;
      }
    }
    report.gpu_seconds_per_job = report.jobs_completed > 0 ? seconds(held) / report.jobs_completed : 0;
    report.compute_busy_fraction =
        busy_fraction(static_cast<double>(counters.compute_busy_ns), static_cast<double>(kernel_span_ns(counters)));
    report.vram_peak_bytes = counters.peak_memory_used_bytes;
    report.oom_count = counters.out_of_memory_count;
    if (index < failures.size()) report.failure = failures[index];
    reports.push_back(std::move(report));
  }
  return reports;
}

}  // namespace

RunReport summarise_run(RunTotals totals, const std::vector<Device*>& devices, std::vector<JobRecord> jobs,
                        std::vector<std::string> log) {
  RunReport report;
  report.policy = std::move(totals.policy);
  report.devices = static_cast<int>(devices.size());
  report.proofs = totals.proofs;
  report.partitions = static_cast<int>(jobs.size());
  report.makespan_ns = totals.makespan_ns;
  add_job_figures(report, jobs);
  const double makespan_seconds = seconds(report.makespan_ns);
  report.seconds_per_proof = report.proofs > 0 ? makespan_seconds / report.proofs : 0;
  report.partitions_per_second = makespan_seconds > 0 ? report.partitions_completed / makespan_seconds : 0;
  add_device_figures(report, devices);
  report.fallback_count = totals.fallbacks;
  report.jobs_retried = static_cast<int>(ranges::count_if(jobs, [](const JobRecord& job) { return job.attempts > 1; }));
  report.per_device = device_reports(devices, jobs, totals.device_failures);
  report.jobs = std::move(jobs);
  report.log = std::move(log);
  return report;
}

}  // namespace stagehand
