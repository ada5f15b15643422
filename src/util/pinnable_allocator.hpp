#pragma once
// The allocator of a proving key's large buffers (its point sets, its constraint matrix: the
// ones registered in place as pinned memory so that streamed sets and matrix chunks upload from
// them; and its coefficient records). From kPinnableMinimumBytes up it maps the pages itself with
// huge pages asked for (huge_pages.hpp); smaller buffers come from std::allocator. New elements
// are left unwritten (a vector's resize writes nothing, even for a type whose members have
// default values, as long as its bytes are all it is): these buffers are written whole right after
// on several threads (a 2^26 key's sets are 36 GiB and its records 7.4 GB; written first on one
// thread, every page was touched twice).

#include "util/huge_pages.hpp"

#include <cstddef>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace stagehand {

// Below this a buffer is not worth its own mapping (nor, registered, a 2 MiB page).
inline constexpr std::size_t kPinnableMinimumBytes = std::size_t{32} << 20;

template <class T>
struct PinnableAllocator {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = PinnableAllocator<U>;
  };
  PinnableAllocator() = default;
  template <class U>
  PinnableAllocator(const PinnableAllocator<U>&) noexcept {}

  T* allocate(std::size_t count) {
    if (count > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = count * sizeof(T);
    if (bytes < kPinnableMinimumBytes) return std::allocator<T>{}.allocate(count);
    void* pointer = map_huge_pages(bytes);
    if (pointer == nullptr) throw std::bad_alloc();
    return static_cast<T*>(pointer);
  }
  void deallocate(T* pointer, std::size_t count) noexcept {
    const std::size_t bytes = count * sizeof(T);
    if (bytes < kPinnableMinimumBytes) {
      std::allocator<T>{}.deallocate(pointer, count);
    } else {
      unmap_pages(pointer, bytes);
    }
  }
  template <class U>
  void construct(U*) noexcept {
    static_assert(std::is_trivially_copyable_v<U> && std::is_trivially_destructible_v<U>,
                  "an element left unwritten must be one whose bytes are all it is");
  }
  template <class U, class... Args>
  void construct(U* pointer, Args&&... args) {
    ::new (static_cast<void*>(pointer)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const PinnableAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace stagehand
