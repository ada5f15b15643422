#pragma once
// What the coordinator runs: a list of jobs, each a GPU program over three device inputs (a, b
// and c, filled on the host and uploaded by the policy) with host work before and after it.
// The coordinator owns the policy (locks, budget, staging, pre-staging); a Workload owns what a
// job computes. Two workloads exist: the synthetic PoRep-shaped partition (porep_workload.hpp,
// what `stagehand run` schedules) and a Groth16 proof of a snarkjs circuit
// (groth16/groth16_workload.hpp, what `stagehand prove` schedules).

#include "coordinator/gpu_program.hpp"
#include "device/device.hpp"

#include <functional>
#include <span>
#include <vector>

namespace stagehand {

// The device memory of one job, for the budget: its inputs and its peak as it frees them.
struct JobMemoryPlan {
  Bytes input_bytes = 0;  // each of a, b and c
  Bytes peak_bytes = 0;   // the most it holds at once, inputs included
  Bytes peak_after_b_and_c_bytes = 0;
  Bytes peak_after_a_bytes = 0;
};

// What a job's GPU program gets from its worker, once it holds the compute lock.
struct JobContext {
  Device& device;
  int device_index;
  StreamHandle compute;
  StreamHandle upload;
  PartitionInputs inputs;
  ProgramMemory& memory;
  // Two pinned host buffers of PartitionShape::kBucketResultBytes for results coming back.
  const std::vector<HostRange>& results;
  // Where the program tells when it uses the host-to-device link (gpu_program.hpp).
  LinkClaimHooks link;
};

class Workload {
 public:
  virtual ~Workload() = default;

  virtual int job_count() const = 0;
  virtual int proof_count() const = 0;
  virtual int proof_of(int job) const = 0;
  virtual JobMemoryPlan memory_plan(int job) const = 0;

  // Device memory that set_up keeps on every device for the whole run, outside every job: the
  // budget's capacity leaves it out.
  virtual Bytes resident_bytes() const { return 0; }
  // Once per device before its first job, and after its last (also after failures).
  virtual asio::awaitable<void> set_up(Device& device, int device_index) = 0;
  virtual asio::awaitable<void> tear_down(Device& device, int device_index) = 0;

  // Host work before the GPU: fills a, b and c (memory_plan(job).input_bytes each).
  virtual asio::awaitable<void> prepare(int job, Device& device, std::span<const HostRange> abc) = 0;
  // The GPU program, run while the job holds the compute lock; returns once its results are on
  // the host.
  virtual asio::awaitable<ProgramTimes> run_program(int job, JobContext& context) = 0;
  // Host work after the GPU (the G2 MSM, the assembly of the proof).
  virtual asio::awaitable<void> finish(int job, Device& device) = 0;
  // The job failed somewhere: drop whatever it kept.
  virtual void abandon(int job) {}
};

}  // namespace stagehand
