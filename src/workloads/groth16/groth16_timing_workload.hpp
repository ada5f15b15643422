#pragma once
// The Groth16 program's timing jobs as a workload of their own: proofs of a key's sizes alone (no
// key, no witness, no proof), each job's host steps lasting the modelled times around the same GPU
// program (Groth16Program) as real proofs run.

#include "workloads/groth16/groth16_program.hpp"

#include <array>
#include <functional>
#include <optional>
#include <span>

namespace stagehand::groth16 {

// Proofs of a key's sizes alone: no key, no witness and no proof; the host steps last the
// modelled times and the GPU program is the same. The simulator's timing mode runs them on virtual
// memory; `bench policies` runs them on a GPU over synthetic bytes (SyntheticData), so that the
// program's kernels compute on values of the right kind.
struct Groth16TimingJobs {
  KeySizes sizes;
  int proofs = 1;
  // Jobs per proof: the partitions of one proof (a PoRep proof's ten), each a proof of the program.
  int jobs_per_proof = 1;
  Nanoseconds host_prepare_ns = 0;
  Nanoseconds host_finish_ns = 0;
  // The witness's kinds of scalars: from index `bits_below` on, a share full_scalar_share of them
  // full, the rest (and all below) 0 or 1. What its MSMs cost on the simulator (their launches'
  // light_units) and, with `data`, what the synthetic witness holds.
  double full_scalar_share = 1.0;
  std::uint64_t bits_below = 0;
  // The full scalars to expect among witness indices [first, first + count).
  std::uint64_t full_scalars(std::uint64_t first, std::uint64_t count) const;
  // Host memory the uploads come from without `data` (the simulator's virtual ranges, never
  // touched).
  std::function<HostRange(Bytes)> host_memory;
  // On a GPU: the bytes the kernels compute on, the caller's, kept while the workload lives. Each
  // key set's points in the device layout (set_point_bytes each), in place of host_memory's; every
  // prepare copies `polynomial` into a, b and c (the step lasts host_prepare_ns or the copy, the
  // longer); every proof uploads `witness` (n_vars Montgomery scalars). Only with the a/b/c step
  // on the host: there is no constraint matrix to compute from.
  struct SyntheticData {
    std::array<HostRange, kKeySetCount> sets{};
    std::span<const std::byte> polynomial;
    std::span<const std::byte> witness;
    HostWork* host_work = nullptr;
    // Each job's five MSM sums as its finish finds them (H's over the H step's evaluations), for a
    // check against the CPU's; on the run's executor. BLS12-381's sums: the checks' synthetic keys
    // are of that curve (msm_sums asserts it).
    std::function<void(int job, const MsmResults& sums)> on_sums;
  };
  std::optional<SyntheticData> data;
  int jobs() const { return proofs * jobs_per_proof; }
};

// The timing jobs on the program: on the simulator's virtual memory (host_memory), or on a GPU
// over their synthetic bytes (data: the a/b/c step on the host only).
class Groth16TimingWorkload final : public Groth16Program {
 public:
  Groth16TimingWorkload(Groth16TimingJobs timing, AbcStep abc_step, KeyPlacement placement);

  int job_count() const override { return timing_.jobs(); }
  int proof_count() const override { return timing_.proofs; }
  int proof_of(int job) const override { return job / timing_.jobs_per_proof; }

 private:
  asio::awaitable<void> prepare_job(int job, Device& device, std::span<const HostRange> abc) override;
  asio::awaitable<void> finish_job(int job, Device& device) override;
  HostRange set_host(std::size_t set) const override;
  HostRange matrix_host() const override { return matrix_; }
  HostRange witness_host(int /*job*/) const override { return witness_; }
  std::uint64_t light_points(std::size_t set, std::uint64_t first, std::uint64_t count) const override;
  bool sums_readable() const override { return timing_.data.has_value(); }
  void take_synthetic_bytes(const Groth16TimingJobs::SyntheticData& data);
  void take_virtual_memory();
  void cut_even_matrix();

  Groth16TimingJobs timing_;
  std::array<HostRange, kKeySetCount> sets_{};  // the stand-ins for the key's bytes
  HostRange matrix_{};
  HostRange witness_{};  // what every proof uploads as its witness
};

}  // namespace stagehand::groth16
