// The few threading patterns the math needs, on plain std::thread. Kept internal: callers pass a
// thread count (0 = every hardware thread) to the public functions.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace stagehand::math::detail {

inline unsigned resolve_thread_count(unsigned requested) {
  if (requested != 0) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

// Runs task(index) for every index in [0, task_count) on up to thread_count threads, the calling
// thread included. Tasks are handed out one at a time, so uneven tasks still balance. The first
// exception a task throws is rethrown on the calling thread once every thread has stopped.
template <class Task>
void run_tasks(std::size_t task_count, unsigned thread_count, Task&& task) {
  const std::size_t worker_count = std::min<std::size_t>(resolve_thread_count(thread_count), task_count);
  if (worker_count <= 1) {
    for (std::size_t index = 0; index < task_count; ++index) task(index);
    return;
  }
  std::atomic<std::size_t> next_task{0};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto work = [&] {
    for (;;) {
      const std::size_t index = next_task.fetch_add(1, std::memory_order_relaxed);
      if (index >= task_count) return;
      try {
        task(index);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        next_task.store(task_count, std::memory_order_relaxed);
      }
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(worker_count - 1);
  for (std::size_t helper = 0; helper + 1 < worker_count; ++helper) helpers.emplace_back(work);
  work();
  for (auto& helper : helpers) helper.join();
  if (first_error) std::rethrow_exception(first_error);
}

// Splits [0, count) into contiguous ranges of at least minimum_range_size elements (so small
// inputs do not pay for threads) and runs range_task(begin, end) on each.
template <class RangeTask>
void run_ranges(std::size_t count, unsigned thread_count, std::size_t minimum_range_size, RangeTask&& range_task) {
  const std::size_t threads = resolve_thread_count(thread_count);
  std::size_t range_count =
      std::max<std::size_t>(1, std::min(threads, count / std::max<std::size_t>(1, minimum_range_size)));
  const std::size_t range_size = (count + range_count - 1) / range_count;
  range_count = range_size == 0 ? 1 : (count + range_size - 1) / range_size;
  run_tasks(range_count, thread_count, [&](std::size_t range) {
    const std::size_t begin = range * range_size;
    const std::size_t end = std::min(count, begin + range_size);
    if (begin < end) range_task(begin, end);
  });
}

}  // namespace stagehand::math::detail
