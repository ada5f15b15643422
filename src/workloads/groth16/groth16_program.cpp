// The Groth16 proof's GPU program (Groth16Program::run_program and its steps): the a/b/c and H
// steps, then the five MSMs over the key's sets wherever KeyPlacement put them.

#include "workloads/groth16/groth16_program.hpp"

#include "device/errors.hpp"
#include "device/groth16_launches.hpp"
#include "device/kernel_abi.hpp"
#include "coordinator/async_wait.hpp"
#include "util/assert.hpp"
#include "workloads/key_streaming.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <memory>
#include <utility>

namespace stagehand::groth16 {
namespace {

constexpr Bytes kFrBytes = sizeof(math::Fr);

// The order the program's MSMs take the key's sets in: H first, so that its scalars (the
// polynomial a) are freed for the four over the witness.
constexpr std::array<std::size_t, kKeySetCount> kMsmOrder{kSetH, kSetA, kSetB1, kSetB2, kSetC};

// Built outside the coroutines: GCC 12 miscompiles braced lists that live across a co_await.
template <class... Pointers>
std::vector<DevicePointer> pointers(Pointers... list) {
  return {list...};
}

// Events a program run creates, destroyed when it ends however it ends (pending work still
// completes: CUDA semantics).
class ProgramEvents {
 public:
  explicit ProgramEvents(Device& device) : device_(device) {}
  ~ProgramEvents() {
    for (auto event : events_) {
      try {
        device_.destroy_event(event);
      } catch (const DeviceError&) {
        // A lost device has no handles left to destroy.
      }
    }
  }
  ProgramEvents(const ProgramEvents&) = delete;
  ProgramEvents& operator=(const ProgramEvents&) = delete;
  EventHandle create() { return events_.emplace_back(device_.create_event()); }

 private:
  Device& device_;
  std::vector<EventHandle> events_;
};

}  // namespace

// A pageable copy beside the program. From pageable memory the copy holds its caller until the
// bytes are on the device, so it runs in a coroutine of its own, on a stream of its own (the
// device's idle side streams), while the program goes on; the program joins it before the first
// kernel that reads the bytes, and on every way out (the destination is freed afterwards). It goes
// in pieces of kPiece: on a card with one host-to-device copy engine a 4 GiB witness in one
// pageable copy held the engine and starved the H MSM's point batches behind it, leaving compute
// idle every proof (the incident card at 2^27, fixture 19; bench/journal/2026-12-05.md has the
// figures); between pieces the batches' copies get their turn.
class Groth16Program::SideCopy {
 public:
  explicit SideCopy(std::vector<StreamHandle>& idle_streams) : idle_streams_(idle_streams) {}
  SideCopy(const SideCopy&) = delete;
  SideCopy& operator=(const SideCopy&) = delete;

  asio::awaitable<void> start(Device& device, DevicePointer destination, HostRange source) {
    device_ = &device;
    if (idle_streams_.empty()) {
      stream_ = device.create_stream();
    } else {
      stream_ = idle_streams_.back();
      idle_streams_.pop_back();
    }
    landed_ = device.create_event();
    state_ = std::make_shared<State>();
    auto executor = co_await asio::this_coro::executor;
    asio::co_spawn(executor, copy(device, state_, destination, source, stream_, landed_), asio::detached);
  }
  // After join(): rethrows the copy's error, else orders `stream` after the copy.
  void order_after(StreamHandle stream) const {
    if (!state_) return;
    if (state_->error) std::rethrow_exception(state_->error);
    device_->stream_wait_event(stream, landed_);
  }
  // Waits for the copy whatever happened, then gives its stream back (the stream is idle: the copy
  // was its only work). The event goes with the SideCopy.
  asio::awaitable<void> join() {
    if (!state_) co_return;
    while (!state_->done) co_await state_->waiters.wait();
    if (stream_) {
      idle_streams_.push_back(std::exchange(stream_, StreamHandle{}));
    }
  }
  ~SideCopy() {
    if (landed_) {
      try {
        device_->destroy_event(landed_);
      } catch (const DeviceError&) {
      }
    }
  }

 private:
  struct State {
    bool done = false;
    std::exception_ptr error;
    AsyncWaitList waiters;
  };
  static asio::awaitable<void> copy(Device& device, std::shared_ptr<State> state, DevicePointer destination,
                                    HostRange source, StreamHandle stream, EventHandle landed) {
    try {
      for (Bytes offset = 0; offset < source.bytes; offset += kPiece) {
        const Bytes bytes = std::min(kPiece, source.bytes - offset);
        co_await device.copy_to_device(destination + offset, source.sub(offset, bytes), stream);
      }
      device.record_event(landed, stream);
    } catch (...) {
      state->error = std::current_exception();
    }
    state->done = true;
    state->waiters.notify_all();
  }
  static constexpr Bytes kPiece = Bytes{256} << 20;
  std::vector<StreamHandle>& idle_streams_;
  Device* device_ = nullptr;
  StreamHandle stream_;
  EventHandle landed_;
  std::shared_ptr<State> state_;
};

// A proof's point sets on the device for its MSMs: the fetched sets' copies, and the stream
// buffers (KeyStream) the matrix's chunks and the streamed sets' batches go through. `batches`
// before `stream`, which holds them by reference.
struct Groth16Program::ProofPoints {
  explicit ProofPoints(Device& device) : events(device), stream(device, batches) {}
  ProgramEvents events;
  std::array<DevicePointer, kKeySetCount> fetched{};
  std::array<EventHandle, kKeySetCount> fetched_uploaded{};
  std::vector<StreamedBatch> batches;  // the matrix's chunks, then every streamed set's, in the MSMs' order
  KeyStream stream;
};

// The a/b/c step over the whole resident matrix (chunk null) or over one chunk of it at `matrix`.
void Groth16Program::launch_abc(JobContext& context, DevicePointer witness, DevicePointer matrix,
                                const MatrixChunk* chunk, const Polynomials& polynomials) const {
  const auto layout = chunk != nullptr ? chunk->layout() : sizes_.matrix;
  const std::uint64_t first_row = chunk != nullptr ? chunk->first_row : 0;
  const Bytes rows = kFrBytes * layout.rows;
  kernel::AbcLaunch launch{.rows = layout.rows,
                           .entries_a = layout.entries_a,
                           .entries_b = layout.entries_b,
                           .threads = thread_count_,
                           .witness = {witness, kFrBytes * sizes_.n_vars},
                           .matrix = {matrix, layout.total_bytes()},
                           .a = {polynomials.a + kFrBytes * first_row, rows},
                           .b = {polynomials.b + kFrBytes * first_row, rows},
                           .c = {polynomials.c + kFrBytes * first_row, rows},
                           .curve = sizes_.curve};
  if (chunk != nullptr) launch.chunk = kernel::AbcLaunch::ChunkStart{chunk->first_a, chunk->first_b};
  context.device.launch(launch.to_launch(), context.compute);
}

// Resident, one launch over the matrix; streamed, one a chunk as each arrives in its stream
// buffer, which is then free for the batch after next.
asio::awaitable<void> Groth16Program::run_abc(JobContext& context, ProofPoints& points, DevicePointer witness,
                                              const Polynomials& polynomials) const {
  if (abc_step_ == AbcStep::device) {
    launch_abc(context, witness, keys_.at(context.device_index).matrix, nullptr, polynomials);
    co_return;
  }
  const KeyStream::LaunchBatch launch_chunk = [&](DevicePointer buffer, const StreamedBatch& batch) {
    launch_abc(context, witness, buffer, &matrix_chunks_.at(batch.first), polynomials);
  };
  co_await points.stream.run_set(context, kMatrixChunks, launch_chunk);
}

// The H step: each of a, b, c to the coset as soon as it is on the device (the policy's upload
// events, where it still travels), then a = a·b − c.
void Groth16Program::launch_h(JobContext& context, const Polynomials& polynomials, const Scratch& scratch,
                              const std::array<EventHandle, 3>& uploaded) const {
  const Bytes polynomial = kFrBytes * sizes_.domain_size();
  const std::array<DevicePointer, 3> values{polynomials.a, polynomials.b, polynomials.c};
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (uploaded[i]) context.device.stream_wait_event(context.compute, uploaded[i]);
    kernel::HEvaluateLaunch launch{.log_size = sizes_.domain_log2,
                                   .threads = thread_count_,
                                   .values = {values[i], polynomial},
                                   .curve = sizes_.curve};
    if (scratch.h) launch.scratch = BufferUse{scratch.h, h_scratch_bytes_};
    context.device.launch(launch.to_launch(), context.compute);
  }
  const kernel::HCombineLaunch combine{.log_size = sizes_.domain_log2,
                                       .threads = thread_count_,
                                       .a = {polynomials.a, polynomial},
                                       .b = {polynomials.b, polynomial},
                                       .c = {polynomials.c, polynomial},
                                       .curve = sizes_.curve};
  context.device.launch(combine.to_launch(), context.compute);
}

// The MSM of `set`'s points at `bases` on the device with the scalars from `scalars` on, into its
// sum's slot of `results`.
void Groth16Program::launch_msm(JobContext& context, std::size_t set, DevicePointer bases, DevicePointer scalars,
                                DevicePointer results, const Scratch& scratch) const {
  const auto& shape = shape_.sets[set];
  kernel::MsmLaunch launch{.kernel = set_msm_kernel(set, shape.placement),
                           .points = shape.points,
                           .threads = thread_count_,
                           .bases = {bases, shape.points * shape.point_bytes},
                           .scalars = {scalars, shape.points * kFrBytes},
                           .result = {results + shape.first_sum_offset, shape.sum_bytes},
                           .light_units = light_points(set, 0, shape.points),
                           .curve = sizes_.curve};
  if (shape.placement == SetPlacement::precomputed) {  // over every copy, at their width
    launch.window_bits = shape.window_bits;
    launch.bases.bytes = shape.device_bytes();
  }
  if (scratch.msm) launch.scratch = BufferUse{scratch.msm, msm_scratch_bytes_};
  context.device.launch(launch.to_launch(), context.compute);
}

// One batch of a streamed set, points [first, first + count) at `bases`, added into the set's MSM
// (its state in the MSM scratch; `add` false starts it afresh).
void Groth16Program::launch_msm_batch(JobContext& context, std::size_t set, DevicePointer bases, std::uint64_t first,
                                      std::uint64_t count, bool add, DevicePointer scalars,
                                      const Scratch& scratch) const {
  const auto& shape = shape_.sets[set];
  kernel::MsmBatchLaunch launch{.kernel = set_msm_kernel(set, SetPlacement::streamed),
                                .points = count,
                                .threads = thread_count_,
                                .capacity = shape.points_per_batch,
                                .add = add,
                                .bases = {bases, count * shape.point_bytes},
                                .scalars = {scalars + first * kFrBytes, count * kFrBytes},
                                .light_units = light_points(set, first, count),
                                .curve = sizes_.curve};
  if (scratch.msm) launch.scratch = BufferUse{scratch.msm, msm_scratch_bytes_};
  context.device.launch(launch.to_launch(), context.compute);
}

// The streamed set's MSM, every batch added, into its sum's slot of `results`.
void Groth16Program::launch_msm_reduce(JobContext& context, std::size_t set, DevicePointer results,
                                       const Scratch& scratch) const {
  const auto& shape = shape_.sets[set];
  kernel::MsmReduceLaunch launch{.kernel = set_msm_reduce_kernel(set),
                                 .capacity = shape.points_per_batch,
                                 .result = {results + shape.first_sum_offset, shape.sum_bytes},
                                 .curve = sizes_.curve};
  // A light reduction where every scalar of the set is a bit: its buckets are nearly all empty.
  launch.light_units = shape.points > 0 && light_points(set, 0, shape.points) == shape.points ? 1 : 0;
  if (scratch.msm) launch.scratch = BufferUse{scratch.msm, msm_scratch_bytes_};
  context.device.launch(launch.to_launch(), context.compute);
}

// From the program's start, on the upload stream: the first two batches into the stream
// buffers (the matrix's first chunks where the a/b/c step streams it), then the fetched sets
// whole, so that all of it travels while the a/b/c and H steps compute. Later batches are
// enqueued as the a/b/c step and the MSMs free their buffers (KeyStream::run_set).
asio::awaitable<void> Groth16Program::start_point_uploads(JobContext& context, ProofPoints& points) const {
  auto& device = context.device;
  STAGEHAND_ASSERT(points.batches.empty(), "a proof's point uploads start once");
  if (abc_step_ == AbcStep::streamed && !matrix_chunks_.empty()) {  // none for a matrix of no rows
    points.batches = matrix_batches(matrix_chunks_, sizes_.matrix, matrix_host());
  }
  auto sets = streamed_batches(shape_, kMsmOrder, [this](std::size_t set) { return set_host(set); });
  points.batches.insert(points.batches.end(), std::make_move_iterator(sets.begin()),
                        std::make_move_iterator(sets.end()));
  co_await points.stream.start(context, stream_buffer_bytes_);
  for (std::size_t set = 0; set < kKeySetCount; ++set) {
    const auto& shape = shape_.sets[set];
    if (shape.placement != SetPlacement::fetched_ahead || shape.points == 0) continue;
    points.fetched[set] = co_await context.memory.allocate(shape.bytes(), context.compute);
    co_await claimed_upload(device, context.link, points.fetched[set], set_host(set), context.upload);
    points.fetched_uploaded[set] = points.events.create();
    device.record_event(points.fetched_uploaded[set], context.upload);
  }
}

// The MSMs of one set: over the resident copy, the fetched copy (once it is up) or each streamed
// batch in turn (KeyStream: each waits for its buffer to be filled, and frees it for the batch
// after next), every batch adding into the set's MSM state in the scratch (the first starts it
// afresh) and the reduction writing its sum.
asio::awaitable<void> Groth16Program::run_set_msms(JobContext& context, ProofPoints& points, std::size_t set,
                                                   DevicePointer scalars, DevicePointer results,
                                                   const Scratch& scratch) const {
  auto& device = context.device;
  const auto& shape = shape_.sets[set];
  if (shape.points == 0) {
    device.memset_async(results + shape.first_sum_offset, 0, shape.sum_bytes, context.compute);
    co_return;
  }
  switch (shape.placement) {
    case SetPlacement::resident:
    case SetPlacement::precomputed:
      launch_msm(context, set, keys_.at(context.device_index).sets[set], scalars, results, scratch);
      co_return;
    case SetPlacement::fetched_ahead:
      device.stream_wait_event(context.compute, points.fetched_uploaded[set]);
      launch_msm(context, set, points.fetched[set], scalars, results, scratch);
      co_await context.memory.release(points.fetched[set], context.compute);
      points.fetched[set] = DevicePointer{};
      co_return;
    case SetPlacement::streamed: break;
  }
  const KeyStream::LaunchBatch launch_batch = [&](DevicePointer buffer, const StreamedBatch& batch) {
    launch_msm_batch(context, set, buffer, batch.first, batch.count, /*add=*/batch.first != 0, scalars, scratch);
  };
  co_await points.stream.run_set(context, set, launch_batch);
  launch_msm_reduce(context, set, results, scratch);
}

// One run of the program: what run_steps' parts hand each other.
struct Groth16Program::ProgramRun {
  ProgramRun(int job, JobContext& context, SideCopy& witness_copy)
      : job(job), context(context), witness_copy(witness_copy), points(context.device) {}
  int job;
  JobContext& context;
  SideCopy& witness_copy;
  ProofPoints points;
  DevicePointer witness;
  Polynomials polynomials;
  DevicePointer results;
  Scratch scratch;
};

asio::awaitable<JobTimes> Groth16Program::run_program(int job, JobContext& context) {
  auto& job_state = state(job, Stage::prepared, "run_program");
  SideCopy witness_copy(keys_.at(context.device_index).idle_side_streams);
  std::exception_ptr failure;
  JobTimes times;
  try {
    times = co_await run_steps(job, context, witness_copy, job_state.sums);
  } catch (...) {
    failure = std::current_exception();
  }
  co_await witness_copy.join();  // before the policy frees the witness's memory
  if (failure) std::rethrow_exception(failure);
  job_state.stage = Stage::ran;
  co_return times;
}

// With the a/b/c step on the device the policy's one input is the witness, and a, b, c are
// allocated here; on the host they are the policy's three inputs and the witness is uploaded here,
// from its pageable vector, beside H and the H MSM (which do not read it).
asio::awaitable<JobTimes> Groth16Program::run_steps(int job, JobContext& context, SideCopy& witness_copy,
                                                    std::vector<std::byte>& sums) {
  ProgramRun run(job, context, witness_copy);
  co_await allocate_working_memory(run);
  if (!placement_.msm_memory_after_h) co_await take_msm_memory(run);
  std::array<EventHandle, 3> still_uploading{context.inputs.a_uploaded, context.inputs.b_uploaded,
                                             context.inputs.c_uploaded};
  const auto waited = wait_for_first_inputs(run, still_uploading);
  co_await run_h_and_msms(run, still_uploading);
  co_await land_sums(run, sums);
  co_return describe_run(run, *waited);
}

// The witness (a/b/c on the host: where the MSM memory comes with it, only later), a, b and c, the
// results and the H step's scratch.
asio::awaitable<void> Groth16Program::allocate_working_memory(ProgramRun& run) {
  auto& memory = run.context.memory;
  const auto stream = run.context.compute;
  const Bytes polynomial = kFrBytes * sizes_.domain_size();
  if (groth16::abc_on_device(abc_step_)) {
    run.witness = run.context.inputs.a;
    run.polynomials.a = co_await memory.allocate(polynomial, stream);
    run.polynomials.b = co_await memory.allocate(polynomial, stream);
    run.polynomials.c = co_await memory.allocate(polynomial, stream);
  } else {
    if (!placement_.msm_memory_after_h) run.witness = co_await memory.allocate(kFrBytes * sizes_.n_vars, stream);
    run.polynomials = Polynomials{run.context.inputs.a, run.context.inputs.b, run.context.inputs.c};
  }
  run.results = co_await memory.allocate(shape_.result_bytes, stream);
  if (h_scratch_bytes_) run.scratch.h = co_await memory.allocate(h_scratch_bytes_, stream);
}

// The MSMs' memory, their first point batches on their way and (a/b/c on the host) the witness.
asio::awaitable<void> Groth16Program::take_msm_memory(ProgramRun& run) {
  auto& memory = run.context.memory;
  const auto stream = run.context.compute;
  const bool abc_on_device = groth16::abc_on_device(abc_step_);
  const Bytes witness_bytes = kFrBytes * sizes_.n_vars;
  if (msm_scratch_bytes_) run.scratch.msm = co_await memory.allocate(msm_scratch_bytes_, stream);
  if (!abc_on_device && !run.witness) run.witness = co_await memory.allocate(witness_bytes, stream);
  co_await start_point_uploads(run.context, run.points);
  if (!abc_on_device) {
    const HostRange source = witness_host(run.job);
    STAGEHAND_ASSERT(source.bytes >= witness_bytes, "{}: job {}'s witness holds {} bytes, not the key's {}",
                     source_name_, run.job, source.bytes, witness_bytes);
    co_await run.witness_copy.start(run.context.device, run.witness, source);
  }
}

// The first kernel waits on the device for its input (uploaded by the policy, maybe still
// travelling): the witness with a/b/c on the device, else a; the H step waits for b and c only
// where it reaches them (what stays in `still_uploading`). The wait, once the stream gets past it.
// (Shared with the callback: if the program fails before the stream gets there, the frame is gone.)
std::shared_ptr<Nanoseconds> Groth16Program::wait_for_first_inputs(ProgramRun& run,
                                                                   std::array<EventHandle, 3>& still_uploading) {
  auto& device = run.context.device;
  const auto stream = run.context.compute;
  const auto waited = std::make_shared<Nanoseconds>(0);
  const auto before_inputs = device.now();
  const std::size_t first_needs = groth16::abc_on_device(abc_step_) ? still_uploading.size() : 1;
  for (std::size_t input = 0; input < first_needs; ++input) {
    if (const auto event = std::exchange(still_uploading[input], EventHandle{}))
      device.stream_wait_event(stream, event);
  }
  device.host_callback(stream, [&device, waited, before_inputs] { *waited = device.now() - before_inputs; });
  return waited;
}

// The a/b/c step (on the device), H, and the MSMs: H's first, its scalars (the polynomial a) then
// freed for the four over the witness. b and c are freed once H is formed.
asio::awaitable<void> Groth16Program::run_h_and_msms(ProgramRun& run,
                                                     const std::array<EventHandle, 3>& still_uploading) {
  auto& context = run.context;
  auto& memory = context.memory;
  const auto stream = context.compute;
  const bool abc_on_device = groth16::abc_on_device(abc_step_);
  if (abc_on_device) co_await run_abc(context, run.points, run.witness, run.polynomials);
  launch_h(context, run.polynomials, run.scratch, still_uploading);
  if (abc_on_device) {
    co_await memory.release(run.polynomials.b, stream);
    co_await memory.release(run.polynomials.c, stream);
  }
  co_await memory.release_b_and_c(stream);
  if (placement_.msm_memory_after_h) {
    if (run.scratch.h) co_await memory.release(std::exchange(run.scratch.h, DevicePointer{}), stream);
    co_await take_msm_memory(run);
  }
  static_assert(kMsmOrder[0] == kSetH);
  co_await run_set_msms(context, run.points, kSetH, run.polynomials.a, run.results, run.scratch);
  if (abc_on_device) {
    co_await memory.release(run.polynomials.a, stream);
  } else {
    co_await memory.release_a(stream);
  }
  if (!abc_on_device) {
    co_await run.witness_copy.join();
    run.witness_copy.order_after(stream);
  }
  const auto private_signals = run.witness + kFrBytes * (sizes_.n_public + 1);
  for (std::size_t set : std::span(kMsmOrder).subspan(1)) {
    co_await run_set_msms(context, run.points, set, set == kSetC ? private_signals : run.witness, run.results,
                          run.scratch);
  }
  if (abc_on_device) co_await memory.release_a(stream);
}

// The sums to the host (into `sums` where the source's result buffers are real memory), then the
// program's memory back.
asio::awaitable<void> Groth16Program::land_sums(ProgramRun& run, std::vector<std::byte>& sums) {
  auto& device = run.context.device;
  const auto stream = run.context.compute;
  sums.resize(shape_.result_bytes);
  const auto landing = run.context.results.at(0).sub(0, shape_.result_bytes);
  co_await device.copy_to_host(landing, run.results, stream);
  co_await device.synchronize_stream(stream);
  if (sums_readable()) std::memcpy(sums.data(), landing.data(), shape_.result_bytes);
  const auto witness = groth16::abc_on_device(abc_step_) ? DevicePointer{} : run.witness;
  for (auto pointer : pointers(witness, run.results, run.scratch.h, run.scratch.msm)) {
    if (pointer) co_await run.context.memory.release(pointer, stream);
  }
  co_await run.points.stream.release(run.context);
}

JobTimes Groth16Program::describe_run(const ProgramRun& run, Nanoseconds waited) const {
  JobTimes times;
  times.waited_for_inputs_ns = waited;
  if (shape_.fetched_bytes() > 0 || !run.points.batches.empty()) times.note = placement_.describe();
  if (abc_step_ == AbcStep::streamed) {
    times.note += fmt::format("; the constraint matrix streamed ({} chunk{})", matrix_chunks_.size(),
                              matrix_chunks_.size() == 1 ? "" : "s");
  }
  return times;
}

}  // namespace stagehand::groth16
