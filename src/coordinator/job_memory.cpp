#include "coordinator/job_memory.hpp"

#include "util/assert.hpp"

#include <utility>

namespace stagehand {

asio::awaitable<DevicePointer> BudgetedMemory::allocate(Bytes bytes, StreamHandle stream) {
  auto reservation = co_await budget_.reserve(ticket_, bytes);
  auto pointer = co_await device_.allocate_async(bytes, stream);
  live_.emplace(pointer.address, Live{bytes, std::move(reservation)});
  co_return pointer;
}

asio::awaitable<std::optional<DevicePointer>> BudgetedMemory::try_allocate_spare(Bytes bytes, StreamHandle stream) {
  auto reservation = budget_.try_reserve(ticket_, bytes);
  if (!reservation) co_return std::nullopt;
  auto pointer = co_await device_.allocate_async(bytes, stream);
  live_.emplace(pointer.address, Live{bytes, std::move(*reservation)});
  co_return pointer;
}

asio::awaitable<void> BudgetedMemory::release(DevicePointer pointer, StreamHandle stream) {
  auto found = live_.find(pointer.address);
  if (found == live_.end()) co_return;
  device_.free_async(pointer, stream);
  found->second.reservation.release_in_stream_order(found->second.bytes, stream);
  live_.erase(found);
}

asio::awaitable<void> BudgetedMemory::release_b_and_c(StreamHandle stream) {
  co_await release(inputs_[1], stream);
  co_await release(inputs_[2], stream);
  budget_.lower_peak(ticket_, peak_after_b_and_c_);
}

asio::awaitable<void> BudgetedMemory::release_a(StreamHandle stream) {
  co_await release(inputs_[0], stream);
  budget_.lower_peak(ticket_, peak_after_a_);
}

asio::awaitable<void> BudgetedMemory::release_extra(StreamHandle stream) {
  if (inputs_[3]) co_await release(inputs_[3], stream);
  inputs_[3] = {};
}

void BudgetedMemory::release_all(StreamHandle stream) {
  for (auto& [address, live] : live_) {
    try {
      device_.free_async(DevicePointer{address}, stream);
    } catch (const DeviceError&) {
      // A lost device: nothing to free, but the budget must still be given its bytes back.
    }
    live.reservation.release_in_stream_order(live.bytes, stream);
  }
  live_.clear();
}

asio::awaitable<void> PlainMemory::allocate_inputs(const JobMemoryPlan& plan) {
  STAGEHAND_ASSERT(plan.input_count == 1 || plan.input_count == 3, "a job of {} inputs", plan.input_count);
  a_ = co_await device_.allocate(plan.input_bytes);
  if (plan.input_count == 3) {
    bc_bytes_ = 2 * plan.input_bytes;
    bc_ = co_await device_.allocate(bc_bytes_);
  }
  if (plan.extra_input_bytes > 0) extra_ = co_await device_.allocate(plan.extra_input_bytes);
}

asio::awaitable<DevicePointer> PlainMemory::allocate(Bytes bytes, StreamHandle stream) {
  auto pointer = use_pool_ ? co_await device_.allocate_async(bytes, stream) : co_await device_.allocate(bytes);
  working_.emplace(pointer.address, bytes);
  co_return pointer;
}

asio::awaitable<void> PlainMemory::release(DevicePointer pointer, StreamHandle stream) {
  if (working_.erase(pointer.address) == 0) co_return;
  if (use_pool_) {
    device_.free_async(pointer, stream);
  } else {
    co_await device_.free(pointer);
  }
}

asio::awaitable<void> PlainMemory::release_b_and_c(StreamHandle) {
  if (bc_) co_await device_.free(bc_);
  bc_ = {};
}

asio::awaitable<void> PlainMemory::release_a(StreamHandle) {
  if (a_) co_await device_.free(a_);
  a_ = {};
}

asio::awaitable<void> PlainMemory::release_all(StreamHandle stream) {
  auto working = std::move(working_);
  working_.clear();
  for (auto& [address, bytes] : working) {
    if (use_pool_) {
      device_.free_async(DevicePointer{address}, stream);
    } else {
      co_await device_.free(DevicePointer{address});
    }
  }
  co_await release_b_and_c(stream);
  co_await release_a(stream);
  if (extra_) co_await device_.free(std::exchange(extra_, DevicePointer{}));
}

}  // namespace stagehand
