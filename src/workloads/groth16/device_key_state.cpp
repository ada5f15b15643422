#include "workloads/groth16/device_key_state.hpp"

#include "device/give_back_pinned.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace stagehand::groth16 {
namespace {

// Each set's placement where it leaves something on the devices, streamed where it does not.
std::array<SetPlacement, kKeySetCount> kept_sets(const KeyPlacement& placement) {
  std::array<SetPlacement, kKeySetCount> kept{};
  for (std::size_t set = 0; set < kKeySetCount; ++set) {
    kept[set] = kept_on_device(placement.sets[set]) ? placement.sets[set] : SetPlacement::streamed;
  }
  return kept;
}

}  // namespace

bool DeviceKeyState::holds_layout_locked(bool matrix_on_device, const KeyPlacement& placement) const {
  return matrix_on_device_ == matrix_on_device && kept_ == kept_sets(placement);
}

bool DeviceKeyState::made_for(bool matrix_on_device, const KeyPlacement& placement) const {
  std::lock_guard lock(mutex_);
  return devices_.empty() || holds_layout_locked(matrix_on_device, placement);
}

bool DeviceKeyState::holds_devices() const {
  std::lock_guard lock(mutex_);
  return !devices_.empty();
}

std::vector<int> DeviceKeyState::device_indices() const {
  std::lock_guard lock(mutex_);
  std::vector<int> indices;
  for (const auto& [index, entry] : devices_) {
    if (entry.complete) indices.push_back(index);
  }
  return indices;
}

bool DeviceKeyState::holds_anything() const {
  std::lock_guard lock(mutex_);
  return !devices_.empty() || !pinned_.empty();
}

std::uint64_t DeviceKeyState::set_ups() const {
  std::lock_guard lock(mutex_);
  return set_ups_;
}

Bytes DeviceKeyState::device_bytes() const {
  std::lock_guard lock(mutex_);
  Bytes most = 0;
  for (const auto& [index, entry] : devices_) most = std::max(most, entry.bytes);
  return most;
}

DeviceKeyState::OnDevice* DeviceKeyState::entry(int index) {
  std::lock_guard lock(mutex_);
  auto found = devices_.find(index);
  return found == devices_.end() ? nullptr : &found->second;  // map nodes stay put
}

DeviceKeyState::OnDevice& DeviceKeyState::fresh_entry(int index, Device& device, bool matrix_on_device,
                                                      const KeyPlacement& placement, Bytes bytes) {
  std::lock_guard lock(mutex_);
  if (devices_.empty()) {
    matrix_on_device_ = matrix_on_device;
    kept_ = kept_sets(placement);
  } else if (!holds_layout_locked(matrix_on_device, placement)) {
    throw std::logic_error("DeviceKeyState: it holds the key in another layout; release it before this run");
  }
  auto [where, inserted] = devices_.try_emplace(index);
  if (!inserted) throw std::logic_error("DeviceKeyState: device already set up (release it first)");
  where->second.device = &device;
  where->second.bytes = bytes;
  return where->second;
}

void DeviceKeyState::completed(int index) {
  std::lock_guard lock(mutex_);
  devices_.at(index).complete = true;
  ++set_ups_;
}

bool DeviceKeyState::pinned(HostRange range) const {
  std::lock_guard lock(mutex_);
  return std::find(pinned_.begin(), pinned_.end(), range) != pinned_.end();
}

void DeviceKeyState::add_pinned(HostRange range, Device& through) {
  std::lock_guard lock(mutex_);
  pinned_.push_back(range);
  pinned_through_ = &through;
}

const ConstraintMatrix& DeviceKeyState::host_matrix(const ProvingKey& key) {
  std::call_once(matrix_built_, [&] { host_matrix_ = build_constraint_matrix(key); });
  return *host_matrix_;
}

const ConstraintMatrix& DeviceKeyState::host_matrix(const bn254::ProvingKey& key) {
  std::call_once(matrix_built_, [&] { host_matrix_ = build_constraint_matrix(key); });
  return *host_matrix_;
}

asio::awaitable<void> DeviceKeyState::free_entry(const OnDevice& entry) {
  std::vector<DevicePointer> pointers(entry.sets.begin(), entry.sets.end());
  pointers.push_back(entry.matrix);
  for (auto pointer : pointers) {
    if (!pointer) continue;
    try {
      co_await entry.device->free(pointer);
    } catch (...) {
      // A lost device: free the rest all the same.
    }
  }
}

asio::awaitable<void> DeviceKeyState::release_device(int index) {
  std::optional<OnDevice> taken;
  {
    std::lock_guard lock(mutex_);
    auto found = devices_.find(index);
    if (found == devices_.end()) co_return;
    taken = found->second;
    devices_.erase(found);
  }
  co_await free_entry(*taken);
}

asio::awaitable<void> DeviceKeyState::release(Device* fallback) {
  std::map<int, OnDevice> entries;
  std::vector<HostRange> pinned;
  Device* through = nullptr;
  {
    std::lock_guard lock(mutex_);
    entries.swap(devices_);
    pinned.swap(pinned_);
    through = std::exchange(pinned_through_, nullptr);
  }
  // The registration is the host's, for every GPU: through the device that made it, or where
  // that one is lost through another.
  if (fallback == nullptr) fallback = through;
  for (const auto& [index, entry] : entries) {
    if (entry.device != through) fallback = entry.device;
  }
  for (const auto& [index, entry] : entries) co_await free_entry(entry);
  for (const auto& range : pinned) co_await give_back_pinned(range, PinnedKind::registered, through, fallback);
}

}  // namespace stagehand::groth16
