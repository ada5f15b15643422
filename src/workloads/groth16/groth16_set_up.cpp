// Groth16Program's set-up and tear-down on each device, its memory plan, and the hand-offs of
// each job between the coordinator, the program and its data source.

#include "workloads/groth16/groth16_program.hpp"
#include "workloads/groth16/staged_upload.hpp"

#include "device/format.hpp"
#include "device/groth16_launches.hpp"
#include "device/kernel_abi.hpp"
#include "groth16/encoding.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

namespace stagehand::groth16 {
namespace {

constexpr Bytes kFrBytes = sizeof(math::Fr);  // 64 bits, so that counts of the key's u32 multiply without wrapping

}  // namespace

Groth16Program::Groth16Program(const KeySizes& sizes, AbcStep abc_step, KeyPlacement placement,
                               std::shared_ptr<DeviceKeyState> device_state, HostWork* host_work, unsigned thread_count,
                               std::string source_name)
    : sizes_(sizes),
      abc_step_(abc_step),
      placement_(placement),
      shape_(shape_key_program(sizes_, placement)),
      device_state_(std::move(device_state)),
      host_work_(host_work),
      thread_count_(thread_count),
      source_name_(std::move(source_name)) {
  stream_buffer_bytes_ = stream_buffer_bytes(shape_, placement_, abc_step_);
  if (!device_state_) {
    device_state_ = std::make_shared<DeviceKeyState>();
    owns_device_state_ = true;
  }
}

// Each of a proof's two stream buffers: the streamed sets' (0 where none streams), at least the
// placement's where the matrix streams through them (which it does before H: a placement with
// its MSM memory after H has no buffers then, and is refused).
Bytes Groth16Program::stream_buffer_bytes(const KeyProgramShape& shape, const KeyPlacement& placement,
                                          AbcStep abc_step) {
  if (abc_step != AbcStep::streamed) return shape.stream_buffer_bytes;
  if (placement.msm_memory_after_h) {
    throw std::invalid_argument(
        "Groth16Workload: a streamed matrix goes through the stream buffers before H, which a placement with "
        "its MSM memory after H does not have then");
  }
  return std::max(shape.stream_buffer_bytes, placement.stream_buffer_bytes);
}

// The chunks, once: every device's set-up may call it (they may run at once on several GPUs).
void Groth16Program::cut_matrix(std::vector<MatrixChunk> chunks) {
  std::call_once(matrix_cut_, [&] {
    for (const auto& chunk : chunks) {
      if (chunk.layout().total_bytes() > stream_buffer_bytes_) {
        throw std::invalid_argument(
            fmt::format("{}: constraint {} alone takes {} of the constraint matrix, more than a stream buffer "
                        "({}): stream with larger buffers, or run the a/b/c step on the host",
                        source_name_, chunk.first_row, format_bytes(chunk.layout().total_bytes()),
                        format_bytes(stream_buffer_bytes_)));
      }
    }
    matrix_chunks_ = std::move(chunks);
  });
}

Bytes Groth16Program::matrix_bytes(const KeySizes& key, AbcStep abc_step) {
  return abc_step == AbcStep::device ? key.matrix.total_bytes() : 0;
}

Bytes Groth16Program::proof_bytes_before_scratch(const KeySizes& key, Bytes stream_buffer_bytes) {
  return 3 * kFrBytes * key.domain_size() + kFrBytes * key.n_vars + 2 * stream_buffer_bytes;
}

Bytes Groth16Program::resident_bytes() const { return shape_.resident_bytes() + matrix_bytes(sizes_, abc_step_); }

// Sizes in 64 bits throughout: 32 · domain_size in the key's u32 wraps at 2^27, inside the
// 2^28 the readers accept.
// With the a/b/c step on the device the job's one input is the witness (held until the last
// MSM) and a, b, c are the program's working memory; on the host a, b, c are its inputs (a freed
// after the H MSM) and the witness the program's. The stream buffers and the fetched sets are
// held from the program's start (their uploads overlap the a/b/c and H steps).
JobMemoryPlan Groth16Program::plan_memory(const KeySizes& sizes, AbcStep abc_step, const KeyPlacement& placement,
                                          const KeyProgramShape& shape, Bytes stream_buffer_bytes,
                                          Bytes msm_scratch_bytes, Bytes h_scratch_bytes) {
  const Bytes polynomial = kFrBytes * sizes.domain_size();
  const Bytes witness = kFrBytes * sizes.n_vars;
  const Bytes results = shape.result_bytes;
  const Bytes msm_memory = msm_scratch_bytes + 2 * stream_buffer_bytes + shape.fetched_bytes();
  if (placement.msm_memory_after_h) {
    // H with the polynomials alone; the MSMs' memory once b and c are gone.
    const Bytes during_h = 3 * polynomial + results + h_scratch_bytes;
    const Bytes after_h = polynomial + witness + results + msm_memory;
    if (abc_on_device(abc_step)) {
      JobMemoryPlan plan{witness, std::max(witness + during_h, after_h), after_h, results + msm_memory, results};
      plan.input_count = 1;
      return plan;
    }
    return JobMemoryPlan{polynomial, std::max(during_h, after_h), after_h, witness + results + msm_memory, results};
  }
  const Bytes rest = results + h_scratch_bytes + msm_memory;
  if (abc_on_device(abc_step)) {
    JobMemoryPlan plan{witness, witness + 3 * polynomial + rest, witness + polynomial + rest, rest, results};
    plan.input_count = 1;
    return plan;
  }
  return JobMemoryPlan{polynomial, 3 * polynomial + witness + rest, polynomial + witness + rest, witness + rest,
                       results};
}

JobMemoryPlan Groth16Program::memory_plan(int) const {
  return plan_memory(sizes_, abc_step_, placement_, shape_, stream_buffer_bytes_, msm_scratch_bytes_, h_scratch_bytes_);
}

asio::awaitable<void> Groth16Program::set_up(Device& device, int device_index) {
  const auto started = std::chrono::steady_clock::now();
  // What the kernels need as scratch on this device: one MSM scratch, sized for the largest MSM
  // of either group, serves them all (they run one after another on the compute stream).
  h_scratch_bytes_ =
      std::max(h_scratch_bytes_, device.kernel_scratch_bytes(kernel::groth16_h_evaluate, sizes_.domain_size()));
  msm_scratch_bytes_ = std::max(msm_scratch_bytes_, program_msm_scratch_bytes(device, shape_));
  before_set_up();
  STAGEHAND_ASSERT(abc_step_ != AbcStep::streamed || !matrix_chunks_.empty() || sizes_.matrix.rows == 0,
                   "{}: the matrix streams but its data source cut it into no chunks", source_name_);
  co_await pin_key_sets(device);
  // Where an earlier run left the key set up on this device, it is used as it is; what a failed
  // set-up left is freed and made again.
  const auto* held = device_state_->entry(device_index);
  if (held != nullptr && (!held->complete || held->device != &device)) {
    co_await device_state_->release_device(device_index);
    held = nullptr;
  }
  if (held == nullptr) {
    auto& entry =
        device_state_->fresh_entry(device_index, device, abc_step_ == AbcStep::device, placement_, resident_bytes());
    co_await upload_key(device, entry);
    device_state_->completed(device_index);
    held = &entry;
  }
  auto& on_device = keys_[device_index];
  on_device.sets = held->sets;
  on_device.matrix = held->matrix;
  set_up_seconds_[device_index] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  counters_after_set_up_[device_index] = device.counters();
}

// The sets kept on the device and the matrix into `entry` (each pointer there as soon as it is
// allocated, so that a set-up that fails halfway leaves nothing that release cannot find).
asio::awaitable<void> Groth16Program::upload_key(Device& device, DeviceKeyState::OnDevice& entry) {
  // The resident sets go up from the key's own bytes: they are in the device layout already. A
  // precomputed set goes up into the first copy of its buffer and the device computes the rest
  // there (groth16_precompute_g1/_g2), once, after the uploads.
  std::vector<PageableUpload> uploads;
  for (std::size_t set = 0; set < kKeySetCount; ++set) {
    const auto& shape = shape_.sets[set];
    if (!kept_on_device(shape.placement)) continue;
    const HostRange source = set_host(set);
    const Bytes capacity = shape.placement == SetPlacement::resident ? source.bytes : shape.device_bytes();
    entry.sets[set] = co_await device.allocate(std::max<Bytes>(std::max(capacity, source.bytes), 1));
    uploads.push_back({entry.sets[set], source});
  }
  if (abc_step_ == AbcStep::device) {
    // Chosen before the co_await: g++ 12 evaluated both arms of a ?: inside a co_await's operand,
    // reading the matrix of timing jobs, which have none.
    const HostRange matrix = matrix_host();
    entry.matrix = co_await device.allocate(std::max<Bytes>(matrix.bytes, 1));
    uploads.push_back({entry.matrix, matrix});
  }
  if (host_work_ != nullptr) {
    co_await upload_through_pinned(device, *host_work_, uploads);
  } else {
    // No pool (the simulator's timing jobs): the host ranges stand in for bytes that do not exist,
    // so nothing can copy them on the host; pageable copies cost what the model says.
    auto stream = device.create_stream();
    for (const auto& upload : uploads) {
      if (upload.source.bytes) co_await device.copy_to_device(upload.target, upload.source, stream);
    }
    co_await device.synchronize_stream(stream);
    device.destroy_stream(stream);
  }
  for (std::size_t set = 0; set < kKeySetCount; ++set) {
    const auto& shape = shape_.sets[set];
    if (!kept_on_device(shape.placement) || shape.placement == SetPlacement::resident || shape.points == 0) continue;
    auto stream = device.create_stream();
    const kernel::PrecomputeLaunch precompute{
        .kernel = set == kSetB2 ? kernel::groth16_precompute_g2 : kernel::groth16_precompute_g1,
        .points = shape.points,
        .window_bits = shape.window_bits,
        .bases = {entry.sets[set], shape.bytes()},
        .copies = {entry.sets[set], shape.device_bytes()},
        .curve = sizes_.curve};
    device.launch(precompute.to_launch(), stream);
    co_await device.synchronize_stream(stream);
    device.destroy_stream(stream);
  }
}

// The sets that travel per proof are uploaded from the key's bytes: pinned once (portable: every
// GPU's copies use the one registration) by the first device set up, kept in the key's device
// state and given back with it. Pageable, each copy would go through the driver's staging
// buffers at a fraction of the link's rate and hold the host thread.
// The first set-up of the run pins what travels; another that comes meanwhile (every GPU is set
// up at once) waits for it rather than registering the same memory twice, and tries itself where
// the first failed.
asio::awaitable<void> Groth16Program::pin_key_sets(Device& device) {
  std::vector<HostRange> travelling;
  for (std::size_t set = 0; set < kKeySetCount; ++set) {
    if (!kept_on_device(shape_.sets[set].placement)) travelling.push_back(set_host(set));
  }
  if (abc_step_ == AbcStep::streamed) travelling.push_back(matrix_host());
  co_await pinning_.run([&]() -> asio::awaitable<void> {
    for (const auto& range : travelling) {
      if (range.bytes == 0 || device_state_->pinned(range)) continue;
      co_await device.register_host(range);
      device_state_->add_pinned(range, device);
    }
  });
}

asio::awaitable<void> Groth16Program::tear_down(Device& device, int device_index) {
  auto found = keys_.find(device_index);
  if (found != keys_.end()) {
    for (auto stream : found->second.idle_side_streams) {
      try {
        device.destroy_stream(stream);
      } catch (const DeviceError&) {
      }
    }
    keys_.erase(found);
  }
  if (!owns_device_state_) co_return;  // its holder keeps the key set up for its next run
  // The devices are torn down one after another: the last one's (no device left in the state)
  // also gives the pinned registration back.
  co_await device_state_->release_device(device_index);
  if (!device_state_->holds_devices()) co_await device_state_->release(&device);
}

// One sum per set (a streamed set's batches were added up on the device); an empty set's is the
// identity, whatever its slot holds.
template <class Results>
Results Groth16Program::msm_sums(int job) {
  using G1Sum = decltype(Results::a);
  using G2Sum = decltype(Results::b2);
  STAGEHAND_ASSERT(sums_readable(), "{}: job {}'s sums are read from a source whose sums land in virtual memory",
                   source_name_, job);
  STAGEHAND_ASSERT(
      shape_.sets[kSetA].sum_bytes == jacobian_bytes<G1Sum> && shape_.sets[kSetB2].sum_bytes == jacobian_bytes<G2Sum>,
      "{}: job {}'s sums are read as another curve's than the program's ({})", source_name_, job,
      kernel::curve_name(sizes_.curve));
  const auto& job_state = state(job, Stage::ran, "msm_sums");
  STAGEHAND_ASSERT(job_state.sums.size() == shape_.result_bytes, "{}: job {} holds {} bytes of sums, not {}",
                   source_name_, job, job_state.sums.size(), shape_.result_bytes);
  auto sum = [&]<class Sum>(std::size_t set, Sum identity) {
    const auto& shape = shape_.sets[set];
    if (shape.points == 0) return identity;
    const auto* at = reinterpret_cast<const std::uint8_t*>(job_state.sums.data()) + shape.first_sum_offset;
    return *decode_jacobian<Sum>(std::span<const std::uint8_t>(at, shape.sum_bytes));
  };
  Results sums;
  sums.a = sum(kSetA, G1Sum::identity());
  sums.b1 = sum(kSetB1, G1Sum::identity());
  sums.c = sum(kSetC, G1Sum::identity());
  sums.h = sum(kSetH, G1Sum::identity());
  sums.b2 = sum(kSetB2, G2Sum::identity());
  return sums;
}

template MsmResults Groth16Program::msm_sums<MsmResults>(int job);
template bn254::MsmResults Groth16Program::msm_sums<bn254::MsmResults>(int job);

void Groth16Program::check_job(int job, const char* step) const {
  STAGEHAND_ASSERT(job >= 0 && job < job_count(), "{}: {} of job {}, of {} jobs", source_name_, step, job, job_count());
}

// The job's state, in hand and at `expected` (a program run only after its prepare, a finish only
// after its program and only once: the finish ends the state).
Groth16Program::JobState& Groth16Program::state(int job, Stage expected, const char* step) {
  check_job(job, step);
  std::lock_guard lock(states_mutex_);
  const auto found = states_.find(job);
  STAGEHAND_ASSERT(found != states_.end(), "{}: {} of job {}, which is not in hand (never prepared, or ended)",
                   source_name_, step, job);
  STAGEHAND_ASSERT(found->second.stage == expected, "{}: {} of job {} at the wrong step (its program {})", source_name_,
                   step, job, found->second.stage == Stage::ran ? "has run" : "has not run");
  return found->second;  // map nodes stay put: the reference outlives the lock
}

asio::awaitable<void> Groth16Program::prepare(int job, Device& device, std::span<const HostRange> abc) {
  check_job(job, "prepare");
  {
    // A job prepared again comes after its abandon (a retry on another GPU starts afresh).
    std::lock_guard lock(states_mutex_);
    STAGEHAND_ASSERT(states_.count(job) == 0, "{}: job {} is prepared while still in hand", source_name_, job);
  }
  co_await prepare_job(job, device, abc);
  std::lock_guard lock(states_mutex_);
  states_[job] = JobState{};
}

asio::awaitable<void> Groth16Program::finish(int job, Device& device) {
  state(job, Stage::ran, "finish");
  std::exception_ptr failure;
  try {
    co_await finish_job(job, device);
  } catch (...) {
    failure = std::current_exception();
  }
  abandon(job);
  if (failure) std::rethrow_exception(failure);
}

void Groth16Program::abandon(int job) {
  check_job(job, "abandon");
  forget_job(job);
  std::lock_guard lock(states_mutex_);
  states_.erase(job);
}

}  // namespace stagehand::groth16
