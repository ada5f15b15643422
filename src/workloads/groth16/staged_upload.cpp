#include "workloads/groth16/staged_upload.hpp"

#include "math/parallel.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>

namespace stagehand::groth16 {
namespace {

// A host copy into pinned memory on up to 8 threads (one thread copies well below what the link
// takes; measured on the H200 machine), each of at least kCopyPart bytes.
constexpr Bytes kCopyPart = Bytes{2} << 20;

void copy_on_threads(std::byte* to, const std::byte* from, Bytes bytes) {
  math::detail::run_ranges(bytes, 8, kCopyPart, [=](std::size_t begin, std::size_t end) {
    std::memcpy(to + begin, from + begin, end - begin);
  });
}

}  // namespace

asio::awaitable<void> upload_through_pinned(Device& device, HostWork& host_work,
                                            const std::vector<PageableUpload>& uploads, Bytes chunk_bytes) {
  Bytes total = 0;
  for (const auto& upload : uploads) total += upload.source.bytes;
  if (total == 0) co_return;
  const Bytes size = std::min(chunk_bytes, total);
  std::array<HostRange, 2> buffers{};
  std::array<EventHandle, 2> crossed{};  // the buffer's last chunk is on the device
  const StreamHandle stream = device.create_stream();
  std::exception_ptr failure;
  try {
    for (std::size_t slot = 0; slot < 2; ++slot) {
      crossed[slot] = device.create_event();
      buffers[slot] = co_await device.allocate_pinned_host(size);
    }
    std::size_t slot = 0;
    for (const auto& upload : uploads) {
      for (Bytes offset = 0; offset < upload.source.bytes; offset += size) {
        const Bytes bytes = std::min(size, upload.source.bytes - offset);
        co_await device.wait_event(crossed[slot]);
        std::byte* const to = buffers[slot].data();
        const std::byte* const from = upload.source.data() + offset;
        co_await host_work.run([=] { copy_on_threads(to, from, bytes); });
        co_await device.copy_to_device(upload.target + offset, buffers[slot].sub(0, bytes), stream);
        device.record_event(crossed[slot], stream);
        slot ^= 1;
      }
    }
    co_await device.synchronize_stream(stream);
  } catch (...) {
    failure = std::current_exception();
  }
  // Nothing may still read a buffer when it is freed; a lost device has nothing in flight.
  if (failure) {
    try {
      co_await device.synchronize_stream(stream);
    } catch (const DeviceError&) {
    }
  }
  for (std::size_t slot = 0; slot < 2; ++slot) {
    try {
      if (buffers[slot].bytes) co_await device.free_pinned_host(buffers[slot]);
      if (crossed[slot]) device.destroy_event(crossed[slot]);
    } catch (const DeviceError&) {
    }
  }
  try {
    device.destroy_stream(stream);
  } catch (const DeviceError&) {
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace stagehand::groth16
