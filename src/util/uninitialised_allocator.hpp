#pragma once
// An allocator whose containers leave new elements uninitialised (a vector's resize does not zero
// them), for large buffers that are written whole right after: zeroing first would touch every
// page twice, and on a virtual machine each first touch is a costly page fault.

#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace stagehand {

template <class T>
struct UninitialisedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitialisedAllocator<U>;
  };
  UninitialisedAllocator() = default;
  template <class U>
  UninitialisedAllocator(const UninitialisedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* pointer) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(pointer)) U;
  }
  template <class U, class... Args>
  void construct(U* pointer, Args&&... args) {
    ::new (static_cast<void*>(pointer)) U(std::forward<Args>(args)...);
  }
};

}  // namespace stagehand
