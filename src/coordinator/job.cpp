#include "coordinator/job.hpp"

#include "util/assert.hpp"

namespace stagehand {

std::vector<Bytes> staged_input_sizes(const JobMemoryPlan& plan) {
  STAGEHAND_ASSERT(plan.input_count == 1 || plan.input_count == 3, "a job of {} inputs", plan.input_count);
  STAGEHAND_ASSERT(!plan.late_inputs || (plan.input_count == 3 && plan.extra_input_bytes > 0),
                   "late inputs need c and an extra input");
  std::vector<Bytes> sizes(static_cast<std::size_t>(plan.input_count), plan.input_bytes);
  if (plan.extra_input_bytes > 0) sizes.push_back(plan.extra_input_bytes);
  return sizes;
}

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
