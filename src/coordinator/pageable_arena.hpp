#pragma once
// Ordinary (pageable) host memory for CoordinatorHooks::pageable_memory where the bytes are real
// (functional simulator, CUDA): each request gets a fresh block, kept until the arena goes.

#include "device/types.hpp"

#include <cstddef>
#include <deque>
#include <vector>

namespace stagehand {

class PageableArena {
 public:
  HostRange take(Bytes bytes) {
    auto& block = blocks_.emplace_back(bytes);
    return HostRange{reinterpret_cast<std::uintptr_t>(block.data()), bytes};
  }

 private:
  std::deque<std::vector<std::byte>> blocks_;
};

}  // namespace stagehand
