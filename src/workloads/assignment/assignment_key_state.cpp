// AssignmentKeyState (assignment_workload.hpp): a .params key's sets left on the devices between
// runs, and the registration of the host bytes its streamed sets travel from.
#include "workloads/assignment/assignment_workload.hpp"

#include "device/give_back_pinned.hpp"
#include "util/assert.hpp"

#include <algorithm>
#include <mutex>
#include <utility>

namespace stagehand::groth16 {

bool AssignmentKeyState::holds_anything() const {
  std::lock_guard lock(mutex_);
  return !devices_.empty() || !pinned_.empty();
}

bool AssignmentKeyState::holds_devices() const {
  std::lock_guard lock(mutex_);
  return !devices_.empty();
}

bool AssignmentKeyState::pinned(HostRange range) const {
  std::lock_guard lock(mutex_);
  return std::ranges::find(pinned_, range) != pinned_.end();
}

void AssignmentKeyState::add_pinned(HostRange range, Device& through) {
  std::lock_guard lock(mutex_);
  pinned_.push_back(range);
  pinned_through_ = &through;
}

bool AssignmentKeyState::made_for(const KeyPlacement& placement) const {
  std::lock_guard lock(mutex_);
  return devices_.empty() || !placement_ || *placement_ == placement.sets;
}

std::uint64_t AssignmentKeyState::set_ups() const {
  std::lock_guard lock(mutex_);
  return set_ups_;
}

asio::awaitable<void> AssignmentKeyState::free_sets(Device& device, const Sets& sets) {
  for (const auto pointer : sets) {
    if (pointer) co_await device.free(pointer);
  }
}

asio::awaitable<void> AssignmentKeyState::release(Device* fallback) {
  std::map<Device*, OnDevice, std::less<>> held;
  std::vector<HostRange> pinned;
  Device* through = nullptr;
  {
    std::lock_guard lock(mutex_);
    held.swap(devices_);
    pinned.swap(pinned_);
    through = std::exchange(pinned_through_, nullptr);
    placement_.reset();
  }
  // The registration is the host's, for every GPU: through the device that made it, or where
  // that one is lost through another.
  if (fallback == nullptr) fallback = through;
  for (const auto& [device, entry] : held) {
    if (device != through) fallback = device;
  }
  for (const auto& [device, entry] : held) co_await free_sets(*device, entry.sets);
  for (const auto& range : pinned) co_await give_back_pinned(range, PinnedKind::registered, through, fallback);
}

AssignmentKeyState::OnDevice* AssignmentKeyState::entry(const Device& device) {
  std::lock_guard lock(mutex_);
  const auto found = devices_.find(&device);
  return found == devices_.end() ? nullptr : &found->second;
}

AssignmentKeyState::OnDevice& AssignmentKeyState::fresh_entry(Device& device, const KeyPlacement& placement) {
  std::lock_guard lock(mutex_);
  STAGEHAND_ASSERT(devices_.find(&device) == devices_.end());
  STAGEHAND_ASSERT(devices_.empty() || !placement_ || *placement_ == placement.sets,
                   "a key state holds sets of another placement: release it before the run");
  placement_ = placement.sets;
  return devices_[&device];
}

void AssignmentKeyState::completed(const Device& device) {
  std::lock_guard lock(mutex_);
  const auto found = devices_.find(&device);
  STAGEHAND_ASSERT(found != devices_.end(), "a set-up completed on a device it was not begun on");
  found->second.complete = true;
  ++set_ups_;
}

std::optional<AssignmentKeyState::OnDevice> AssignmentKeyState::take(const Device& device) {
  std::lock_guard lock(mutex_);
  const auto found = devices_.find(&device);
  if (found == devices_.end()) return std::nullopt;
  auto entry = found->second;
  devices_.erase(found);
  return entry;
}

}  // namespace stagehand::groth16
