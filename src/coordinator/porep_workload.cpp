#include "coordinator/porep_workload.hpp"

#include <algorithm>

namespace stagehand {

JobMemoryPlan PoRepWorkload::memory_plan(int) const {
  return JobMemoryPlan{shape_.polynomial_bytes(), shape_.peak_bytes(), shape_.peak_after_b_and_c_bytes(),
                       shape_.peak_after_a_bytes()};
}

// Pins the proving key's points once per GPU: every policy streams them from pinned memory.
asio::awaitable<void> PoRepWorkload::set_up(Device& device, int device_index) {
  auto& pinned = keys_[device_index];
  auto pin = [&](Bytes bytes) -> asio::awaitable<HostRange> {
    auto range = co_await device.allocate_pinned_host(std::max<Bytes>(bytes, 1));
    pinned.buffers.push_back(range);
    co_return range;
  };
  pinned.key.h = co_await pin(shape_.h_points() * PartitionShape::kG1AffineBytes);
  pinned.key.l = co_await pin(shape_.l_points() * PartitionShape::kG1AffineBytes);
  pinned.key.a = co_await pin(shape_.a_points() * PartitionShape::kG1AffineBytes);
  pinned.key.b_g1 = co_await pin(shape_.b_g1_points() * PartitionShape::kG1AffineBytes);
  pinned.key.b_g2 = co_await pin(shape_.b_g2_points() * PartitionShape::kG2AffineBytes);
  pinned.key.tail = co_await pin(shape_.tail_points() * PartitionShape::kTailBytesPerPoint);
}

asio::awaitable<void> PoRepWorkload::tear_down(Device& device, int device_index) {
  auto found = keys_.find(device_index);
  if (found == keys_.end()) co_return;
  auto buffers = std::move(found->second.buffers);
  keys_.erase(found);
  for (auto& range : buffers) {
    try {
      co_await device.free_pinned_host(range);
    } catch (...) {
      // A lost device: the rest is freed all the same.
    }
  }
}

asio::awaitable<void> PoRepWorkload::prepare(int, Device& device, std::span<const HostRange>) {
  co_await device.sleep_for(shape_.host_prepare_ns());
}

asio::awaitable<ProgramTimes> PoRepWorkload::run_program(int, JobContext& context) {
  auto settings = program_;
  settings.on_pcie_bound_phase = context.on_pcie_bound_phase;
  PartitionProgram program(context.device, shape_, keys_.at(context.device_index).key, settings, context.compute,
                           context.upload);
  co_return co_await program.run(context.inputs, context.memory, context.results);
}

asio::awaitable<void> PoRepWorkload::finish(int, Device& device) { co_await device.sleep_for(shape_.host_finish_ns()); }

}  // namespace stagehand
