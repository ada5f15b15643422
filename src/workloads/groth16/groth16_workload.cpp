#include "workloads/groth16/groth16_workload.hpp"

#include "device/kernel_abi.hpp"
#include "groth16/encoding.hpp"
#include "groth16/errors.hpp"
#include "groth16/witness.hpp"
#include "math/msm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

namespace stagehand::groth16 {
namespace {

static_assert(sizeof(math::Fr) == 32, "Fr must be its four Montgomery limbs, so that Fr arrays are device bytes");
constexpr std::size_t kJacobianBytes = kernel::kG1JacobianBytes;
constexpr Bytes kFrBytes = sizeof(math::Fr);  // 64 bits, so that counts of the key's u32 multiply without wrapping

HostRange host_range(const void* data, std::size_t bytes) {
  return HostRange{reinterpret_cast<std::uintptr_t>(data), bytes};
}

std::vector<std::uint8_t> encode_points(const std::vector<math::G1Affine>& points) {
  std::vector<std::uint8_t> bytes;
  bytes.reserve(points.size() * kG1Bytes);
  for (const auto& point : points) encode_g1(point, bytes);
  return bytes;
}

math::Fq fq_from(const std::byte* data) {
  math::Fq::LimbArray limbs;
  std::memcpy(limbs.data(), data, 48);
  return *math::Fq::from_montgomery_limbs(limbs);
}

// Built outside the coroutines: GCC 12 miscompiles braced lists that live across a co_await.
std::vector<DevicePointer> pointers(DevicePointer first, DevicePointer second, DevicePointer third, DevicePointer fourth) {
  return {first, second, third, fourth};
}

}  // namespace

Groth16Workload::Groth16Workload(const ProvingKey& key, std::filesystem::path zkey_path, std::vector<ProofJob> jobs,
                                 HostWork& host_work, unsigned thread_count, ProofHandler on_proof, ProofChecks checks)
    : key_(key), zkey_path_(std::move(zkey_path)), jobs_(std::move(jobs)), host_work_(host_work), thread_count_(thread_count),
      on_proof_(std::move(on_proof)), checks_(std::move(checks)), check_seconds_(jobs_.size(), 0.0) {
  if (checks_.verify) verifier_.emplace(key_);
  if (checks_.r1cs != nullptr && (checks_.r1cs->n_wires != key_.n_vars || checks_.r1cs->n_public() != key_.n_public)) {
    throw InputError(fmt::format("{}: {} wires ({} public) but {} has {} signals ({} public): the constraint system of another circuit",
                                 checks_.r1cs_path.string(), checks_.r1cs->n_wires, checks_.r1cs->n_public(), zkey_path_.string(),
                                 key_.n_vars, key_.n_public));
  }
}

Bytes Groth16Workload::resident_bytes() const {
  return (key_.a.size() + key_.b1.size() + key_.c.size() + key_.h.size()) * kG1Bytes;
}

// Sizes in 64 bits throughout: 32 · domain_size in the key's u32 wraps at 2^27, inside the
// 2^28 the readers accept.
JobMemoryPlan Groth16Workload::memory_plan(int) const {
  const Bytes polynomial = kFrBytes * key_.domain_size;
  const Bytes rest = kFrBytes * key_.n_vars + kResultBytes + h_scratch_bytes_ + msm_scratch_bytes_;
  return JobMemoryPlan{polynomial, 3 * polynomial + rest, polynomial + rest, rest, kResultBytes};
}

Groth16Workload::JobState& Groth16Workload::state(int job) {
  std::lock_guard lock(states_mutex_);
  return states_[job];  // map nodes stay put: the reference outlives the lock
}

void Groth16Workload::abandon(int job) {
  std::lock_guard lock(states_mutex_);
  states_.erase(job);
}

asio::awaitable<void> Groth16Workload::set_up(Device& device, int device_index) {
  // What the kernels need as scratch on this device; one MSM scratch serves the four MSMs.
  h_scratch_bytes_ = std::max(h_scratch_bytes_, device.kernel_scratch_bytes(kernel::groth16_h, key_.domain_size));
  for (std::size_t count : {key_.a.size(), key_.b1.size(), key_.c.size(), key_.h.size()}) {
    msm_scratch_bytes_ = std::max(msm_scratch_bytes_, device.kernel_scratch_bytes(kernel::groth16_msm_g1, count));
  }
  auto& on_device = keys_[device_index];
  auto upload = [&](const std::vector<math::G1Affine>& points, DevicePointer& target) -> asio::awaitable<void> {
    auto bytes = encode_points(points);
    target = co_await device.allocate(std::max<std::size_t>(bytes.size(), 1));
    if (bytes.empty()) co_return;
    auto stream = device.create_stream();
    co_await device.copy_to_device(target, host_range(bytes.data(), bytes.size()), stream);
    co_await device.synchronize_stream(stream);  // the host bytes go out of scope here
    device.destroy_stream(stream);
  };
  co_await upload(key_.a, on_device.a);
  co_await upload(key_.b1, on_device.b1);
  co_await upload(key_.c, on_device.c);
  co_await upload(key_.h, on_device.h);
}

asio::awaitable<void> Groth16Workload::tear_down(Device& device, int device_index) {
  auto found = keys_.find(device_index);
  if (found == keys_.end()) co_return;
  auto on_device = found->second;
  keys_.erase(found);
  for (auto pointer : pointers(on_device.a, on_device.b1, on_device.c, on_device.h)) {
    if (!pointer) continue;
    try {
      co_await device.free(pointer);
    } catch (...) {
      // A lost device: free the rest all the same.
    }
  }
}

asio::awaitable<void> Groth16Workload::prepare(int job, Device&, std::span<const HostRange> abc) {
  auto& job_state = state(job);
  const auto& proof_job = jobs_.at(static_cast<std::size_t>(job));
  const auto& file = proof_job.wtns;
  const std::size_t n = key_.domain_size;
  auto as_fr = [n](const HostRange& range) {
    if (range.bytes < kFrBytes * n) throw std::invalid_argument("groth16 prepare: a staged buffer is smaller than the domain");
    return std::span<math::Fr>(reinterpret_cast<math::Fr*>(range.data()), n);
  };
  co_await host_work_.run([&] {
    job_state.witness = proof_job.wtns_bytes ? parse_wtns(*proof_job.wtns_bytes, file.string()) : read_wtns(file);
    check_witness_matches(key_, job_state.witness, zkey_path_, file);
    if (checks_.r1cs != nullptr) {
      if (const auto failing = first_unsatisfied_constraint(*checks_.r1cs, job_state.witness)) {
        throw InputError(fmt::format("{}: the witness does not satisfy constraint {} of {} (A·w · B·w ≠ C·w): no proof is made for it",
                                     file.string(), *failing, checks_.r1cs_path.string()));
      }
    }
    evaluate_constraints(key_, job_state.witness, as_fr(abc[0]), as_fr(abc[1]), as_fr(abc[2]));
  });
}

void Groth16Workload::launch_h(JobContext& context, const Scratch& scratch) const {
  const Bytes polynomial = kFrBytes * key_.domain_size;
  KernelLaunch launch{kernel::groth16_h, key_.domain_size, {key_.domain_log2, thread_count_}, {},
                      {{context.inputs.a, polynomial}, {context.inputs.b, polynomial}, {context.inputs.c, polynomial}}};
  if (scratch.h) launch.writes.push_back(BufferUse{scratch.h, h_scratch_bytes_});
  context.device.launch(launch, context.compute);
}

void Groth16Workload::launch_msms(JobContext& context, DevicePointer witness, DevicePointer results,
                                  const Scratch& scratch) const {
  const auto& points = keys_.at(context.device_index);
  const std::size_t vars = key_.n_vars;
  const std::size_t public_count = key_.n_public + 1;
  auto msm = [&](DevicePointer bases, std::size_t count, DevicePointer scalars, std::size_t slot) {
    KernelLaunch launch{kernel::groth16_msm_g1, count, {thread_count_}, {{bases, count * kG1Bytes}, {scalars, count * kFrBytes}},
                        {{results + slot * kJacobianBytes, kJacobianBytes}}};
    if (scratch.msm) launch.writes.push_back(BufferUse{scratch.msm, msm_scratch_bytes_});
    context.device.launch(launch, context.compute);
  };
  msm(points.a, vars, witness, 0);
  msm(points.b1, vars, witness, 1);
  if (vars > public_count) {
    msm(points.c, vars - public_count, witness + kFrBytes * public_count, 2);
  } else {
    context.device.memset_async(results + 2 * kJacobianBytes, 0, kJacobianBytes, context.compute);
  }
  msm(points.h, key_.domain_size, context.inputs.a, 3);
}

asio::awaitable<JobTimes> Groth16Workload::run_program(int job, JobContext& context) {
  auto& job_state = state(job);
  auto& device = context.device;
  auto& memory = context.memory;
  const auto stream = context.compute;
  const Bytes witness_bytes = kFrBytes * key_.n_vars;
  auto witness = co_await memory.allocate(witness_bytes, stream);
  auto results = co_await memory.allocate(kResultBytes, stream);
  Scratch scratch;
  if (h_scratch_bytes_) scratch.h = co_await memory.allocate(h_scratch_bytes_, stream);
  if (msm_scratch_bytes_) scratch.msm = co_await memory.allocate(msm_scratch_bytes_, stream);
  co_await device.copy_to_device(witness, host_range(job_state.witness.data(), witness_bytes), stream);

  // The H step waits on the device for a, b and c (uploaded by the policy, maybe still travelling).
  // (Shared with the callback: if the program fails before the stream gets there, the frame is gone.)
  const auto waited = std::make_shared<Nanoseconds>(0);
  const auto before_inputs = device.now();
  for (auto uploaded : {context.inputs.a_uploaded, context.inputs.b_uploaded, context.inputs.c_uploaded}) {
    if (uploaded) device.stream_wait_event(stream, uploaded);
  }
  device.host_callback(stream, [&device, waited, before_inputs] { *waited = device.now() - before_inputs; });
  launch_h(context, scratch);
  co_await memory.release_b_and_c(stream);
  launch_msms(context, witness, results, scratch);
  co_await memory.release_a(stream);

  const auto landing = context.results.at(0).sub(0, kResultBytes);
  co_await device.copy_to_host(landing, results, stream);
  co_await device.synchronize_stream(stream);
  std::memcpy(job_state.sums.data(), landing.data(), kResultBytes);
  for (auto pointer : pointers(witness, results, scratch.h, scratch.msm)) {
    if (pointer) co_await memory.release(pointer, stream);
  }
  JobTimes times;
  times.waited_for_inputs_ns = *waited;
  co_return times;
}

asio::awaitable<void> Groth16Workload::finish(int job, Device&) {
  auto& job_state = state(job);
  auto jacobian = [&](std::size_t slot) {
    const std::byte* data = job_state.sums.data() + slot * kJacobianBytes;
    math::G1Projective point;
    point.x = fq_from(data);
    point.y = fq_from(data + 48);
    point.z = fq_from(data + 96);
    return point;
  };
  MsmResults sums;
  sums.a = jacobian(0);
  sums.b1 = jacobian(1);
  sums.c = key_.n_vars > key_.n_public + 1 ? jacobian(2) : math::G1Projective::identity();
  sums.h = jacobian(3);
  Proof proof;
  const auto signals = public_signals(key_, job_state.witness);
  std::optional<std::string> rejection;
  co_await host_work_.run([&] {
    sums.b2 = math::msm(key_.b2, job_state.witness, thread_count_);
    proof = assemble_proof(key_, sums, jobs_.at(static_cast<std::size_t>(job)).randomness);
    if (verifier_) {
      const auto start = std::chrono::steady_clock::now();
      rejection = verifier_->check(proof, signals);
      check_seconds_.at(static_cast<std::size_t>(job)) =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  });
  if (rejection) {
    const auto& file = jobs_.at(static_cast<std::size_t>(job)).wtns;
    abandon(job);
    const std::string hint = checks_.r1cs != nullptr ? "" : "; with the .r1cs (--r1cs) the witness is checked constraint by constraint";
    throw std::runtime_error(fmt::format("the proof does not verify: {} (does {} satisfy the circuit?{}); nothing is written for it",
                                         *rejection, file.string(), hint));
  }
  if (on_proof_) on_proof_(job, proof, signals);
  abandon(job);
}

}  // namespace stagehand::groth16
