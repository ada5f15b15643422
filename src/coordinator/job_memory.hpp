#pragma once
// The two ways a job's GPU program gets device memory (JobMemory, job.hpp).
//   BudgetedMemory: every byte reserved in the VramBudget first, then taken from the pool on the
//                   stream that uses it; frees given back to the budget in stream order.
//   PlainMemory:    the production prover's ways, with nothing reserved: a and b|c (and the extra
//                   input) from cudaMalloc (freed with cudaFree, which waits for the whole device); working memory from cudaMalloc
//                   too before pre-staging, from the stream-ordered pool with it.
// Both keep every live allocation, so that a job failing half-way gives everything back.

#include "coordinator/job.hpp"
#include "coordinator/vram_budget.hpp"

#include <array>
#include <map>

namespace stagehand {

class BudgetedMemory final : public JobMemory {
 public:
  // The job's peak falls to `peak_after_b_and_c`, then `peak_after_a`, as it frees its inputs.
  BudgetedMemory(Device& device, VramBudget& budget, ComputeLock::Ticket ticket, Bytes peak_after_b_and_c,
                 Bytes peak_after_a)
      : device_(device),
        budget_(budget),
        ticket_(ticket),
        peak_after_b_and_c_(peak_after_b_and_c),
        peak_after_a_(peak_after_a) {}

  // Reserves, then allocates on `stream`: the pre-staging path uses it for a, b and c.
  asio::awaitable<DevicePointer> allocate(Bytes bytes, StreamHandle stream) override;
  asio::awaitable<void> release(DevicePointer pointer, StreamHandle stream) override;
  asio::awaitable<void> release_b_and_c(StreamHandle stream) override;
  asio::awaitable<void> release_a(StreamHandle stream) override;
  // Admitted only if the budget has the room now, as the lock holder; never waits.
  asio::awaitable<std::optional<DevicePointer>> try_allocate_spare(Bytes bytes, StreamHandle stream) override;
  void set_inputs(DevicePointer a, DevicePointer b, DevicePointer c, DevicePointer extra) {
    inputs_ = {a, b, c, extra};
  }
  // Frees everything still held, in order on `stream` (after a failure).
  void release_all(StreamHandle stream);
  // Once the program ended: the extra input (JobMemoryPlan::extra_input_bytes), allocated by the
  // worker and kept live through the program (none: nothing to do).
  asio::awaitable<void> release_extra(StreamHandle stream);

 private:
  struct Live {
    Bytes bytes;
    Reservation reservation;
  };
  Device& device_;
  VramBudget& budget_;
  ComputeLock::Ticket ticket_;
  Bytes peak_after_b_and_c_;
  Bytes peak_after_a_;
  std::map<std::uint64_t, Live> live_;
  std::array<DevicePointer, 4> inputs_{};  // a, b, c, extra
};

class PlainMemory final : public JobMemory {
 public:
  PlainMemory(Device& device, bool working_memory_from_pool) : device_(device), use_pool_(working_memory_from_pool) {}

  // a and b|c, as the engine allocated them (cudaMalloc): a, and b and c unless the plan's
  // input_count is 1; then the extra input where the plan has one (a buffer of its own).
  asio::awaitable<void> allocate_inputs(const JobMemoryPlan& plan);
  DevicePointer a() const { return a_; }
  DevicePointer b() const { return bc_; }
  DevicePointer c() const { return bc_ ? bc_ + bc_bytes_ / 2 : DevicePointer{}; }
  DevicePointer extra() const { return extra_; }

  asio::awaitable<DevicePointer> allocate(Bytes bytes, StreamHandle stream) override;
  asio::awaitable<void> release(DevicePointer pointer, StreamHandle stream) override;
  asio::awaitable<void> release_b_and_c(StreamHandle stream) override;
  asio::awaitable<void> release_a(StreamHandle stream) override;
  // Everything still held, the extra input included: the worker calls it once the program ended.
  asio::awaitable<void> release_all(StreamHandle stream);

 private:
  Device& device_;
  bool use_pool_;
  DevicePointer a_;
  DevicePointer bc_;
  DevicePointer extra_;
  Bytes bc_bytes_ = 0;
  std::map<std::uint64_t, Bytes> working_;
};

}  // namespace stagehand
