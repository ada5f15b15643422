#pragma once
// What a proving key leaves on the devices while it is set up: each device's resident sets
// (their precomputed copies included) and constraint matrix, the registration of the host bytes
// its other sets travel from (pinned once for every GPU), and the host's copy of its constraint
// matrix. One coordinator run of a Groth16Workload sets every device up, proves, and tears
// every device down; given a DeviceKeyState of its holder's, it sets a device up only where the
// state holds nothing for it yet and leaves what it set up there at its end, so that the next run
// of the same key starts proving at once. The engine keeps one per loaded key (engine/engine.hpp);
// a workload given none makes a private one and gives everything back at its end.
//
// The holder keeps the key's host bytes alive until release() has returned (the registration
// refers to them), hands the state to one run at a time, and releases it before a run whose
// layout keeps other sets on the devices (made_for). Between runs its device memory is the
// workload's resident_bytes() (device_bytes()): the next run of the same key leaves it out of its
// budget's capacity as before, a run of another key holds it back from its own.

#include "device/device.hpp"
#include "groth16/constraint_matrix.hpp"
#include "workloads/groth16/key_placement.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace stagehand::groth16 {

class DeviceKeyState {
 public:
  struct OnDevice {
    Device* device = nullptr;
    std::array<DevicePointer, kKeySetCount> sets{};  // the sets kept on the device
    DevicePointer matrix;                            // with the a/b/c step on the device
    Bytes bytes = 0;                                 // what the run that made it reserved for it
    bool complete = false;                           // every upload done (a failed set-up leaves it false)
  };

  DeviceKeyState() = default;
  DeviceKeyState(const DeviceKeyState&) = delete;
  DeviceKeyState& operator=(const DeviceKeyState&) = delete;

  // Whether what it holds (if anything) is what a run with this layout keeps on the devices: the
  // same sets kept, in the same form, and the matrix there or not. A state that holds nothing is
  // made for every layout.
  bool made_for(bool matrix_on_device, const KeyPlacement& placement) const;
  // The devices it holds a complete set-up on (by the runs' device index).
  std::vector<int> device_indices() const;
  // Whether it holds anything to give back: a device's set-up (complete or not) or a registration.
  bool holds_anything() const;
  // Device set-ups made into it since it was made: what a holder that keeps it saves, counted.
  std::uint64_t set_ups() const;
  // The most device memory it holds on any one device (0 when it holds none): what a run of
  // another key must hold back from its budget while this one stays set up.
  Bytes device_bytes() const;

  // Frees what it holds on device `index` (nothing left to free on a lost device: its errors are
  // ignored).
  asio::awaitable<void> release_device(int index);
  // Frees what it holds on every device and gives the pinned registration back (through the
  // device that made it, or where that one is lost through `fallback` or another that held it).
  asio::awaitable<void> release(Device* fallback = nullptr);

 private:
  friend class Groth16Program;
  template <class Key>
  friend class BasicGroth16Workload;
  // The run's view (Groth16Program::set_up and tear_down; Groth16Workload's host matrix).
  OnDevice* entry(int index);  // null when there is none
  OnDevice& fresh_entry(int index, Device& device, bool matrix_on_device, const KeyPlacement& placement, Bytes bytes);
  void completed(int index);
  bool pinned(HostRange range) const;
  void add_pinned(HostRange range, Device& through);
  // Built once, on first use, from the key of either curve the state is for.
  const ConstraintMatrix& host_matrix(const ProvingKey& key);
  const ConstraintMatrix& host_matrix(const bn254::ProvingKey& key);

  bool holds_devices() const;  // an entry for any device, complete or not
  bool holds_layout_locked(bool matrix_on_device, const KeyPlacement& placement) const;
  static asio::awaitable<void> free_entry(const OnDevice& entry);

  mutable std::mutex mutex_;
  // The layout it holds, once it holds something: the matrix there or not, and each set's
  // placement where the set is kept on the devices (streamed for the others: they leave nothing).
  std::optional<bool> matrix_on_device_;
  std::array<SetPlacement, kKeySetCount> kept_{};
  std::map<int, OnDevice> devices_;
  std::vector<HostRange> pinned_;
  Device* pinned_through_ = nullptr;  // the device that registered them (another where it is lost)
  std::once_flag matrix_built_;
  std::optional<ConstraintMatrix> host_matrix_;
  std::uint64_t set_ups_ = 0;
};

}  // namespace stagehand::groth16
