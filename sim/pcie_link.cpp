#include "sim/pcie_link.hpp"

#include "sim/sim_system.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace stagehand::sim {
namespace {
// A transfer with less than this left is complete: it absorbs floating-point rounding.
constexpr double kDoneBytes = 0.5;
}  // namespace

void PcieLink::start(Direction direction, Bytes bytes, bool pageable, double rate_scale, std::function<void()> done) {
  advance_to_now();
  transfers_.push_back(Transfer{direction, pageable, rate_scale, static_cast<double>(bytes), 0.0, std::move(done)});
  assign_rates();
  schedule_next_completion();
}

void PcieLink::slow_down(double factor) {
  advance_to_now();
  slowdown_ = factor;
  assign_rates();
  schedule_next_completion();
}

void PcieLink::abandon() {
  transfers_.clear();
  ++generation_;
}

void PcieLink::advance_to_now() {
  auto now = system_.now();
  auto elapsed = static_cast<double>(now - last_update_ns_);
  if (elapsed > 0) {
    for (auto& transfer : transfers_) transfer.remaining_bytes -= transfer.rate_bytes_per_ns * elapsed;
  }
  last_update_ns_ = now;
}

void PcieLink::assign_rates() {
  double total = 0;
  for (auto direction : {Direction::host_to_device, Direction::device_to_host}) {
    // Fair share within the direction, filling the slowest (capped) transfers first.
    std::vector<Transfer*> members;
    for (auto& transfer : transfers_) {
      if (transfer.direction == direction) members.push_back(&transfer);
    }
    if (members.empty()) continue;
    auto cap_of = [&](const Transfer* t) {
      double cap = (direction == Direction::host_to_device ? rates_.host_to_device_bytes_per_ns
                                                           : rates_.device_to_host_bytes_per_ns);
      if (t->pageable) cap = std::min(cap, rates_.pageable_bytes_per_ns);
      return cap * t->rate_scale / slowdown_;
    };
    std::stable_sort(members.begin(), members.end(), [&](auto* a, auto* b) { return cap_of(a) < cap_of(b); });
    double left = (direction == Direction::host_to_device ? rates_.host_to_device_bytes_per_ns
                                                          : rates_.device_to_host_bytes_per_ns) /
                  slowdown_;
    for (std::size_t i = 0; i < members.size(); ++i) {
      double share = left / static_cast<double>(members.size() - i);
      members[i]->rate_bytes_per_ns = std::min(cap_of(members[i]), share);
      left -= members[i]->rate_bytes_per_ns;
      total += members[i]->rate_bytes_per_ns;
    }
  }
  double cap = rates_.bidirectional_bytes_per_ns / slowdown_;
  if (total > cap) {
    for (auto& transfer : transfers_) transfer.rate_bytes_per_ns *= cap / total;
  }
}

void PcieLink::schedule_next_completion() {
  ++generation_;
  if (transfers_.empty()) return;
  double soonest = std::numeric_limits<double>::infinity();
  for (const auto& transfer : transfers_) {
    soonest = std::min(soonest, std::max(0.0, transfer.remaining_bytes) / transfer.rate_bytes_per_ns);
  }
  auto delay = static_cast<Nanoseconds>(std::ceil(soonest));
  system_.schedule_after(delay, [this, generation = generation_] { on_timer(generation); });
}

void PcieLink::on_timer(std::uint64_t generation) {
  if (generation != generation_) return;  // the rates changed since this was scheduled
  advance_to_now();
  std::vector<std::function<void()>> finished;
  std::erase_if(transfers_, [&](Transfer& transfer) {
    if (transfer.remaining_bytes > kDoneBytes) return false;
    finished.push_back(std::move(transfer.done));
    return true;
  });
  assign_rates();
  schedule_next_completion();
  for (auto& done : finished) done();
}

}  // namespace stagehand::sim
