#pragma once
// Pinned host memory is the host's, for every GPU (CudaDevice pins portable): what one device
// pinned for all of them can be given back through another where that one was lost.

#include "device/device.hpp"

namespace stagehand {

enum class PinnedKind { registered, allocated };

// Unregisters (registered) or frees (allocated) `range` through `first`, or through `second`
// where that fails; says nothing when both fail (both lost: nothing is left to give back).
asio::awaitable<void> give_back_pinned(HostRange range, PinnedKind kind, Device* first, Device* second);

}  // namespace stagehand
