#pragma once
// One GPU of a run: its locks, its budget, its host staging, and the lock holder's use of the
// host-to-device link. Every worker of the GPU runs on the lane's strand, so no thread ever
// blocks on a lock and the lane's state needs no mutex whatever thread runs the io_context.

#include "coordinator/async_wait.hpp"
#include "coordinator/compute_lock.hpp"
#include "coordinator/coordinator.hpp"
#include "coordinator/host_staging.hpp"
#include "coordinator/job.hpp"
#include "coordinator/result_buffers.hpp"
#include "coordinator/vram_budget.hpp"
#include "util/random.hpp"

#include <deque>
#include <exception>
#include <functional>
#include <memory>

namespace stagehand {

struct Lane {
  Lane(Device& device, int index, const CoordinatorSettings& settings, Random& random,
       std::function<HostRange(Bytes)> pageable);

  Device& device;
  int index;
  asio::strand<asio::any_io_executor> strand{device.executor()};
  ComputeLock compute_lock;
  ComputeLock memory_lock;             // two-lock only
  std::unique_ptr<VramBudget> budget;  // budgeted only
  HostStaging staging;
  ResultBuffers results;
  // What stops the lane taking jobs: the workload's set-up failed, or the device was lost (its
  // running jobs go to another lane once). A job still queued when no lane can take it fails with
  // what each lane says here.
  std::exception_ptr setup_failure;
  std::exception_ptr lost;
  std::exception_ptr worker_failure;  // the first worker that could not open its streams or buffers (the others go on)
  // Workers still taking jobs.
  int workers_taking = 0;
  bool can_take_jobs() const { return !setup_failure && !lost && workers_taking > 0; }
  // Woken when a job leaves a lock: budgeted jobs wait here for a place among those that hold a
  // ticket without the lock.
  AsyncWaitList prestage_slots;
  // Woken when a pre-staging chunk lands or the lock changes hands.
  AsyncWaitList pacing;

  // The lock holder's use of the host-to-device link: its PCIe-bound phases, and its uploads (the
  // start event of each one enqueued, oldest first, until it is done). Pre-staging issues no
  // chunk meanwhile, so that neither waits for the other on the copy engine.
  bool holder_on_link();
  LinkClaimHooks link_claim_hooks();
  // With the holder's hold (a program that failed never let go).
  void drop_link_claims();
  AsyncWaitList link_free;

 private:
  void destroy_quietly(EventHandle event);
  int holder_pcie_phases_ = 0;
  std::deque<EventHandle> holder_uploads_;
};

}  // namespace stagehand
