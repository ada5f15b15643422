// The C ABI (include/stagehand/stagehand.h) over stagehand::engine::Engine: every entry point
// catches everything, maps the engine's errors to status codes and copies strings out with
// malloc, so that no C++ type or exception reaches the caller.

#include "stagehand/stagehand.h"

#include "engine/engine.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
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
    case ProofState::failed: write_error(err, err_len, result.error); return STAGEHAND_ERROR_PROOF_FAILED;
    case ProofState::cancelled: write_error(err, err_len, result.error); return STAGEHAND_ERROR_CANCELLED;
  }
  return STAGEHAND_ERROR_INTERNAL;
}

std::vector<std::uint8_t> bytes_of(const uint8_t* data, std::size_t length) {
  return length == 0 ? std::vector<std::uint8_t>() : std::vector<std::uint8_t>(data, data + length);
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

int stagehand_key_load(stagehand_engine* engine, const char* key_name, const char* zkey_path, char* err, size_t err_len) {
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

int stagehand_prove(stagehand_engine* engine, const char* key_name, const uint8_t* wtns, size_t wtns_len, char** proof_json,
                    char** public_json, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    if (int status = check_engine(engine, err, err_len)) return status;
    if (int status = check_name(key_name, "key_name", err, err_len)) return status;
    if ((wtns == nullptr && wtns_len != 0) || proof_json == nullptr || public_json == nullptr) {
      write_error(err, err_len, "wtns, proof_json or public_json is NULL");
      return STAGEHAND_ERROR_ARGUMENT;
    }
    auto handle = engine->engine->submit(key_name, bytes_of(wtns, wtns_len), stagehand::engine::WhenFull::wait);
    return answer(handle.wait(), proof_json, public_json, err, err_len);
  });
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

int stagehand_submit(stagehand_engine* engine, const char* key_name, const uint8_t* wtns, size_t wtns_len, int wait_when_full,
                     stagehand_proof_callback callback, void* user_data, uint64_t* proof_id, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    if (int status = check_engine(engine, err, err_len)) return status;
    if (int status = check_name(key_name, "key_name", err, err_len)) return status;
    if ((wtns == nullptr && wtns_len != 0) || proof_id == nullptr) {
      write_error(err, err_len, "wtns or proof_id is NULL");
      return STAGEHAND_ERROR_ARGUMENT;
    }
    stagehand::engine::ProofCallback on_done;
    if (callback != nullptr) {
      on_done = [callback, user_data](const stagehand::engine::ProofHandle& handle) {
        const auto result = handle.result();
        const int status = result.state == ProofState::done     ? STAGEHAND_OK
                           : result.state == ProofState::cancelled ? STAGEHAND_ERROR_CANCELLED
                                                                   : STAGEHAND_ERROR_PROOF_FAILED;
        const bool done = status == STAGEHAND_OK;
        callback(user_data, handle.id(), status, done ? result.proof_json.c_str() : nullptr,
                 done ? result.public_json.c_str() : nullptr, done ? nullptr : result.error.c_str());
      };
    }
    auto handle = engine->engine->submit(key_name, bytes_of(wtns, wtns_len),
                                         wait_when_full != 0 ? stagehand::engine::WhenFull::wait : stagehand::engine::WhenFull::refuse,
                                         std::move(on_done));
    *proof_id = handle.id();
    return STAGEHAND_OK;
  });
}

int stagehand_poll(stagehand_engine* engine, uint64_t proof_id, char** proof_json, char** public_json, char* err, size_t err_len) {
  return guarded(err, err_len, [&] {
    if (int status = check_engine(engine, err, err_len)) return status;
    return answer(engine->engine->find(proof_id).result(), proof_json, public_json, err, err_len);
  });
}

int stagehand_wait(stagehand_engine* engine, uint64_t proof_id, char** proof_json, char** public_json, char* err, size_t err_len) {
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
    default: return "unknown";
  }
}

}  // extern "C"
