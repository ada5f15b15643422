#pragma once
// The PCIe link of one simulated GPU, as a fluid model: every transfer in flight gets a rate,
// and the rates are recomputed whenever a transfer starts or ends. Within a direction the
// direction's pinned rate is shared fairly (a pageable transfer is further capped at the
// pageable rate); when both directions run, their sum is capped at the bidirectional rate.

#include "device/types.hpp"

#include <functional>
#include <vector>

namespace stagehand::sim {

class SimSystem;

enum class Direction : std::uint8_t { host_to_device, device_to_host };

struct LinkRates {
  double host_to_device_bytes_per_ns = 0;
  double device_to_host_bytes_per_ns = 0;
  double bidirectional_bytes_per_ns = 0;
  double pageable_bytes_per_ns = 0;
};

class PcieLink {
 public:
  PcieLink(SimSystem& system, LinkRates rates) : system_(system), rates_(rates) {}

  // Starts a transfer; `done` runs when its last byte has arrived. `rate_scale` below 1 slows
  // this transfer alone (duration jitter).
  void start(Direction direction, Bytes bytes, bool pageable, double rate_scale, std::function<void()> done);
  // Every rate is divided by `factor` from now on (a degraded link).
  void slow_down(double factor);
  // Drops every transfer without completing it (the device was lost).
  void abandon();
  std::size_t active_transfers() const { return transfers_.size(); }

 private:
  struct Transfer {
    Direction direction;
    bool pageable;
    double rate_scale;
    double remaining_bytes;
    double rate_bytes_per_ns;
    std::function<void()> done;
  };
  void advance_to_now();
  void assign_rates();
  void schedule_next_completion();
  void on_timer(std::uint64_t generation);

  SimSystem& system_;
  LinkRates rates_;
  double slowdown_ = 1.0;
  std::vector<Transfer> transfers_;
  Nanoseconds last_update_ns_ = 0;
  std::uint64_t generation_ = 0;
};

}  // namespace stagehand::sim
