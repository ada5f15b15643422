#pragma once
// The coordinator: runs a stream of partitions on one or more GPUs under one policy, and reports
// what happened. Policies, to replay history and compare (DESIGN.md):
//   serial     one lock per GPU around the whole GPU program; a/b/c uploaded from pageable
//              memory inside it.
//   prestage   pin a/b/c in place and upload before a single lock, into cudaMalloc'd buffers, with
//              a free-memory check and margin, a device synchronise and a pool trim (each
//              switchable), and a fallback that uploads inside the lock.
//   two-lock   a memory lock for allocation and upload, then a compute lock that any waiter may
//              get next (the abandoned design).
//   budgeted   the VramBudget, grant order = lock order, pinned-pool staging (the default).

#include "coordinator/gpu_program.hpp"
#include "coordinator/host_staging.hpp"
#include "coordinator/partition.hpp"
#include "coordinator/vram_budget.hpp"
#include "coordinator/workload.hpp"
#include "device/device.hpp"
#include "trace/trace.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace stagehand {

enum class Policy { serial, prestage, two_lock, budgeted };
std::string to_string(Policy policy);
Policy policy_from_string(const std::string& name);  // throws std::invalid_argument
const std::vector<std::string>& policy_names();

struct PrestageSwitches {
  bool free_memory_check = true;
  Bytes margin_bytes = 512 * kMiB;
  bool synchronize_device = true;
  bool trim_pool = true;
};

struct CoordinatorSettings {
  Policy policy = Policy::budgeted;
  int workers_per_device = 2;
  // Jobs per GPU that may hold a lock ticket (and pre-stage) while waiting for the GPU.
  int prestage_depth = 2;
  // Budgeted pre-staging copies in chunks, issuing none while the lock holder claims the link:
  // smaller chunks share the link less when a claim begins, more in flight ride out the host's
  // latency in issuing the next.
  Bytes prestage_chunk_bytes = 64 * kMiB;
  int prestage_chunks_in_flight = 2;
  // A worker takes its next job as soon as its GPU work is done, while the job's host step after
  // the GPU (the workload's finish: G2 MSM and proof assembly) runs beside it; at most one such
  // step per worker. Off: the worker finishes a job before taking the next.
  bool overlap_finish = false;
  Bytes safety_margin_bytes = 512 * kMiB;
  Bytes resident_bytes = 0;  // long-lived allocations outside any job
  HostStagingMode host_staging = HostStagingMode::pinned_pool;
  Bytes pinned_host_budget_bytes = 48 * kGiB;
  int proofs = 2;
  int partitions_per_proof = 10;
  PartitionShape shape;
  ProgramSettings program;
  PrestageSwitches prestage;
  VramBudgetRules budget_rules;
  bool grant_order_is_lock_order = true;  // false: the compute lock goes to any waiter (a rule off)
  // Budgeted: fill the pinned pool for every worker before the run's clock starts (the steady
  // state of a long-running deployment), instead of growing it on the first jobs' way.
  bool prewarm_pinned_pool = false;
  std::uint64_t seed = 1;
};

// What happened to one partition.
struct JobRecord {
  int index = 0;
  int proof = 0;
  int device = 0;
  int worker = 0;
  Nanoseconds started_ns = 0;
  Nanoseconds lock_requested_ns = -1;
  Nanoseconds lock_acquired_ns = -1;
  Nanoseconds lock_released_ns = -1;
  Nanoseconds finished_ns = -1;
  Nanoseconds waited_for_inputs_ns = 0;
  Bytes prestaged_bytes = 0;  // uploaded before the job held the lock
  // Budgeted: the chunks that landed before the job took the lock, and their copy time (each
  // from when the upload stream could start it to when the stream reached the point after it).
  Bytes prestage_copy_bytes = 0;
  Nanoseconds prestage_copy_ns = 0;
  Nanoseconds prestage_started_ns = -1;  // its first input allocated before the lock
  int out_of_memory_errors = 0;
  bool fell_back = false;  // meant to pre-stage, uploaded inside the lock instead
  std::string fetched_ahead;  // the program's streamed sets fetched during its H MSM (ProgramTimes)
  std::string error;       // empty: completed
  bool completed() const { return error.empty(); }
};

struct RunReport {
  std::string policy;
  int devices = 0;
  int proofs = 0;
  int partitions = 0;
  int partitions_completed = 0;
  Nanoseconds makespan_ns = 0;
  double seconds_per_proof = 0;
  double partitions_per_second = 0;
  double gpu_seconds_per_partition = 0;  // compute-lock hold time, completed partitions
  double compute_busy_fraction = 0;      // kernels running, first kernel to last
  double compute_idle_seconds_per_partition = 0;  // first kernel to last, kernels not running
  double lock_wait_seconds = 0;          // summed over partitions
  double upload_wait_seconds = 0;        // kernels waiting for inputs, summed
  double prestage_gbps = 0;              // budgeted: pre-staged chunks' bytes over their copy time
  Bytes pcie_bytes_pinned = 0;
  Bytes pcie_bytes_pageable = 0;
  Bytes vram_peak_bytes = 0;
  std::uint64_t oom_count = 0;
  std::uint64_t fallback_count = 0;
  std::map<std::string, KernelTotals, std::less<>> kernel_totals;  // every device's, by kernel name
  std::vector<JobRecord> jobs;
  std::vector<std::string> log;
};

struct CoordinatorHooks {
  // A partition finished (completed or failed).
  std::function<void(const JobRecord&)> on_job_done;
  // Memory for a/b/c in the caller's ordinary host memory (virtual in the simulator's timing mode).
  std::function<HostRange(Bytes)> pageable_memory;
  // A GPU's budget was created (budgeted only): checkers compare it with the device.
  std::function<void(int device, const VramBudget&)> on_budget;
};

// Runs every job of `workload` on `devices` and returns the report. Every job completes or fails
// with its error recorded; the devices are left with nothing allocated. The settings' workload
// fields (proofs, partitions_per_proof, shape, program) are not used: the workload says.
asio::awaitable<RunReport> run_coordinator(std::vector<Device*> devices, CoordinatorSettings settings, Workload& workload,
                                           Trace& trace, CoordinatorHooks hooks);
// The synthetic PoRep-shaped workload of the settings (proofs x partitions_per_proof of `shape`).
asio::awaitable<RunReport> run_coordinator(std::vector<Device*> devices, CoordinatorSettings settings, Trace& trace,
                                           CoordinatorHooks hooks);

}  // namespace stagehand
