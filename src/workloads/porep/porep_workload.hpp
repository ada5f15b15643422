#pragma once
// The synthetic PoRep-shaped workload of `stagehand run`: proofs × partitions jobs of one
// PartitionShape. Host phases are modelled as waits (host_prepare_ns, host_finish_ns); the GPU
// program is PartitionProgram; the proving key's points are pinned once per device and streamed
// by every partition.

#include "coordinator/async_wait.hpp"
#include "coordinator/job.hpp"
#include "workloads/host_work.hpp"
#include "workloads/porep/partition_program.hpp"
#include "workloads/porep/partition_shape.hpp"

#include <functional>
#include <map>
#include <set>
#include <span>

namespace stagehand {

// What the configuration's [workload] table says: proofs x partitions of one shape.
struct PoRepSettings {
  int proofs = 2;
  int partitions_per_proof = 10;
  PartitionShape shape;
  ProgramSettings program;
  int partitions() const { return proofs * partitions_per_proof; }
};

// Real data for the partition on a GPU (`stagehand bench policies`); the simulator's timing mode
// leaves it empty.
struct PoRepData {
  // Fills the proving key's pinned sets once per device, after pinning (synthetic points).
  std::function<asio::awaitable<void>(Device&, const ProvingKeyHost&)> fill_key;
  // One polynomial of field elements that every job's host step copies into a, b and c; the step
  // lasts the modelled host time (host_prepare_ns) or the copy's, the longer. The copy runs on
  // `host_work`.
  std::span<const std::byte> input_template;
  HostWork* host_work = nullptr;
};

class PoRepWorkload final : public Workload {
 public:
  explicit PoRepWorkload(const PoRepSettings& settings, PoRepData data = {})
      : shape_(settings.shape),
        program_(settings.program),
        proofs_(settings.proofs),
        partitions_per_proof_(settings.partitions_per_proof),
        data_(std::move(data)) {}

  int job_count() const override { return proofs_ * partitions_per_proof_; }
  int proof_count() const override { return proofs_; }
  int proof_of(int job) const override { return job / partitions_per_proof_; }
  JobMemoryPlan memory_plan(int job) const override;

  asio::awaitable<void> set_up(Device& device, int device_index) override;
  asio::awaitable<void> tear_down(Device& device, int device_index) override;
  asio::awaitable<void> prepare(int job, Device& device, std::span<const HostRange> abc) override;
  asio::awaitable<JobTimes> run_program(int job, JobContext& context) override;
  asio::awaitable<void> finish(int job, Device& device) override;

 private:
  struct PinnedKey {
    ProvingKeyHost key;
    std::vector<HostRange> buffers;
  };
  // Gives the key's pinned buffers back, through the device that pinned them or, where that one
  // was lost, through `device`.
  asio::awaitable<void> free_key(Device& device);
  PartitionShape shape_;
  ProgramSettings program_;
  int proofs_;
  int partitions_per_proof_;
  PoRepData data_;
  // The proving key's points, pinned once for every GPU (pinned memory is portable): by the first
  // device set up, freed when the last that holds it is torn down.
  PinnedKey key_;
  std::set<int> key_holders_;  // the devices set up with it
  OneAtATime pinning_;         // one set-up pins it, the others wait and then share it
  Device* key_pinned_through_ = nullptr;
  Bytes scratch_bytes_ = 0;        // the kernels' scratch on the devices (none on the simulator)
  Bytes twiddle_extra_bytes_ = 0;  // twiddles beyond the shape's, held throughout (PartitionProgram::twiddle_bytes)
};

}  // namespace stagehand
