#include "sim/sim_system.hpp"

#include "sim/sim_device.hpp"

#include "device/completion.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <memory>

namespace stagehand::sim {

SimSystem::SimSystem(SimOptions options)
    : options_(options), trace_(options.keep_trace_events), random_(options.seed) {}

SimSystem::~SimSystem() = default;

SimDevice& SimSystem::add_device(DeviceModel model, FaultPlan faults) {
  auto ordinal = static_cast<int>(devices_.size());
  devices_.push_back(std::make_unique<SimDevice>(*this, std::move(model), ordinal, std::move(faults)));
  return *devices_.back();
}

void SimSystem::schedule_at(Nanoseconds at, std::function<void()> action) {
  assert(at >= now_);
  queue_.push_back(Scheduled{std::max(at, now_), next_order_++, std::move(action)});
  std::push_heap(queue_.begin(), queue_.end(), Later{});
}

Nanoseconds SimSystem::jittered(Nanoseconds duration) {
  auto spread = options_.duration_jitter;
  if (spread == 0) return duration;
  return static_cast<Nanoseconds>(std::llround(static_cast<double>(duration) * random_.jitter(spread)));
}

boost::asio::awaitable<void> SimSystem::sleep_for(Nanoseconds duration) {
  co_await await_completion([&](Completion completion) {
    auto shared = std::make_shared<Completion>(std::move(completion));
    schedule_after(std::max<Nanoseconds>(0, jittered(duration)), [shared] { shared->complete(); });
  });
}

bool SimSystem::run(Nanoseconds time_limit_ns) {
  for (;;) {
    // Let every coroutine that can make progress at this instant do so.
    io_.restart();
    io_.poll();
    if (take_outside_calls()) continue;
    if (settled_observer_) settled_observer_();
    if (queue_.empty()) return true;
    if (queue_.front().time > time_limit_ns) return false;
    std::pop_heap(queue_.begin(), queue_.end(), Later{});
    Scheduled next = std::move(queue_.back());
    queue_.pop_back();
    now_ = next.time;
    ++events_delivered_;
    next.action();
  }
}

void SimSystem::post_from_outside(std::function<void()> call) {
  {
    std::lock_guard lock(outside_mutex_);
    outside_calls_.push_back(std::move(call));
  }
}

bool SimSystem::take_outside_calls() {
  std::vector<std::function<void()>> calls;
  {
    std::lock_guard lock(outside_mutex_);
    calls.swap(outside_calls_);
  }
  for (auto& call : calls) boost::asio::post(io_, std::move(call));
  return !calls.empty();
}

void SimSystem::register_kernel(const std::string& name, kernel::Curve curve, KernelFunction function,
                                Bytes scratch_bytes) {
  kernel_functions_[{name, curve}] = std::move(function);
  auto& scratch = kernel_function_scratch_[name];
  scratch = std::max(scratch, scratch_bytes);
}

Bytes SimSystem::kernel_function_scratch_bytes(std::string_view name) const {
  auto found = kernel_function_scratch_.find(name);
  return found == kernel_function_scratch_.end() ? 0 : found->second;
}

std::vector<std::string> SimSystem::kernel_function_names(kernel::Curve curve) const {
  std::vector<std::string> names;
  for (const auto& entry : kernel_functions_) {
    if (entry.first.second == curve) names.push_back(entry.first.first);
  }
  return names;  // a std::map's keys come sorted by name first
}

bool SimSystem::has_kernel_function(std::string_view name) const {
  return kernel_function_scratch_.find(name) != kernel_function_scratch_.end();
}

const KernelFunction* SimSystem::kernel_function(const std::string& name, kernel::Curve curve) const {
  auto found = kernel_functions_.find(std::pair{name, curve});
  return found == kernel_functions_.end() ? nullptr : &found->second;
}

HostRange SimSystem::virtual_host_range(Bytes bytes) {
  HostRange range{next_virtual_host_address_, bytes};
  // Keep ranges apart by a page so that neighbours never look contiguous.
  next_virtual_host_address_ += (bytes + 2 * 4096) & ~std::uintptr_t{4095};
  return range;
}

}  // namespace stagehand::sim
