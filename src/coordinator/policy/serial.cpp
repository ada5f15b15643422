// serial: one lock around everything, a/b/c uploaded from pageable memory inside it.

#include "coordinator/job_memory.hpp"
#include "coordinator/policy/workers.hpp"

namespace stagehand {
namespace {

class SerialWorker final : public Worker {
 public:
  using Worker::Worker;

 private:
  asio::awaitable<void> run_job(JobRecord& job) override {
    const auto host = pageable_inputs();
    co_await prepare("prepare a, b, c", job, host);
    LockHold hold = take_place(lane_.compute_lock, job);
    PlainMemory memory(device_, false);
    std::exception_ptr failure;
    try {
      co_await wait_for_lock(hold, job);
      co_await memory.allocate_inputs(plan_);
      auto start = device_.now();
      co_await upload_plain_inputs(device_, memory, host, compute_);  // each call holds the host until done
      auto upload_ns = device_.now() - start;
      span("pageable upload of a, b, c (in the lock)", start);
      auto times = co_await run_program(job, plain_inputs(memory, EventHandle{}), memory);
      job.waited_for_inputs_ns = upload_ns + times.waited_for_inputs_ns;
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) fail(job, failure);
    co_await quietly([&] { return memory.release_all(compute_); });
    leave(hold, job);
  }
};

}  // namespace

std::unique_ptr<Worker> make_serial_worker(Run& run, Lane& lane, int index) {
  return std::make_unique<SerialWorker>(run, lane, index);
}

}  // namespace stagehand
