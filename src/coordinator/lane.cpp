#include "coordinator/lane.hpp"

#include "util/assert.hpp"

#include <algorithm>

namespace stagehand {
namespace {

// Two-lock's plain mutex, and a run with the grant-order rule off, let any waiter have the lock.
std::function<std::size_t(std::size_t)> lock_grant(const CoordinatorSettings& settings, Random& random) {
  if (settings.policy == Policy::two_lock || !settings.grant_order_is_lock_order) {
    return [&random](std::size_t count) { return random.below(count); };
  }
  return {};
}

}  // namespace

Lane::Lane(Device& device, int index, const CoordinatorSettings& settings, Random& random,
           std::function<HostRange(Bytes)> pageable)
    : device(device),
      index(index),
      compute_lock(lock_grant(settings, random)),
      staging(device, settings.policy == Policy::budgeted ? settings.host_staging : HostStagingMode::register_in_place,
              settings.pinned_host_budget_bytes, std::move(pageable)),
      results(device) {}

bool Lane::holder_on_link() {
  if (holder_pcie_phases_ > 0) return true;
  try {
    return !holder_uploads_.empty() && device.event_complete(holder_uploads_.front());
  } catch (const DeviceError&) {
    return false;  // a lost device carries nothing
  }
}

LinkClaimHooks Lane::link_claim_hooks() {
  return LinkClaimHooks{[this](bool entering) {
                          // Never below 0: a failed holder's phases were dropped with its hold,
                          // and its leaving may still arrive from the stream.
                          holder_pcie_phases_ = std::max(0, holder_pcie_phases_ + (entering ? 1 : -1));
                          if (holder_pcie_phases_ == 0) link_free.notify_all();
                        },
                        [this](EventHandle started) { holder_uploads_.push_back(started); },
                        [this](EventHandle started) {
                          // Absent when dropped with the hold before this arrived.
                          auto found = std::find(holder_uploads_.begin(), holder_uploads_.end(), started);
                          if (found != holder_uploads_.end()) {
                            destroy_quietly(*found);
                            holder_uploads_.erase(found);
                          }
                          link_free.notify_all();
                        }};
}

void Lane::drop_link_claims() {
  holder_pcie_phases_ = 0;
  for (auto event : holder_uploads_) destroy_quietly(event);
  holder_uploads_.clear();
  link_free.notify_all();
}

void Lane::destroy_quietly(EventHandle event) {
  try {
    device.destroy_event(event);
  } catch (const DeviceError&) {
  }
}

}  // namespace stagehand
