#pragma once
// RaceChecker: what real hardware would silently get wrong, recorded beside the simulated device
// (as in TigerBeetle's simulator). Every operation that writes a buffer marks it with its stream
// and place; an operation that reads it on another stream whose vector clock does not include
// that write (no event, no synchronise between them) is an unsynchronised read. The report adds
// every handle and allocation never given back.

#include "device/types.hpp"
#include "sim/memory_pool.hpp"
#include "sim/sim_system.hpp"
#include "sim/stream_engines.hpp"

#include <string>
#include <vector>

namespace stagehand::sim {

class HostPinning;

// What the checker found. Empty lists: clean.
struct CheckerReport {
  std::vector<std::string> leaks;
  std::vector<std::string> unsynchronized_reads;
  bool clean() const { return leaks.empty() && unsynchronized_reads.empty(); }
  std::string describe() const;
};

class RaceChecker {
 public:
  RaceChecker(SimSystem& system, MemoryPool& pool, int ordinal) : system_(system), pool_(pool), ordinal_(ordinal) {}

  // `reader`, enqueued on `stream`, reads the buffer at `pointer`.
  void check_read(const Stream& stream, DevicePointer pointer, const std::string& reader);
  // `writer`, operation `sequence` of `stream`, writes the buffer at `pointer`.
  void note_write(const Stream& stream, std::uint64_t sequence, DevicePointer pointer, std::string writer);

  // Unsynchronised reads so far and, unless the device was lost (its context took every handle
  // with it), every allocation, stream, event and pinned range still held.
  CheckerReport report(bool lost, const StreamEngines& engines, const HostPinning& pinning) const;

 private:
  SimSystem& system_;
  MemoryPool& pool_;
  int ordinal_;
  std::vector<std::string> unsynchronized_reads_;
};

}  // namespace stagehand::sim
