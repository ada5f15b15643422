#include "workloads/assignment/assignment_workload.hpp"

#include "device/format.hpp"
#include "device/kernel_abi.hpp"
#include "groth16/encoding.hpp"
#include "math/ntt.hpp"
#include "math/parallel.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

namespace stagehand::groth16 {
namespace {

using kernel::kFrBytes;

HostRange host_range_of(const void* data, Bytes bytes) {
  return HostRange{reinterpret_cast<std::uintptr_t>(data), bytes};
}

std::vector<std::uint64_t> domain_arguments(unsigned log2, const math::Domain& domain) {
  std::vector<std::uint64_t> arguments{log2};
  for (const math::Fr* value : {&domain.root(), &domain.coset_generator()}) {
    for (const auto limb : value->montgomery_limbs()) arguments.push_back(limb);
  }
  return arguments;
}

template <std::size_t Bytes>
std::span<const std::uint8_t, Bytes> sum_at(const std::vector<std::uint8_t>& sums, std::size_t offset) {
  return std::span<const std::uint8_t, Bytes>(sums.data() + offset, Bytes);
}

}  // namespace

KeySizes assignment_key_sizes(const ParamsKey& key) {
  KeySizes sizes;
  sizes.domain_log2 = static_cast<unsigned>(std::countr_zero(key.domain_size()));
  sizes.n_vars = key.input_count() + key.aux_count();
  sizes.n_public = key.input_count() - 1;
  sizes.set_points[kSetH] = key.h.size();
  sizes.set_points[kSetA] = key.a.size();
  sizes.set_points[kSetB1] = key.b_g1.size();
  sizes.set_points[kSetB2] = key.b_g2.size();
  sizes.set_points[kSetL] = key.l.size();
  return sizes;
}

namespace {

// The program's shape with every set streamed through buffers of at most `stream_buffer_bytes`:
// the largest stream buffers and batches a proof of the key takes.
KeyProgramShape all_streamed_shape(const ParamsKey& key, Bytes stream_buffer_bytes) {
  auto placement = KeyPlacement::all(SetPlacement::streamed);
  placement.stream_buffer_bytes = stream_buffer_bytes;
  return shape_key_program(assignment_key_sizes(key), placement);
}

}  // namespace

std::string describe_assignment_placement(const KeyPlacement& placement) {
  std::string text;
  for (const auto where :
       {SetPlacement::resident, SetPlacement::precomputed, SetPlacement::fetched_ahead, SetPlacement::streamed}) {
    std::string names;
    for (const auto set : kAssignmentMsmOrder) {
      if (placement.sets[set] == where)
        names += fmt::format("{}{}", names.empty() ? "" : ", ", kAssignmentSetNames[set]);
    }
    if (!names.empty()) text += fmt::format("{}{} {}", text.empty() ? "" : "; ", names, to_string(where));
  }
  if (std::ranges::find(placement.sets, SetPlacement::streamed) != placement.sets.end())
    text += fmt::format(" (2 x {} buffers)", format_bytes(placement.stream_buffer_bytes));
  return text;
}

namespace {

// The sets' places on devices that give one proof `available` bytes.
KeyPlacement plan_placement(const ParamsKey& key, const std::vector<Device*>& devices, Bytes available,
                            int proofs_in_flight, Bytes stream_buffer_bytes, bool late_inputs) {
  PlacementBudget budget;
  budget.proofs_in_flight = std::max(1, proofs_in_flight);
  budget.stream_buffer_bytes = stream_buffer_bytes;
  budget.device_bytes = available;
  for (const auto* device : devices) {
    budget.proof_bytes = std::max(budget.proof_bytes, AssignmentWorkload::proof_bytes_before_scratch(
                                                          key, *device, stream_buffer_bytes, late_inputs));
  }
  // The plan adds the MSM scratch of each placement it tries to budget.proof_bytes.
  budget.msm_scratch = [&devices](std::size_t set, SetPlacement placement, std::uint64_t points) {
    Bytes most = 0;
    for (const auto* device : devices) most = std::max(most, set_msm_scratch_bytes(*device, set, placement, points));
    return most;
  };
  return KeyPlacement::plan(assignment_key_sizes(key), budget);
}

}  // namespace

std::string describe_assignment_layout(const AssignmentLayout& layout) {
  auto text = describe_assignment_placement(layout.placement);
  if (layout.late_inputs) text += "; two polynomials at a time (c and the scalars uploaded in the program)";
  return text;
}

AssignmentLayout plan_assignment_layout(const ParamsKey& key, const std::vector<Device*>& devices, Bytes held_back,
                                        int proofs_in_flight, Bytes stream_buffer_bytes) {
  STAGEHAND_ASSERT(!devices.empty() && stream_buffer_bytes > 0);
  const Device* smallest = devices.front();
  for (const auto* device : devices) {
    if (device->properties().total_memory_bytes < smallest->properties().total_memory_bytes) smallest = device;
  }
  const Bytes device_bytes = smallest->properties().total_memory_bytes;
  const Bytes available = device_bytes > held_back ? device_bytes - held_back : 0;
  // The largest proof of the key any device takes with every set streamed.
  const auto streamed_proof = [&](bool late_inputs) {
    Bytes most = 0;
    for (const auto* device : devices) {
      most = std::max(most, AssignmentWorkload::streamed_proof_bytes(key, *device, stream_buffer_bytes, late_inputs));
    }
    return most;
  };
  AssignmentLayout layout;
  layout.late_inputs = streamed_proof(false) > available;
  if (layout.late_inputs && streamed_proof(true) > available) {
    throw InputError(fmt::format(
        "one proof of the key needs {} on the device even with every set streamed and two of its polynomials on it at "
        "a time (a and b or c: 2 x {}, the NTT domain, the query scalars, two stream buffers of at most {} and the "
        "kernels' scratch), above the {} a device gives it ({} less {} held back for the budget's margin and other "
        "residents)",
        format_bytes(streamed_proof(true)), format_bytes(kernel::kFrBytes * key.domain_size()),
        format_bytes(stream_buffer_bytes), format_bytes(available), format_bytes(device_bytes),
        format_bytes(held_back)));
  }
  layout.placement = plan_placement(key, devices, available, proofs_in_flight, stream_buffer_bytes, layout.late_inputs);
  return layout;
}

AssignmentWorkload::AssignmentWorkload(const ParamsKey& key, std::vector<AssignmentJob> jobs, unsigned thread_count,
                                       ProofHandler on_proof, bool verify, Bytes safety_margin_bytes,
                                       std::shared_ptr<AssignmentKeyState> key_state, AssignmentLayout layout,
                                       HostWork* host_work)
    : key_(key),
      jobs_(std::move(jobs)),
      thread_count_(thread_count),
      on_proof_(std::move(on_proof)),
      verify_(verify),
      safety_margin_bytes_(safety_margin_bytes),
      domain_log2_(static_cast<unsigned>(std::countr_zero(key.domain_size()))),
      scalar_count_(key.aux_count() + key.a.size() + key.b_g1.size()),
      verifier_key_(verifier_key_of(key)),
      placement_(layout.placement),
      late_inputs_(layout.late_inputs),
      host_work_(host_work),
      shape_(shape_key_program(assignment_key_sizes(key), layout.placement)),
      key_state_(key_state ? key_state : std::make_shared<AssignmentKeyState>()),
      keep_key_(key_state != nullptr) {
  STAGEHAND_ASSERT(std::has_single_bit(key.domain_size()) && key.b_g1.size() == key.b_g2.size());
  STAGEHAND_ASSERT(shape_.result_bytes == kResultBytes);
  for (const auto where : placement_.sets) {
    STAGEHAND_ASSERT(where == SetPlacement::resident || where == SetPlacement::streamed,
                     "the assignments' program keeps a set resident or streams it, not {}", to_string(where));
  }
  STAGEHAND_ASSERT(key_state_->made_for(placement_), "a key state made for another placement");
  for (std::size_t job = 0; job < jobs_.size(); ++job) check_assignment(key_, jobs_[job].assignment, job);
  if (verify_) verifier_.emplace(verifier_key_);
  domain_arguments_ = domain_arguments(domain_log2_, math::Domain::classic(domain_log2_, thread_count_));
  streamed_ = streamed_batches(shape_, kAssignmentMsmOrder, [this](std::size_t set) { return set_host(set); });
}

Bytes AssignmentWorkload::key_bytes(const ParamsKey& key) {
  return key.h.bytes().size() + key.l.bytes().size() + key.a.bytes().size() + key.b_g1.bytes().size() +
         key.b_g2.bytes().size();
}

HostRange AssignmentWorkload::set_host(std::size_t set) const {
  switch (set) {
    case kSetH: return host_range_of(key_.h.bytes().data(), key_.h.bytes().size());
    case kSetL: return host_range_of(key_.l.bytes().data(), key_.l.bytes().size());
    case kSetA: return host_range_of(key_.a.bytes().data(), key_.a.bytes().size());
    case kSetB1: return host_range_of(key_.b_g1.bytes().data(), key_.b_g1.bytes().size());
    default: break;
  }
  STAGEHAND_ASSERT(set == kSetB2);
  return host_range_of(key_.b_g2.bytes().data(), key_.b_g2.bytes().size());
}

Bytes AssignmentWorkload::domain_bytes_on(const Device& device, std::uint64_t domain_size) {
  // What the device asks for ntt_domain_init's one write (the simulator), or for ntt_twiddles's,
  // the same table for snarkjs's roots (the CUDA launchers' ntt_domain_bytes).
  return std::max(device.kernel_scratch_bytes(kernel::ntt_domain_init, domain_size),
                  device.kernel_scratch_bytes(kernel::ntt_twiddles, domain_size));
}

// Held at once: with every input pre-staged a, b, c, the scalars and the domain; with late inputs
// a and b (then c) with the domain, then a and the scalars (the domain freed first).
Bytes AssignmentWorkload::inputs_peak_bytes(Bytes polynomial, Bytes domain, Bytes scalars, bool late_inputs) {
  return late_inputs ? std::max(2 * polynomial + domain, polynomial + scalars) : 3 * polynomial + domain + scalars;
}

Bytes AssignmentWorkload::proof_bytes_before_scratch(const ParamsKey& key, const Device& device,
                                                     Bytes stream_buffer_bytes, bool late_inputs) {
  const auto streamed = all_streamed_shape(key, stream_buffer_bytes);
  const Bytes scalars = kFrBytes * (key.aux_count() + key.a.size() + key.b_g1.size());
  return inputs_peak_bytes(kFrBytes * key.domain_size(), domain_bytes_on(device, key.domain_size()), scalars,
                           late_inputs) +
         kResultBytes + 2 * streamed.stream_buffer_bytes;
}

Bytes AssignmentWorkload::streamed_proof_bytes(const ParamsKey& key, const Device& device, Bytes stream_buffer_bytes,
                                               bool late_inputs) {
  return proof_bytes_before_scratch(key, device, stream_buffer_bytes, late_inputs) +
         program_msm_scratch_bytes(device, all_streamed_shape(key, stream_buffer_bytes));
}

Bytes AssignmentWorkload::working_bytes() const {
  return kResultBytes + msm_scratch_bytes_ + 2 * shape_.stream_buffer_bytes;
}

// Pre-staged, the scalars are the extra input, held from before the lock until the program ends
// (in every peak) as the domain is. With late inputs the program holds a and b, then a and c,
// with the domain; then a and the scalars; then the scalars.
JobMemoryPlan AssignmentWorkload::memory_plan(int) const {
  const Bytes polynomial = kFrBytes * key_.domain_size();
  JobMemoryPlan plan;
  plan.input_bytes = polynomial;
  plan.extra_input_bytes = kFrBytes * scalar_count_;
  plan.result_bytes = kResultBytes;
  plan.input_count = 3;
  plan.late_inputs = late_inputs_;
  const Bytes scalars = plan.extra_input_bytes;
  plan.peak_bytes = inputs_peak_bytes(polynomial, domain_bytes_, scalars, late_inputs_) + working_bytes();
  if (late_inputs_) {
    plan.peak_after_b_and_c_bytes = plan.peak_bytes;  // c comes into b's room
    plan.peak_after_a_bytes = scalars + working_bytes();
    return plan;
  }
  plan.peak_after_b_and_c_bytes = polynomial + scalars + domain_bytes_ + working_bytes();
  plan.peak_after_a_bytes = scalars + domain_bytes_ + working_bytes();
  return plan;
}

// The resident sets and one job at its peak (its stream buffers included) beside the budget's
// margin: the placement was planned for it, but the scratch is known only now.
void AssignmentWorkload::check_fits(Device& device) const {
  const Bytes card = device.memory_info().total_bytes;
  const Bytes needed = shape_.resident_bytes() + memory_plan(0).peak_bytes + safety_margin_bytes_;
  if (needed > card) {
    throw InputError(fmt::format(
        "the key's resident sets ({}: {}) and one proof at its peak ({}) with the budget's margin ({}) need {}, "
        "above the device's {}",
        describe_assignment_placement(placement_), format_bytes(shape_.resident_bytes()),
        format_bytes(memory_plan(0).peak_bytes), format_bytes(safety_margin_bytes_), format_bytes(needed),
        format_bytes(card)));
  }
}

asio::awaitable<void> AssignmentWorkload::set_up(Device& device, int) {
  msm_scratch_bytes_ = std::max(msm_scratch_bytes_, program_msm_scratch_bytes(device, shape_));
  domain_bytes_ = std::max(domain_bytes_, domain_bytes_on(device, key_.domain_size()));
  if (domain_bytes_ == 0) {
    throw std::runtime_error(fmt::format("the device tells no size for the NTT domain of 2^{} ({} and {})",
                                         domain_log2_, kernel::ntt_domain_init, kernel::ntt_twiddles));
  }
  check_fits(device);
  co_await pin_streamed_sets(device);
  // Where an earlier run left the sets on this device they are used as they are; what a failed
  // set-up left is freed and made again.
  const auto* held = key_state_->entry(device);
  if (held != nullptr && !held->complete) {
    if (const auto stale = key_state_->take(device)) co_await AssignmentKeyState::free_sets(device, stale->sets);
    held = nullptr;
  }
  if (held == nullptr) {
    auto& entry = key_state_->fresh_entry(device, placement_);
    co_await upload_key(device, entry.sets);
    key_state_->completed(device);
  }
}

// Each resident set from the key's own bytes, each pointer kept as soon as it is allocated, so
// that a set-up that fails halfway leaves nothing tear_down cannot find.
asio::awaitable<void> AssignmentWorkload::upload_key(Device& device, AssignmentKeyState::Sets& sets) const {
  const auto stream = device.create_stream();
  try {
    for (std::size_t set = 0; set < kKeySetCount; ++set) {
      if (!kept_on_device(shape_.sets[set].placement)) continue;
      const HostRange source = set_host(set);
      sets[set] = co_await device.allocate(std::max<Bytes>(source.bytes, 1));
      if (source.bytes > 0) co_await device.copy_to_device(sets[set], source, stream);
    }
    co_await device.synchronize_stream(stream);
  } catch (...) {
    device.destroy_stream(stream);
    throw;
  }
  device.destroy_stream(stream);
}

asio::awaitable<void> AssignmentWorkload::pin_streamed_sets(Device& device) {
  co_await pinning_.run([&]() -> asio::awaitable<void> {
    for (std::size_t set = 0; set < kKeySetCount; ++set) {
      const HostRange range = set_host(set);
      if (shape_.sets[set].placement != SetPlacement::streamed || range.bytes == 0 || key_state_->pinned(range))
        continue;
      co_await device.register_host(range);
      key_state_->add_pinned(range, device);
    }
  });
}

asio::awaitable<void> AssignmentWorkload::tear_down(Device& device, int) {
  if (keep_key_) {
    // Kept for the next run, unless its set-up did not complete.
    const auto* held = key_state_->entry(device);
    if (held == nullptr || held->complete) co_return;
  }
  if (const auto entry = key_state_->take(device)) co_await AssignmentKeyState::free_sets(device, entry->sets);
  // A private state: the devices are torn down one after another, and the last one's gives the
  // registration back.
  if (!keep_key_ && !key_state_->holds_devices()) co_await key_state_->release(&device);
}

AssignmentWorkload::JobState& AssignmentWorkload::state(int job) {
  std::lock_guard lock(mutex_);
  return states_[job];
}

asio::awaitable<void> AssignmentWorkload::prepare(int job, Device&, std::span<const HostRange> inputs) {
  STAGEHAND_ASSERT(inputs.size() == 4, "job {}: {} input buffers, a, b, c and the scalars are 4", job, inputs.size());
  const auto& assignment = jobs_.at(static_cast<std::size_t>(job)).assignment;
  auto& job_state = state(job);
  const auto steps = [&] {
    fill_inputs(assignment, inputs);
    const std::span<const math::Fr> scalars(reinterpret_cast<const math::Fr*>(inputs[3].data()), scalar_count_);
    count_light(scalars, job_state);
  };
  if (host_work_ != nullptr) {
    co_await host_work_->run(steps);
  } else {
    steps();
  }
}

void AssignmentWorkload::fill_inputs(const AssignmentView& assignment, std::span<const HostRange> inputs) const {
  static_assert(sizeof(math::Fr) == kFrBytes && std::is_trivially_copyable_v<math::Fr>);
  const Bytes polynomial = kFrBytes * key_.domain_size();
  const Bytes given = kFrBytes * assignment.a.size();
  STAGEHAND_ASSERT(given <= polynomial && inputs[3].bytes >= kFrBytes * scalar_count_);
  for (std::size_t i = 0; i < 3; ++i) {
    STAGEHAND_ASSERT(inputs[i].bytes >= polynomial);
    const auto& values = i == 0 ? assignment.a : i == 1 ? assignment.b : assignment.c;
    STAGEHAND_ASSERT(kFrBytes * values.size() == given);
    const auto* source = reinterpret_cast<const std::byte*>(values.data());
    // bellperson zero-pads to the domain; ranges of many MiB, so that small copies take one thread.
    math::detail::run_ranges(polynomial, thread_count_, 16 * kMiB, [&](std::size_t begin, std::size_t end) {
      const std::size_t copied_end = std::min<std::size_t>(end, given);
      if (begin < copied_end) std::memcpy(inputs[i].data() + begin, source + begin, copied_end - begin);
      const std::size_t zero_begin = std::max<std::size_t>(begin, given);
      if (zero_begin < end) std::memset(inputs[i].data() + zero_begin, 0, end - zero_begin);
    });
  }
  // aux (L's), then the A query's, then the B queries'.
  const std::span<math::Fr> scalars(reinterpret_cast<math::Fr*>(inputs[3].data()), scalar_count_);
  const auto aux = scalars.first(assignment.aux.size());
  math::detail::run_ranges(aux.size(), thread_count_, kMiB, [&](std::size_t begin, std::size_t end) {
    std::copy(assignment.aux.begin() + static_cast<std::ptrdiff_t>(begin),
              assignment.aux.begin() + static_cast<std::ptrdiff_t>(end),
              aux.begin() + static_cast<std::ptrdiff_t>(begin));
  });
  const auto a_query = scalars.subspan(scalars_offset(kSetA), a_query_count(assignment));
  gather_a_query_scalars(assignment, a_query, thread_count_);
  const auto b_query = scalars.subspan(scalars_offset(kSetB1), b_query_count(assignment));
  gather_b_query_scalars(assignment, b_query, thread_count_);
  STAGEHAND_ASSERT(scalars_offset(kSetB1) + b_query.size() == scalar_count_, "{} scalars gathered, {} planned",
                   scalars_offset(kSetB1) + b_query.size(), scalar_count_);
}

// One count for each launch run_set_msm makes: the whole set's, and each streamed batch's.
void AssignmentWorkload::count_light(std::span<const math::Fr> scalars, JobState& job_state) const {
  const auto light_among = [&](std::span<const math::Fr> values) {
    std::atomic<std::uint64_t> light{0};
    math::detail::run_ranges(values.size(), thread_count_, kMiB, [&](std::size_t begin, std::size_t end) {
      const auto found = std::count_if(values.begin() + static_cast<std::ptrdiff_t>(begin),
                                       values.begin() + static_cast<std::ptrdiff_t>(end),
                                       [](const math::Fr& value) { return value.is_zero() || value.is_one(); });
      light += static_cast<std::uint64_t>(found);
    });
    return light.load();
  };
  for (const std::size_t set : std::array<std::size_t, 4>{kSetL, kSetA, kSetB1, kSetB2}) {
    const std::uint64_t points = shape_.sets[set].points;
    STAGEHAND_ASSERT(scalars_offset(set) + points <= scalars.size());
    const auto of_set = scalars.subspan(scalars_offset(set), points);
    auto& counts = job_state.light[set];
    counts.clear();
    std::uint64_t whole = 0;
    if (shape_.sets[set].placement == SetPlacement::streamed) {
      std::uint64_t covered = 0;
      for (const auto& batch : streamed_) {
        if (batch.set != set) continue;
        const auto light = light_among(of_set.subspan(batch.first, batch.count));
        counts.push_back(LightCount{batch.first, batch.count, light});
        whole += light;
        covered += batch.count;
      }
      STAGEHAND_ASSERT(covered == points, "set {}: batches of {} points, {} in the set", kAssignmentSetNames[set],
                       covered, points);
    } else {
      whole = light_among(of_set);
    }
    counts.push_back(LightCount{0, points, whole});
  }
}

// The job's scalar buffer holds aux (L's), then the A query's, then the B queries' (B1's and B2's).
std::uint64_t AssignmentWorkload::scalars_offset(std::size_t set) const {
  STAGEHAND_ASSERT(set != kSetH, "h's scalars are the coefficients in a");
  switch (set) {
    case kSetL: return 0;
    case kSetA: return key_.aux_count();
    default: break;
  }
  STAGEHAND_ASSERT(set == kSetB1 || set == kSetB2);
  return key_.aux_count() + key_.a.size();
}

DevicePointer AssignmentWorkload::set_scalars(std::size_t set, DevicePointer scalars,
                                              DevicePointer h_coefficients) const {
  return set == kSetH ? h_coefficients : scalars + kFrBytes * scalars_offset(set);
}

// H's coefficients are computed on the device: none is known to be light.
std::uint64_t AssignmentWorkload::light_scalars(const JobState& job_state, std::size_t set, std::uint64_t first,
                                                std::uint64_t count) const {
  if (set == kSetH) return 0;
  const auto& counts = job_state.light[set];
  const auto found = std::find_if(counts.begin(), counts.end(), [&](const LightCount& entry) {
    return entry.first == first && entry.count == count;
  });
  STAGEHAND_ASSERT(found != counts.end(), "set {}: no light count for scalars [{}, {})", kAssignmentSetNames[set],
                   first, first + count);
  return found->light;
}

asio::awaitable<void> AssignmentWorkload::finish(int job, Device&) {
  JobState job_state;
  {
    std::lock_guard lock(mutex_);
    job_state = std::move(states_.at(job));
    states_.erase(job);
  }
  STAGEHAND_ASSERT(job_state.sums.size() == kResultBytes);
  auto g1_sum = [&](std::size_t set) {
    const auto sum = decode_g1_jacobian(sum_at<kG1JacobianBytes>(job_state.sums, shape_.sets[set].first_sum_offset));
    if (!sum) throw std::runtime_error(fmt::format("the device's {} sum is not a point", kAssignmentSetNames[set]));
    return *sum;
  };
  AssignmentSums sums;
  sums.h = g1_sum(kSetH), sums.l = g1_sum(kSetL), sums.a = g1_sum(kSetA), sums.b1 = g1_sum(kSetB1);
  const auto b2 = decode_g2_jacobian(sum_at<kG2JacobianBytes>(job_state.sums, shape_.sets[kSetB2].first_sum_offset));
  if (!b2) throw std::runtime_error("the device's b_g2 sum is not a point");
  sums.b2 = *b2;
  const auto& request = jobs_.at(static_cast<std::size_t>(job));
  const Proof proof = assemble_assignment_proof(key_.vk, sums, request.randomness);
  if (verifier_) {
    if (const auto why = verifier_->check(proof, request.assignment.inputs.subspan(1))) {
      throw InputError(fmt::format(
          "the proof does not verify against the key ({}): the assignment does not satisfy the circuit", *why));
    }
  }
  on_proof_(job, proof);
  co_return;
}

void AssignmentWorkload::abandon(int job) {
  std::lock_guard lock(mutex_);
  states_.erase(job);
}

}  // namespace stagehand::groth16
