#pragma once
// HostWork: CPU-heavy host work of a job (the a/b/c step, the G2 MSM) kept off the thread that
// runs the coordinator, so that the other workers' device completions are served while it runs.
//
// With threads > 0 the work runs on a pool of that many threads and the coroutine resumes on its
// own executor afterwards. With threads = 0 it runs inline: the simulator's virtual clock stands
// still while the host computes, and work on another thread would look like a deadlock to it.

#include "device/completion.hpp"

#include <boost/asio/thread_pool.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>

namespace stagehand {

// The pool a run's host steps need so that none waits for a thread: every worker of every GPU
// may have a job's prepare in hand and, with overlap_finish, its previous job's finish beside it.
// (Two threads for two workers on one GPU could leave a finish waiting behind both prepares: the
// H200's 2^26 proofs spent far longer in a host step after the GPU than its own work takes.)
inline unsigned host_work_threads(int workers_per_device, std::size_t devices) {
  return static_cast<unsigned>(2 * std::max(1, workers_per_device) * std::max<std::size_t>(1, devices));
}

class HostWork {
 public:
  explicit HostWork(unsigned threads) {
    if (threads > 0) pool_.emplace(threads);
  }
  ~HostWork() {
    if (pool_) pool_->join();
  }
  HostWork(const HostWork&) = delete;
  HostWork& operator=(const HostWork&) = delete;

  bool inline_work() const { return !pool_; }

  // Runs `work`; rethrows what it threw.
  asio::awaitable<void> run(std::function<void()> work) {
    if (!pool_) {
      work();
      co_return;
    }
    auto executor = co_await asio::this_coro::executor;
    co_await await_completion([&](Completion completion) {
      auto done = std::make_shared<Completion>(std::move(completion));
      // The tracked executor keeps the caller's io_context running while the pool works.
      asio::post(*pool_, [work = std::move(work), done,
                          keep = asio::prefer(executor, asio::execution::outstanding_work.tracked)] {
        std::exception_ptr error;
        try {
          work();
        } catch (...) {
          error = std::current_exception();
        }
        done->complete(error);
      });
    });
  }

 private:
  std::optional<asio::thread_pool> pool_;
};

}  // namespace stagehand
