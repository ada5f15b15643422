// The C ABI (include/stagehand/stagehand.h) over stagehand::engine::Engine: every entry point
// catches everything, maps the engine's errors to status codes and copies strings out with
// malloc, so that no C++ type or exception reaches the caller.

#include "stagehand/stagehand.h"

#include "engine/engine.hpp"
#include "service/status_json.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

struct stagehand_engine {
  std::unique_ptr<stagehand::engine::Engine> engine;
};

namespace {

using stagehand::engine::EngineError;
using stagehand::engine::ErrorKind;
using stagehand::engine::ProofResult;
using stagehand::engine::ProofState;

void write_error(char* err, std::size_t err_len, const std::string& message) {
  if (err == nullptr || err_len == 0) return;
  const std::size_t length = std::min(message.size(), err_len - 1);
  std::memcpy(err, message.data(), length);
  err[length] = '\0';
}

int code_of(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::unknown_key: return STAGEHAND_ERROR_UNKNOWN_KEY;
    case ErrorKind::key_exists: return STAGEHAND_ERROR_KEY_EXISTS;
    case ErrorKind::bad_key: return STAGEHAND_ERROR_BAD_KEY;
    case ErrorKind::bad_witness: return STAGEHAND_ERROR_BAD_WITNESS;
    case ErrorKind::queue_full: return STAGEHAND_ERROR_QUEUE_FULL;
    case ErrorKind::unknown_proof: return STAGEHAND_ERROR_UNKNOWN_PROOF;
    case ErrorKind::stopped: return STAGEHAND_ERROR_STOPPED;
    case ErrorKind::no_gpu: return STAGEHAND_ERROR_NO_GPU;
    case ErrorKind::bad_request: return STAGEHAND_ERROR_ARGUMENT;
    case ErrorKind::deadline_passed: return STAGEHAND_ERROR_DEADLINE;
    case ErrorKind::request_conflict: return STAGEHAND_ERROR_REQUEST_CONFLICT;
  }
  return STAGEHAND_ERROR_INTERNAL;
}

// Runs `body` (returning a status code), turning every exception into its code and message.
template <class Body>
int guarded(char* err, std::size_t err_len, Body&& body) {
  try {
    return body();
  } catch (const EngineError& error) {
    write_error(err, err_len, error.what());
    return code_of(error.kind());
  } catch (const std::bad_alloc&) {
    write_error(err, err_len, "out of memory");
    return STAGEHAND_ERROR_INTERNAL;
  } catch (const std::exception& error) {
    write_error(err, err_len, error.what());
    return STAGEHAND_ERROR_INTERNAL;
  } catch (...) {
    write_error(err, err_len, "an unknown error");
    return STAGEHAND_ERROR_INTERNAL;
  }
}

// A malloc'd copy for the caller (freed with stagehand_free); throws std::bad_alloc.
char* copy_out(const std::string& text) {
  auto* copy = static_cast<char*>(std::malloc(text.size() + 1));
  if (copy == nullptr) throw std::bad_alloc();
  std::memcpy(copy, text.c_str(), text.size() + 1);
  return copy;
}

int check_engine(const stagehand_engine* engine, char* err, std::size_t err_len) {
  if (engine == nullptr || !engine->engine) {
    write_error(err, err_len, "the engine is NULL");
    return STAGEHAND_ERROR_ARGUMENT;
  }
  return STAGEHAND_OK;
}

int check_name(const char* name, const char* what, char* err, std::size_t err_len) {
  if (name == nullptr || *name == '\0') {
    write_error(err, err_len, std::string(what) + " is NULL or empty");
    return STAGEHAND_ERROR_ARGUMENT;
  }
  return STAGEHAND_OK;
}

// The outcome of an ended proof as a status, its texts copied out where wanted.
int answer(const ProofResult& result, char** proof_json, char** public_json, char* err, std::size_t err_len) {
  switch (result.state) {
    case ProofState::queued:
    case ProofState::running: return STAGEHAND_PENDING;
    case ProofState::done: {
      char* proof = proof_json != nullptr ? copy_out(result.proof_json) : nullptr;
      char* signals = nullptr;
      try {
        if (public_json != nullptr) signals = copy_out(result.public_json);
      } catch (...) {
        std::free(proof);
        throw;
      }
      if (proof_json != nullptr) *proof_json = proof;
      if (public_json != nullptr) *public_json = signals;
      return STAGEHAND_OK;
    }
    case ProofState::failed:
      write_error(err, err_len, result.error);
      return result.deadline_missed ? STAGEHAND_ERROR_DEADLINE : STAGEHAND_ERROR_PROOF_FAILED;
    case ProofState::cancelled: write_error(err, err_len, result.error); return STAGEHAND_ERROR_CANCELLED;
  }
  return STAGEHAND_ERROR_INTERNAL;
}

std::vector<std::uint8_t> bytes_of(const uint8_t* data, std::size_t length) {
  return length == 0 ? std::vector<std::uint8_t>() : std::vector<std::uint8_t>(data, data + length);
}

// The fields of a stagehand_submit_options its struct_size covers; `defaults` where it is NULL.
// Nothing, with a message, for a struct_size too small for the first version's fields or a
// priority out of range.
std::optional<stagehand::engine::SubmitOptions> options_of(const stagehand_submit_options* options,
                                                           stagehand::engine::WhenFull when_full_by_default, char* err,
                                                           std::size_t err_len) {
  using stagehand::engine::Priority;
  stagehand::engine::SubmitOptions out;
  out.when_full = when_full_by_default;
  if (options == nullptr) return out;
  if (options->struct_size < sizeof(stagehand_submit_options)) {
    write_error(
        err, err_len,
        "options->struct_size is smaller than stagehand_submit_options: set it with stagehand_submit_options_init");
    return std::nullopt;
  }
  switch (options->priority) {
    case STAGEHAND_PRIORITY_LOW: out.priority = Priority::low; break;
    case STAGEHAND_PRIORITY_NORMAL: out.priority = Priority::normal; break;
    case STAGEHAND_PRIORITY_HIGH: out.priority = Priority::high; break;
    case STAGEHAND_PRIORITY_CRITICAL: out.priority = Priority::critical; break;
    default:
      write_error(
          err, err_len,
          "options->priority is not a STAGEHAND_PRIORITY_* value (-1 to 2): " + std::to_string(options->priority));
      return std::nullopt;
  }
  if (options->request_id != nullptr) out.request_id = options->request_id;
  if (options->deadline_ms != 0) out.deadline = stagehand::engine::deadline_in(options->deadline_ms);
  out.when_full =
      options->wait_when_full != 0 ? stagehand::engine::WhenFull::wait : stagehand::engine::WhenFull::refuse;
  return out;
}

// An ended proof's timings into the caller's struct, as far as its struct_size reaches.
int write_timings(const ProofResult& result, stagehand_timings* timings, char* err, std::size_t err_len) {
  if (result.state == ProofState::queued || result.state == ProofState::running) return STAGEHAND_PENDING;
  if (timings->struct_size < sizeof(stagehand_timings)) {
    write_error(err, err_len,
                "timings->struct_size is smaller than stagehand_timings: set it to sizeof(stagehand_timings)");
    return STAGEHAND_ERROR_ARGUMENT;
  }
  const auto& t = result.timings;
  timings->queue_s = t.queue_s;
  timings->setup_s = t.setup_s;
  timings->host_before_s = t.host_before_s;
  timings->gpu_s = t.gpu_s;
  timings->host_after_s = t.host_after_s;
  timings->check_s = t.check_s;
  timings->total_s = t.total_s;
  return STAGEHAND_OK;
}

// The callback's status for an ended proof.
int callback_status(const ProofResult& result) {
  switch (result.state) {
    case ProofState::done: return STAGEHAND_OK;
    case ProofState::cancelled: return STAGEHAND_ERROR_CANCELLED;
    default: return result.deadline_missed ? STAGEHAND_ERROR_DEADLINE : STAGEHAND_ERROR_PROOF_FAILED;
  }
}

}  // namespace

extern "C" {

stagehand_engine* stagehand_engine_create(const char* config_path, char* err, size_t err_len) {
  stagehand_engine* created = nullptr;
  const int status = guarded(err, err_len, [&] {
    stagehand::engine::EngineConfig config;
    try {
      if (config_path != nullptr) config = stagehand::engine::load_engine_config(config_path);
      auto engine = std::make_unique<stagehand_engine>();
      engine->engine = std::make_unique<stagehand::engine::Engine>(std::move(config));
      created = engine.release();
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& error) {
      write_error(err, err_len, error.what());
      return STAGEHAND_ERROR_CONFIG;
    }
    return STAGEHAND_OK;
  });
  return status == STAGEHAND_OK ? created : nullptr;
}

void stagehand_engine_destroy(stagehand_engine* engine) {
  try {
    delete engine;
  } catch (...) {
    // The engine's destructor ends every proof and does not throw; nothing may escape regardless.
  }
}

int stagehand_key_load(stagehand_engine* engine, const char* key_name, const char* zkey_path, char* err,
                       size_t err_len) {
  return guarded(err, err_len, [&] {
    if (int status = check_engine(engine, err, err_len)) return status;
    if (int status = check_name(key_name, "key_name", err, err_len)) return status;
    if (int status = check_name(zkey_path, "zkey_path", err, err_len)) return status;
    engine->engine->load_key(key_name, zkey_path);
    return STAGEHAND_OK;
  });
}

int stagehand_key_unload(stagehand_engine* engine, const char* key_name, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    if (int status = check_engine(engine, err, err_len)) return status;
    if (int status = check_name(key_name, "key_name", err, err_len)) return status;
    engine->engine->unload_key(key_name);
    return STAGEHAND_OK;
  });
}

int stagehand_prove(stagehand_engine* engine, const char* key_name, const uint8_t* wtns, size_t wtns_len,
                    char** proof_json, char** public_json, char* err, size_t err_len) {
  return stagehand_prove_ex(engine, key_name, wtns, wtns_len, nullptr, proof_json, public_json, nullptr, err, err_len);
}

char* stagehand_status_json(stagehand_engine* engine) {
  try {
    if (engine == nullptr || !engine->engine) return nullptr;
    return copy_out(stagehand::engine::status_json(engine->engine->status()));
  } catch (...) {
    return nullptr;
  }
}

void stagehand_free(void* p) { std::free(p); }

int stagehand_submit(stagehand_engine* engine, const char* key_name, const uint8_t* wtns, size_t wtns_len,
                     int wait_when_full, stagehand_proof_callback callback, void* user_data, uint64_t* proof_id,
                     char* err, size_t err_len) {
  stagehand_submit_options options;
  stagehand_submit_options_init(&options);
  options.wait_when_full = wait_when_full;
  return stagehand_submit_ex(engine, key_name, wtns, wtns_len, &options, callback, user_data, proof_id, nullptr, err,
                             err_len);
}

void stagehand_submit_options_init(stagehand_submit_options* options) {
  if (options == nullptr) return;
  *options = stagehand_submit_options{};
  options->struct_size = sizeof(stagehand_submit_options);
  options->priority = STAGEHAND_PRIORITY_NORMAL;
}

int stagehand_submit_ex(stagehand_engine* engine, const char* key_name, const uint8_t* wtns, size_t wtns_len,
                        const stagehand_submit_options* options, stagehand_proof_callback callback, void* user_data,
                        uint64_t* proof_id, int* repeated, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    if (int status = check_engine(engine, err, err_len)) return status;
    if (int status = check_name(key_name, "key_name", err, err_len)) return status;
    if ((wtns == nullptr && wtns_len != 0) || proof_id == nullptr) {
      write_error(err, err_len, "wtns or proof_id is NULL");
      return STAGEHAND_ERROR_ARGUMENT;
    }
    auto submit_options = options_of(options, stagehand::engine::WhenFull::refuse, err, err_len);
    if (!submit_options) return STAGEHAND_ERROR_ARGUMENT;
    if (callback != nullptr) {
      submit_options->on_done = [callback, user_data](const stagehand::engine::ProofHandle& handle) {
        const auto result = handle.result();
        const int status = callback_status(result);
        const bool done = status == STAGEHAND_OK;
        callback(user_data, handle.id(), status, done ? result.proof_json.c_str() : nullptr,
                 done ? result.public_json.c_str() : nullptr, done ? nullptr : result.error.c_str());
      };
    }
    auto handle = engine->engine->submit(key_name, bytes_of(wtns, wtns_len), std::move(*submit_options));
    *proof_id = handle.id();
    if (repeated != nullptr) *repeated = handle.repeated() ? 1 : 0;
    return STAGEHAND_OK;
  });
}

int stagehand_prove_ex(stagehand_engine* engine, const char* key_name, const uint8_t* wtns, size_t wtns_len,
                       const stagehand_submit_options* options, char** proof_json, char** public_json,
                       stagehand_timings* timings, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    if (int status = check_engine(engine, err, err_len)) return status;
    if (int status = check_name(key_name, "key_name", err, err_len)) return status;
    if ((wtns == nullptr && wtns_len != 0) || proof_json == nullptr || public_json == nullptr) {
      write_error(err, err_len, "wtns, proof_json or public_json is NULL");
      return STAGEHAND_ERROR_ARGUMENT;
    }
    if (timings != nullptr && timings->struct_size < sizeof(stagehand_timings)) {
      write_error(err, err_len,
                  "timings->struct_size is smaller than stagehand_timings: set it to sizeof(stagehand_timings)");
      return STAGEHAND_ERROR_ARGUMENT;
    }
    auto submit_options = options_of(options, stagehand::engine::WhenFull::wait, err, err_len);
    if (!submit_options) return STAGEHAND_ERROR_ARGUMENT;
    auto handle = engine->engine->submit(key_name, bytes_of(wtns, wtns_len), std::move(*submit_options));
    const auto result = handle.wait();
    if (timings != nullptr) write_timings(result, timings, err, err_len);
    return answer(result, proof_json, public_json, err, err_len);
  });
}

int stagehand_proof_timings(stagehand_engine* engine, uint64_t proof_id, stagehand_timings* timings, char* err,
                            size_t err_len) {
  return guarded(err, err_len, [&] {
    if (int status = check_engine(engine, err, err_len)) return status;
    if (timings == nullptr) {
      write_error(err, err_len, "timings is NULL");
      return STAGEHAND_ERROR_ARGUMENT;
    }
    return write_timings(engine->engine->find(proof_id).result(), timings, err, err_len);
  });
}

int stagehand_poll(stagehand_engine* engine, uint64_t proof_id, char** proof_json, char** public_json, char* err,
                   size_t err_len) {
  return guarded(err, err_len, [&] {
    if (int status = check_engine(engine, err, err_len)) return status;
    return answer(engine->engine->find(proof_id).result(), proof_json, public_json, err, err_len);
  });
}

int stagehand_wait(stagehand_engine* engine, uint64_t proof_id, char** proof_json, char** public_json, char* err,
                   size_t err_len) {
  return guarded(err, err_len, [&] {
    if (int status = check_engine(engine, err, err_len)) return status;
    return answer(engine->engine->find(proof_id).wait(), proof_json, public_json, err, err_len);
  });
}

int stagehand_cancel(stagehand_engine* engine, uint64_t proof_id, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    if (int status = check_engine(engine, err, err_len)) return status;
    if (engine->engine->cancel(proof_id)) return STAGEHAND_OK;
    write_error(err, err_len, "the proof had ended already");
    return STAGEHAND_ALREADY_ENDED;
  });
}

const char* stagehand_status_name(int status) {
  switch (status) {
    case STAGEHAND_OK: return "ok";
    case STAGEHAND_ERROR_ARGUMENT: return "argument";
    case STAGEHAND_ERROR_CONFIG: return "config";
    case STAGEHAND_ERROR_UNKNOWN_KEY: return "unknown_key";
    case STAGEHAND_ERROR_KEY_EXISTS: return "key_exists";
    case STAGEHAND_ERROR_BAD_KEY: return "bad_key";
    case STAGEHAND_ERROR_BAD_WITNESS: return "bad_witness";
    case STAGEHAND_ERROR_QUEUE_FULL: return "queue_full";
    case STAGEHAND_ERROR_UNKNOWN_PROOF: return "unknown_proof";
    case STAGEHAND_ERROR_STOPPED: return "stopped";
    case STAGEHAND_ERROR_PROOF_FAILED: return "proof_failed";
    case STAGEHAND_ERROR_CANCELLED: return "cancelled";
    case STAGEHAND_ERROR_INTERNAL: return "internal";
    case STAGEHAND_PENDING: return "pending";
    case STAGEHAND_ALREADY_ENDED: return "already_ended";
    case STAGEHAND_ERROR_NO_GPU: return "no_gpu";
    case STAGEHAND_ERROR_DEADLINE: return "deadline";
    case STAGEHAND_ERROR_REQUEST_CONFLICT: return "request_conflict";
    default: return "unknown";
  }
}

}  // extern "C"
