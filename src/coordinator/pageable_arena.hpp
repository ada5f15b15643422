#pragma once
// Ordinary (pageable) host memory for CoordinatorHooks::pageable_memory where the bytes are real
// (functional simulator, CUDA), in one of two ways:
//   growing  each request gets a fresh block, kept until the arena goes (a short run);
//   ring     a fixed number of blocks of one size, allocated and touched up front and handed
//            out in turn, so that no job pays first-touch page faults a long-running prover
//            would not (benchmarks). The ring must have more blocks than jobs can hold at once.

#include "device/types.hpp"

#include <cstddef>
#include <deque>
#include <stdexcept>
#include <vector>

namespace stagehand {

class PageableArena {
 public:
  PageableArena() = default;
  static PageableArena ring(std::size_t blocks, Bytes bytes) {
    PageableArena arena;
    arena.ring_bytes_ = bytes;
    // Zero-filled as they are made: every page is touched before the run.
    for (std::size_t i = 0; i < blocks; ++i) arena.blocks_.emplace_back(bytes);
    return arena;
  }

  HostRange take(Bytes bytes) {
    if (!ring_bytes_) return range(blocks_.emplace_back(bytes));
    if (bytes != ring_bytes_ || blocks_.empty())
      throw std::logic_error("PageableArena: a ring hands out blocks of its one size");
    return range(blocks_[next_++ % blocks_.size()]);
  }

 private:
  static HostRange range(const std::vector<std::byte>& block) {
    return HostRange{reinterpret_cast<std::uintptr_t>(block.data()), block.size()};
  }
  Bytes ring_bytes_ = 0;  // 0: growing
  std::size_t next_ = 0;
  std::deque<std::vector<std::byte>> blocks_;
};

}  // namespace stagehand
