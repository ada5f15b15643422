#include "device/give_back_pinned.hpp"

namespace stagehand {

asio::awaitable<void> give_back_pinned(HostRange range, PinnedKind kind, Device* first, Device* second) {
  for (Device* through : {first, second}) {
    if (through == nullptr) continue;
    try {
      if (kind == PinnedKind::registered) {
        co_await through->unregister_host(range);
      } else {
        co_await through->free_pinned_host(range);
      }
      co_return;
    } catch (...) {
      // A lost device: the other may still reach the host's pinning.
    }
  }
}

}  // namespace stagehand
