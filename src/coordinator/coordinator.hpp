#pragma once
// The coordinator: runs a workload's jobs on one or more GPUs under one policy
// (policy/policy.hpp), and reports what happened. It knows the Device interface and the job
// interface (job.hpp), nothing of what a job computes.

#include "coordinator/host_staging.hpp"
#include "coordinator/job.hpp"
#include "coordinator/policy/policy.hpp"
#include "coordinator/vram_budget.hpp"
#include "device/device.hpp"
#include "trace/trace.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace stagehand {

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
  // the GPU (the workload's finish: for a proof, its assembly and check) runs beside it; at most one such
  // step per worker. Off: the worker finishes a job before taking the next.
  bool overlap_finish = false;
  Bytes safety_margin_bytes = 512 * kMiB;
  Bytes resident_bytes = 0;  // long-lived allocations outside any job
  HostStagingMode host_staging = HostStagingMode::pinned_pool;
  // Each GPU's own: its staging pool never pins more than this (a host-wide cap shared by the
  // GPUs would need their pools to give idle buffers to one another).
  Bytes pinned_host_budget_bytes = 48 * kGiB;
  // Each GPU's own, as pinned_host_budget_bytes: host memory for its workers' staging
  // (workers_per_device x worker_staging_bytes); a run whose workers would stage more is refused
  // before it starts. `_where` names the key in the refusal (with the file and line where read).
  Bytes host_staging_budget_bytes = 64 * kGiB;
  std::string host_staging_budget_where = "key 'host_staging.host_budget_gib'";
  PrestageSwitches prestage;
  VramBudgetRules budget_rules;
  bool grant_order_is_lock_order = true;  // false: the compute lock goes to any waiter (a rule off)
  // Budgeted: fill the pinned pool for every worker before the run's clock starts (the steady
  // state of a long-running deployment), instead of growing it on the first jobs' way.
  bool prewarm_pinned_pool = false;
  std::uint64_t seed = 1;
  // The GPU whose workers are offered the run's jobs first, the others after it in turn: a job
  // goes to the first idle worker offered it, so a deployment whose runs are often one proof
  // (lone requests) turns this from run to run to spread them over its idle GPUs.
  int first_device = 0;
};

// What happened to one job.
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
  // The workload's host work before the GPU (prepare) and after it (finish), each as it ran.
  Nanoseconds prepare_ns = 0;
  Nanoseconds finish_ns = 0;
  Bytes prestaged_bytes = 0;  // uploaded before the job held the lock
  // Budgeted: the chunks that landed before the job took the lock, and their copy time (each
  // from when the upload stream could start it to when the stream reached the point after it).
  Bytes prestage_copy_bytes = 0;
  Nanoseconds prestage_copy_ns = 0;
  Nanoseconds prestage_started_ns = -1;  // its first input allocated before the lock
  int out_of_memory_errors = 0;
  bool fell_back = false;    // meant to pre-stage, uploaded inside the lock instead
  std::string program_note;  // what its program told (JobTimes::note)
  // Runs on a GPU: 2 when the GPU of its first was lost under it and another took it again.
  int attempts = 0;
  int first_device = -1;      // where that first attempt ran
  std::string retried_after;  // its error, "GPU 1: ...", when it was retried
  std::string error;          // empty: completed
  bool completed() const { return error.empty(); }
};

// One GPU's share of a run.
struct DeviceReport {
  int device = 0;
  std::string name;
  int jobs_completed = 0;
  int jobs_failed = 0;
  int jobs_moved_away = 0;           // its GPU was lost under them: they completed or failed on another
  double gpu_seconds_per_job = 0;    // compute-lock hold time, its completed jobs
  double compute_busy_fraction = 0;  // kernels running, its first kernel to its last
  Bytes vram_peak_bytes = 0;
  std::uint64_t oom_count = 0;
  // Empty for a GPU that worked to the end; else "lost: ..." or "could not be set up: ...".
  std::string failure;
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
  double gpu_seconds_per_partition = 0;           // compute-lock hold time, completed partitions
  double compute_busy_fraction = 0;               // kernels running, first kernel to last
  double compute_idle_seconds_per_partition = 0;  // first kernel to last, kernels not running
  double lock_wait_seconds = 0;                   // summed over partitions
  double upload_wait_seconds = 0;                 // kernels waiting for inputs, summed
  double prestage_gbps = 0;                       // budgeted: pre-staged chunks' bytes over their copy time
  Bytes pcie_bytes_pinned = 0;
  Bytes pcie_bytes_pageable = 0;
  Bytes vram_peak_bytes = 0;
  std::uint64_t oom_count = 0;
  std::uint64_t fallback_count = 0;
  int jobs_retried = 0;  // moved to another GPU after theirs was lost
  std::vector<DeviceReport> per_device;
  std::map<std::string, KernelTotals, std::less<>> kernel_totals;  // every device's, by kernel name
  std::vector<JobRecord> jobs;
  std::vector<std::string> log;
};

// The pinned host memory a caller keeps for one GPU between its runs (CoordinatorHooks::kept_pinned).
struct KeptPinned {
  std::vector<HostRange> staging;  // the staging pool's idle buffers
  std::vector<HostRange> results;  // the workers' result buffers (result_buffers.hpp)
  bool empty() const { return staging.empty() && results.empty(); }
  Bytes bytes() const;
};

struct CoordinatorHooks {
  // A job finished (completed or failed).
  std::function<void(const JobRecord&)> on_job_done;
  // Memory for a/b/c in the caller's ordinary host memory (virtual in the simulator's timing mode).
  std::function<HostRange(Bytes)> pageable_memory;
  // A GPU's budget was created (budgeted only): checkers compare it with the device.
  std::function<void(int device, const VramBudget&)> on_budget;
  // That budget is about to be destroyed: the run is over, failed, or its frames were destroyed
  // after a deadlock. It is still whole during the call; checkers must not read it afterwards.
  std::function<void(int device, const VramBudget&)> on_budget_gone;
  // A caller that keeps each GPU's pinned host memory between its runs (the engine: making and
  // freeing a 2^24 witness buffer cost a large part of a proof's time on the H200 machine, holding
  // the GPU's other calls meanwhile; bench/journal/2026-12-04.md has the figures): the buffers an
  // earlier run left, and at this run's end, instead of freeing them, the staging pool's idle
  // buffers and the workers' result buffers. The staging pool adopts its buffers within its
  // budget and only under budgeted with the pinned pool (what it does not adopt is handed back to
  // `keep_pinned` at once); the workers take the result buffers under every policy, whether the
  // GPU gets a job or not. Nothing of a GPU lost in the run is kept. Both or neither.
  std::function<KeptPinned(int device)> kept_pinned;
  std::function<void(int device, KeptPinned buffers)> keep_pinned;
};

// Jobs that join a run while it goes on (a long-lived engine's proofs that arrive meanwhile): the
// run takes the workload's job_count() jobs at its start and each one added here later. While
// the feed is open the run's workers wait for more when they have none, so that the GPUs go
// straight from one job to the next; the run ends once the feed is closed and its jobs have ended.
// Used on the run's executor only.
class JobFeed {
 public:
  // The workload's next `count` jobs (its job_count() counts them already) join the run, also
  // before it has started. False once it takes no more (closed, or the run has ended: no GPU was
  // left): they are not its.
  bool add(int count = 1);
  void close();
  bool closed() const { return closed_; }

 private:
  friend struct Run;
  friend asio::awaitable<RunReport> run_coordinator(std::vector<Device*>, CoordinatorSettings, Workload&, Trace&,
                                                    CoordinatorHooks, JobFeed*);
  int added_ = 0;  // joined, not yet in the run's queue
  bool closed_ = false;
  bool ended_ = false;             // the run it fed is over
  std::function<void()> changed_;  // the run's, while it runs
};

// Runs every job of `workload` on `devices` (and, with a feed, those that join while it runs)
// and returns the report. Every job completes or fails with its error recorded; the devices are
// left with nothing allocated.
asio::awaitable<RunReport> run_coordinator(std::vector<Device*> devices, CoordinatorSettings settings,
                                           Workload& workload, Trace& trace, CoordinatorHooks hooks,
                                           JobFeed* feed = nullptr);

}  // namespace stagehand
