#include "workloads/porep/partition_program.hpp"

#include "device/kernel_abi.hpp"
#include "device/partition_launches.hpp"

#include <algorithm>
#include <deque>
#include <string_view>

namespace stagehand {

static_assert(PartitionShape::kTailBytesPerPoint == kernel::TailMsmLaunch::kTailItemBytes,
              "the tail's streamed items are the tail_msm kernel's");

PartitionProgram::PartitionProgram(Device& device, const PartitionShape& shape, const ProvingKeyHost& key,
                                   ProgramSettings settings, StreamHandle compute, StreamHandle upload)
    : device_(device), shape_(shape), key_(key), settings_(settings), compute_(compute), upload_(upload) {
  for (auto& event : buffer_free_) event = device_.create_event();
  for (auto& event : buffer_filled_) event = device_.create_event();
  for (auto& event : results_ready_) event = device_.create_event();
  done_ = device_.create_event();
  prefetched_ = device_.create_event();
}

PartitionProgram::~PartitionProgram() {
  // Events may be destroyed with work pending: it still completes (CUDA semantics).
  try {
    for (auto event : buffer_free_) device_.destroy_event(event);
    for (auto event : buffer_filled_) device_.destroy_event(event);
    for (auto event : results_ready_) device_.destroy_event(event);
    device_.destroy_event(done_);
    device_.destroy_event(prefetched_);
  } catch (const DeviceError&) {
    // A lost device has no handles left to destroy.
  }
}

// The H MSM's window sums into the start of buckets[0] (msm_reduce; partition_launchers.hpp).
void PartitionProgram::reduce_buckets(const std::vector<DevicePointer>& buckets) {
  const kernel::PartitionMsmReduceLaunch reduce{.capacity = shape_.h_batch_points(),
                                                .results = {buckets[0], PartitionShape::kBucketResultBytes},
                                                .other_results = {buckets[1], PartitionShape::kBucketResultBytes},
                                                .scratch = msm_scratch_};
  launch(reduce.to_launch());
}

asio::awaitable<void> PartitionProgram::upload(DevicePointer destination, HostRange source) {
  co_await claimed_upload(device_, settings_.link, destination, source, upload_);
}

void PartitionProgram::pcie_bound_phase(bool entering) {
  if (settings_.link.phase)
    device_.host_callback(compute_, [hook = settings_.link.phase, entering] { hook(entering); });
}

void PartitionProgram::launch(const KernelLaunch& launch) { device_.launch(launch, compute_); }

// One buffer serves both MSMs (run()).
Bytes PartitionProgram::scratch_bytes(Device& device, const PartitionShape& shape) {
  return std::max(device.kernel_scratch_bytes(kernel::msm_batch, shape.h_batch_points()),
                  device.kernel_scratch_bytes(kernel::tail_msm, tail_items_per_kernel(shape)));
}

Bytes PartitionProgram::twiddle_bytes(Device& device, const PartitionShape& shape) {
  return std::max(shape.ntt_scratch_bytes(), device.kernel_scratch_bytes(kernel::ntt_twiddles, shape.domain()));
}

std::uint64_t PartitionProgram::tail_items_per_kernel(const PartitionShape& shape) {
  return std::max<std::uint64_t>(1, shape.stream_buffer_bytes() / PartitionShape::kTailBytesPerPoint);
}

asio::awaitable<JobTimes> PartitionProgram::run(JobInputs inputs, JobMemory& memory,
                                                const std::vector<HostRange>& results) {
  JobTimes times;
  auto upload_wait_ns = std::make_shared<Nanoseconds>(0);
  auto twiddles = co_await to_h_coefficients(inputs, memory, upload_wait_ns);
  auto scratch = co_await allocate_msm_scratch(memory);

  // The H MSM, then the batch additions and the tail MSMs, all over points streamed in batches
  // through one double buffer, as one pipeline: the first batch-addition points travel while the
  // last H batches compute. a is freed in stream order after the last kernel that reads it.
  std::vector<DevicePointer> buffers;
  std::vector<DevicePointer> buckets;
  for (int half = 0; half < 2; ++half) {
    buffers.push_back(co_await memory.allocate(shape_.stream_buffer_bytes(), compute_));
    buckets.push_back(co_await memory.allocate(PartitionShape::kBucketResultBytes, compute_));
  }
  auto sets = streamed_sets();
  auto fetched = co_await fetch_ahead(sets, memory, times);
  co_await stream_points(sets, inputs.a, memory, buffers, buckets, results);

  // The results: the last buckets and the batch-addition sums, to the host.
  co_await device_.copy_to_host(results[0], buckets[0], compute_);
  device_.record_event(done_, compute_);
  co_await device_.wait_event(done_);
  // The twiddles stay for the whole partition, as the production prover keeps its tables.
  co_await memory.release(twiddles, compute_);
  for (auto buffer : buffers) co_await memory.release(buffer, compute_);
  for (auto bucket : buckets) co_await memory.release(bucket, compute_);
  for (auto pointer : fetched) co_await memory.release(pointer, compute_);
  if (scratch) co_await memory.release(scratch, compute_);
  times.waited_for_inputs_ns = *upload_wait_ns;
  co_return times;
}

// NTT phase: twiddles, then for each of a, b, c an inverse NTT and a coset NTT, each waiting
// on the device (not the host) for its own upload. The time until the compute stream passed
// the waits is the time kernels waited for uploads. Leaves H's coefficients in a, b and c freed,
// and returns the twiddles, which the program holds to its end.
asio::awaitable<DevicePointer> PartitionProgram::to_h_coefficients(const JobInputs& inputs, JobMemory& memory,
                                                                   std::shared_ptr<Nanoseconds> upload_wait_ns) {
  const auto n = shape_.domain();
  const auto poly = shape_.polynomial_bytes();
  const Bytes twiddle_bytes = PartitionProgram::twiddle_bytes(device_, shape_);
  auto twiddles = co_await memory.allocate(twiddle_bytes, compute_);
  BufferUse twiddle_use{twiddles, twiddle_bytes};
  const auto log_size = static_cast<std::uint64_t>(shape_.domain_log2);
  launch(kernel::NttTwiddlesLaunch{log_size, twiddle_use}.to_launch());
  // (No braced lists around co_await in this file: GCC 12 miscompiles their arrays in coroutines.)
  auto to_coset_evaluations = [&](DevicePointer polynomial, EventHandle uploaded) {
    if (uploaded) {
      // The callbacks hold the device, never the program: a program that failed early is gone
      // when the stream reaches them.
      auto before = std::make_shared<Nanoseconds>(0);
      Device* device = &device_;
      device_.host_callback(compute_, [device, before] { *before = device->now(); });
      device_.stream_wait_event(compute_, uploaded);
      device_.host_callback(compute_, [device, before, upload_wait_ns] { *upload_wait_ns += device->now() - *before; });
    }
    const BufferUse values{polynomial, poly};
    launch(kernel::NttLaunch{log_size, kernel::NttKind::inverse, values, twiddle_use}.to_launch());
    launch(kernel::NttLaunch{log_size, kernel::NttKind::coset_forward, values, twiddle_use}.to_launch());
  };
  to_coset_evaluations(inputs.a, inputs.a_uploaded);
  to_coset_evaluations(inputs.b, inputs.b_uploaded);
  to_coset_evaluations(inputs.c, inputs.c_uploaded);
  // H = a*b - c on the coset, into a (the constant 1/Z is left out: one more multiplication in a
  // memory-bound kernel); then back to coefficients.
  launch(KernelLaunch{kernel::h_pointwise, n, {}, {{inputs.b, poly}, {inputs.c, poly}}, {{inputs.a, poly}}});
  co_await memory.release_b_and_c(compute_);
  launch(kernel::NttLaunch{log_size, kernel::NttKind::coset_inverse, {inputs.a, poly}, twiddle_use}.to_launch());
  co_return twiddles;
}

// The MSMs' device scratch, where the device needs one (the simulator's own kernels do not):
// one buffer for both. The H MSM's buckets are consumed by msm_reduce before the first tail
// kernel, which comes after it on the same stream (the tail is the last streamed set), so the
// tail can take the buffer over. Two buffers held 1.83 GiB more at 2^26 (bench/RESULTS.md).
asio::awaitable<DevicePointer> PartitionProgram::allocate_msm_scratch(JobMemory& memory) {
  const Bytes msm_scratch_bytes = device_.kernel_scratch_bytes(kernel::msm_batch, shape_.h_batch_points());
  const Bytes tail_scratch_bytes = device_.kernel_scratch_bytes(kernel::tail_msm, tail_items_per_kernel(shape_));
  const Bytes scratch_bytes = std::max(msm_scratch_bytes, tail_scratch_bytes);
  DevicePointer scratch{};
  if (scratch_bytes) scratch = co_await memory.allocate(scratch_bytes, compute_);
  if (msm_scratch_bytes) msm_scratch_ = BufferUse{scratch, msm_scratch_bytes};
  if (tail_scratch_bytes) tail_scratch_ = BufferUse{scratch, tail_scratch_bytes};
  co_return scratch;
}

// A set whose kernels are faster than its points cross PCIe would leave the GPU waiting at the
// end; where memory is free right now it travels during the compute-bound H MSM instead: the
// most PCIe-bound sets that fit, two at most. On a 16 GiB card the second takes the room of
// the next job's third input, which then goes up once that job holds the lock, behind its first
// two inputs' NTTs (bench/RESULTS.md). Marks the sets resident, names them in times.note and
// returns their memory, which the program holds to its end.
asio::awaitable<std::vector<DevicePointer>> PartitionProgram::fetch_ahead(std::vector<StreamedSet>& sets,
                                                                          JobMemory& memory, JobTimes& times) {
  std::vector<DevicePointer> fetched;
  std::string fetched_names;  // joined with '+' ("L+A")
  for (auto index : prefetch_order(sets)) {
    if (fetched.size() >= static_cast<std::size_t>(settings_.fetch_ahead_sets)) break;
    auto& set = sets[index];
    auto pointer = co_await memory.try_allocate_spare(set.items * set.item_bytes, compute_);
    if (!pointer) continue;
    set.resident = *pointer;
    fetched.push_back(*pointer);
    fetched_names += (fetched_names.empty() ? "" : "+") + std::string(set.name);
  }
  if (!fetched_names.empty()) times.note = fetched_names + " fetched ahead";
  co_return fetched;
}

// Each set's sum goes to its own slot of buckets[0], past the H MSM's window sums (at 0).
std::vector<PartitionProgram::StreamedSet> PartitionProgram::streamed_sets() const {
  constexpr Bytes kSums = 64 * kKiB;
  constexpr Bytes kSlot = 1 * kKiB;
  return {
      {"H", kernel::msm_batch, key_.h, shape_.h_points(), PartitionShape::kG1AffineBytes, true, 0},
      {"L", kernel::batch_addition_g1, key_.l, shape_.l_points(), PartitionShape::kG1AffineBytes, false, kSums},
      {"A", kernel::batch_addition_g1, key_.a, shape_.a_points(), PartitionShape::kG1AffineBytes, false, kSums + kSlot},
      {"B_G1", kernel::batch_addition_g1, key_.b_g1, shape_.b_g1_points(), PartitionShape::kG1AffineBytes, false,
       kSums + 2 * kSlot},
      {"B_G2", kernel::batch_addition_g2, key_.b_g2, shape_.b_g2_points(), PartitionShape::kG2AffineBytes, false,
       kSums + 3 * kSlot},
      {"tail", kernel::tail_msm, key_.tail, shape_.tail_points(), PartitionShape::kTailBytesPerPoint, false,
       kSums + 4 * kSlot}};
}

// One stream_points call: each set's progress through the double buffer's halves, the resident
// sets' kernels waiting for their turn, and the H MSM's results on their way to the host.
class PartitionProgram::PointStream {
 public:
  PointStream(PartitionProgram& program, const std::vector<StreamedSet>& sets, DevicePointer scalars, JobMemory& memory,
              const std::vector<DevicePointer>& buffers, const std::vector<DevicePointer>& buckets,
              const std::vector<HostRange>& results)
      : program_(program),
        device_(program.device_),
        sets_(sets),
        scalars_(scalars),
        memory_(memory),
        buffers_(buffers),
        buckets_(buckets),
        results_(results),
        next_item_(sets.size(), 0),
        placed_(sets.size(), false),
        queued_(sets.size(), false) {}

  asio::awaitable<void> run();

 private:
  asio::awaitable<void> collect(std::size_t slot);
  bool streaming(std::size_t i) const { return !sets_[i].resident && !placed_[i]; }
  bool any_streaming() const;
  asio::awaitable<void> issue_prefetch();
  asio::awaitable<void> queue_residents();
  void launch_resident_kernel();
  asio::awaitable<std::vector<Segment>> fill_half(std::size_t slot);
  asio::awaitable<bool> compute_half(std::size_t slot, const std::vector<Segment>& segments);
  asio::awaitable<void> return_results(std::size_t slot);

  PartitionProgram& program_;
  Device& device_;
  const std::vector<StreamedSet>& sets_;
  DevicePointer scalars_;
  JobMemory& memory_;
  const std::vector<DevicePointer>& buffers_;
  const std::vector<DevicePointer>& buckets_;
  const std::vector<HostRange>& results_;
  std::vector<bool> results_outstanding_{false, false};
  // Each set's next item to stream, and whether its last segment has been placed.
  std::vector<std::uint64_t> next_item_;
  std::vector<bool> placed_;
  bool pcie_bound_ = false;
  bool prefetch_issued_ = false;
  // The resident sets' kernels, already on the device (or on their way): no buffer rotation.
  // One follows each streamed half after the H MSM, so that the halves whose kernels are faster
  // than their points' upload have more to compute meanwhile; what is left runs after the last
  // half. All at once, they kept the GPU waiting on PCIe at every later half.
  std::deque<Segment> resident_kernels_;
  std::vector<bool> queued_;
  bool waited_for_prefetch_ = false;
  std::size_t batch_ = 0;
};

asio::awaitable<void> PartitionProgram::stream_points(const std::vector<StreamedSet>& sets, DevicePointer scalars,
                                                      JobMemory& memory, const std::vector<DevicePointer>& buffers,
                                                      const std::vector<DevicePointer>& buckets,
                                                      const std::vector<HostRange>& results) {
  PointStream stream(*this, sets, scalars, memory, buffers, buckets, results);
  co_await stream.run();
}

asio::awaitable<void> PartitionProgram::PointStream::run() {
  while (any_streaming()) {
    co_await queue_residents();
    if (!any_streaming()) break;
    const auto slot = batch_ % 2;
    const auto segments = co_await fill_half(slot);
    const bool batch_collects = co_await compute_half(slot, segments);
    if (!batch_collects && !resident_kernels_.empty()) launch_resident_kernel();
    if (batch_collects) co_await return_results(slot);
  }
  co_await queue_residents();
  while (!resident_kernels_.empty()) launch_resident_kernel();
  if (pcie_bound_) program_.pcie_bound_phase(false);
  for (std::size_t slot = 0; slot < 2; ++slot) {
    if (results_outstanding_[slot]) co_await collect(slot);
  }
}

asio::awaitable<void> PartitionProgram::PointStream::collect(std::size_t slot) {
  co_await device_.wait_event(program_.results_ready_[slot]);
  co_await device_.sleep_for(program_.shape_.msm_batch_collect_ns);
  results_outstanding_[slot] = false;
}

bool PartitionProgram::PointStream::any_streaming() const {
  for (std::size_t i = 0; i < sets_.size(); ++i) {
    if (streaming(i)) return true;
  }
  return false;
}

// Fetching resident sets goes on the upload stream after the second batch, so that it fills
// the gaps between the paced batch uploads without delaying the first two.
asio::awaitable<void> PartitionProgram::PointStream::issue_prefetch() {
  if (prefetch_issued_) co_return;
  prefetch_issued_ = true;
  for (const auto& set : sets_) {
    if (set.resident) co_await program_.upload(set.resident, set.host.sub(0, set.items * set.item_bytes));
  }
  device_.record_event(program_.prefetched_, program_.upload_);
}

// Each resident set's kernels join the queue where the streamed sets reach it: in order, once
// every set before it has been placed in a half; mixed, once the H MSM's points have been.
asio::awaitable<void> PartitionProgram::PointStream::queue_residents() {
  const bool mixed = program_.settings_.stream_order == StreamOrder::mixed;
  for (std::size_t i = 0; i < sets_.size(); ++i) {
    if (!sets_[i].resident) {
      if (!placed_[i] && (!mixed || sets_[i].collect)) break;
      continue;
    }
    if (queued_[i]) continue;
    queued_[i] = true;
    co_await issue_prefetch();
    for (const auto& segment : program_.resident_segments(sets_, i)) resident_kernels_.push_back(segment);
  }
}

void PartitionProgram::PointStream::launch_resident_kernel() {
  if (!waited_for_prefetch_) device_.stream_wait_event(program_.compute_, program_.prefetched_);
  waited_for_prefetch_ = true;
  const auto segment = resident_kernels_.front();
  resident_kernels_.pop_front();
  const auto& set = sets_[segment.set];
  program_.launch_segment(set, segment, set.resident, DevicePointer{}, buckets_[0]);
  if (segment.ends_set) program_.finish_set(set, buckets_[0]);
}

// Uploads the next half into buffer `slot` once the kernels that read it last are done.
asio::awaitable<std::vector<PartitionProgram::Segment>> PartitionProgram::PointStream::fill_half(std::size_t slot) {
  if (batch_ >= 2) device_.stream_wait_event(program_.upload_, program_.buffer_free_[slot]);
  std::vector<Segment> segments;
  Bytes filled = 0;
  for (const auto& [i, items] :
       program_.plan_half(sets_, next_item_, placed_, queued_, program_.shape_.stream_buffer_bytes())) {
    const auto& set = sets_[i];
    const auto bytes = items * set.item_bytes;
    co_await program_.upload(buffers_[slot] + filled, set.host.sub(next_item_[i] * set.item_bytes, bytes));
    segments.push_back(Segment{i, next_item_[i], items, filled, bytes, next_item_[i] + items == set.items});
    next_item_[i] += items;
    placed_[i] = next_item_[i] == set.items;
    filled += bytes;
  }
  device_.record_event(program_.buffer_filled_[slot], program_.upload_);
  if (batch_ == 1) co_await issue_prefetch();
  ++batch_;
  co_return segments;
}

// The kernels over half `slot`, once its upload is done; true where the half holds H MSM points.
asio::awaitable<bool> PartitionProgram::PointStream::compute_half(std::size_t slot,
                                                                  const std::vector<Segment>& segments) {
  device_.stream_wait_event(program_.compute_, program_.buffer_filled_[slot]);
  bool batch_collects = false;
  for (const auto& segment : segments) {
    const auto& set = sets_[segment.set];
    if (!set.collect && !pcie_bound_) {
      // Told when the device gets there, not when the host enqueues (the host runs ahead).
      pcie_bound_ = true;
      program_.pcie_bound_phase(true);
    }
    // The H batches alternate bucket buffers (their results travel back per batch); the other
    // sets keep one running sum each in buckets[0].
    program_.launch_segment(set, segment, buffers_[slot], set.collect ? scalars_ : DevicePointer{},
                            set.collect ? buckets_[slot] : buckets_[0]);
    batch_collects = batch_collects || set.collect;
    if (segment.ends_set && !set.collect) program_.finish_set(set, buckets_[0]);
    // After the last kernel of the last collecting set: fold the buckets, and free the scalars.
    bool last_collecting =
        set.collect && segment.ends_set && (segment.set + 1 == sets_.size() || !sets_[segment.set + 1].collect);
    if (last_collecting) {
      program_.reduce_buckets(buckets_);
      co_await memory_.release_a(program_.compute_);
    }
  }
  device_.record_event(program_.buffer_free_[slot], program_.compute_);
  co_return batch_collects;
}

// Double-buffered results: before this half's results are overwritten on the host, the host
// must have folded the ones it got two batches ago.
asio::awaitable<void> PartitionProgram::PointStream::return_results(std::size_t slot) {
  if (results_outstanding_[slot]) co_await collect(slot);
  co_await device_.copy_to_host(results_[slot], buckets_[slot], program_.compute_);
  device_.record_event(program_.results_ready_[slot], program_.compute_);
  results_outstanding_[slot] = true;
  if (program_.settings_.msm_collect == MsmCollect::synchronize) {
    // The hard synchronise: the host waits for every batch before the GPU gets the next.
    co_await device_.synchronize_stream(program_.compute_);
    co_await collect(slot);
  }
}

// The collecting sets (the H MSM) first, in order: their results travel back per half. Then the
// other sets: in order, or (mixed) every one at once, each in proportion to what it has left, so
// that a set whose kernels are faster than its points cross PCIe shares each half with sets whose
// kernels are slower, neither the GPU nor the link waits for the other, and the link keeps room
// for the next job's inputs throughout; what rounding leaves of the half goes in order.
std::vector<std::pair<std::size_t, std::uint64_t>> PartitionProgram::plan_half(
    const std::vector<StreamedSet>& sets, const std::vector<std::uint64_t>& next_item, const std::vector<bool>& placed,
    const std::vector<bool>& queued, Bytes buffer_bytes) const {
  std::vector<std::pair<std::size_t, std::uint64_t>> plan;
  std::vector<std::uint64_t> next = next_item;
  std::vector<bool> done = placed;
  Bytes filled = 0;
  auto streaming = [&](std::size_t i) { return !sets[i].resident && !done[i]; };
  auto left = [&](std::size_t i) { return sets[i].items - next[i]; };
  auto room = [&](std::size_t i) { return (buffer_bytes - filled) / sets[i].item_bytes; };
  auto place = [&](std::size_t i, std::uint64_t items) {
    plan.emplace_back(i, items);
    next[i] += items;
    done[i] = next[i] == sets[i].items;
    filled += items * sets[i].item_bytes;
  };
  for (std::size_t i = 0; i < sets.size(); ++i) {
    if (!streaming(i) || !sets[i].collect) continue;
    const auto items = std::min(room(i), left(i));
    if (items == 0 && left(i) > 0) return plan;
    place(i, items);
    if (streaming(i)) return plan;  // the half is full
  }
  const bool mixed = settings_.stream_order == StreamOrder::mixed;
  if (mixed) {
    double left_bytes = 0;
    for (std::size_t i = 0; i < sets.size(); ++i) {
      if (streaming(i)) left_bytes += static_cast<double>(left(i) * sets[i].item_bytes);
    }
    const double half = static_cast<double>(buffer_bytes - filled);
    for (std::size_t i = 0; i < sets.size(); ++i) {
      if (!streaming(i)) continue;
      const double share = left_bytes > 0 ? half * static_cast<double>(left(i) * sets[i].item_bytes) / left_bytes : 0;
      const auto items = std::min(
          {left(i), room(i), std::max<std::uint64_t>(1, static_cast<std::uint64_t>(share) / sets[i].item_bytes)});
      if (items > 0 || left(i) == 0) place(i, items);
    }
  }
  for (std::size_t i = 0; i < sets.size(); ++i) {
    if (sets[i].resident && !mixed && !queued[i]) break;
    if (!streaming(i)) continue;
    const auto items = std::min(room(i), left(i));
    if (items == 0 && left(i) > 0) break;
    place(i, items);
  }
  return plan;
}

// The kernels of resident set `index`, of the same size as the streamed batches; the segments'
// offsets are in the resident copy.
std::vector<PartitionProgram::Segment> PartitionProgram::resident_segments(const std::vector<StreamedSet>& sets,
                                                                           std::size_t index) const {
  const auto& set = sets[index];
  const std::uint64_t items_per_kernel = std::max<std::uint64_t>(1, shape_.stream_buffer_bytes() / set.item_bytes);
  std::vector<Segment> segments;
  for (std::uint64_t first = 0; first < set.items; first += items_per_kernel) {
    const auto items = std::min(items_per_kernel, set.items - first);
    segments.push_back(
        Segment{index, first, items, first * set.item_bytes, items * set.item_bytes, first + items == set.items});
  }
  return segments;
}

// The launches of partition_launches.hpp: the H MSM and the tail MSM accumulate into their
// scratch (the H MSM from the segment's first scalar); the batch additions add into their sum
// slot; the first segment of a set starts it afresh.
void PartitionProgram::launch_segment(const StreamedSet& set, const Segment& segment, DevicePointer buffer,
                                      DevicePointer scalars, DevicePointer buckets) {
  const bool start = segment.first_item == 0;
  const BufferUse points{buffer + segment.offset, segment.bytes};
  const BufferUse sums{buckets, PartitionShape::kBucketResultBytes};
  if (set.collect) {
    const kernel::PartitionMsmBatchLaunch batch{.points = segment.items,
                                                .first = segment.first_item,
                                                .capacity = shape_.h_batch_points(),
                                                .start = start,
                                                .bases = points,
                                                .scalars = {scalars, shape_.polynomial_bytes()},
                                                .results = sums,
                                                .scratch = msm_scratch_};
    return launch(batch.to_launch());
  }
  if (is_tail(set)) {
    // Into the tail's buckets in its scratch; tail_reduce writes the sum slot (finish_set).
    const kernel::TailMsmLaunch tail{.item_count = segment.items,
                                     .start = start,
                                     .capacity = tail_items_per_kernel(shape_),
                                     .items = points,
                                     .scratch = tail_scratch_};
    return launch(tail.to_launch());
  }
  const kernel::BatchAdditionLaunch addition{.kernel = set.kernel,
                                             .point_count = segment.items,
                                             .start = start,
                                             .offset = set.sum_offset,
                                             .points = points,
                                             .write = sums};
  launch(addition.to_launch());
}

// Most PCIe-bound first: the sets whose kernels took the least time per byte on this device so
// far (its kernel_totals). Until each has run once, the tail alone: its kernels were the fastest
// per byte on the cost table the program was first tuned on (h200.toml, an established
// library's), while on Stagehand's own kernels the batch additions are (bench/RESULTS.md).
std::vector<std::size_t> PartitionProgram::prefetch_order(const std::vector<StreamedSet>& sets) const {
  const auto& totals = device_.counters().kernel_totals;
  std::vector<std::pair<double, std::size_t>> ranked;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const auto& set = sets[i];
    if (set.collect || set.items == 0) continue;
    auto found = totals.find(set.kernel);
    if (found == totals.end() || found->second.work_units == 0) {
      const auto tail = std::find_if(sets.begin(), sets.end(), is_tail);
      if (tail == sets.end()) return {};
      return {static_cast<std::size_t>(tail - sets.begin())};
    }
    const double ns_per_byte = static_cast<double>(found->second.busy_ns) /
                               static_cast<double>(found->second.work_units) / static_cast<double>(set.item_bytes);
    ranked.emplace_back(ns_per_byte, i);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::size_t> order;
  for (const auto& entry : ranked) order.push_back(entry.second);
  return order;
}

bool PartitionProgram::is_tail(const StreamedSet& set) {
  return std::string_view(set.kernel) == std::string_view(kernel::tail_msm);
}

// After a set's last kernel: the tail MSM's one reduction, into its sum slot of `buckets`.
void PartitionProgram::finish_set(const StreamedSet& set, DevicePointer buckets) {
  if (!is_tail(set)) return;
  const kernel::TailReduceLaunch reduce{.offset = set.sum_offset,
                                        .capacity = tail_items_per_kernel(shape_),
                                        .sums = {buckets, PartitionShape::kBucketResultBytes},
                                        .scratch = tail_scratch_};
  launch(reduce.to_launch());
}

}  // namespace stagehand
