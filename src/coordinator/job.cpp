#include "coordinator/job.hpp"

namespace stagehand {

asio::awaitable<void> claimed_upload(Device& device, LinkClaimHooks link, DevicePointer destination, HostRange source,
                                     StreamHandle stream) {
  EventHandle started;
  if (link.upload_enqueued && link.upload_done) {
    started = device.create_event();
    device.record_event(started, stream);
    link.upload_enqueued(started);
  }
  co_await device.copy_to_device(destination, source, stream);
  // The hook, not the program, travels with the callback: a failed program may be gone by then.
  if (started) device.host_callback(stream, [hook = link.upload_done, started] { hook(started); });
}

}  // namespace stagehand
