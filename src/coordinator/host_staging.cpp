#include "coordinator/host_staging.hpp"

#include "util/assert.hpp"

#include "device/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace stagehand {

namespace {

Bytes total_of(const std::vector<Bytes>& sizes) {
  Bytes total = 0;
  for (const auto bytes : sizes) total += bytes;
  return total;
}

}  // namespace

Bytes worker_staging_bytes(const JobMemoryPlan& plan) {
  return total_of(staged_input_sizes(plan)) + 2 * plan.result_bytes;
}

void check_workers_staging_fit(int workers, const JobMemoryPlan& plan, Bytes budget_bytes,
                               std::string_view budget_where) {
  STAGEHAND_ASSERT(workers >= 1, "{} workers", workers);
  const Bytes each = worker_staging_bytes(plan);
  const Bytes all = static_cast<Bytes>(workers) * each;
  if (all <= budget_bytes) return;
  // Refused rather than run with fewer workers: the count is what the operator asked for (a
  // --workers option or [gpus] workers_per_device), fewer would change the run's concurrency
  // behind their back, and nothing has been allocated yet, so saying which count fits costs nothing.
  const Bytes fit = budget_bytes / each;
  throw std::invalid_argument(fmt::format(
      "{}: {} workers stage {} of host memory per GPU, {} each (a job's inputs {} x {}{}, two result buffers of {}), "
      "more than the budget of {} per GPU: {}",
      budget_where, workers, format_bytes(all), format_bytes(each), plan.input_count, format_bytes(plan.input_bytes),
      plan.extra_input_bytes > 0 ? fmt::format(" and {} extra", format_bytes(plan.extra_input_bytes)) : "",
      format_bytes(plan.result_bytes), format_bytes(budget_bytes),
      fit == 0 ? std::string("not one worker fits")
               : fmt::format("at most {} worker{} per GPU fit", fit, fit == 1 ? "" : "s")));
}

HostStaging::HostStaging(Device& device, HostStagingMode mode, Bytes pinned_budget_bytes,
                         std::function<HostRange(Bytes)> pageable_memory)
    : device_(device), mode_(mode), budget_bytes_(pinned_budget_bytes), pageable_memory_(std::move(pageable_memory)) {}

void HostStaging::check_fits(Bytes bytes) const {
  if (bytes > budget_bytes_) {
    throw std::runtime_error(fmt::format("host staging: a partition's inputs need {} pinned, the budget is {}",
                                         format_bytes(bytes), format_bytes(budget_bytes_)));
  }
}

asio::awaitable<StagedHostBuffers> HostStaging::acquire(const JobMemoryPlan& plan) {
  const auto sizes = staged_input_sizes(plan);
  check_fits(total_of(sizes));
  StagedHostBuffers staged;
  staged.buffers.resize(sizes.size());
  staged.from_pool = mode_ == HostStagingMode::pinned_pool;
  if (mode_ == HostStagingMode::pinned_pool) {
    std::exception_ptr failure;
    try {
      co_await acquire_from_pool(staged, sizes);
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) {
      // Buffers already taken go back to the pool; the error goes to the job.
      for (auto& buffer : staged.buffers) {
        if (buffer.bytes == 0) continue;
        in_use_bytes_ -= buffer.bytes;
        idle_.push_back(buffer);
      }
      waiters_.notify_all();
      std::rethrow_exception(failure);
    }
    STAGEHAND_ASSERT(staged.buffers.size() == sizes.size());
    co_return staged;
  }
  std::vector<HostRange> pageable;
  for (const auto bytes : sizes) pageable.push_back(pageable_memory_(bytes));
  co_return co_await pin_in_place(std::move(pageable));
}

asio::awaitable<StagedHostBuffers> HostStaging::pin_in_place(std::vector<HostRange> buffers) {
  Bytes total = 0;
  for (const auto& buffer : buffers) total += buffer.bytes;
  check_fits(total);
  while (pinned_bytes_ + total > budget_bytes_) co_await waiters_.wait();
  pinned_bytes_ += total;
  in_use_bytes_ += total;
  check_accounting();
  StagedHostBuffers staged;
  staged.buffers = std::move(buffers);
  std::size_t registered = 0;
  std::exception_ptr failure;
  try {
    for (auto& buffer : staged.buffers) {
      co_await device_.register_host(buffer);
      ++registered;
    }
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    // Unpin what was pinned; the error goes to the job.
    for (std::size_t i = 0; i < registered; ++i) co_await device_.unregister_host(staged.buffers[i]);
    pinned_bytes_ -= total;
    in_use_bytes_ -= total;
    waiters_.notify_all();
    std::rethrow_exception(failure);
  }
  co_return staged;
}

asio::awaitable<void> HostStaging::acquire_from_pool(StagedHostBuffers& staged, const std::vector<Bytes>& sizes) {
  STAGEHAND_ASSERT(staged.buffers.size() == sizes.size(), "{} buffers for {} sizes", staged.buffers.size(),
                   sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    auto& buffer = staged.buffers[i];
    const Bytes bytes = sizes[i];
    for (;;) {
      auto idle =
          std::find_if(idle_.begin(), idle_.end(), [&](const HostRange& range) { return range.bytes == bytes; });
      if (idle != idle_.end()) {
        buffer = *idle;
        idle_.erase(idle);
        break;
      }
      if (pinned_bytes_ + bytes <= budget_bytes_) {
        buffer = co_await allocate_pinned(bytes);
        break;
      }
      if (!idle_.empty()) {
        // Idle buffers of another size stand in the way: give one back to make room.
        auto victim = idle_.back();
        idle_.pop_back();
        pinned_bytes_ -= victim.bytes;
        co_await device_.free_pinned_host(victim);
        continue;
      }
      co_await waiters_.wait();
    }
    in_use_bytes_ += bytes;
    check_accounting();
  }
}

asio::awaitable<void> HostStaging::release(StagedHostBuffers staged) {
  for (auto& buffer : staged.buffers) {
    if (buffer.bytes == 0) continue;
    STAGEHAND_ASSERT(in_use_bytes_ >= buffer.bytes, "releasing {} bytes of staging with {} in use", buffer.bytes,
                     in_use_bytes_);
    in_use_bytes_ -= buffer.bytes;
    if (staged.from_pool) {
      idle_.push_back(buffer);
    } else {
      co_await device_.unregister_host(buffer);
      pinned_bytes_ -= buffer.bytes;
    }
  }
  check_accounting();
  waiters_.notify_all();
}

asio::awaitable<void> HostStaging::prewarm(const JobMemoryPlan& plan, int sets) {
  if (mode_ != HostStagingMode::pinned_pool) co_return;
  const auto sizes = staged_input_sizes(plan);
  for (int set = 0; set < sets; ++set) {
    for (const auto bytes : sizes) {
      if (pinned_bytes_ + bytes > budget_bytes_) co_return;
      idle_.push_back(co_await allocate_pinned(bytes));
    }
  }
}

asio::awaitable<HostRange> HostStaging::allocate_pinned(Bytes bytes) {
  pinned_bytes_ += bytes;  // counted before the call, so that waiters see it
  std::exception_ptr failure;
  HostRange buffer;
  try {
    buffer = co_await device_.allocate_pinned_host(bytes);
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    pinned_bytes_ -= bytes;
    std::rethrow_exception(failure);
  }
  co_return buffer;
}

asio::awaitable<void> HostStaging::shutdown() {
  auto idle = std::move(idle_);
  idle_.clear();
  for (auto& buffer : idle) {
    pinned_bytes_ -= buffer.bytes;
    co_await device_.free_pinned_host(buffer);
  }
}

std::vector<HostRange> HostStaging::adopt(std::vector<HostRange> buffers) {
  std::vector<HostRange> left;
  for (const auto& buffer : buffers) {
    if (mode_ == HostStagingMode::pinned_pool && pinned_bytes_ + buffer.bytes <= budget_bytes_) {
      pinned_bytes_ += buffer.bytes;
      idle_.push_back(buffer);
    } else {
      left.push_back(buffer);
    }
  }
  check_accounting();
  return left;
}

std::vector<HostRange> HostStaging::take_idle() {
  auto idle = std::move(idle_);
  idle_.clear();
  for (const auto& buffer : idle) pinned_bytes_ -= buffer.bytes;
  return idle;
}

void HostStaging::check_accounting() const {
  STAGEHAND_ASSERT(in_use_bytes_ <= pinned_bytes_ && pinned_bytes_ <= budget_bytes_,
                   "pinned staging: {} bytes in use, {} pinned, budget {}", in_use_bytes_, pinned_bytes_,
                   budget_bytes_);
}

}  // namespace stagehand
