#include "cli/proof_figures.hpp"

#include "device/format.hpp"
#include "coordinator/run_report_format.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

namespace stagehand::cli {
namespace {

// The kernels' totals of the given devices' counters, summed by kernel name; busy_ns the compute
// engine's busy time.
struct KernelFigures {
  std::map<std::string, KernelTotals> kernels;
  Nanoseconds busy_ns = 0;
};
KernelFigures kernel_figures(const std::vector<DeviceCounters>& counters) {
  KernelFigures figures;
  for (const auto& device : counters) {
    figures.busy_ns += device.compute_busy_ns;
    for (const auto& [name, totals] : device.kernel_totals) {
      auto& sum = figures.kernels[name];
      sum.launches += totals.launches;
      sum.busy_ns += totals.busy_ns;
    }
  }
  return figures;
}
// `now` less `before`, kernel by kernel (those that did not run since left out), each kernel's time
// and launches divided by `count` (the proofs, for figures per proof; 1 for totals).
std::string kernels_since(const KernelFigures& now, const KernelFigures& before, std::uint64_t count) {
  STAGEHAND_ASSERT(count > 0);
  const double per = 1e6 * static_cast<double>(count);
  std::string line;
  for (const auto& [name, totals] : now.kernels) {
    const auto earlier = before.kernels.find(name);
    const auto launches = totals.launches - (earlier == before.kernels.end() ? 0 : earlier->second.launches);
    const auto busy = totals.busy_ns - (earlier == before.kernels.end() ? 0 : earlier->second.busy_ns);
    if (launches == 0) continue;
    line += fmt::format("{}{} {:.2f} ms ({:g} launches)", line.empty() ? "" : ", ", name,
                        static_cast<double>(busy) / per, static_cast<double>(launches) / static_cast<double>(count));
  }
  return line;
}

// Where the proofs' time went, summed over the completed proofs and shown per proof: the host's
// steps from the coordinator's records, the kernels from the devices' counters since `set_up`
// (the totals once the key was set up: the counters also hold the set-up's kernels).
void print_time_breakdown(const proving::BatchFigures& figures, bool on_gpu, bool abc_on_host,
                          const KernelFigures& set_up) {
  std::size_t proofs = 0;
  double prepare = 0, wait_lock = 0, held = 0, wait_inputs = 0, finish = 0;
  for (const auto& job : figures.report.jobs) {
    if (!job.completed() || job.lock_acquired_ns < 0 || job.lock_released_ns < 0) continue;
    ++proofs;
    prepare += static_cast<double>(job.prepare_ns);
    wait_lock += static_cast<double>(job.lock_acquired_ns - job.lock_requested_ns);
    held += static_cast<double>(job.lock_released_ns - job.lock_acquired_ns);
    wait_inputs += static_cast<double>(job.waited_for_inputs_ns);
    finish += static_cast<double>(job.finish_ns);
  }
  if (proofs == 0) return;
  const double per = 1e6 * static_cast<double>(proofs);  // ns summed -> ms per proof
  fmt::print(
      stderr,
      "stagehand prove: per proof, mean of {}{}: host before the GPU (witness read, checks{}) {:.1f} ms; "
      "waiting for the GPU {:.1f} ms; GPU held {:.1f} ms (of which inputs still uploading {:.1f} ms); host after "
      "the GPU (assembly, check) {:.1f} ms\n",
      proofs, on_gpu ? "" : " (simulated clock)", abc_on_host ? ", a/b/c" : "", prepare / per, wait_lock / per,
      held / per, wait_inputs / per, finish / per);
  const std::string line = kernels_since(kernel_figures(figures.counters_after), set_up, proofs);
  if (!line.empty())
    fmt::print(stderr, "stagehand prove: kernels per proof{}: {}\n", on_gpu ? "" : " (simulated clock)", line);
}

}  // namespace

std::string kernels_between(const std::vector<DeviceCounters>& before, const std::vector<DeviceCounters>& after,
                            std::uint64_t count) {
  return kernels_since(kernel_figures(after), kernel_figures(before), count);
}

HeldWindow held_window(const RunReport& report) {
  HeldWindow window;
  for (const auto& job : report.jobs) {
    if (job.lock_acquired_ns < 0 || job.lock_released_ns < 0) continue;
    ++window.jobs;
    window.first = window.first < 0 ? job.lock_acquired_ns : std::min(window.first, job.lock_acquired_ns);
    window.last = std::max(window.last, job.lock_released_ns);
  }
  return window;
}

namespace {

// The GPUs' time with proofs: from the first proof taking its GPU to the last giving it back, the
// proofs that held one, and the compute engine's busy share of that time; `busy_before`, the
// devices' busy time once the key was set up on them (their counters also hold the set-up's
// kernels, the precomputed bases', and earlier runs').
std::string describe_span(const proving::BatchFigures& figures, Nanoseconds busy_before) {
  const auto [first, last, proofs] = held_window(figures.report);
  if (proofs == 0 || last <= first) return {};
  const std::size_t device_count = std::max<std::size_t>(1, figures.counters_after.size());
  const auto devices = static_cast<double>(device_count);
  const double seconds = static_cast<double>(last - first) / 1e9;
  const double per_proof = seconds * devices / static_cast<double>(proofs);
  Nanoseconds busy = -busy_before;
  for (const auto& counters : figures.counters_after) busy += counters.compute_busy_ns;
  const double busy_share = static_cast<double>(busy) / 1e9 / (seconds * devices);
  return fmt::format(
      ", compute engine busy {:.1f}% from the first proof's GPU start to the last's end ({:.3f} s: {:.3f} s a proof{})",
      100 * busy_share, seconds, per_proof, device_count > 1 ? " a GPU" : "");
}

// Each device's counters once the key was set up on it (a device never set up: from the run's
// start), so that the set-up's kernels stay out of the proofs' figures.
std::vector<DeviceCounters> counters_after_set_up(const proving::BatchFigures& figures) {
  auto counters = figures.counters_before;
  for (const auto& [device, after] : figures.counters_after_set_up) {
    if (device >= 0 && static_cast<std::size_t>(device) < counters.size())
      counters[static_cast<std::size_t>(device)] = after;
  }
  return counters;
}

// What the engine held on each device before the run and after it: after it, no more. (Free
// memory is printed too, but the CUDA runtime keeps some MiB of its own after the first launches.)
void print_memory(const proving::BatchFigures& figures) {
  const auto& report = figures.report;
  for (std::size_t i = 0; i < figures.memory_after.size() && i < figures.memory_before.size(); ++i) {
    if (i < report.per_device.size() && !report.per_device[i].failure.empty()) continue;  // a lost GPU answers nothing
    const auto& before = figures.memory_before[i];
    const auto& after = figures.memory_after[i];
    if (!before.known || !after.known) continue;
    fmt::print(stderr,
               "stagehand prove: GPU {}: the engine holds {} of device memory after the run, {} before{}; free {} "
               "before, {} after\n",
               i, format_bytes(after.held_bytes), format_bytes(before.held_bytes),
               after.held_bytes > before.held_bytes
                   ? fmt::format(" ({} not given back)", format_bytes(after.held_bytes - before.held_bytes))
                   : std::string(", nothing left behind"),
               format_bytes(before.free_bytes), format_bytes(after.free_bytes));
  }
}

}  // namespace

void print_proof_count(const ProvedSoFar& so_far, const proving::BatchFigures* figures) {
  std::string span;
  if (figures != nullptr && so_far.on_gpu)
    span = describe_span(*figures, kernel_figures(counters_after_set_up(*figures)).busy_ns);
  const double in_all = std::chrono::duration<double>(std::chrono::steady_clock::now() - so_far.start).count();
  fmt::print(stderr, "stagehand prove: {} of {} proof{} in {:.3f} s ({:.3f} s per proof; {:.2f} s in all){}\n",
             so_far.proofs - so_far.failed, so_far.proofs, so_far.proofs == 1 ? "" : "s", so_far.proving_seconds,
             so_far.proving_seconds / static_cast<double>(std::max<std::size_t>(so_far.proofs, 1)), in_all, span);
}

void print_run_figures(const proving::BatchFigures& figures, const ProvedSoFar& so_far) {
  for (const auto& [device, seconds] : figures.set_up_seconds) {
    fmt::print(
        stderr,
        "stagehand prove: GPU {}: the key ({} resident) on the device in {:.3f} s, before the first proof; scratch per "
        "proof: MSM {}, H {}\n",
        device, format_bytes(figures.resident_bytes), seconds, format_bytes(figures.msm_scratch_bytes),
        format_bytes(figures.h_scratch_bytes));
  }
  const auto set_up = kernel_figures(counters_after_set_up(figures));
  const std::string set_up_kernels = kernels_since(set_up, kernel_figures(figures.counters_before), 1);
  if (!set_up_kernels.empty()) {
    fmt::print(stderr, "stagehand prove: the key's set-up kernels{}, in all: {}\n",
               so_far.on_gpu ? "" : " (simulated clock)", set_up_kernels);
  }
  print_time_breakdown(figures, so_far.on_gpu, so_far.abc_on_host, set_up);
  if (so_far.checked > 0) {
    fmt::print(stderr, "stagehand prove: pairing check {:.1f} ms per proof ({} checked{})\n",
               1e3 * so_far.check_seconds / static_cast<double>(so_far.checked), so_far.checked, so_far.r1cs_note);
  }
  print_memory(figures);
  const auto& report = figures.report;
  if (report.jobs_retried > 0) {
    fmt::print(stderr, "stagehand prove: {} proof{} moved to another GPU when theirs was lost\n", report.jobs_retried,
               report.jobs_retried == 1 ? "" : "s");
  }
  std::ostringstream per_gpu;
  print_device_table(per_gpu, {report});
  if (!per_gpu.str().empty()) fmt::print(stderr, "{}", per_gpu.str());
}

}  // namespace stagehand::cli
