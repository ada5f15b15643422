#pragma once
// HostStaging: makes a job's inputs (a, b, c and its extra input) DMA-able, within a budget of pinned host memory.
//   pinned-pool: a recycled pool of pinned buffers (Device::allocate_pinned_host) that the caller fills directly; pinning
//                costs once, when the pool grows.
//   register:    the caller's pageable buffers, pinned in place per job with cudaHostRegister and
//                unpinned after, paying both per job (bench/RESULTS.md, "Host and driver costs on
//                the H200", has what they cost).

#include "coordinator/async_wait.hpp"
#include "coordinator/job.hpp"
#include "device/device.hpp"

#include <array>
#include <functional>
#include <string_view>
#include <vector>

namespace stagehand {

enum class HostStagingMode { pinned_pool, register_in_place };

// The host memory one worker stages a job of `plan` in: the job's inputs (a, b and c, or the
// witness alone; pinned or pageable, as the policy stages them) and the two pinned buffers its
// results come back into. Every figure is the plan's, so the key decides it.
Bytes worker_staging_bytes(const JobMemoryPlan& plan);

// Throws std::invalid_argument, naming `budget_where` (the budget's key) and the figures, when
// `workers` workers of one GPU would stage jobs of `plan` in more than `budget_bytes`.
void check_workers_staging_fit(int workers, const JobMemoryPlan& plan, Bytes budget_bytes,
                               std::string_view budget_where);

// One job's inputs on the host, pinned: staged_input_sizes's buffers, in its order.
struct StagedHostBuffers {
  std::vector<HostRange> buffers;
  bool from_pool = false;
};

class HostStaging {
 public:
  // `pageable_memory` hands out the caller's ordinary host memory (virtual in timing mode).
  HostStaging(Device& device, HostStagingMode mode, Bytes pinned_budget_bytes,
              std::function<HostRange(Bytes)> pageable_memory);

  // Waits for pinned-budget room, then gives a job of `plan` its input buffers
  // (staged_input_sizes), pinned (from the pool, or the caller's pageable memory pinned in place,
  // as the mode says).
  asio::awaitable<StagedHostBuffers> acquire(const JobMemoryPlan& plan);
  // Waits for pinned-budget room, then pins the caller's three buffers in place (cudaHostRegister),
  // whatever the mode: prestage and two-lock fill a, b and c before pinning them.
  asio::awaitable<StagedHostBuffers> pin_in_place(std::vector<HostRange> buffers);
  // Back to the pool, or unpinned.
  asio::awaitable<void> release(StagedHostBuffers staged);
  // Pinned-pool mode: allocates `sets` jobs' input buffers of `plan` into the pool now, so that
  // jobs do not pay the allocation on their way (a deployment's start-up; benchmarks of the
  // steady state). Stays within the pinned budget.
  asio::awaitable<void> prewarm(const JobMemoryPlan& plan, int sets);
  // Frees the pool's buffers (at the end of a run).
  asio::awaitable<void> shutdown();
  // Pinned-pool mode, for a caller that keeps the pool between runs: `buffers` (pinned by an
  // earlier run on this device) become idle pool buffers, as far as the budget allows; the rest
  // is returned, for the caller to free. take_idle() hands the idle buffers back out of the pool
  // (before shutdown, which then frees none of them).
  std::vector<HostRange> adopt(std::vector<HostRange> buffers);
  std::vector<HostRange> take_idle();

  Bytes pinned_bytes() const { return pinned_bytes_; }
  HostStagingMode mode() const { return mode_; }

 private:
  // In use <= pinned <= the budget, always.
  void check_accounting() const;
  // Throws when `bytes` could never fit the pinned budget (waiting would never end).
  void check_fits(Bytes bytes) const;
  // A new pool buffer, counted against the budget (uncounted again if the allocation fails).
  asio::awaitable<HostRange> allocate_pinned(Bytes bytes);
  // Fills staged.buffers, already sized, with pool buffers of `sizes`.
  asio::awaitable<void> acquire_from_pool(StagedHostBuffers& staged, const std::vector<Bytes>& sizes);

  Device& device_;
  HostStagingMode mode_;
  Bytes budget_bytes_;
  std::function<HostRange(Bytes)> pageable_memory_;
  Bytes pinned_bytes_ = 0;       // pinned now, pool included
  Bytes in_use_bytes_ = 0;       // handed out
  std::vector<HostRange> idle_;  // pool buffers not in use
  AsyncWaitList waiters_;
};

}  // namespace stagehand
