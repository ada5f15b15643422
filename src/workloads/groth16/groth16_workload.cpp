#include "workloads/groth16/groth16_workload.hpp"
#include "workloads/groth16/staged_upload.hpp"

#include "device/format.hpp"
#include "device/give_back_pinned.hpp"
#include "device/groth16_launches.hpp"
#include "device/kernel_abi.hpp"
#include "groth16/encoding.hpp"
#include "groth16/errors.hpp"
#include "groth16/witness.hpp"
#include "math/parallel.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace stagehand::groth16 {
namespace {

static_assert(sizeof(math::Fr) == 32, "Fr must be its four Montgomery limbs, so that Fr arrays are device bytes");
constexpr Bytes kFrBytes = sizeof(math::Fr);  // 64 bits, so that counts of the key's u32 multiply without wrapping

HostRange host_range(const void* data, std::size_t bytes) {
  return HostRange{reinterpret_cast<std::uintptr_t>(data), bytes};
}

// A staged a, b or c as the domain's n values; the one check that the staging buffer holds them.
std::span<math::Fr> staged_polynomial(const HostRange& range, std::size_t n) {
  if (range.bytes < kFrBytes * n) throw std::invalid_argument("groth16 prepare: a staged buffer is smaller than the domain");
  return std::span<math::Fr>(reinterpret_cast<math::Fr*>(range.data()), n);
}

// Each of a proof's two stream buffers: the streamed sets' (0 where none streams), at least the
// placement's where the matrix streams through them (which it does before H: a placement with
// its MSM memory after H has no buffers then, and is refused).
Bytes stream_buffer_bytes(const KeyProgramShape& shape, const KeyPlacement& placement, AbcStep abc_step) {
  if (abc_step != AbcStep::streamed) return shape.stream_buffer_bytes;
  if (placement.msm_memory_after_h) {
    throw std::invalid_argument("Groth16Workload: a streamed matrix goes through the stream buffers before H, which a placement with "
                                "its MSM memory after H does not have then");
  }
  return std::max(shape.stream_buffer_bytes, placement.stream_buffer_bytes);
}

}  // namespace

Groth16Workload::Groth16Workload(const ProvingKey& key, std::filesystem::path zkey_path, std::vector<ProofJob> jobs,
                                 HostWork& host_work, unsigned thread_count, ProofHandler on_proof, ProofChecks checks,
                                 AbcStep abc_step, KeyPlacement placement, std::shared_ptr<DeviceKeyState> device_state,
                                 const KeySizes* sizes)
    : key_(&key), sizes_(sizes != nullptr ? *sizes : KeySizes::of(key)), zkey_path_(std::move(zkey_path)), jobs_(std::make_move_iterator(jobs.begin()), std::make_move_iterator(jobs.end())), host_work_(&host_work),
      thread_count_(thread_count), on_proof_(std::move(on_proof)), checks_(std::move(checks)), abc_step_(abc_step),
      placement_(placement), shape_(shape_key_program(sizes_, placement)), device_state_(std::move(device_state)),
      check_seconds_(jobs_.size(), 0.0) {
  stream_buffer_bytes_ = stream_buffer_bytes(shape_, placement_, abc_step_);
  if (!device_state_) {
    device_state_ = std::make_shared<DeviceKeyState>();
    owns_device_state_ = true;
  }
  if (checks_.verify) verifier_.emplace(key);
  if (checks_.r1cs != nullptr) check_constraint_system(*checks_.r1cs, checks_.r1cs_path, key, zkey_path_);
}

void check_constraint_system(const R1cs& r1cs, const std::filesystem::path& r1cs_path, const ProvingKey& key,
                             const std::filesystem::path& zkey_path) {
  if (r1cs.n_wires == key.n_vars && r1cs.n_public() == key.n_public) return;
  throw InputError(fmt::format("{}: {} wires ({} public) but {} has {} signals ({} public): the constraint system of another circuit",
                               r1cs_path.string(), r1cs.n_wires, r1cs.n_public(), zkey_path.string(), key.n_vars, key.n_public));
}

int Groth16Workload::add_job(ProofJob job) {
  if (timing_) throw std::logic_error("Groth16Workload::add_job: timing jobs are counted, not added");
  jobs_.push_back(std::move(job));
  check_seconds_.push_back(0.0);
  STAGEHAND_ASSERT(check_seconds_.size() == jobs_.size(), "{}: {} jobs with {} check times", zkey_path_.string(), jobs_.size(),
                   check_seconds_.size());
  return static_cast<int>(jobs_.size()) - 1;
}

std::uint64_t Groth16TimingJobs::full_scalars(std::uint64_t first, std::uint64_t count) const {
  const std::uint64_t begin = std::max(first, bits_below);
  const std::uint64_t end = first + count;
  if (end <= begin) return 0;
  return static_cast<std::uint64_t>(std::llround(std::clamp(full_scalar_share, 0.0, 1.0) * static_cast<double>(end - begin)));
}

Groth16Workload::Groth16Workload(Groth16TimingJobs timing, AbcStep abc_step, KeyPlacement placement)
    : timing_(std::move(timing)), sizes_(timing_->sizes), abc_step_(abc_step), placement_(placement),
      shape_(shape_key_program(sizes_, placement)), device_state_(std::make_shared<DeviceKeyState>()), owns_device_state_(true),
      check_seconds_(static_cast<std::size_t>(std::max(0, timing_->jobs())), 0.0) {
  if (timing_->jobs_per_proof < 1) throw std::invalid_argument("Groth16Workload: timing jobs need at least one job per proof");
  const Bytes witness_bytes = kFrBytes * sizes_.n_vars;
  if (const auto& data = timing_->data) {
    if (abc_step_ != AbcStep::host) {
      throw std::invalid_argument("Groth16Workload: synthetic data needs the a/b/c step on the host (it has no constraint matrix)");
    }
    for (std::size_t set = 0; set < kKeySetCount; ++set) {
      if (data->sets[set].bytes < shape_.sets[set].bytes()) {
        throw std::invalid_argument(fmt::format("Groth16Workload: the synthetic {} set holds {}, not its {} points", kKeySetNames[set],
                                                format_bytes(data->sets[set].bytes), shape_.sets[set].points));
      }
      timing_sets_[set] = data->sets[set];
    }
    if (data->polynomial.size() < kFrBytes * sizes_.domain_size() || data->witness.size() < witness_bytes || data->host_work == nullptr) {
      throw std::invalid_argument("Groth16Workload: synthetic data needs a polynomial of the domain's size, a witness of the key's "
                                  "signals and a host-work pool");
    }
    timing_witness_ = host_range(data->witness.data(), witness_bytes);
    host_work_ = data->host_work;  // the resident sets go up through pinned staging, as a real key's do
  } else {
    if (!timing_->host_memory) throw std::invalid_argument("Groth16Workload: timing jobs need host memory for their uploads");
    for (std::size_t set = 0; set < kKeySetCount; ++set) timing_sets_[set] = timing_->host_memory(std::max<Bytes>(1, shape_.sets[set].bytes()));
    timing_matrix_ = timing_->host_memory(sizes_.matrix.total_bytes());
    timing_witness_ = timing_->host_memory(witness_bytes);
  }
  stream_buffer_bytes_ = stream_buffer_bytes(shape_, placement_, abc_step_);
  if (abc_step_ == AbcStep::streamed) {
    // The synthetic circuit's entries are spread evenly over its rows.
    const auto& layout = sizes_.matrix;
    cut_matrix(cut_constraint_matrix(layout.rows, stream_buffer_bytes_, [&layout](std::uint64_t row) {
      // entries·row / rows without overflow: the remainder's product stays below rows² (rows < 2^32).
      const auto share = [&](std::uint64_t entries) {
        const std::uint64_t rows = std::max<std::uint64_t>(1, layout.rows);
        return entries / rows * row + entries % rows * row / rows;
      };
      return std::pair{share(layout.entries_a), share(layout.entries_b)};
    }));
  }
}

// The chunks, once: every device's set-up may call it (they may run at once on several GPUs).
void Groth16Workload::cut_matrix(std::vector<MatrixChunk> chunks) {
  std::call_once(matrix_cut_, [&] {
    for (const auto& chunk : chunks) {
      if (chunk.layout().total_bytes() > stream_buffer_bytes_) {
        throw std::invalid_argument(fmt::format("{}: constraint {} alone takes {} of the constraint matrix, more than a stream buffer "
                                                "({}): stream with larger buffers, or run the a/b/c step on the host",
                                                zkey_path_.string(), chunk.first_row, format_bytes(chunk.layout().total_bytes()),
                                                format_bytes(stream_buffer_bytes_)));
      }
    }
    matrix_chunks_ = std::move(chunks);
  });
}

Bytes Groth16Workload::matrix_bytes(const KeySizes& key, AbcStep abc_step) {
  return abc_step == AbcStep::device ? key.matrix.total_bytes() : 0;
}

Bytes Groth16Workload::proof_bytes_before_scratch(const KeySizes& key, Bytes stream_buffer_bytes) {
  return 3 * kFrBytes * key.domain_size() + kFrBytes * key.n_vars + 2 * stream_buffer_bytes;
}

std::string_view to_string(AbcStep step) {
  switch (step) {
    case AbcStep::device: return "device";
    case AbcStep::streamed: return "streamed";
    case AbcStep::host: return "host";
  }
  return "?";
}

std::optional<AbcStep> parse_abc_step(std::string_view text) {
  for (auto step : {AbcStep::device, AbcStep::streamed, AbcStep::host}) {
    if (text == to_string(step)) return step;
  }
  return std::nullopt;
}

std::string describe(AbcStep step) {
  return step == AbcStep::streamed ? "on the device, its matrix streamed" : fmt::format("on the {}", to_string(step));
}

std::vector<std::string> abc_step_choices(bool with_auto) {
  std::vector<std::string> choices;
  if (with_auto) choices.emplace_back("auto");
  for (auto step : {AbcStep::device, AbcStep::streamed, AbcStep::host}) choices.emplace_back(to_string(step));
  return choices;
}

ProofLayout plan_proof_layout(const KeySizes& key, const std::vector<Device*>& devices, Bytes held_back, int proofs_in_flight,
                              std::optional<AbcStep> abc, std::optional<SetPlacement> sets, Bytes stream_buffer_bytes,
                              bool precompute_bases) {
  PlacementBudget budget;
  budget.precompute = precompute_bases;
  budget.device_bytes = ~Bytes{0};
  Bytes h_scratch = 0;
  for (const auto* device : devices) {
    budget.device_bytes = std::min(budget.device_bytes, device->properties().total_memory_bytes);
    h_scratch = std::max(h_scratch, device->kernel_scratch_bytes(kernel::groth16_h_evaluate, key.domain_size()));
  }
  if (devices.empty()) budget.device_bytes = 0;
  budget.device_bytes = budget.device_bytes > held_back ? budget.device_bytes - held_back : 0;
  budget.proofs_in_flight = std::max(1, proofs_in_flight);
  budget.stream_buffer_bytes = stream_buffer_bytes;
  budget.proof_bytes = Groth16Workload::proof_bytes_before_scratch(key, stream_buffer_bytes) + h_scratch + kMiB;
  budget.msm_scratch = [&devices](std::size_t set, SetPlacement placement, std::uint64_t points) {
    Bytes most = 0;
    for (const auto* device : devices) {
      most = std::max(most, device->kernel_scratch_bytes(set_msm_kernel(set, placement), points));
    }
    return most;
  };
  ProofLayout layout;
  // With every set streamed, does the matrix leave a proof's room per worker?
  const Bytes matrix = Groth16Workload::matrix_bytes(key, AbcStep::device);
  const Bytes streamed_scratch =
      std::max(budget.msm_scratch(kSetA, SetPlacement::streamed, stream_buffer_bytes / set_point_bytes(kSetA)),
               budget.msm_scratch(kSetB2, SetPlacement::streamed, stream_buffer_bytes / set_point_bytes(kSetB2)));
  const Bytes with_matrix = matrix + static_cast<Bytes>(budget.proofs_in_flight) * (budget.proof_bytes + streamed_scratch);
  // Streamed, the matrix goes through the stream buffers from the program's start: a proof must
  // fit with its MSM memory taken from the start too.
  const bool streamed_fits = budget.proof_bytes + streamed_scratch <= budget.device_bytes;
  if (abc) {
    layout.abc_step = *abc;
    layout.reason = "as asked";
    if (*abc == AbcStep::streamed && !streamed_fits) {
      throw std::invalid_argument(fmt::format("the a/b/c step streamed: a proof with its stream buffers and MSM memory taken from its "
                                              "start needs about {}, the smallest device has {} to give (run it on the host)",
                                              format_bytes(budget.proof_bytes + streamed_scratch), format_bytes(budget.device_bytes)));
    }
  } else if (with_matrix <= budget.device_bytes) {
    layout.abc_step = AbcStep::device;
    layout.reason = fmt::format("its constraint matrix ({}) fits beside {} proof{}", format_bytes(matrix), budget.proofs_in_flight,
                                budget.proofs_in_flight == 1 ? "" : "s");
  } else if (streamed_fits) {
    layout.abc_step = AbcStep::streamed;
    layout.reason = fmt::format("its constraint matrix ({}) streamed through each proof's buffers: resident, a run would need about {}, "
                                "the smallest device has {} to give",
                                format_bytes(matrix), format_bytes(with_matrix), format_bytes(budget.device_bytes));
  } else {
    layout.abc_step = AbcStep::host;
    layout.reason = fmt::format("with its constraint matrix ({}) resident a run needs about {}, streamed a proof about {}; the smallest "
                                "device has {} to give",
                                format_bytes(matrix), format_bytes(with_matrix), format_bytes(budget.proof_bytes + streamed_scratch),
                                format_bytes(budget.device_bytes));
  }
  budget.matrix_bytes = Groth16Workload::matrix_bytes(key, layout.abc_step);
  if (sets) {
    layout.placement = KeyPlacement::all(*sets);
    layout.placement.stream_buffer_bytes = stream_buffer_bytes;
  } else {
    layout.placement = KeyPlacement::plan(key, budget);
  }
  // Where one proof with every set streamed would not fit beside the matrix if it took its MSM
  // memory from the start, it takes it once H is formed (KeyPlacement::msm_memory_after_h).
  // (Streamed, the matrix is not resident and streamed_fits holds: never after H.)
  layout.placement.msm_memory_after_h = budget.matrix_bytes + budget.proof_bytes + streamed_scratch > budget.device_bytes;
  return layout;
}

Bytes Groth16Workload::resident_bytes() const { return shape_.resident_bytes() + matrix_bytes(sizes_, abc_step_); }

// Sizes in 64 bits throughout: 32 · domain_size in the key's u32 wraps at 2^27, inside the
// 2^28 the readers accept.
// With the a/b/c step on the device the job's one input is the witness (held until the last
// MSM) and a, b, c are the program's working memory; on the host a, b, c are its inputs (a freed
// after the H MSM) and the witness the program's. The stream buffers and the fetched sets are
// held from the program's start (their uploads overlap the a/b/c and H steps).
JobMemoryPlan Groth16Workload::plan_memory(const KeySizes& sizes, AbcStep abc_step, const KeyPlacement& placement,
                                           const KeyProgramShape& shape, Bytes stream_buffer_bytes, Bytes msm_scratch_bytes,
                                           Bytes h_scratch_bytes) {
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
  return JobMemoryPlan{polynomial, 3 * polynomial + witness + rest, polynomial + witness + rest, witness + rest, results};
}

JobMemoryPlan Groth16Workload::memory_plan(int) const {
  return plan_memory(sizes_, abc_step_, placement_, shape_, stream_buffer_bytes_, msm_scratch_bytes_, h_scratch_bytes_);
}

Bytes proof_device_bytes(const KeySizes& key, const ProofLayout& layout) {
  const auto shape = shape_key_program(key, layout.placement);
  const auto plan = Groth16Workload::plan_memory(key, layout.abc_step, layout.placement, shape,
                                                 stream_buffer_bytes(shape, layout.placement, layout.abc_step), 0, 0);
  return plan.peak_bytes + shape.resident_bytes() + Groth16Workload::matrix_bytes(key, layout.abc_step);
}

Groth16Workload::JobState& Groth16Workload::state(int job) {
  std::lock_guard lock(states_mutex_);
  return states_[job];  // map nodes stay put: the reference outlives the lock
}

void Groth16Workload::abandon(int job) {
  std::lock_guard lock(states_mutex_);
  auto found = states_.find(job);
  if (found == states_.end()) return;
  // Kept for the next job's witness (two: the workers that prepare beside each other's GPU time
  // in the usual deployment; more jobs at once each take a fresh one).
  auto& witness = found->second.witness;
  if (witness.size() == sizes_.n_vars && spare_witnesses_.size() < kSpareWitnesses) {
    spare_witnesses_.push_back(std::move(witness));
  }
  states_.erase(found);
}

std::vector<math::Fr> Groth16Workload::take_witness_buffer() {
  {
    std::lock_guard lock(states_mutex_);
    if (!spare_witnesses_.empty()) {
      auto buffer = std::move(spare_witnesses_.back());
      spare_witnesses_.pop_back();
      return buffer;
    }
  }
  return std::vector<math::Fr>(sizes_.n_vars);
}

asio::awaitable<void> Groth16Workload::set_up(Device& device, int device_index) {
  const auto started = std::chrono::steady_clock::now();
  // What the kernels need as scratch on this device: one MSM scratch, sized for the largest MSM
  // of either group, serves them all (they run one after another on the compute stream).
  h_scratch_bytes_ = std::max(h_scratch_bytes_, device.kernel_scratch_bytes(kernel::groth16_h_evaluate, sizes_.domain_size()));
  for (std::size_t set = 0; set < kKeySetCount; ++set) {
    const auto& shape = shape_.sets[set];
    msm_scratch_bytes_ = std::max(msm_scratch_bytes_, device.kernel_scratch_bytes(set_msm_kernel(set, shape.placement), shape.points_per_batch));
    if (shape.placement == SetPlacement::streamed) {
      msm_scratch_bytes_ = std::max(msm_scratch_bytes_, device.kernel_scratch_bytes(set_msm_reduce_kernel(set), shape.points_per_batch));
    }
  }
  // The constraint matrix is built by the key state's first set-up (16 bytes a row and 36 an
  // entry on the host, once), not by the constructor: a workload that never runs does not pay for
  // it. The host's a/b/c step uses it too (threaded by rows); only the device keeps a copy of it.
  if (key_ != nullptr) matrix_ = &device_state_->host_matrix(*key_);
  if (abc_step_ == AbcStep::streamed && matrix_ != nullptr) cut_matrix(cut_constraint_matrix(*matrix_, stream_buffer_bytes_));
  co_await pin_key_sets(device);
  // Where an earlier run left the key set up on this device, it is used as it is; what a failed
  // set-up left is freed and made again.
  const auto* held = device_state_->entry(device_index);
  if (held != nullptr && (!held->complete || held->device != &device)) {
    co_await device_state_->release_device(device_index);
    held = nullptr;
  }
  if (held == nullptr) {
    auto& entry = device_state_->fresh_entry(device_index, device, abc_step_ == AbcStep::device, placement_, resident_bytes());
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
asio::awaitable<void> Groth16Workload::upload_key(Device& device, DeviceKeyState::OnDevice& entry) {
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
    // Timing jobs: their host ranges stand in for bytes that do not exist, so nothing can copy
    // them on the host; pageable copies cost what the model says.
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
        .points = shape.points, .window_bits = shape.window_bits,
        .bases = {entry.sets[set], shape.bytes()}, .copies = {entry.sets[set], shape.device_bytes()}};
    device.launch(precompute.to_launch(), stream);
    co_await device.synchronize_stream(stream);
    device.destroy_stream(stream);
  }
}

HostRange Groth16Workload::set_host(std::size_t set) const {
  if (key_ == nullptr) return timing_sets_.at(set).sub(0, shape_.sets.at(set).bytes());
  auto range = [](std::span<const std::uint8_t> bytes) { return host_range(bytes.data(), bytes.size()); };
  switch (set) {
    case kSetH: return range(key_->h.bytes());
    case kSetA: return range(key_->a.bytes());
    case kSetB1: return range(key_->b1.bytes());
    case kSetB2: return range(key_->b2.bytes());
    case kSetC: return range(key_->c.bytes());
  }
  throw std::logic_error("Groth16Workload: no such key set");
}

// The sets that travel per proof are uploaded from the key's bytes: pinned once (portable: every
// GPU's copies use the one registration) by the first device set up, kept in the key's device
// state and given back with it. Pageable, each copy would go through the driver's staging
// buffers at a fraction of the link's rate and hold the host thread.
// The first set-up of the run pins what travels; another that comes meanwhile (every GPU is set
// up at once) waits for it rather than registering the same memory twice, and tries itself where
// the first failed.
asio::awaitable<void> Groth16Workload::pin_key_sets(Device& device) {
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

HostRange Groth16Workload::matrix_host() const {
  if (matrix_ == nullptr) return timing_matrix_;
  return host_range(matrix_->bytes.data(), matrix_->bytes.size());
}

asio::awaitable<void> Groth16Workload::tear_down(Device& device, int device_index) {
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

asio::awaitable<void> Groth16Workload::prepare(int job, Device& device, std::span<const HostRange> abc) {
  if (timing_) {
    const auto began = device.now();
    if (const auto& data = timing_->data) {
      // a, b and c at once, a thread each (the partition workloads' host step on the H200 machine:
      // more threads did not copy faster beside the other job's streamed points).
      const auto n = sizes_.domain_size();
      for (const auto& target : abc) staged_polynomial(target, n);  // each big enough
      co_await data->host_work->run([&] {
        std::vector<std::thread> copies;
        for (const auto& target : abc) {
          copies.emplace_back([&, target] { std::memcpy(target.data(), data->polynomial.data(), kFrBytes * n); });
        }
        for (auto& thread : copies) thread.join();
      });
    }
    // The step lasts the modelled time, or the copy's where that is longer.
    const auto spent = device.now() - began;
    if (spent < timing_->host_prepare_ns) co_await device.sleep_for(timing_->host_prepare_ns - spent);
    co_return;
  }
  const auto& key = *key_;
  auto& job_state = state(job);
  const auto& proof_job = jobs_.at(static_cast<std::size_t>(job));
  const auto& file = proof_job.wtns;
  const std::size_t n = key.domain_size;
  co_await host_work_->run([&] {
    // On the device the witness goes straight into the staged input (pinned: no copy on its way
    // to the device) and the job keeps only its public part; on the host the a/b/c step and the
    // program's upload need all of it.
    std::span<const math::Fr> witness;
    if (abc_on_device(abc_step_)) {
      if (abc.empty() || abc[0].bytes < kFrBytes * key.n_vars) {
        throw std::invalid_argument("groth16 prepare: the staged input is smaller than the witness");
      }
      const std::span<math::Fr> staged(reinterpret_cast<math::Fr*>(abc[0].data()), key.n_vars);
      witness = staged.first(proof_job.wtns_bytes ? parse_wtns_into(*proof_job.wtns_bytes, file.string(), staged, thread_count_)
                                                  : read_wtns_into(file, staged, thread_count_));
    } else {
      job_state.witness = take_witness_buffer();
      const std::size_t count = proof_job.wtns_bytes ? parse_wtns_into(*proof_job.wtns_bytes, file.string(), job_state.witness, thread_count_)
                                                     : read_wtns_into(file, job_state.witness, thread_count_);
      witness = std::span<const math::Fr>(job_state.witness).first(count);
    }
    check_witness_matches(key, witness, zkey_path_, file);
    if (checks_.r1cs != nullptr) {
      if (const auto failing = first_unsatisfied_constraint(*checks_.r1cs, witness)) {
        throw InputError(fmt::format("{}: the witness does not satisfy constraint {} of {} (A·w · B·w ≠ C·w): no proof is made for it",
                                     file.string(), *failing, checks_.r1cs_path.string()));
      }
    }
    if (abc_on_device(abc_step_)) {
      job_state.witness.assign(witness.begin(), witness.begin() + 1 + key.n_public);  // what finish needs
    } else {
      evaluate_constraint_matrix(matrix_->layout, matrix_->bytes, witness, staged_polynomial(abc[0], n),
                                 staged_polynomial(abc[1], n), staged_polynomial(abc[2], n), thread_count_);
    }
  });
}

// One sum per set (a streamed set's batches were added up on the device); an empty set's is the
// identity, whatever its slot holds.
MsmResults Groth16Workload::msm_sums(const JobState& job_state) const {
  auto sum_at = [&](std::size_t set) {
    return reinterpret_cast<const std::uint8_t*>(job_state.sums.data()) + shape_.sets[set].first_sum_offset;
  };
  auto g1_sum = [&](std::size_t set) {
    if (shape_.sets[set].points == 0) return math::G1Projective::identity();
    return *decode_g1_jacobian(std::span<const std::uint8_t, kG1JacobianBytes>(sum_at(set), kG1JacobianBytes));
  };
  MsmResults sums;
  sums.a = g1_sum(kSetA);
  sums.b1 = g1_sum(kSetB1);
  sums.c = g1_sum(kSetC);
  sums.h = g1_sum(kSetH);
  sums.b2 = shape_.sets[kSetB2].points == 0
                ? math::G2Projective::identity()
                : *decode_g2_jacobian(std::span<const std::uint8_t, kG2JacobianBytes>(sum_at(kSetB2), kG2JacobianBytes));
  return sums;
}

asio::awaitable<void> Groth16Workload::finish(int job, Device& device) {
  if (timing_) {
    if (timing_->data && timing_->data->on_sums) timing_->data->on_sums(job, msm_sums(state(job)));
    co_await device.sleep_for(timing_->host_finish_ns);
    abandon(job);
    co_return;
  }
  const auto& key = *key_;
  auto& job_state = state(job);
  const auto sums = msm_sums(job_state);
  Proof proof;
  const auto signals = public_signals(key, job_state.witness);
  std::optional<std::string> rejection;
  // Taken here, on the run's executor: the host work's threads must not index what add_job grows.
  auto& proof_job = jobs_.at(static_cast<std::size_t>(job));
  double& check_seconds = check_seconds_.at(static_cast<std::size_t>(job));
  co_await host_work_->run([&] {
    proof = assemble_proof(key, sums, proof_job.randomness);
    if (verifier_) {
      const auto start = std::chrono::steady_clock::now();
      rejection = verifier_->check(proof, signals);
      check_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  });
  // The witness's bytes are parsed for good (a retry on another GPU comes before finish).
  proof_job.wtns_bytes.reset();
  if (rejection) {
    const auto& file = proof_job.wtns;
    abandon(job);
    const std::string hint = checks_.r1cs != nullptr ? "" : "; with the .r1cs (--r1cs) the witness is checked constraint by constraint";
    throw std::runtime_error(fmt::format("the proof does not verify: {} (does {} satisfy the circuit?{}); nothing is written for it",
                                         *rejection, file.string(), hint));
  }
  if (on_proof_) on_proof_(job, proof, signals);
  abandon(job);
}

}  // namespace stagehand::groth16
