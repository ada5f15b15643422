#include "util/huge_pages.hpp"

#include <sys/mman.h>

namespace stagehand {

void* map_huge_pages(std::size_t bytes) noexcept {
  void* pointer = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pointer == MAP_FAILED) return nullptr;
  ::madvise(pointer, bytes, MADV_HUGEPAGE);  // advice only: without huge pages it still works
  return pointer;
}

void unmap_pages(void* pointer, std::size_t bytes) noexcept { ::munmap(pointer, bytes); }

}  // namespace stagehand
