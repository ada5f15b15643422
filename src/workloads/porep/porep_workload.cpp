#include "workloads/porep/porep_workload.hpp"

#include "device/give_back_pinned.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <thread>
#include <vector>

namespace stagehand {

JobMemoryPlan PoRepWorkload::memory_plan(int) const {
  // The MSM scratch is taken once b and c are freed, and kept to the end; twiddles beyond the
  // shape's are held in every phase.
  const Bytes extra = twiddle_extra_bytes_;
  const Bytes after_b_and_c = shape_.peak_after_b_and_c_bytes() + scratch_bytes_ + extra;
  return JobMemoryPlan{shape_.polynomial_bytes(), std::max(shape_.peak_bytes() + extra, after_b_and_c), after_b_and_c,
                       shape_.peak_after_a_bytes() + scratch_bytes_ + extra, PartitionShape::kBucketResultBytes};
}

// Pins the proving key's points once for all GPUs: every policy streams them from pinned memory.
// The devices are set up at once: one pins, the others wait for it (and pin themselves where it
// failed).
asio::awaitable<void> PoRepWorkload::set_up(Device& device, int device_index) {
  scratch_bytes_ = std::max(scratch_bytes_, PartitionProgram::scratch_bytes(device, shape_));
  twiddle_extra_bytes_ =
      std::max(twiddle_extra_bytes_, PartitionProgram::twiddle_bytes(device, shape_) - shape_.ntt_scratch_bytes());
  co_await pinning_.run([&]() -> asio::awaitable<void> {
    if (!key_holders_.empty()) {
      key_holders_.insert(device_index);
      co_return;
    }
    key_pinned_through_ = &device;
    std::exception_ptr failure;
    try {
      auto pin = [&](Bytes bytes) -> asio::awaitable<HostRange> {
        auto range = co_await device.allocate_pinned_host(std::max<Bytes>(bytes, 1));
        key_.buffers.push_back(range);
        co_return range;
      };
      key_.key.h = co_await pin(shape_.h_points() * PartitionShape::kG1AffineBytes);
      key_.key.l = co_await pin(shape_.l_points() * PartitionShape::kG1AffineBytes);
      key_.key.a = co_await pin(shape_.a_points() * PartitionShape::kG1AffineBytes);
      key_.key.b_g1 = co_await pin(shape_.b_g1_points() * PartitionShape::kG1AffineBytes);
      key_.key.b_g2 = co_await pin(shape_.b_g2_points() * PartitionShape::kG2AffineBytes);
      key_.key.tail = co_await pin(shape_.tail_points() * PartitionShape::kTailBytesPerPoint);
      if (data_.fill_key) co_await data_.fill_key(device, key_.key);
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) {
      // The next device set up tries again.
      co_await free_key(device);
      std::rethrow_exception(failure);
    }
    key_holders_.insert(device_index);
  });
}

asio::awaitable<void> PoRepWorkload::tear_down(Device& device, int device_index) {
  if (key_holders_.erase(device_index) == 0 || !key_holders_.empty()) co_return;
  co_await free_key(device);
}

asio::awaitable<void> PoRepWorkload::free_key(Device& device) {
  auto buffers = std::exchange(key_.buffers, {});
  key_.key = {};
  Device* pinned_through = std::exchange(key_pinned_through_, nullptr);
  for (const auto& range : buffers) co_await give_back_pinned(range, PinnedKind::allocated, pinned_through, &device);
}

asio::awaitable<void> PoRepWorkload::prepare(int, Device& device, std::span<const HostRange> abc) {
  if (data_.input_template.empty()) {
    co_await device.sleep_for(shape_.host_prepare_ns());
    co_return;
  }
  if (data_.input_template.size() < shape_.polynomial_bytes()) {
    throw std::invalid_argument("PoRepWorkload: the input template is smaller than a polynomial");
  }
  const auto bytes = shape_.polynomial_bytes();
  std::vector<HostRange> targets(abc.begin(), abc.end());
  // a, b and c at once: one thread copies well below what the host step models. More threads do
  // not help: on the H200 host six copied no faster than three while the other job's points
  // streamed from pinned memory (host memory bandwidth shared with the DMA, most likely;
  // bench/journal/2026-11-29.md).
  auto copy = [&] {
    std::vector<std::thread> copies;
    for (const auto& target : targets) {
      copies.emplace_back([&, target] { std::memcpy(target.data(), data_.input_template.data(), bytes); });
    }
    for (auto& thread : copies) thread.join();
  };
  const auto began = device.now();
  if (data_.host_work) {
    co_await data_.host_work->run(copy);
  } else {
    copy();
  }
  // The host step takes what the shape models, or longer if copying the data takes longer: the
  // same workload as on the simulator.
  const auto spent = device.now() - began;
  if (spent < shape_.host_prepare_ns()) co_await device.sleep_for(shape_.host_prepare_ns() - spent);
}

asio::awaitable<JobTimes> PoRepWorkload::run_program(int, JobContext& context) {
  auto settings = program_;
  settings.link = context.link;
  PartitionProgram program(context.device, shape_, key_.key, settings, context.compute, context.upload);
  co_return co_await program.run(context.inputs, context.memory, context.results);
}

asio::awaitable<void> PoRepWorkload::finish(int, Device& device) { co_await device.sleep_for(shape_.host_finish_ns()); }

}  // namespace stagehand
