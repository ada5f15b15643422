// two-lock: the production prover's pre-staging (pinned_in_place.hpp) under a memory lock, the
// upload finished before the memory lock is let go, then a compute lock that any waiter may get
// (the lane builds it unfair): the abandoned design, where a job that pre-staged could be
// overtaken at the compute lock.

#include "coordinator/policy/pinned_in_place.hpp"

namespace stagehand {
namespace {

class TwoLockWorker final : public PinnedInPlaceWorker {
 public:
  using PinnedInPlaceWorker::PinnedInPlaceWorker;

 private:
  asio::awaitable<bool> stage(JobRecord& job, PlainMemory& memory, const StagedHostBuffers& host,
                              EventHandle uploaded) override {
    auto& memory_lock = lane_.memory_lock;
    LockHold memory_hold{&memory_lock, memory_lock.take_ticket()};
    auto start = device_.now();
    co_await memory_lock.acquire(memory_hold.ticket);
    if (device_.now() > start) span("wait for the memory lock", start);
    bool staged = false;
    std::exception_ptr failure;
    try {
      staged = co_await try_stage(job, memory, host, uploaded);
      if (staged) co_await device_.synchronize_stream(upload_);  // the upload ends under the memory lock
    } catch (...) {
      failure = std::current_exception();
    }
    memory_lock.release(memory_hold.ticket);
    if (failure) std::rethrow_exception(failure);
    co_return staged;
  }
};

}  // namespace

std::unique_ptr<Worker> make_two_lock_worker(Run& run, Lane& lane, int index) {
  return std::make_unique<TwoLockWorker>(run, lane, index);
}

}  // namespace stagehand
