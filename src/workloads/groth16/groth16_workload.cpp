#include "workloads/groth16/groth16_workload.hpp"

#include "device/kernel_abi.hpp"
#include "groth16/encoding.hpp"
#include "groth16/errors.hpp"
#include "groth16/witness.hpp"
#include "math/parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>

namespace stagehand::groth16 {
namespace {

static_assert(sizeof(math::Fr) == 32, "Fr must be its four Montgomery limbs, so that Fr arrays are device bytes");
constexpr std::size_t kJacobianBytes = kernel::kG1JacobianBytes;
constexpr Bytes kFrBytes = sizeof(math::Fr);  // 64 bits, so that counts of the key's u32 multiply without wrapping

HostRange host_range(const void* data, std::size_t bytes) {
  return HostRange{reinterpret_cast<std::uintptr_t>(data), bytes};
}

// A key's points in the device layout, encoded on up to `threads` threads into `bytes` (reused
// from set to set: one host buffer for the whole upload).
template <class Point>
void encode_points(const std::vector<Point>& points, std::vector<std::uint8_t>& bytes, unsigned threads) {
  constexpr std::size_t size = std::is_same_v<Point, math::G1Affine> ? kG1Bytes : kG2Bytes;
  bytes.resize(points.size() * size);
  math::detail::run_ranges(points.size(), threads, 1 << 14, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      if constexpr (size == kG1Bytes) {
        encode_g1(points[i], std::span<std::uint8_t, kG1Bytes>(bytes.data() + i * size, size));
      } else {
        encode_g2(points[i], std::span<std::uint8_t, kG2Bytes>(bytes.data() + i * size, size));
      }
    }
  });
}

math::Fq fq_from(const std::byte* data) {
  math::Fq::LimbArray limbs;
  std::memcpy(limbs.data(), data, 48);
  return *math::Fq::from_montgomery_limbs(limbs);
}
math::Fq2 fq2_from(const std::byte* data) { return math::Fq2{fq_from(data), fq_from(data + 48)}; }

// Where each sum lands in the results (kResultBytes).
constexpr std::size_t kSumA = 0, kSumB1 = 1, kSumC = 2, kSumH = 3;
constexpr std::size_t kSumB2Offset = 4 * kJacobianBytes;
static_assert(kSumB2Offset + kernel::kG2JacobianBytes == Groth16Workload::kResultBytes);

// Built outside the coroutines: GCC 12 miscompiles braced lists that live across a co_await.
template <class... Pointers>
std::vector<DevicePointer> pointers(Pointers... list) {
  return {list...};
}

}  // namespace

Groth16Workload::Groth16Workload(const ProvingKey& key, std::filesystem::path zkey_path, std::vector<ProofJob> jobs,
                                 HostWork& host_work, unsigned thread_count, ProofHandler on_proof, ProofChecks checks,
                                 AbcStep abc_step)
    : key_(key), zkey_path_(std::move(zkey_path)), jobs_(std::move(jobs)), host_work_(host_work), thread_count_(thread_count),
      on_proof_(std::move(on_proof)), checks_(std::move(checks)), abc_step_(abc_step), check_seconds_(jobs_.size(), 0.0) {
  if (checks_.verify) verifier_.emplace(key_);
  if (checks_.r1cs != nullptr && (checks_.r1cs->n_wires != key_.n_vars || checks_.r1cs->n_public() != key_.n_public)) {
    throw InputError(fmt::format("{}: {} wires ({} public) but {} has {} signals ({} public): the constraint system of another circuit",
                                 checks_.r1cs_path.string(), checks_.r1cs->n_wires, checks_.r1cs->n_public(), zkey_path_.string(),
                                 key_.n_vars, key_.n_public));
  }
}

Bytes Groth16Workload::resident_bytes(const ProvingKey& key, AbcStep abc_step) {
  Bytes bytes = (key.a.size() + key.b1.size() + key.c.size() + key.h.size()) * kG1Bytes + key.b2.size() * kG2Bytes;
  if (abc_step == AbcStep::device) bytes += constraint_matrix_layout(key).total_bytes();
  return bytes;
}

Bytes Groth16Workload::resident_bytes() const { return resident_bytes(key_, abc_step_); }

// Sizes in 64 bits throughout: 32 · domain_size in the key's u32 wraps at 2^27, inside the
// 2^28 the readers accept.
// With the a/b/c step on the device the job's one input is the witness (held until the last
// MSM) and a, b, c are the program's working memory; on the host a, b, c are its inputs and the
// witness the program's.
JobMemoryPlan Groth16Workload::memory_plan(int) const {
  const Bytes polynomial = kFrBytes * key_.domain_size;
  const Bytes witness = kFrBytes * key_.n_vars;
  const Bytes rest = kResultBytes + h_scratch_bytes_ + msm_scratch_bytes_;
  if (abc_step_ == AbcStep::device) {
    JobMemoryPlan plan{witness, witness + 3 * polynomial + rest, witness + polynomial + rest, rest, kResultBytes};
    plan.input_count = 1;
    return plan;
  }
  return JobMemoryPlan{polynomial, 3 * polynomial + witness + rest, polynomial + witness + rest, rest, kResultBytes};
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
  const auto started = std::chrono::steady_clock::now();
  // What the kernels need as scratch on this device; one MSM scratch serves the four MSMs.
  h_scratch_bytes_ = std::max(h_scratch_bytes_, device.kernel_scratch_bytes(kernel::groth16_h, key_.domain_size));
  for (std::size_t count : {key_.a.size(), key_.b1.size(), key_.c.size(), key_.h.size()}) {
    msm_scratch_bytes_ = std::max(msm_scratch_bytes_, device.kernel_scratch_bytes(kernel::groth16_msm_g1, count));
  }
  msm_scratch_bytes_ = std::max(msm_scratch_bytes_, device.kernel_scratch_bytes(kernel::groth16_msm_g2, key_.b2.size()));
  // The constraint matrix is built by the first device's set-up (16 bytes a row and 36 an entry
  // on the host, once), not by the constructor: a workload that never runs does not pay for it.
  // The host's a/b/c step uses it too (threaded by rows); only the device keeps a copy of it.
  std::call_once(matrix_built_, [this] { matrix_ = build_constraint_matrix(key_); });
  auto& on_device = keys_[device_index];
  auto upload = [&](const auto& bytes, DevicePointer& target) -> asio::awaitable<void> {
    target = co_await device.allocate(std::max<std::size_t>(bytes.size(), 1));
    if (bytes.empty()) co_return;
    auto stream = device.create_stream();
    co_await device.copy_to_device(target, host_range(bytes.data(), bytes.size()), stream);
    co_await device.synchronize_stream(stream);  // the host bytes may go out of scope after this
    device.destroy_stream(stream);
  };
  // Encoded in parallel: with one thread encoding, the set-up of a 2^22 key (2.6 GiB) took 4.9 s
  // on the H200 machine.
  std::vector<std::uint8_t> bytes;
  encode_points(key_.a, bytes, thread_count_);
  co_await upload(bytes, on_device.a);
  encode_points(key_.b1, bytes, thread_count_);
  co_await upload(bytes, on_device.b1);
  encode_points(key_.b2, bytes, thread_count_);
  co_await upload(bytes, on_device.b2);
  encode_points(key_.c, bytes, thread_count_);
  co_await upload(bytes, on_device.c);
  encode_points(key_.h, bytes, thread_count_);
  co_await upload(bytes, on_device.h);
  if (abc_step_ == AbcStep::device) co_await upload(matrix_->bytes, on_device.matrix);
  set_up_seconds_[device_index] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

asio::awaitable<void> Groth16Workload::tear_down(Device& device, int device_index) {
  auto found = keys_.find(device_index);
  if (found == keys_.end()) co_return;
  auto on_device = found->second;
  keys_.erase(found);
  for (auto pointer : pointers(on_device.a, on_device.b1, on_device.b2, on_device.c, on_device.h, on_device.matrix)) {
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
    // On the device the witness goes straight into the staged input (pinned: no copy on its way
    // to the device) and the job keeps only its public part; on the host the a/b/c step and the
    // program's upload need all of it.
    std::span<const math::Fr> witness;
    if (abc_step_ == AbcStep::device) {
      if (abc.empty() || abc[0].bytes < kFrBytes * key_.n_vars) {
        throw std::invalid_argument("groth16 prepare: the staged input is smaller than the witness");
      }
      const std::span<math::Fr> staged(reinterpret_cast<math::Fr*>(abc[0].data()), key_.n_vars);
      witness = staged.first(proof_job.wtns_bytes ? parse_wtns_into(*proof_job.wtns_bytes, file.string(), staged, thread_count_)
                                                  : read_wtns_into(file, staged, thread_count_));
    } else {
      job_state.witness = proof_job.wtns_bytes ? parse_wtns(*proof_job.wtns_bytes, file.string(), thread_count_)
                                               : read_wtns(file, thread_count_);
      witness = job_state.witness;
    }
    check_witness_matches(key_, witness, zkey_path_, file);
    if (checks_.r1cs != nullptr) {
      if (const auto failing = first_unsatisfied_constraint(*checks_.r1cs, witness)) {
        throw InputError(fmt::format("{}: the witness does not satisfy constraint {} of {} (A·w · B·w ≠ C·w): no proof is made for it",
                                     file.string(), *failing, checks_.r1cs_path.string()));
      }
    }
    if (abc_step_ == AbcStep::device) {
      job_state.witness.assign(witness.begin(), witness.begin() + 1 + key_.n_public);  // what finish needs
    } else {
      evaluate_constraint_matrix(matrix_->layout, matrix_->bytes, witness, as_fr(abc[0]), as_fr(abc[1]), as_fr(abc[2]),
                                 thread_count_);
    }
  });
}

void Groth16Workload::launch_abc(JobContext& context, DevicePointer witness, const Polynomials& polynomials) const {
  const auto& layout = matrix_->layout;
  const Bytes polynomial = kFrBytes * key_.domain_size;
  KernelLaunch launch{kernel::groth16_abc, layout.rows, {layout.entries_a, layout.entries_b, thread_count_},
                      {{witness, kFrBytes * key_.n_vars}, {keys_.at(context.device_index).matrix, layout.total_bytes()}},
                      {{polynomials.a, polynomial}, {polynomials.b, polynomial}, {polynomials.c, polynomial}}};
  context.device.launch(launch, context.compute);
}

void Groth16Workload::launch_h(JobContext& context, const Polynomials& polynomials, const Scratch& scratch) const {
  const Bytes polynomial = kFrBytes * key_.domain_size;
  KernelLaunch launch{kernel::groth16_h, key_.domain_size, {key_.domain_log2, thread_count_}, {},
                      {{polynomials.a, polynomial}, {polynomials.b, polynomial}, {polynomials.c, polynomial}}};
  if (scratch.h) launch.writes.push_back(BufferUse{scratch.h, h_scratch_bytes_});
  context.device.launch(launch, context.compute);
}

void Groth16Workload::launch_msms(JobContext& context, DevicePointer witness, DevicePointer a, DevicePointer results,
                                  const Scratch& scratch) const {
  const auto& points = keys_.at(context.device_index);
  const std::size_t vars = key_.n_vars;
  const std::size_t public_count = key_.n_public + 1;
  auto msm = [&](const char* name, DevicePointer bases, Bytes point_bytes, std::size_t count, DevicePointer scalars,
                 Bytes result_offset, Bytes result_bytes) {
    KernelLaunch launch{name, count, {thread_count_}, {{bases, count * point_bytes}, {scalars, count * kFrBytes}},
                        {{results + result_offset, result_bytes}}};
    if (scratch.msm) launch.writes.push_back(BufferUse{scratch.msm, msm_scratch_bytes_});
    context.device.launch(launch, context.compute);
  };
  auto g1 = [&](DevicePointer bases, std::size_t count, DevicePointer scalars, std::size_t slot) {
    msm(kernel::groth16_msm_g1, bases, kG1Bytes, count, scalars, slot * kJacobianBytes, kJacobianBytes);
  };
  g1(points.a, vars, witness, kSumA);
  g1(points.b1, vars, witness, kSumB1);
  msm(kernel::groth16_msm_g2, points.b2, kG2Bytes, vars, witness, kSumB2Offset, kernel::kG2JacobianBytes);
  if (vars > public_count) {
    g1(points.c, vars - public_count, witness + kFrBytes * public_count, kSumC);
  } else {
    context.device.memset_async(results + kSumC * kJacobianBytes, 0, kJacobianBytes, context.compute);
  }
  g1(points.h, key_.domain_size, a, kSumH);
}

// With the a/b/c step on the device the policy's one input is the witness, and a, b, c are
// allocated here; on the host they are the policy's three inputs and the witness is uploaded here.
asio::awaitable<JobTimes> Groth16Workload::run_program(int job, JobContext& context) {
  auto& job_state = state(job);
  auto& device = context.device;
  auto& memory = context.memory;
  const auto stream = context.compute;
  const bool abc_on_device = abc_step_ == AbcStep::device;
  const Bytes witness_bytes = kFrBytes * key_.n_vars;
  const Bytes polynomial = kFrBytes * key_.domain_size;
  DevicePointer witness;
  Polynomials polynomials;
  if (abc_on_device) {
    witness = context.inputs.a;
    polynomials.a = co_await memory.allocate(polynomial, stream);
    polynomials.b = co_await memory.allocate(polynomial, stream);
    polynomials.c = co_await memory.allocate(polynomial, stream);
  } else {
    witness = co_await memory.allocate(witness_bytes, stream);
    polynomials = Polynomials{context.inputs.a, context.inputs.b, context.inputs.c};
  }
  auto results = co_await memory.allocate(kResultBytes, stream);
  Scratch scratch;
  if (h_scratch_bytes_) scratch.h = co_await memory.allocate(h_scratch_bytes_, stream);
  if (msm_scratch_bytes_) scratch.msm = co_await memory.allocate(msm_scratch_bytes_, stream);
  if (!abc_on_device) co_await device.copy_to_device(witness, host_range(job_state.witness.data(), witness_bytes), stream);

  // The first kernel waits on the device for the inputs (uploaded by the policy, maybe still
  // travelling). (Shared with the callback: if the program fails before the stream gets there,
  // the frame is gone.)
  const auto waited = std::make_shared<Nanoseconds>(0);
  const auto before_inputs = device.now();
  for (auto uploaded : {context.inputs.a_uploaded, context.inputs.b_uploaded, context.inputs.c_uploaded}) {
    if (uploaded) device.stream_wait_event(stream, uploaded);
  }
  device.host_callback(stream, [&device, waited, before_inputs] { *waited = device.now() - before_inputs; });
  if (abc_on_device) launch_abc(context, witness, polynomials);
  launch_h(context, polynomials, scratch);
  if (abc_on_device) {
    co_await memory.release(polynomials.b, stream);
    co_await memory.release(polynomials.c, stream);
  }
  co_await memory.release_b_and_c(stream);
  launch_msms(context, witness, polynomials.a, results, scratch);
  if (abc_on_device) co_await memory.release(polynomials.a, stream);
  co_await memory.release_a(stream);

  const auto landing = context.results.at(0).sub(0, kResultBytes);
  co_await device.copy_to_host(landing, results, stream);
  co_await device.synchronize_stream(stream);
  std::memcpy(job_state.sums.data(), landing.data(), kResultBytes);
  for (auto pointer : pointers(abc_on_device ? DevicePointer{} : witness, results, scratch.h, scratch.msm)) {
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
  sums.a = jacobian(kSumA);
  sums.b1 = jacobian(kSumB1);
  sums.c = key_.n_vars > key_.n_public + 1 ? jacobian(kSumC) : math::G1Projective::identity();
  sums.h = jacobian(kSumH);
  const std::byte* b2 = job_state.sums.data() + kSumB2Offset;
  sums.b2.x = fq2_from(b2);
  sums.b2.y = fq2_from(b2 + 96);
  sums.b2.z = fq2_from(b2 + 192);
  Proof proof;
  const auto signals = public_signals(key_, job_state.witness);
  std::optional<std::string> rejection;
  co_await host_work_.run([&] {
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
