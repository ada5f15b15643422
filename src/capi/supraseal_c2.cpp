// SupraSeal C2's C ABI (include/stagehand/supraseal_c2.h): on the devices of the engine
// configuration that STAGEHAND_SUPRASEAL_CONFIG names (proving/assignment_batch.hpp), else on the
// CPU reference of its prover (groth16/assignment_prover.hpp). An SRS's ptr is a heap-allocated shared_ptr to the read
// parameters, so that clone and drop are a copy and a delete of it, and the cache holds one
// more reference per path. Every entry point catches everything and returns it as a RustError.

#include "stagehand/supraseal_c2.h"

#include "engine/engine.hpp"
#include "engine/engine_config.hpp"
#include "groth16/assignment_prover.hpp"
#include "groth16/errors.hpp"
#include "groth16/params.hpp"
#include "proving/assignment_batch.hpp"
#include "backend/backend.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

static_assert(sizeof(fr_t) == 32 && sizeof(groth16_proof) == stagehand::groth16::kSuprasealProofBytes);
static_assert(sizeof(SRS) == sizeof(void*) && sizeof(RustError) == 2 * sizeof(void*));

namespace {

using stagehand::groth16::AssignmentProver;
using stagehand::groth16::AssignmentView;
using stagehand::groth16::DensityView;
using stagehand::groth16::InputError;
using stagehand::groth16::ParamsKey;
using stagehand::math::Fr;

void forget_on_devices(const void* parameters) noexcept;  // below

// One parameters file, read, checked and its points decoded for the prover. The devices keep the
// sets of the parameters they proved last until these go (with their last handle).
struct Parameters {
  std::string path;
  ParamsKey key;
  AssignmentProver prover;  // after key: it refers to it
  explicit Parameters(std::string file)
      : path(std::move(file)), key(stagehand::groth16::read_params(path)), prover(key) {}
  Parameters(const Parameters&) = delete;
  Parameters& operator=(const Parameters&) = delete;
  ~Parameters() { forget_on_devices(this); }
};
using Handle = std::shared_ptr<const Parameters>;

// SupraSeal's cache: the most recently used paths first, at most kCapacity.
class ParametersCache {
 public:
  static constexpr std::size_t kCapacity = 4;

  Handle lookup(const std::string& path) {
    if (auto found = find(path)) return found;
    // Read outside the lock, so that reading one file holds up no call for another.
    auto loaded = std::make_shared<const Parameters>(path);
    std::lock_guard lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == path) return it->second;  // another thread read it meanwhile: keep one copy
    }
    if (entries_.size() >= kCapacity) entries_.pop_back();
    entries_.emplace_front(path, loaded);
    return loaded;
  }

  void evict(const std::string& path) {
    std::lock_guard lock(mutex_);
    entries_.remove_if([&](const auto& entry) { return entry.first == path; });
  }

 private:
  Handle find(const std::string& path) {
    std::lock_guard lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first != path) continue;
      entries_.splice(entries_.begin(), entries_, it);
      return entries_.front().second;
    }
    return nullptr;
  }

  std::mutex mutex_;
  std::list<std::pair<std::string, Handle>> entries_;
};

ParametersCache& cache() {
  static ParametersCache instance;
  return instance;
}

// Where proofs are made: on the devices (CUDA or the functional simulator, as its run tables say)
// of the engine configuration the environment variable names, the file stagehand_engine_create
// and `stagehand serve` read; opened by the first call that proves and kept for the process.
// Without the variable (or with it empty) on the CPU, with the reference.
constexpr const char* kConfigVariable = "STAGEHAND_SUPRASEAL_CONFIG";

class DeviceProver {
 public:
  explicit DeviceProver(const std::string& config_path)
      : config_path_(config_path),
        config_(stagehand::engine::load_engine_config(config_path)),
        backend_(stagehand::Backend::open(config_.run, stagehand::engine::Engine::default_backend_options())) {}

  // The devices a call proves on: every one of the deployment's, or the one `index` picks
  // (cuzk's gpu_index; InputError naming the index and the count where there is no such device).
  std::vector<stagehand::Device*> devices(std::optional<std::size_t> index) const {
    const auto& all = backend_->devices();
    if (!index) return all;
    if (*index >= all.size()) throw out_of_range(*index, all.size());
    return {all[*index]};
  }

  // The parameters' sets stay on the devices after the call, for the next call of the same
  // parameters; another parameters' call frees them first (one key on the devices at a time).
  std::vector<stagehand::groth16::Proof> prove(const Parameters& parameters, const std::vector<AssignmentView>& views,
                                               const std::vector<stagehand::groth16::ProofRandomness>& randomness,
                                               std::optional<std::size_t> device_index) {
    const auto on = devices(device_index);
    stagehand::proving::AssignmentBatchSettings settings;
    settings.coordinator = stagehand::settings_for(config_.run, config_.engine.policy);
    settings.verify = true;  // every proof pairing-checked, whatever the configuration says
    settings.threads = config_.engine.threads;
    std::lock_guard lock(mutex_);  // the backend runs one program at a time: calls take turns
    if (kept_for_ != &parameters) {
      release_kept();
      kept_ = std::make_shared<stagehand::groth16::AssignmentKeyState>();
      kept_for_ = &parameters;
    }
    settings.key_state = kept_;
    return stagehand::proving::prove_assignments(*backend_, parameters.key, views, randomness, settings, on);
  }

  InputError out_of_range(std::size_t index, std::size_t count) const {
    return InputError(fmt::format("gpu_index {} is out of range: the deployment {}={} has {} device{}", index,
                                  kConfigVariable, config_path_, count, count == 1 ? "" : "s"));
  }

  // The parameters are going: their sets leave the devices.
  void forget(const void* parameters) {
    std::lock_guard lock(mutex_);
    if (kept_for_ == parameters) release_kept();
  }

 private:
  void release_kept() {
    if (kept_ && kept_->holds_anything()) backend_->run(kept_->release());
    kept_.reset();
    kept_for_ = nullptr;
  }

  std::string config_path_;
  stagehand::engine::EngineConfig config_;
  std::unique_ptr<stagehand::Backend> backend_;
  std::mutex mutex_;
  std::shared_ptr<stagehand::groth16::AssignmentKeyState> kept_;
  const void* kept_for_ = nullptr;  // the parameters whose sets kept_ holds (alive: forget runs before they go)
};

// The process's device prover, once made. Never destroyed: parameters in the cache may be
// destroyed at exit after any static, and each asks it to forget them.
struct DeviceProverSlot {
  std::mutex mutex;
  std::unique_ptr<DeviceProver> prover;
};
DeviceProverSlot& device_prover_slot() {
  static auto* slot = new DeviceProverSlot;
  return *slot;
}

// Null where no device is configured. A configuration that cannot be read or opened fails the
// call that needed it, naming the variable; the next call tries again.
DeviceProver* device_prover() {
  const char* path = std::getenv(kConfigVariable);
  if (path == nullptr || *path == '\0') return nullptr;
  auto& slot = device_prover_slot();
  std::lock_guard lock(slot.mutex);
  if (!slot.prover) {
    try {
      slot.prover = std::make_unique<DeviceProver>(path);
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& error) {
      throw std::runtime_error(fmt::format("{}={}: {}", kConfigVariable, path, error.what()));
    }
  }
  return slot.prover.get();
}

void forget_on_devices(const void* parameters) noexcept {
  try {
    DeviceProver* prover = nullptr;
    {
      auto& slot = device_prover_slot();
      std::lock_guard lock(slot.mutex);
      prover = slot.prover.get();
    }
    if (prover != nullptr) prover->forget(parameters);
  } catch (...) {
    // A destructor has no one to tell: what a failing device did not free stays until the process ends.
  }
}

RustError failure(int code, const std::string& message) { return RustError{code, ::strdup(message.c_str())}; }

// Runs `body`, turning every exception into a RustError.
template <class Body>
RustError guarded(const char* function, Body&& body) {
  try {
    body();
    return RustError{0, nullptr};
  } catch (const InputError& error) {
    return failure(EINVAL, fmt::format("{}: {}", function, error.what()));
  } catch (const std::invalid_argument& error) {
    return failure(EINVAL, fmt::format("{}: {}", function, error.what()));
  } catch (const std::bad_alloc&) {
    return failure(ENOMEM, fmt::format("{}: out of memory", function));
  } catch (const std::exception& error) {
    return failure(EIO, fmt::format("{}: {}", function, error.what()));
  } catch (...) {
    return failure(EIO, fmt::format("{}: an unknown error", function));
  }
}

const Handle& handle_of(const SRS* srs) {
  if (srs == nullptr || srs->ptr == nullptr) throw InputError("the SRS is NULL (make it with create_SRS)");
  return *static_cast<const Handle*>(srs->ptr);
}

Fr decode_fr(const fr_t& value, const char* field, std::size_t index, std::size_t circuit) {
  Fr::LimbArray limbs{};
  std::memcpy(limbs.data(), value.limbs, sizeof(value.limbs));
  const auto decoded = Fr::from_montgomery_limbs(limbs);
  if (!decoded) throw InputError(fmt::format("circuit {}: {}[{}] is not below r", circuit, field, index));
  return *decoded;
}

std::vector<Fr> decode_values(const fr_t* data, std::size_t size, const char* field, std::size_t circuit) {
  if (data == nullptr && size != 0) {
    throw InputError(fmt::format("circuit {}: {} is NULL for {} values", circuit, field, size));
  }
  std::vector<Fr> values;
  values.reserve(size);
  for (std::size_t i = 0; i < size; ++i) values.push_back(decode_fr(data[i], field, i, circuit));
  return values;
}

DensityView density(const std::uint64_t* words, std::size_t bit_len, std::size_t popcount, const char* name,
                    std::size_t circuit) {
  if (words == nullptr && bit_len != 0) {
    throw InputError(fmt::format("circuit {}: {}_density is NULL for {} bits", circuit, name, bit_len));
  }
  return DensityView{{words, (bit_len + 63) / 64}, bit_len, popcount};
}

// The assignment's bitmaps and lengths, checked against the key before any value is read.
void check_shape(const ParamsKey& key, const Assignment& raw, std::size_t circuit) {
  stagehand::groth16::AssignmentShape shape{
      density(raw.a_aux_density, raw.a_aux_bit_len, raw.a_aux_popcount, "a_aux", circuit),
      density(raw.b_inp_density, raw.b_inp_bit_len, raw.b_inp_popcount, "b_inp", circuit),
      density(raw.b_aux_density, raw.b_aux_bit_len, raw.b_aux_popcount, "b_aux", circuit),
      raw.abc_size,
      raw.abc_size,
      raw.abc_size,
      raw.inp_assignment_size,
      raw.aux_assignment_size};
  stagehand::groth16::check_assignment(key, shape, circuit);
}

// One circuit's values decoded (and checked below r); view() points into them.
struct DecodedAssignment {
  const Assignment& raw;
  std::size_t circuit;
  std::vector<Fr> a, b, c, inputs, aux;

  DecodedAssignment(const Assignment& assignment, std::size_t index)
      : raw(assignment),
        circuit(index),
        a(decode_values(assignment.a, assignment.abc_size, "a", index)),
        b(decode_values(assignment.b, assignment.abc_size, "b", index)),
        c(decode_values(assignment.c, assignment.abc_size, "c", index)),
        inputs(decode_values(assignment.inp_assignment_data, assignment.inp_assignment_size, "inp_assignment_data",
                             index)),
        aux(decode_values(assignment.aux_assignment_data, assignment.aux_assignment_size, "aux_assignment_data",
                          index)) {}

  AssignmentView view() const {
    return AssignmentView{density(raw.a_aux_density, raw.a_aux_bit_len, raw.a_aux_popcount, "a_aux", circuit),
                          density(raw.b_inp_density, raw.b_inp_bit_len, raw.b_inp_popcount, "b_inp", circuit),
                          density(raw.b_aux_density, raw.b_aux_bit_len, raw.b_aux_popcount, "b_aux", circuit),
                          a,
                          b,
                          c,
                          inputs,
                          aux};
  }
};

// cuzk's gpu_index: -1 for every device of the deployment (or the CPU without one), else one of
// them (checked against the deployment's devices when the call proves).
std::optional<std::size_t> device_index_of(int gpu_index) {
  if (gpu_index == -1) return std::nullopt;
  if (gpu_index < 0) {
    throw InputError(fmt::format("gpu_index {} is neither -1 (every device) nor a device's index", gpu_index));
  }
  return static_cast<std::size_t>(gpu_index);
}

void generate(const Assignment provers[], std::size_t num_circuits, const fr_t r_s[], const fr_t s_s[],
              groth16_proof proofs[], const SRS* srs, std::optional<std::size_t> device_index) {
  const Handle parameters = handle_of(srs);  // a reference of its own for the call
  if (num_circuits == 0) return;
  if (provers == nullptr || r_s == nullptr || s_s == nullptr || proofs == nullptr) {
    throw InputError(fmt::format("provers, r_s, s_s or proofs is NULL for {} circuits", num_circuits));
  }
  std::vector<DecodedAssignment> decoded;
  decoded.reserve(num_circuits);  // no reallocation: the views point into these
  std::vector<AssignmentView> views;
  std::vector<stagehand::groth16::ProofRandomness> randomness;
  for (std::size_t circuit = 0; circuit < num_circuits; ++circuit) {
    check_shape(parameters->key, provers[circuit], circuit);
  }
  for (std::size_t circuit = 0; circuit < num_circuits; ++circuit) {
    decoded.emplace_back(provers[circuit], circuit);
    views.push_back(decoded.back().view());
    randomness.push_back(
        {decode_fr(r_s[circuit], "r_s", circuit, circuit), decode_fr(s_s[circuit], "s_s", circuit, circuit)});
  }
  DeviceProver* device = device_prover();
  if (device == nullptr && device_index) {
    throw InputError(
        fmt::format("gpu_index {} is out of range: 0 devices, no deployment ({} is not set: proofs "
                    "are made on the CPU, with gpu_index -1)",
                    *device_index, kConfigVariable));
  }
  const auto made = device != nullptr ? device->prove(*parameters, views, randomness, device_index)
                                      : parameters->prover.prove_checked(views, randomness);
  STAGEHAND_ASSERT(made.size() == num_circuits);
  for (std::size_t circuit = 0; circuit < num_circuits; ++circuit) {
    const auto bytes = stagehand::groth16::encode_supraseal_proof(made[circuit]);
    std::memcpy(&proofs[circuit], bytes.data(), bytes.size());
  }
}

}  // namespace

extern "C" {

RustError create_SRS(SRS* ret, const char* srs_path, bool use_cache) {
  return guarded("create_SRS", [&] {
    if (ret == nullptr) throw InputError("ret is NULL");
    if (srs_path == nullptr || *srs_path == '\0') throw InputError("srs_path is NULL or empty");
    auto handle =
        std::make_unique<Handle>(use_cache ? cache().lookup(srs_path) : std::make_shared<const Parameters>(srs_path));
    ret->ptr = handle.release();
  });
}

void evict_SRS(const SRS* ref) {
  if (ref == nullptr || ref->ptr == nullptr) return;
  try {
    cache().evict((*static_cast<const Handle*>(ref->ptr))->path);
  } catch (...) {
    // Nothing to report through a void function: the entry stays cached, which is only memory.
  }
}

void drop_SRS(SRS* ref) {
  if (ref == nullptr || ref->ptr == nullptr) return;
  delete static_cast<Handle*>(ref->ptr);
  ref->ptr = nullptr;
}

SRS clone_SRS(const SRS* rhs) {
  if (rhs == nullptr || rhs->ptr == nullptr) return SRS{nullptr};
  try {
    return SRS{new Handle(*static_cast<const Handle*>(rhs->ptr))};
  } catch (...) {
    return SRS{nullptr};  // out of memory: the caller sees a NULL handle, which every call refuses
  }
}

RustError generate_groth16_proofs_c(const Assignment provers[], size_t num_circuits, const fr_t r_s[], const fr_t s_s[],
                                    groth16_proof proofs[], SRS* srs) {
  return guarded("generate_groth16_proofs_c",
                 [&] { generate(provers, num_circuits, r_s, s_s, proofs, srs, std::nullopt); });
}

RustError generate_groth16_proofs_gpu_c(const Assignment provers[], size_t num_circuits, const fr_t r_s[],
                                        const fr_t s_s[], groth16_proof proofs[], SRS* srs, void* /*gpu_mtx*/,
                                        int gpu_index) {
  return guarded("generate_groth16_proofs_gpu_c",
                 [&] { generate(provers, num_circuits, r_s, s_s, proofs, srs, device_index_of(gpu_index)); });
}

}  // extern "C"
