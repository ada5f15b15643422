#include "coordinator/result_buffers.hpp"

#include "util/assert.hpp"

#include <utility>

namespace stagehand {

void ResultBuffers::adopt(std::vector<HostRange> buffers) {
  STAGEHAND_ASSERT(!keeping_ && idle_.empty() && with_workers_ == 0, "result buffers adopted twice in a run");
  for (const auto& buffer : buffers) {
    STAGEHAND_ASSERT(buffer.bytes > 0, "an empty result buffer kept between runs");
  }
  keeping_ = true;
  idle_ = std::move(buffers);
}

std::vector<HostRange> ResultBuffers::take() {
  std::vector<HostRange> buffers(kPerWorker);
  for (auto& buffer : buffers) {
    if (idle_.empty()) break;
    buffer = idle_.back();
    idle_.pop_back();
    ++with_workers_;
  }
  return buffers;
}

asio::awaitable<void> ResultBuffers::fit(std::vector<HostRange>& buffers, Bytes bytes) {
  STAGEHAND_ASSERT(buffers.size() == kPerWorker, "a worker with {} result buffers", buffers.size());
  for (auto& buffer : buffers) {
    if (buffer.bytes >= bytes) continue;
    if (buffer.bytes) {
      auto old = std::exchange(buffer, HostRange{});
      --with_workers_;
      co_await device_.free_pinned_host(old);
    }
    buffer = co_await device_.allocate_pinned_host(bytes);
    ++with_workers_;
  }
}

asio::awaitable<void> ResultBuffers::give_back(std::vector<HostRange> buffers) {
  for (const auto& buffer : buffers) {
    if (buffer.bytes == 0) continue;
    STAGEHAND_ASSERT(with_workers_ > 0, "a result buffer of {} bytes given back that no worker held", buffer.bytes);
    --with_workers_;
    if (keeping_) {
      idle_.push_back(buffer);
    } else {
      co_await free_quietly(buffer);
    }
  }
}

std::vector<HostRange> ResultBuffers::take_kept() {
  STAGEHAND_ASSERT(with_workers_ == 0, "{} result buffers still with workers at the run's end", with_workers_);
  return std::exchange(idle_, {});
}

asio::awaitable<void> ResultBuffers::shutdown() {
  STAGEHAND_ASSERT(with_workers_ == 0, "{} result buffers still with workers at the run's end", with_workers_);
  for (const auto& buffer : std::exchange(idle_, {})) co_await free_quietly(buffer);
}

asio::awaitable<void> ResultBuffers::free_quietly(HostRange buffer) {
  try {
    co_await device_.free_pinned_host(buffer);
  } catch (...) {
    // Cleaning up goes on whatever one free says (a lost device has nothing left to free).
  }
}

}  // namespace stagehand
