#pragma once
// ProofBatch: one coordinator run of one key's proofs, the one way proofs reach the GPUs (the
// engine's runs; `stagehand prove` is a client of the engine). The key is of either curve
// (BLS12-381, BN254): the batch builds that curve's Groth16 workload in the layout it is given,
// makes each proof's r and s over it and writes its proof.json; it wires the coordinator's hooks
// (a pageable arena for the policies that upload from ordinary memory, the caller's kept pinned
// staging pool, budget samples), takes the proofs that join while it runs, ends every proof
// exactly once through its listener, and returns the run's figures. Its trace goes to the sink
// the caller names, with the kernels on a GPU: drawing it is the caller's business
// (proving/batch_trace.hpp writes it as files).
//
// Who decides what: the caller plans the layout (groth16::plan_proof_layout), chooses the
// coordinator's settings and decides which proofs join (BatchListener::join); the batch owns the
// run, the workload and every proof's end.

#include "coordinator/coordinator.hpp"
#include "backend/backend.hpp"
#include "groth16/curve.hpp"
#include "workloads/groth16/groth16_workload.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace stagehand::proving {

// A key of either curve as a batch proves it, and a constraint system of either (null: none).
using AnyKey = std::variant<const groth16::ProvingKey*, const groth16::bn254::ProvingKey*>;
using AnyR1cs = std::variant<const groth16::R1cs*, const groth16::bn254::R1cs*>;

// The constraint system as the workload of a key of type Key takes it (null where none); a
// CurveError naming both files and both curves where it is of the other curve than the key's.
template <class Key>
const typename groth16::CurveProofTypes<Key>::R1csType* r1cs_of_curve(const AnyR1cs& r1cs,
                                                                      const std::filesystem::path& r1cs_path,
                                                                      const std::filesystem::path& key_path) {
  using R1csType = typename groth16::CurveProofTypes<Key>::R1csType;
  return std::visit(
      [&](const auto* held) -> const R1csType* {
        if constexpr (std::is_same_v<std::remove_cvref_t<decltype(*held)>, R1csType>) {
          return held;
        } else {
          if (held == nullptr) return nullptr;
          const auto other = Key::curve == groth16::Curve::bn254 ? groth16::Curve::bls12_381 : groth16::Curve::bn254;
          throw groth16::CurveError(
              fmt::format("{}: a constraint system of {}, for the key {} of {}", r1cs_path.string(),
                          groth16::curve_name(other), key_path.string(), groth16::curve_name(Key::curve)),
              other, Key::curve);
        }
      },
      r1cs);
}

// The key a batch proves.
struct BatchKey {
  AnyKey key = static_cast<const groth16::ProvingKey*>(nullptr);
  const groth16::KeySizes* sizes = nullptr;  // KeySizes::of(*key), kept by the caller (it reads every coefficient)
  std::filesystem::path path;                // the .zkey, or what names a key made in memory (for messages)
  // Where the key stays set up between batches (the engine's); null: the run sets it up and frees it.
  std::shared_ptr<groth16::DeviceKeyState> device_state;
};

// One proof of a batch, of whichever curve its key is: the batch makes its r and s over that curve.
struct BatchJob {
  std::filesystem::path wtns;  // names the witness in messages; read where wtns_bytes is null
  std::shared_ptr<const std::vector<std::uint8_t>> wtns_bytes;
  std::optional<std::uint64_t> seed;  // r and s from this seed (tests, --seed); none: the system's randomness
};

// What is checked around each proof (groth16::BasicProofChecks of the key's curve). A constraint
// system of the other curve than the key's fails the run, naming both.
struct BatchChecks {
  bool verify = true;
  AnyR1cs r1cs = static_cast<const groth16::R1cs*>(nullptr);
  std::filesystem::path r1cs_path;
};

struct BatchSettings {
  CoordinatorSettings coordinator;  // resident_bytes: what else stays on the devices (other keys) included
  groth16::ProofLayout layout;
  BatchChecks checks;
  unsigned threads = 0;  // each host step's CPU math (0: every hardware thread)
  // Where the coordinator's rows go (null: the backend's own trace, where the simulator records its
  // devices' work), and on a GPU whether the kernels and blocking host calls go there too.
  Trace* trace = nullptr;
  bool trace_kernels = false;
  // A caller that keeps each GPU's pinned staging pool and result buffers between batches
  // (CoordinatorHooks's: both or neither).
  std::function<KeptPinned(int device)> kept_pinned;
  std::function<void(int device, KeptPinned buffers)> keep_pinned;
};

// A proof's steps as the batch reaches them.
enum class BatchStep { prepare, program, program_ended, finish };

// How a proof of the batch ended: made (and checked, where the settings ask) with its texts, or
// not with its error.
struct ProofEnd {
  int job = 0;
  bool made = false;
  std::string proof_json;             // snarkjs's proof.json (made)
  std::string public_json;            // snarkjs's public.json (made)
  std::string error;                  // why not (made false)
  const JobRecord* record = nullptr;  // the coordinator's record; null where the run ended without one
  double check_seconds = 0;           // its pairing check (0 where none ran)
};

// Proofs that join a running batch, and whether the batch takes any more after them.
struct Joining {
  std::vector<BatchJob> jobs;
  bool close = true;
};

// What the batch's owner hears and answers, on the run's thread (the backend's executor) unless
// said otherwise.
class BatchListener {
 public:
  virtual ~BatchListener() = default;
  // The key is set up on `device`: proofs prepared before waited for it.
  virtual void set_up_ended(int device) {}
  // Job `job` reaches `step` on `device`. Throwing stops it there: the proof fails with the message.
  virtual void step(int job, BatchStep step, int device) {}
  // Exactly once per job, as each ends; the batch's jobs have all ended when run() returns.
  virtual void ended(const ProofEnd& end) = 0;
  // The budgets of the devices that have one (budgeted), at each proof's end and each budget's end.
  virtual void sample(const std::map<int, const VramBudget*>& budgets) {}
  // The batch is open to proofs that join: `wake` (from any thread) makes it ask join() again.
  virtual void open(std::function<void()> wake) {}
  // The proofs that join now, given the batch's jobs so far and how many of them have not ended;
  // close when it is to take no more. The batch waits for news only while some of its proofs are
  // unended, so a listener with nothing to add and none unended must close (or block until it
  // has something: the simulator takes a run that waits for news with no work of its own for a
  // deadlock). Without a listener's own join, a batch takes only the jobs it began with.
  virtual Joining join(std::size_t jobs, std::size_t unended) { return {}; }
  // The batch takes no more proofs (after open, before run() returns).
  virtual void closed() {}
  // A GPU lost in the batch: its part of the key's kept state is dropped at the batch's end.
  virtual bool lost(int device) { return false; }
};

// A device's memory as the caller's process holds it: its free bytes, and what the engine holds
// (its synchronous allocations and what its pool reserved); known false where the device
// answered nothing (lost).
struct DeviceMemory {
  Bytes free_bytes = 0;
  Bytes held_bytes = 0;
  bool known = false;
};

// What one batch did.
// Each device's counters now, in the devices' order (a run's figures are their differences).
std::vector<DeviceCounters> counters_of(const std::vector<Device*>& devices);

struct BatchFigures {
  RunReport report;
  std::size_t proofs = 0;  // the jobs it began with and those that joined
  std::string failure;     // the run failed as a whole: every proof failed with it
  // Each device's counters at the run's start and end, and once the key was set up on it (where it
  // was): the proofs' kernels are those after the set-up.
  std::vector<DeviceCounters> counters_before, counters_after;
  std::map<int, DeviceCounters> counters_after_set_up;
  std::map<int, double> set_up_seconds;  // by device: the key's set-up's wall seconds
  Bytes resident_bytes = 0;              // the key's sets and matrix on each device
  Bytes msm_scratch_bytes = 0, h_scratch_bytes = 0;
  std::vector<DeviceMemory> memory_before, memory_after;
};

class ProofBatch {
 public:
  ProofBatch(Backend& backend, BatchKey key, BatchSettings settings, BatchListener& listener);
  ProofBatch(const ProofBatch&) = delete;
  ProofBatch& operator=(const ProofBatch&) = delete;

  // Runs `jobs` and those that join. Every job ends through the listener before it returns, also
  // when the run fails as a whole ("the run failed: ...").
  BatchFigures run(std::vector<BatchJob> jobs);

 private:
  Backend& backend_;
  BatchKey key_;
  BatchSettings settings_;
  BatchListener& listener_;
};

}  // namespace stagehand::proving
