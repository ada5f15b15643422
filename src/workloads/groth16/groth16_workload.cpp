#include "workloads/groth16/groth16_workload.hpp"

#include "device/format.hpp"
#include "groth16/errors.hpp"
#include "groth16/witness.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <utility>

namespace stagehand::groth16 {
namespace {

static_assert(sizeof(math::Fr) == 32, "Fr must be its four Montgomery limbs, so that Fr arrays are device bytes");
constexpr Bytes kFrBytes = sizeof(math::Fr);  // 64 bits, so that counts of the key's u32 multiply without wrapping

// A staged a, b or c as the domain's n values; the one check that the staging buffer holds them.
std::span<math::Fr> staged_polynomial(const HostRange& range, std::size_t n) {
  if (range.bytes < kFrBytes * n)
    throw std::invalid_argument("groth16 prepare: a staged buffer is smaller than the domain");
  return std::span<math::Fr>(reinterpret_cast<math::Fr*>(range.data()), n);
}

}  // namespace

Groth16Workload::Groth16Workload(const ProvingKey& key, std::filesystem::path zkey_path, std::vector<ProofJob> jobs,
                                 HostWork& host_work, unsigned thread_count, ProofHandler on_proof, ProofChecks checks,
                                 AbcStep abc_step, KeyPlacement placement, std::shared_ptr<DeviceKeyState> device_state,
                                 const KeySizes* sizes)
    : Groth16Program(sizes != nullptr ? *sizes : KeySizes::of(key), abc_step, placement, std::move(device_state),
                     &host_work, thread_count, zkey_path.string()),
      key_(key),
      zkey_path_(std::move(zkey_path)),
      jobs_(std::make_move_iterator(jobs.begin()), std::make_move_iterator(jobs.end())),
      on_proof_(std::move(on_proof)),
      checks_(std::move(checks)),
      check_seconds_(jobs_.size(), 0.0) {
  if (checks_.verify) verifier_.emplace(key);
  if (checks_.r1cs != nullptr) check_constraint_system(*checks_.r1cs, checks_.r1cs_path, key, zkey_path_);
}

int Groth16Workload::add_job(ProofJob job) {
  jobs_.push_back(std::move(job));
  check_seconds_.push_back(0.0);
  STAGEHAND_ASSERT(check_seconds_.size() == jobs_.size(), "{}: {} jobs with {} check times", zkey_path_.string(),
                   jobs_.size(), check_seconds_.size());
  return static_cast<int>(jobs_.size()) - 1;
}

// The constraint matrix is built by the key state's first set-up (16 bytes a row and 36 an entry
// on the host, once), not by the constructor: a workload that never runs does not pay for it. The
// host's a/b/c step uses it too (threaded by rows); only the device keeps a copy of it.
void Groth16Workload::before_set_up() {
  matrix_ = &device_state().host_matrix(key_);
  if (abc_step() == AbcStep::streamed) cut_matrix(cut_constraint_matrix(*matrix_, stream_buffer_size()));
}

HostRange Groth16Workload::set_host(std::size_t set) const {
  auto range = [](std::span<const std::uint8_t> bytes) { return host_range(bytes.data(), bytes.size()); };
  switch (set) {
    case kSetH: return range(key_.h.bytes());
    case kSetA: return range(key_.a.bytes());
    case kSetB1: return range(key_.b1.bytes());
    case kSetB2: return range(key_.b2.bytes());
    case kSetC: return range(key_.c.bytes());
  }
  throw std::logic_error("Groth16Workload: no such key set");
}

HostRange Groth16Workload::matrix_host() const {
  STAGEHAND_ASSERT(matrix_ != nullptr, "{}: the constraint matrix is read before a set-up built it",
                   zkey_path_.string());
  return host_range(matrix_->bytes.data(), matrix_->bytes.size());
}

HostRange Groth16Workload::witness_host(int job) const {
  std::lock_guard lock(witnesses_mutex_);
  const auto found = witnesses_.find(job);
  STAGEHAND_ASSERT(found != witnesses_.end() && found->second.size() == sizes().n_vars,
                   "{}: the program uploads job {}'s witness, which its prepare did not keep whole",
                   zkey_path_.string(), job);
  return host_range(found->second.data(), kFrBytes * sizes().n_vars);
}

std::vector<math::Fr>& Groth16Workload::witness(int job) {
  std::lock_guard lock(witnesses_mutex_);
  return witnesses_[job];  // map nodes stay put: the reference outlives the lock
}

void Groth16Workload::forget_job(int job) {
  std::lock_guard lock(witnesses_mutex_);
  auto found = witnesses_.find(job);
  if (found == witnesses_.end()) return;
  // Kept for the next job's witness (two: the workers that prepare beside each other's GPU time
  // in the usual deployment; more jobs at once each take a fresh one).
  auto& witness = found->second;
  if (witness.size() == sizes().n_vars && spare_witnesses_.size() < kSpareWitnesses) {
    spare_witnesses_.push_back(std::move(witness));
  }
  witnesses_.erase(found);
}

std::vector<math::Fr> Groth16Workload::take_witness_buffer() {
  {
    std::lock_guard lock(witnesses_mutex_);
    if (!spare_witnesses_.empty()) {
      auto buffer = std::move(spare_witnesses_.back());
      spare_witnesses_.pop_back();
      return buffer;
    }
  }
  return std::vector<math::Fr>(sizes().n_vars);
}

asio::awaitable<void> Groth16Workload::prepare_job(int job, Device& /*device*/, std::span<const HostRange> abc) {
  const auto& key = key_;
  auto& job_witness = witness(job);
  const auto& proof_job = jobs_.at(static_cast<std::size_t>(job));
  const auto& file = proof_job.wtns;
  const std::size_t n = key.domain_size;
  co_await host_work()->run([&] {
    // On the device the witness goes straight into the staged input (pinned: no copy on its way
    // to the device) and the job keeps only its public part; on the host the a/b/c step and the
    // program's upload need all of it.
    std::span<const math::Fr> witness;
    if (abc_on_device(abc_step())) {
      if (abc.empty() || abc[0].bytes < kFrBytes * key.n_vars) {
        throw std::invalid_argument("groth16 prepare: the staged input is smaller than the witness");
      }
      const std::span<math::Fr> staged(reinterpret_cast<math::Fr*>(abc[0].data()), key.n_vars);
      witness = staged.first(proof_job.wtns_bytes
                                 ? parse_wtns_into(*proof_job.wtns_bytes, file.string(), staged, thread_count())
                                 : read_wtns_into(file, staged, thread_count()));
    } else {
      job_witness = take_witness_buffer();
      const std::size_t count = proof_job.wtns_bytes
                                    ? parse_wtns_into(*proof_job.wtns_bytes, file.string(), job_witness, thread_count())
                                    : read_wtns_into(file, job_witness, thread_count());
      witness = std::span<const math::Fr>(job_witness).first(count);
    }
    check_witness_matches(key, witness, zkey_path_, file);
    if (checks_.r1cs != nullptr) {
      if (const auto failing = first_unsatisfied_constraint(*checks_.r1cs, witness)) {
        throw InputError(fmt::format(
            "{}: the witness does not satisfy constraint {} of {} (A·w · B·w ≠ C·w): no proof is made for it",
            file.string(), *failing, checks_.r1cs_path.string()));
      }
    }
    if (abc_on_device(abc_step())) {
      job_witness.assign(witness.begin(), witness.begin() + 1 + key.n_public);  // what finish needs
    } else {
      evaluate_constraint_matrix(matrix_->layout, matrix_->bytes, witness, staged_polynomial(abc[0], n),
                                 staged_polynomial(abc[1], n), staged_polynomial(abc[2], n), thread_count());
    }
  });
}

asio::awaitable<void> Groth16Workload::finish_job(int job, Device& /*device*/) {
  const auto& key = key_;
  const auto sums = msm_sums(job);
  Proof proof;
  const auto signals = public_signals(key, witness(job));
  std::optional<std::string> rejection;
  // Taken here, on the run's executor: the host work's threads must not index what add_job grows.
  auto& proof_job = jobs_.at(static_cast<std::size_t>(job));
  double& check_seconds = check_seconds_.at(static_cast<std::size_t>(job));
  co_await host_work()->run([&] {
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
    const std::string hint =
        checks_.r1cs != nullptr ? "" : "; with the .r1cs (--r1cs) the witness is checked constraint by constraint";
    throw std::runtime_error(
        fmt::format("the proof does not verify: {} (does {} satisfy the circuit?{}); nothing is written for it",
                    *rejection, file.string(), hint));
  }
  if (on_proof_) on_proof_(job, proof, signals);
}

}  // namespace stagehand::groth16
