// The assignments' GPU program (AssignmentWorkload::run_program): the H step, with two
// polynomials at a time where its inputs come late, and the five MSMs over resident or streamed
// sets. The workload's set-up, host steps and assembly are in assignment_workload.cpp.

#include "workloads/assignment/assignment_workload.hpp"

#include "device/groth16_launches.hpp"
#include "device/kernel_abi.hpp"
#include "util/assert.hpp"

#include <memory>
#include <utility>
#include <vector>

namespace stagehand::groth16 {

using kernel::kFrBytes;

void AssignmentWorkload::launch_msm(JobContext& context, std::size_t set, DevicePointer points, DevicePointer scalars,
                                    DevicePointer results, DevicePointer scratch, std::uint64_t light_units) const {
  const auto& shape = shape_.sets[set];
  kernel::MsmLaunch launch{.kernel = set_msm_kernel(set, SetPlacement::resident),
                           .points = shape.points,
                           .threads = thread_count_,
                           .bases = {points, shape.bytes()},
                           .scalars = {scalars, shape.points * kFrBytes},
                           .result = {results + shape.first_sum_offset, shape.sum_bytes},
                           .light_units = light_units};
  if (scratch) launch.scratch = BufferUse{scratch, msm_scratch_bytes_};
  context.device.launch(launch.to_launch(), context.compute);
}

asio::awaitable<void> AssignmentWorkload::run_set_msm(JobContext& context, KeyStream& stream, const JobState& job_state,
                                                      std::size_t set, DevicePointer resident, DevicePointer scalars,
                                                      DevicePointer results, DevicePointer scratch) const {
  const auto& shape = shape_.sets[set];
  if (shape.points == 0) co_return;  // the sum stays the identity the results were cleared to
  if (kept_on_device(shape.placement)) {
    launch_msm(context, set, resident, scalars, results, scratch, light_scalars(job_state, set, 0, shape.points));
    co_return;
  }
  // Each batch adds into the set's MSM state in the scratch (the first starts it afresh), and the
  // reduction writes the sum.
  const KeyStream::LaunchBatch launch_batch = [&](DevicePointer buffer, const StreamedBatch& batch) {
    kernel::MsmBatchLaunch launch{.kernel = set_msm_kernel(set, SetPlacement::streamed),
                                  .points = batch.count,
                                  .threads = thread_count_,
                                  .capacity = shape.points_per_batch,
                                  .add = batch.first != 0,
                                  .bases = {buffer, batch.count * shape.point_bytes},
                                  .scalars = {scalars + batch.first * kFrBytes, batch.count * kFrBytes},
                                  .light_units = light_scalars(job_state, set, batch.first, batch.count)};
    if (scratch) launch.scratch = BufferUse{scratch, msm_scratch_bytes_};
    context.device.launch(launch.to_launch(), context.compute);
  };
  co_await stream.run_set(context, set, launch_batch);
  kernel::MsmReduceLaunch reduce{.kernel = set_msm_reduce_kernel(set),
                                 .capacity = shape.points_per_batch,
                                 .result = {results + shape.first_sum_offset, shape.sum_bytes}};
  // A light reduction where every scalar of the set is a bit: its buckets are nearly all empty.
  reduce.light_units = light_scalars(job_state, set, 0, shape.points) == shape.points ? 1 : 0;
  if (scratch) reduce.scratch = BufferUse{scratch, msm_scratch_bytes_};
  context.device.launch(reduce.to_launch(), context.compute);
}

// The events a program made for its late inputs, destroyed when it ends (or fails).
class ProgramEvents {
 public:
  explicit ProgramEvents(Device& device) : device_(device) {}
  ~ProgramEvents() {
    for (const auto event : events_) {
      try {
        device_.destroy_event(event);
      } catch (const DeviceError&) {
        // A lost device: nothing left to destroy.
      }
    }
  }
  ProgramEvents(const ProgramEvents&) = delete;
  ProgramEvents& operator=(const ProgramEvents&) = delete;
  EventHandle make() { return events_.emplace_back(device_.create_event()); }

 private:
  Device& device_;
  std::vector<EventHandle> events_;
};

asio::awaitable<DevicePointer> AssignmentWorkload::upload_late(JobContext& context, HostRange source,
                                                               ProgramEvents& events, EventHandle& arrived) const {
  STAGEHAND_ASSERT(late_inputs_ && source.address != 0 && source.bytes > 0, "a late input of {} bytes", source.bytes);
  auto& device = context.device;
  const auto destination = co_await context.memory.allocate(source.bytes, context.compute);
  // The memory may have been another buffer's until the compute stream's free: the upload waits
  // for the compute stream to get there.
  const auto allocated = events.make();
  device.record_event(allocated, context.compute);
  device.stream_wait_event(context.upload, allocated);
  co_await claimed_upload(device, context.link, destination, source, context.upload);
  arrived = events.make();
  device.record_event(arrived, context.upload);
  co_return destination;
}

asio::awaitable<void> AssignmentWorkload::run_h_step(JobContext& context, DevicePointer domain,
                                                     ProgramEvents& events) const {
  auto& device = context.device;
  const auto stream = context.compute;
  const auto& inputs = context.inputs;
  const std::uint64_t m = key_.domain_size();
  const Bytes polynomial = kFrBytes * m;
  const BufferUse domain_use{domain, domain_bytes_};
  const auto launch = [&](const char* name, std::vector<BufferUse> writes) {
    device.launch(KernelLaunch{name, m, {domain_log2_}, {domain_use}, std::move(writes)}, stream);
  };
  if (inputs.c) {
    launch(kernel::h_polynomial_classic,
           {BufferUse{inputs.a, polynomial}, BufferUse{inputs.b, polynomial}, BufferUse{inputs.c, polynomial}});
    co_await context.memory.release_b_and_c(stream);
    co_return;
  }
  // Two polynomials at a time: c goes up into b's room once a·b is formed.
  STAGEHAND_ASSERT(inputs.c_host.bytes == polynomial, "c staged in {} bytes, {} expected", inputs.c_host.bytes,
                   polynomial);
  launch(kernel::h_classic_product, {BufferUse{inputs.a, polynomial}, BufferUse{inputs.b, polynomial}});
  co_await context.memory.release_b_and_c(stream);
  EventHandle arrived;
  const auto c = co_await upload_late(context, inputs.c_host, events, arrived);
  device.stream_wait_event(stream, arrived);
  launch(kernel::h_classic_finish, {BufferUse{inputs.a, polynomial}, BufferUse{c, polynomial}});
  co_await context.memory.release(c, stream);
}

asio::awaitable<JobTimes> AssignmentWorkload::run_program(int job, JobContext& context) {
  auto& job_state = state(job);
  auto& device = context.device;
  auto& memory = context.memory;
  const auto stream = context.compute;
  const auto* held = key_state_->entry(device);
  STAGEHAND_ASSERT(held != nullptr && held->complete, "job {}: its device was not set up", job);
  STAGEHAND_ASSERT(late_inputs_ || (context.inputs.c && context.inputs.extra), "job {}: inputs missing", job);
  const AssignmentKeyState::Sets sets = held->sets;
  KeyStream key_stream(device, streamed_);
  ProgramEvents events(device);
  const auto domain = co_await memory.allocate(domain_bytes_, stream);
  const auto results = co_await memory.allocate(kResultBytes, stream);
  const auto scratch = msm_scratch_bytes_ ? co_await memory.allocate(msm_scratch_bytes_, stream) : DevicePointer{};
  // The streamed sets' first batches travel while the H step computes.
  co_await key_stream.start(context, shape_.stream_buffer_bytes);
  device.memset_async(results, 0, kResultBytes, stream);
  // The H step waits on the device for a, b and c (uploaded by the policy, maybe still
  // travelling). Shared with the callback: if the program fails before the stream gets there,
  // the frame is gone.
  const auto waited = std::make_shared<Nanoseconds>(0);
  const auto before_inputs = device.now();
  for (const auto event : {context.inputs.a_uploaded, context.inputs.b_uploaded, context.inputs.c_uploaded}) {
    if (event) device.stream_wait_event(stream, event);
  }
  device.host_callback(stream, [&device, waited, before_inputs] { *waited = device.now() - before_inputs; });
  device.launch(
      KernelLaunch{
          kernel::ntt_domain_init, key_.domain_size(), domain_arguments_, {}, {BufferUse{domain, domain_bytes_}}},
      stream);
  co_await run_h_step(context, domain, events);
  // The scalars: the policy's extra input, or (late) uploaded now into the domain's room.
  const bool late_scalars = !context.inputs.extra;
  auto scalars = context.inputs.extra;
  auto scalars_arrived = context.inputs.extra_uploaded;
  if (late_scalars) {
    co_await memory.release(domain, stream);
    scalars = co_await upload_late(context, context.inputs.extra_host, events, scalars_arrived);
  }
  for (const auto set : kAssignmentMsmOrder) {
    // The first MSM over the scalars (L's) waits on the device for their upload; H's did not.
    if (set == kSetL && scalars_arrived) device.stream_wait_event(stream, scalars_arrived);
    co_await run_set_msm(context, key_stream, job_state, set, sets[set], set_scalars(set, scalars, context.inputs.a),
                         results, scratch);
    if (set == kSetH) co_await memory.release_a(stream);
  }
  const auto landing = context.results.at(0).sub(0, kResultBytes);
  co_await device.copy_to_host(landing, results, stream);
  co_await device.synchronize_stream(stream);
  job_state.sums.assign(reinterpret_cast<const std::uint8_t*>(landing.data()),
                        reinterpret_cast<const std::uint8_t*>(landing.data()) + kResultBytes);
  for (const auto pointer : {results, scratch}) {
    if (pointer) co_await memory.release(pointer, stream);
  }
  // Late, the domain went before the scalars came, and the scalars are the program's to free.
  co_await memory.release(late_scalars ? scalars : domain, stream);
  co_await key_stream.release(context);
  JobTimes times;
  times.waited_for_inputs_ns = *waited;
  if (!streamed_.empty() || late_inputs_) times.note = describe_assignment_layout({placement_, late_inputs_});
  co_return times;
}

}  // namespace stagehand::groth16
