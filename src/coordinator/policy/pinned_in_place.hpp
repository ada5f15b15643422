#pragma once
// What prestage and two-lock share: the production prover's pre-staging. Each job's a, b and c
// are filled in ordinary host memory, pinned in place (cudaHostRegister), and uploaded before
// the compute lock into plainly allocated buffers, after the fix's free-memory check, device
// synchronise and pool trim; where the check says no, the job uploads inside the lock instead
// (the fallback). The two policies differ only in how staging is guarded (stage()).

#include "coordinator/host_staging.hpp"
#include "coordinator/policy/workers.hpp"

namespace stagehand {

class PinnedInPlaceWorker : public Worker {
 public:
  using Worker::Worker;

 protected:
  // Stages a, b and c before the lock; false where it did not (the check said no, or memory ran
  // out, which is counted and cleaned up).
  virtual asio::awaitable<bool> stage(JobRecord& job, PlainMemory& memory, const StagedHostBuffers& host,
                                      EventHandle uploaded) = 0;
  // The free-memory check, then the allocations and the upload on the upload stream.
  asio::awaitable<bool> try_stage(JobRecord& job, PlainMemory& memory, const StagedHostBuffers& host,
                                  EventHandle uploaded);

 private:
  asio::awaitable<void> run_job(JobRecord& job) override;
  // The fix's device synchronise and pool trim, so that memory freed in stream order is free.
  asio::awaitable<void> make_room();
  bool free_memory_check_passes();
  // The job's inputs on the device: a, b, c and the extra input.
  Bytes input_bytes() const;
  // Holds the lock for the program; uploads inside it when pre-staging did not happen.
  asio::awaitable<void> run_in_lock(JobRecord& job, const LockHold& hold, PlainMemory& memory,
                                    const StagedHostBuffers& host, EventHandle uploaded, bool staged);
};

}  // namespace stagehand
