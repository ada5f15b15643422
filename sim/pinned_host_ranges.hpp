#pragma once
// The host's pinned memory, one registry for every simulated GPU of a machine: CudaDevice pins
// portable (cudaHostRegisterPortable, cudaHostAllocPortable), so a range pinned through one GPU
// copies at the pinned rate on every GPU and can be given back through any of them. Each range
// remembers the GPU it was pinned through, whose leak report names it.

#include "device/types.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stagehand::sim {

class PinnedHostRanges {
 public:
  struct Entry {
    Bytes bytes = 0;
    bool allocated = false;  // by allocate_pinned_host (else registered in place)
    int ordinal = 0;         // the GPU it was pinned through
  };

  // Whether [address, address + bytes) overlaps a pinned range.
  bool overlaps(std::uintptr_t address, Bytes bytes) const;
  // The whole range lies in one pinned range.
  bool contains(std::uintptr_t address, Bytes bytes) const;
  void add(std::uintptr_t address, Entry entry) { ranges_.emplace(address, entry); }
  // The range that starts at `address`, removed; nothing if there is none.
  std::optional<Entry> take(std::uintptr_t address, bool allocated);
  // "GPU 1: pinned host range of 2.00 GiB at 0x... never unregistered", for each range pinned
  // through GPU `ordinal`.
  void report_leaks(int ordinal, std::vector<std::string>& leaks) const;

 private:
  std::map<std::uintptr_t, Entry> ranges_;  // by start
};

}  // namespace stagehand::sim
