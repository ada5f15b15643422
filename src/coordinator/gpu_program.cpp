#include "coordinator/gpu_program.hpp"

#include <algorithm>

namespace stagehand {

PartitionProgram::PartitionProgram(Device& device, const PartitionShape& shape, const ProvingKeyHost& key,
                                   ProgramSettings settings, StreamHandle compute, StreamHandle upload)
    : device_(device), shape_(shape), key_(key), settings_(settings), compute_(compute), upload_(upload) {
  for (auto& event : buffer_free_) event = device_.create_event();
  for (auto& event : buffer_filled_) event = device_.create_event();
  for (auto& event : results_ready_) event = device_.create_event();
  done_ = device_.create_event();
}

PartitionProgram::~PartitionProgram() {
  // Events may be destroyed with work pending: it still completes (CUDA semantics).
  try {
    for (auto event : buffer_free_) device_.destroy_event(event);
    for (auto event : buffer_filled_) device_.destroy_event(event);
    for (auto event : results_ready_) device_.destroy_event(event);
    device_.destroy_event(done_);
  } catch (const DeviceError&) {
    // A lost device has no handles left to destroy.
  }
}

void PartitionProgram::launch_into_buckets(const char* name, std::uint64_t items, std::vector<BufferUse> reads,
                                           DevicePointer buckets) {
  kernel(name, items, std::move(reads), {{buckets, PartitionShape::kBucketResultBytes}});
}

void PartitionProgram::reduce_buckets(const std::vector<DevicePointer>& buckets) {
  kernel("msm_reduce", 1, {{buckets[0], PartitionShape::kBucketResultBytes}, {buckets[1], PartitionShape::kBucketResultBytes}},
         {{buckets[0], PartitionShape::kBucketResultBytes}});
}

void PartitionProgram::kernel(const char* name, std::uint64_t work_units, std::vector<BufferUse> reads,
                              std::vector<BufferUse> writes) {
  device_.launch(KernelLaunch{name, work_units, {}, std::move(reads), std::move(writes)}, compute_);
}

asio::awaitable<ProgramTimes> PartitionProgram::run(PartitionInputs inputs, ProgramMemory& memory,
                                                    const std::vector<HostRange>& results) {
  ProgramTimes times;
  const auto n = shape_.domain();
  const auto poly = shape_.polynomial_bytes();
  auto started = device_.now();

  // The kernels wait for the uploads on the device, not on the host.
  for (auto event : inputs.uploaded) device_.stream_wait_event(compute_, event);
  auto inputs_ready = std::make_shared<Nanoseconds>(-1);
  device_.host_callback(compute_, [this, inputs_ready] { *inputs_ready = device_.now(); });

  // NTT phase: twiddles, then for each of a, b, c an inverse NTT and a coset NTT.
  auto twiddles = co_await memory.allocate(shape_.ntt_scratch_bytes(), compute_);
  BufferUse twiddle_use{twiddles, shape_.ntt_scratch_bytes()};
  kernel("ntt_twiddles", n / 2, {}, {twiddle_use});
  // (No braced lists around co_await in this file: GCC 12 miscompiles their arrays in coroutines.)
  auto to_coset_evaluations = [&](DevicePointer polynomial) {
    kernel("ntt", n, {{polynomial, poly}, twiddle_use}, {{polynomial, poly}});
    kernel("ntt", n, {{polynomial, poly}, twiddle_use}, {{polynomial, poly}});
  };
  to_coset_evaluations(inputs.a);
  to_coset_evaluations(inputs.b);
  to_coset_evaluations(inputs.c);
  // H = (a*b - c)/Z on the coset, into a; then back to coefficients.
  kernel("h_pointwise", n, {{inputs.a, poly}, {inputs.b, poly}, {inputs.c, poly}}, {{inputs.a, poly}});
  co_await memory.release_b_and_c(compute_);
  kernel("ntt", n, {{inputs.a, poly}, twiddle_use}, {{inputs.a, poly}});
  co_await memory.release(twiddles, compute_);

  // The H MSM, then the batch additions and the tail MSMs, all over points streamed in batches
  // through one double buffer.
  std::vector<DevicePointer> buffers;
  std::vector<DevicePointer> buckets;
  for (int half = 0; half < 2; ++half) {
    buffers.push_back(co_await memory.allocate(shape_.stream_buffer_bytes(), compute_));
    buckets.push_back(co_await memory.allocate(PartitionShape::kBucketResultBytes, compute_));
  }
  co_await stream_points(h_msm_sets(), true, inputs.a, buffers, buckets, results);
  co_await memory.release_a(compute_);
  co_await stream_points(batch_addition_sets(), false, DevicePointer{}, buffers, buckets, results);

  // The results: the last buckets and the batch-addition sums, to the host.
  co_await device_.copy_to_host(results[0], buckets[0], compute_);
  device_.record_event(done_, compute_);
  co_await device_.wait_event(done_);
  for (auto buffer : buffers) co_await memory.release(buffer, compute_);
  for (auto bucket : buckets) co_await memory.release(bucket, compute_);
  times.waited_for_inputs_ns = *inputs_ready >= 0 ? *inputs_ready - started : 0;
  co_return times;
}

std::vector<PartitionProgram::StreamedSet> PartitionProgram::h_msm_sets() const {
  return {{"msm_batch", key_.h, shape_.h_points(), PartitionShape::kG1AffineBytes}};
}

std::vector<PartitionProgram::StreamedSet> PartitionProgram::batch_addition_sets() const {
  return {{"batch_addition_g1", key_.l, shape_.l_points(), PartitionShape::kG1AffineBytes},
          {"batch_addition_g1", key_.a, shape_.a_points(), PartitionShape::kG1AffineBytes},
          {"batch_addition_g1", key_.b_g1, shape_.b_g1_points(), PartitionShape::kG1AffineBytes},
          {"batch_addition_g2", key_.b_g2, shape_.b_g2_points(), PartitionShape::kG2AffineBytes},
          {"tail_msm", key_.tail, shape_.tail_points(), PartitionShape::kTailBytesPerPoint}};
}

asio::awaitable<void> PartitionProgram::stream_points(const std::vector<StreamedSet>& sets, bool collect,
                                                      DevicePointer scalars, const std::vector<DevicePointer>& buffers,
                                                      const std::vector<DevicePointer>& buckets,
                                                      const std::vector<HostRange>& results) {
  const Bytes buffer_bytes = shape_.stream_buffer_bytes();
  const bool hard_synchronize = collect && settings_.msm_collect == MsmCollect::synchronize;
  std::vector<bool> results_outstanding{false, false};
  std::size_t batch = 0;
  for (const auto& set : sets) {
    const std::uint64_t items_per_batch = std::max<std::uint64_t>(1, buffer_bytes / set.item_bytes);
    for (std::uint64_t first = 0; first < set.items; first += items_per_batch, ++batch) {
      const auto slot = batch % 2;
      const auto items = std::min(items_per_batch, set.items - first);
      const Bytes bytes = items * set.item_bytes;
      // Upload into this half once the kernel that last read it is done (device-side wait).
      if (batch >= 2) device_.stream_wait_event(upload_, buffer_free_[slot]);
      co_await device_.copy_to_device(buffers[slot], set.host.sub(first * set.item_bytes, bytes), upload_);
      device_.record_event(buffer_filled_[slot], upload_);
      device_.stream_wait_event(compute_, buffer_filled_[slot]);
      std::vector<BufferUse> reads(1, BufferUse{buffers[slot], bytes});
      if (scalars) reads.push_back(BufferUse{scalars, shape_.polynomial_bytes()});
      if (collect) {
        // Double-buffered results: before this half's buckets are overwritten, the host must
        // have folded the ones it got two batches ago.
        if (results_outstanding[slot]) {
          co_await device_.wait_event(results_ready_[slot]);
          co_await device_.sleep_for(shape_.msm_batch_collect_ns);
        }
        launch_into_buckets(set.kernel, items, reads, buckets[slot]);
        device_.record_event(buffer_free_[slot], compute_);
        co_await device_.copy_to_host(results[slot], buckets[slot], compute_);
        device_.record_event(results_ready_[slot], compute_);
        results_outstanding[slot] = true;
        if (hard_synchronize) {
          // The historical collect: the host waits for every batch before the GPU gets the next.
          co_await device_.synchronize_stream(compute_);
          co_await device_.sleep_for(shape_.msm_batch_collect_ns);
          results_outstanding[slot] = false;
        }
      } else {
        launch_into_buckets(set.kernel, items, reads, buckets[slot]);
        device_.record_event(buffer_free_[slot], compute_);
      }
    }
  }
  if (collect) {
    reduce_buckets(buckets);
    for (std::size_t slot = 0; slot < 2; ++slot) {
      if (results_outstanding[slot]) {
        co_await device_.wait_event(results_ready_[slot]);
        co_await device_.sleep_for(shape_.msm_batch_collect_ns);
      }
    }
  }
}

}  // namespace stagehand
