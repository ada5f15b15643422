#include "workloads/assignment/assignment_workload.hpp"

#include "device/format.hpp"
#include "device/kernel_abi.hpp"
#include "groth16/encoding.hpp"
#include "math/ntt.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>

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

bool AssignmentKeyState::holds_anything() const {
  std::lock_guard lock(mutex_);
  return !devices_.empty();
}

std::uint64_t AssignmentKeyState::set_ups() const {
  std::lock_guard lock(mutex_);
  return set_ups_;
}

asio::awaitable<void> AssignmentKeyState::free_sets(Device& device, const Sets& sets) {
  for (const auto pointer : {sets.h, sets.l, sets.a, sets.b_g1, sets.b_g2}) {
    if (pointer) co_await device.free(pointer);
  }
}

asio::awaitable<void> AssignmentKeyState::release() {
  std::map<int, OnDevice> held;
  {
    std::lock_guard lock(mutex_);
    held.swap(devices_);
  }
  for (const auto& [index, entry] : held) co_await free_sets(*entry.device, entry.sets);
}

AssignmentKeyState::OnDevice* AssignmentKeyState::entry(int index) {
  std::lock_guard lock(mutex_);
  const auto found = devices_.find(index);
  return found == devices_.end() ? nullptr : &found->second;
}

AssignmentKeyState::OnDevice& AssignmentKeyState::fresh_entry(int index, Device& device) {
  std::lock_guard lock(mutex_);
  STAGEHAND_ASSERT(devices_.find(index) == devices_.end());
  auto& entry = devices_[index];
  entry.device = &device;
  return entry;
}

void AssignmentKeyState::completed(int index) {
  std::lock_guard lock(mutex_);
  devices_.at(index).complete = true;
  ++set_ups_;
}

std::optional<AssignmentKeyState::OnDevice> AssignmentKeyState::take(int index) {
  std::lock_guard lock(mutex_);
  const auto found = devices_.find(index);
  if (found == devices_.end()) return std::nullopt;
  auto entry = found->second;
  devices_.erase(found);
  return entry;
}

AssignmentWorkload::AssignmentWorkload(const ParamsKey& key, std::vector<AssignmentJob> jobs, unsigned thread_count,
                                       ProofHandler on_proof, bool verify, Bytes safety_margin_bytes,
                                       std::shared_ptr<AssignmentKeyState> key_state)
    : key_(key),
      jobs_(std::move(jobs)),
      thread_count_(thread_count),
      on_proof_(std::move(on_proof)),
      verify_(verify),
      safety_margin_bytes_(safety_margin_bytes),
      domain_log2_(static_cast<unsigned>(std::countr_zero(key.domain_size()))),
      scalar_count_(key.aux_count() + key.a.size() + key.b_g1.size()),
      verifier_key_(verifier_key_of(key)),
      key_state_(key_state ? key_state : std::make_shared<AssignmentKeyState>()),
      keep_key_(key_state != nullptr) {
  STAGEHAND_ASSERT(std::has_single_bit(key.domain_size()) && key.b_g1.size() == key.b_g2.size());
  for (std::size_t job = 0; job < jobs_.size(); ++job) check_assignment(key_, jobs_[job].assignment, job);
  if (verify_) verifier_.emplace(verifier_key_);
  domain_arguments_ = domain_arguments(domain_log2_, math::Domain::classic(domain_log2_, thread_count_));
}

Bytes AssignmentWorkload::key_bytes(const ParamsKey& key) {
  return key.h.bytes().size() + key.l.bytes().size() + key.a.bytes().size() + key.b_g1.bytes().size() +
         key.b_g2.bytes().size();
}

Bytes AssignmentWorkload::working_bytes() const {
  return domain_bytes_ + kFrBytes * scalar_count_ + kResultBytes + msm_scratch_bytes_;
}

JobMemoryPlan AssignmentWorkload::memory_plan(int) const {
  const Bytes polynomial = kFrBytes * key_.domain_size();
  JobMemoryPlan plan;
  plan.input_bytes = polynomial;
  plan.peak_bytes = 3 * polynomial + working_bytes();
  plan.peak_after_b_and_c_bytes = polynomial + working_bytes();
  plan.peak_after_a_bytes = working_bytes();
  plan.result_bytes = kResultBytes;
  plan.input_count = 3;
  return plan;
}

// The sets stay resident beside one job at its peak, or the key is refused: streaming them is
// not done for assignments yet.
void AssignmentWorkload::check_fits(Device& device) const {
  const Bytes card = device.memory_info().total_bytes;
  const Bytes needed = key_bytes(key_) + memory_plan(0).peak_bytes + safety_margin_bytes_;
  if (needed > card) {
    throw InputError(
        fmt::format("the key's sets (h, l, a, b_g1, b_g2: {}) and one proof at its peak ({}) with the budget's margin "
                    "({}) need {}, "
                    "above the device's {}: a key whose sets do not stay resident is not proved from assignments yet",
                    format_bytes(key_bytes(key_)), format_bytes(memory_plan(0).peak_bytes),
                    format_bytes(safety_margin_bytes_), format_bytes(needed), format_bytes(card)));
  }
}

asio::awaitable<void> AssignmentWorkload::set_up(Device& device, int device_index) {
  // One MSM scratch, sized for the largest MSM of each group, serves them all (they run one after
  // another on the compute stream).
  const std::uint64_t g1_points = std::max({key_.h.size(), key_.l.size(), key_.a.size(), key_.b_g1.size()});
  msm_scratch_bytes_ = std::max({msm_scratch_bytes_, device.kernel_scratch_bytes(kernel::groth16_msm_g1, g1_points),
                                 device.kernel_scratch_bytes(kernel::groth16_msm_g2, key_.b_g2.size())});
  // The domain's table: what the device asks for ntt_domain_init's one write (the simulator), or
  // for ntt_twiddles's, the same table for snarkjs's roots (the CUDA launchers' ntt_domain_bytes).
  domain_bytes_ = std::max({domain_bytes_, device.kernel_scratch_bytes(kernel::ntt_domain_init, key_.domain_size()),
                            device.kernel_scratch_bytes(kernel::ntt_twiddles, key_.domain_size())});
  if (domain_bytes_ == 0) {
    throw std::runtime_error(fmt::format("the device tells no size for the NTT domain of 2^{} ({} and {})",
                                         domain_log2_, kernel::ntt_domain_init, kernel::ntt_twiddles));
  }
  check_fits(device);
  // Where an earlier run left the sets on this device they are used as they are; what a failed
  // set-up left is freed and made again.
  const auto* held = key_state_->entry(device_index);
  if (held != nullptr && (!held->complete || held->device != &device)) {
    if (const auto stale = key_state_->take(device_index))
      co_await AssignmentKeyState::free_sets(*stale->device, stale->sets);
    held = nullptr;
  }
  if (held == nullptr) {
    auto& entry = key_state_->fresh_entry(device_index, device);
    co_await upload_key(device, entry.sets);
    key_state_->completed(device_index);
  }
}

// Each set from the key's own bytes, each pointer kept as soon as it is allocated, so that a
// set-up that fails halfway leaves nothing tear_down cannot find.
asio::awaitable<void> AssignmentWorkload::upload_key(Device& device, AssignmentKeyState::Sets& sets) const {
  const auto stream = device.create_stream();
  try {
    for (auto [target, bytes] :
         {std::pair{&sets.h, key_.h.bytes()}, std::pair{&sets.l, key_.l.bytes()}, std::pair{&sets.a, key_.a.bytes()},
          std::pair{&sets.b_g1, key_.b_g1.bytes()}, std::pair{&sets.b_g2, key_.b_g2.bytes()}}) {
      *target = co_await device.allocate(std::max<Bytes>(bytes.size(), 1));
      if (!bytes.empty()) co_await device.copy_to_device(*target, host_range_of(bytes.data(), bytes.size()), stream);
    }
    co_await device.synchronize_stream(stream);
  } catch (...) {
    device.destroy_stream(stream);
    throw;
  }
  device.destroy_stream(stream);
}

asio::awaitable<void> AssignmentWorkload::tear_down(Device& device, int device_index) {
  if (keep_key_) {
    // Kept for the next run, unless its set-up did not complete.
    const auto* held = key_state_->entry(device_index);
    if (held == nullptr || held->complete) co_return;
  }
  if (const auto entry = key_state_->take(device_index))
    co_await AssignmentKeyState::free_sets(*entry->device, entry->sets);
}

AssignmentWorkload::JobState& AssignmentWorkload::state(int job) {
  std::lock_guard lock(mutex_);
  return states_[job];
}

asio::awaitable<void> AssignmentWorkload::prepare(int job, Device&, std::span<const HostRange> abc) {
  STAGEHAND_ASSERT(abc.size() == 3);
  const auto& assignment = jobs_.at(static_cast<std::size_t>(job)).assignment;
  const Bytes polynomial = kFrBytes * key_.domain_size();
  const Bytes given = kFrBytes * assignment.a.size();
  for (std::size_t i = 0; i < 3; ++i) {
    STAGEHAND_ASSERT(abc[i].bytes >= polynomial);
    const auto& values = i == 0 ? assignment.a : i == 1 ? assignment.b : assignment.c;
    std::memcpy(abc[i].data(), values.data(), given);
    std::memset(abc[i].data() + given, 0, polynomial - given);  // bellperson zero-pads to the domain
  }
  auto& job_state = state(job);
  auto& scalars = job_state.scalars;
  scalars.assign(assignment.aux.begin(), assignment.aux.end());
  for (const auto& query : {a_query_scalars(assignment), b_query_scalars(assignment)}) {
    scalars.insert(scalars.end(), query.begin(), query.end());
  }
  STAGEHAND_ASSERT(scalars.size() == scalar_count_);
  const std::array<std::uint64_t, 4> ends{0, key_.aux_count(), key_.aux_count() + key_.a.size(), scalar_count_};
  for (std::size_t query = 0; query < job_state.light.size(); ++query) {
    job_state.light[query] = static_cast<std::uint64_t>(
        std::count_if(scalars.begin() + static_cast<std::ptrdiff_t>(ends[query]),
                      scalars.begin() + static_cast<std::ptrdiff_t>(ends[query + 1]),
                      [](const math::Fr& value) { return value.is_zero() || value.is_one(); }));
  }
  co_return;
}

void AssignmentWorkload::launch_msm(JobContext& context, const char* kernel, DevicePointer points,
                                    DevicePointer scalars, std::uint64_t count, DevicePointer result,
                                    DevicePointer scratch, std::uint64_t light_units) const {
  if (count == 0) return;  // the sum stays the identity the results were cleared to
  const bool g1 = kernel == kernel::groth16_msm_g1;
  KernelLaunch launch{kernel,
                      count,
                      {thread_count_},
                      {BufferUse{points, count * (g1 ? kernel::kG1AffineBytes : kernel::kG2AffineBytes)},
                       BufferUse{scalars, count * kFrBytes}},
                      {BufferUse{result, g1 ? kernel::kG1JacobianBytes : kernel::kG2JacobianBytes}}};
  if (scratch) launch.writes.push_back(BufferUse{scratch, msm_scratch_bytes_});
  launch.light_units = light_units;
  context.device.launch(launch, context.compute);
}

asio::awaitable<JobTimes> AssignmentWorkload::run_program(int job, JobContext& context) {
  auto& job_state = state(job);
  auto& device = context.device;
  auto& memory = context.memory;
  const auto stream = context.compute;
  const auto* held = key_state_->entry(context.device_index);
  STAGEHAND_ASSERT(held != nullptr && held->complete && held->device == &context.device);
  const AssignmentKeyState::Sets sets = held->sets;
  const std::uint64_t m = key_.domain_size();
  const auto domain = co_await memory.allocate(domain_bytes_, stream);
  const auto scalars = co_await memory.allocate(kFrBytes * scalar_count_, stream);
  const auto results = co_await memory.allocate(kResultBytes, stream);
  const auto scratch = msm_scratch_bytes_ ? co_await memory.allocate(msm_scratch_bytes_, stream) : DevicePointer{};
  device.memset_async(results, 0, kResultBytes, stream);
  co_await claimed_upload(device, context.link, scalars,
                          host_range_of(job_state.scalars.data(), kFrBytes * scalar_count_), stream);
  // The H step waits on the device for a, b and c (uploaded by the policy, maybe still
  // travelling). Shared with the callback: if the program fails before the stream gets there,
  // the frame is gone.
  const auto waited = std::make_shared<Nanoseconds>(0);
  const auto before_inputs = device.now();
  for (const auto event : {context.inputs.a_uploaded, context.inputs.b_uploaded, context.inputs.c_uploaded}) {
    if (event) device.stream_wait_event(stream, event);
  }
  device.host_callback(stream, [&device, waited, before_inputs] { *waited = device.now() - before_inputs; });
  device.launch(KernelLaunch{kernel::ntt_domain_init, m, domain_arguments_, {}, {BufferUse{domain, domain_bytes_}}},
                stream);
  const Bytes polynomial = kFrBytes * m;
  device.launch(KernelLaunch{kernel::h_polynomial_classic,
                             m,
                             {domain_log2_},
                             {BufferUse{domain, domain_bytes_}},
                             {BufferUse{context.inputs.a, polynomial}, BufferUse{context.inputs.b, polynomial},
                              BufferUse{context.inputs.c, polynomial}}},
                stream);
  co_await memory.release_b_and_c(stream);
  constexpr Bytes g1_sum = kernel::kG1JacobianBytes;
  launch_msm(context, kernel::groth16_msm_g1, sets.h, context.inputs.a, key_.h.size(), results, scratch);
  co_await memory.release_a(stream);
  const auto aux = key_.aux_count(), a_count = key_.a.size(), b_count = key_.b_g1.size();
  const auto& light = job_state.light;
  launch_msm(context, kernel::groth16_msm_g1, sets.l, scalars, aux, results + g1_sum, scratch, light[0]);
  launch_msm(context, kernel::groth16_msm_g1, sets.a, scalars + kFrBytes * aux, a_count, results + 2 * g1_sum, scratch,
             light[1]);
  const auto b_scalars = scalars + kFrBytes * (aux + a_count);
  launch_msm(context, kernel::groth16_msm_g1, sets.b_g1, b_scalars, b_count, results + 3 * g1_sum, scratch, light[2]);
  launch_msm(context, kernel::groth16_msm_g2, sets.b_g2, b_scalars, b_count, results + 4 * g1_sum, scratch, light[2]);
  const auto landing = context.results.at(0).sub(0, kResultBytes);
  co_await device.copy_to_host(landing, results, stream);
  co_await device.synchronize_stream(stream);
  job_state.sums.assign(reinterpret_cast<const std::uint8_t*>(landing.data()),
                        reinterpret_cast<const std::uint8_t*>(landing.data()) + kResultBytes);
  for (const auto pointer : {domain, scalars, results, scratch}) {
    if (pointer) co_await memory.release(pointer, stream);
  }
  JobTimes times;
  times.waited_for_inputs_ns = *waited;
  co_return times;
}

asio::awaitable<void> AssignmentWorkload::finish(int job, Device&) {
  JobState job_state;
  {
    std::lock_guard lock(mutex_);
    job_state = std::move(states_.at(job));
    states_.erase(job);
  }
  STAGEHAND_ASSERT(job_state.sums.size() == kResultBytes);
  constexpr std::size_t g1 = kernel::kG1JacobianBytes;
  auto g1_sum = [&](std::size_t index, const char* name) {
    const auto sum = decode_g1_jacobian(sum_at<kG1JacobianBytes>(job_state.sums, index * g1));
    if (!sum) throw std::runtime_error(fmt::format("the device's {} sum is not a point", name));
    return *sum;
  };
  AssignmentSums sums;
  sums.h = g1_sum(0, "H"), sums.l = g1_sum(1, "L"), sums.a = g1_sum(2, "A"), sums.b1 = g1_sum(3, "B1");
  const auto b2 = decode_g2_jacobian(sum_at<kG2JacobianBytes>(job_state.sums, 4 * g1));
  if (!b2) throw std::runtime_error("the device's B2 sum is not a point");
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
