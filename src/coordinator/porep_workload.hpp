#pragma once
// The synthetic PoRep-shaped workload of `stagehand run`: proofs × partitions jobs of one
// PartitionShape. Host phases are modelled as waits (host_prepare_ns, host_finish_ns); the GPU
// program is PartitionProgram; the proving key's points are pinned once per device and streamed
// by every partition.

#include "coordinator/partition.hpp"
#include "coordinator/workload.hpp"

#include <map>

namespace stagehand {

class PoRepWorkload final : public Workload {
 public:
  PoRepWorkload(PartitionShape shape, ProgramSettings program, int proofs, int partitions_per_proof)
      : shape_(shape), program_(std::move(program)), proofs_(proofs), partitions_per_proof_(partitions_per_proof) {}

  int job_count() const override { return proofs_ * partitions_per_proof_; }
  int proof_count() const override { return proofs_; }
  int proof_of(int job) const override { return job / partitions_per_proof_; }
  JobMemoryPlan memory_plan(int job) const override;

  asio::awaitable<void> set_up(Device& device, int device_index) override;
  asio::awaitable<void> tear_down(Device& device, int device_index) override;
  asio::awaitable<void> prepare(int job, Device& device, std::span<const HostRange> abc) override;
  asio::awaitable<ProgramTimes> run_program(int job, JobContext& context) override;
  asio::awaitable<void> finish(int job, Device& device) override;

 private:
  struct PinnedKey {
    ProvingKeyHost key;
    std::vector<HostRange> buffers;
  };
  PartitionShape shape_;
  ProgramSettings program_;
  int proofs_;
  int partitions_per_proof_;
  std::map<int, PinnedKey> keys_;  // by device index
};

}  // namespace stagehand
