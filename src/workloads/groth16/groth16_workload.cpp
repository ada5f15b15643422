#include "workloads/groth16/groth16_workload.hpp"

#include "device/format.hpp"
#include "groth16/errors.hpp"
#include "groth16/witness.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>

namespace stagehand::groth16 {
namespace {

static_assert(sizeof(math::Fr) == 32 && sizeof(math::bn254::Fr) == 32,
              "Fr must be its four Montgomery limbs, so that Fr arrays are device bytes");
constexpr Bytes kFrBytes = 32;  // 64 bits, so that counts of the key's u32 multiply without wrapping

// A staged a, b or c as the domain's n values; the one check that the staging buffer holds them.
template <class Fr>
std::span<Fr> staged_polynomial(const HostRange& range, std::size_t n) {
  if (range.bytes < kFrBytes * n)
    throw std::invalid_argument("groth16 prepare: a staged buffer is smaller than the domain");
  return std::span<Fr>(reinterpret_cast<Fr*>(range.data()), n);
}

// The job's witness into `out` (its file, or its bytes where the caller had them in memory), by the
// reader of the witness's curve: the count of values.
template <class Job, class Fr>
std::size_t witness_into(const Job& job, std::span<Fr> out, unsigned threads) {
  if constexpr (std::is_same_v<Fr, math::Fr>) {
    return job.wtns_bytes ? parse_wtns_into(*job.wtns_bytes, job.wtns.string(), out, threads)
                          : read_wtns_into(job.wtns, out, threads);
  } else {
    return job.wtns_bytes ? bn254::parse_wtns_into(*job.wtns_bytes, job.wtns.string(), out, threads)
                          : bn254::read_wtns_into(job.wtns, out, threads);
  }
}

template <class R1csType, class Fr>
std::optional<std::size_t> unsatisfied(const R1csType& r1cs, std::span<const Fr> witness) {
  if constexpr (std::is_same_v<Fr, math::Fr>) {
    return first_unsatisfied_constraint(r1cs, witness);
  } else {
    return bn254::first_unsatisfied_constraint(r1cs, witness);
  }
}

}  // namespace

template <class Key>
BasicGroth16Workload<Key>::BasicGroth16Workload(const Key& key, std::filesystem::path zkey_path, std::vector<Job> jobs,
                                                HostWork& host_work, unsigned thread_count, ProofHandler on_proof,
                                                Checks checks, AbcStep abc_step, KeyPlacement placement,
                                                std::shared_ptr<DeviceKeyState> device_state, const KeySizes* sizes)
    : Groth16Program(sizes != nullptr ? *sizes : KeySizes::of(key), abc_step, placement, std::move(device_state),
                     &host_work, thread_count, zkey_path.string()),
      key_(key),
      zkey_path_(std::move(zkey_path)),
      jobs_(std::make_move_iterator(jobs.begin()), std::make_move_iterator(jobs.end())),
      on_proof_(std::move(on_proof)),
      checks_(std::move(checks)),
      check_seconds_(jobs_.size(), 0.0) {
  if (checks_.verify) verifier_.emplace(key);
  // The program lays out and launches by the sizes' curve: a caller's sizes of another key would
  // launch the other curve's kernels over this key's bytes.
  constexpr auto curve = Key::curve == Curve::bn254 ? kernel::Curve::bn254 : kernel::Curve::bls12_381;
  STAGEHAND_ASSERT(this->sizes().curve == curve, "{}: a {} key's workload given the sizes of a {} key",
                   zkey_path_.string(), kernel::curve_name(curve), kernel::curve_name(this->sizes().curve));
  if (checks_.r1cs != nullptr) check_constraint_system(*checks_.r1cs, checks_.r1cs_path, key, zkey_path_);
}

template <class Key>
int BasicGroth16Workload<Key>::add_job(Job job) {
  jobs_.push_back(std::move(job));
  check_seconds_.push_back(0.0);
  STAGEHAND_ASSERT(check_seconds_.size() == jobs_.size(), "{}: {} jobs with {} check times", zkey_path_.string(),
                   jobs_.size(), check_seconds_.size());
  return static_cast<int>(jobs_.size()) - 1;
}

// The constraint matrix is built by the key state's first set-up (16 bytes a row and 36 an entry
// on the host, once), not by the constructor: a workload that never runs does not pay for it. The
// host's a/b/c step uses it too (threaded by rows); only the device keeps a copy of it.
template <class Key>
void BasicGroth16Workload<Key>::before_set_up() {
  matrix_ = &device_state().host_matrix(key_);
  if (abc_step() == AbcStep::streamed) cut_matrix(cut_constraint_matrix(*matrix_, stream_buffer_size()));
}

template <class Key>
HostRange BasicGroth16Workload<Key>::set_host(std::size_t set) const {
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

template <class Key>
HostRange BasicGroth16Workload<Key>::matrix_host() const {
  STAGEHAND_ASSERT(matrix_ != nullptr, "{}: the constraint matrix is read before a set-up built it",
                   zkey_path_.string());
  return host_range(matrix_->bytes.data(), matrix_->bytes.size());
}

template <class Key>
HostRange BasicGroth16Workload<Key>::witness_host(int job) const {
  std::lock_guard lock(witnesses_mutex_);
  const auto found = witnesses_.find(job);
  STAGEHAND_ASSERT(found != witnesses_.end() && found->second.size() == sizes().n_vars,
                   "{}: the program uploads job {}'s witness, which its prepare did not keep whole",
                   zkey_path_.string(), job);
  return host_range(found->second.data(), kFrBytes * sizes().n_vars);
}

template <class Key>
std::vector<typename BasicGroth16Workload<Key>::Fr>& BasicGroth16Workload<Key>::witness(int job) {
  std::lock_guard lock(witnesses_mutex_);
  return witnesses_[job];  // map nodes stay put: the reference outlives the lock
}

template <class Key>
void BasicGroth16Workload<Key>::forget_job(int job) {
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

template <class Key>
std::vector<typename BasicGroth16Workload<Key>::Fr> BasicGroth16Workload<Key>::take_witness_buffer() {
  {
    std::lock_guard lock(witnesses_mutex_);
    if (!spare_witnesses_.empty()) {
      auto buffer = std::move(spare_witnesses_.back());
      spare_witnesses_.pop_back();
      return buffer;
    }
  }
  return std::vector<Fr>(sizes().n_vars);
}

template <class Key>
asio::awaitable<void> BasicGroth16Workload<Key>::prepare_job(int job, Device& /*device*/,
                                                             std::span<const HostRange> abc) {
  const auto& key = key_;
  auto& job_witness = witness(job);
  const auto& proof_job = jobs_.at(static_cast<std::size_t>(job));
  const auto& file = proof_job.wtns;
  const std::size_t n = key.domain_size;
  co_await host_work()->run([&] {
    // On the device the witness goes straight into the staged input (pinned: no copy on its way
    // to the device) and the job keeps only its public part; on the host the a/b/c step and the
    // program's upload need all of it.
    std::span<const Fr> witness;
    if (abc_on_device(abc_step())) {
      if (abc.empty() || abc[0].bytes < kFrBytes * key.n_vars) {
        throw std::invalid_argument("groth16 prepare: the staged input is smaller than the witness");
      }
      const std::span<Fr> staged(reinterpret_cast<Fr*>(abc[0].data()), key.n_vars);
      witness = staged.first(witness_into(proof_job, staged, thread_count()));
    } else {
      job_witness = take_witness_buffer();
      const std::size_t count = witness_into(proof_job, std::span<Fr>(job_witness), thread_count());
      witness = std::span<const Fr>(job_witness).first(count);
    }
    check_witness_matches(key, witness, zkey_path_, file);
    if (checks_.r1cs != nullptr) {
      if (const auto failing = unsatisfied(*checks_.r1cs, witness)) {
        throw InputError(fmt::format(
            "{}: the witness does not satisfy constraint {} of {} (A·w · B·w ≠ C·w): no proof is made for it",
            file.string(), *failing, checks_.r1cs_path.string()));
      }
    }
    if (abc_on_device(abc_step())) {
      job_witness.assign(witness.begin(), witness.begin() + 1 + key.n_public);  // what finish needs
    } else {
      evaluate_constraint_matrix(matrix_->layout, matrix_->bytes, witness, staged_polynomial<Fr>(abc[0], n),
                                 staged_polynomial<Fr>(abc[1], n), staged_polynomial<Fr>(abc[2], n), thread_count());
    }
  });
}

template <class Key>
asio::awaitable<void> BasicGroth16Workload<Key>::finish_job(int job, Device& /*device*/) {
  const auto& key = key_;
  const auto sums = msm_sums<typename Types::MsmResultsType>(job);
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

template class BasicGroth16Workload<ProvingKey>;
template class BasicGroth16Workload<bn254::ProvingKey>;

}  // namespace stagehand::groth16
