#pragma once
// The engine's configuration: the run configuration's tables (backend, devices, policy, staging,
// faults: config/run_config.hpp) and two of its own, in the same file:
//
//   [engine]  the proof queue and batching, and the proofs' layout (read by stagehand::Engine)
//   [serve]   the HTTP service's limits (read by `stagehand serve`)
//
// There is no [workload]: the engine proves the proofs it is given.
//
// Every key is documented in config/serve.toml; unknown keys and bad values are errors naming the
// file, line and key, as for every other table.

#include "coordinator/policy/policy.hpp"
#include "config/run_config.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace stagehand::engine {

struct EngineSettings {
  // Proofs accepted and not yet running, all keys together; a submit beyond it is refused or
  // waits, as its caller chooses.
  std::size_t queue_capacity = 64;
  // The most proofs one coordinator run makes: those of its key queued when it starts and those
  // that join it while it runs (engine.hpp). A run's end drains the GPUs; the bound keeps what a
  // run records of its proofs bounded.
  std::size_t max_batch = 256;
  // How long a run whose proofs have all ended and whose key has none queued stays open for
  // another proof of its key before it ends (0: it ends at once). A stream that arrives a little
  // slower than the GPUs prove it then goes on in one run instead of draining the pipeline and
  // setting up the next run at every gap; a proof of another key, a retired key or shutdown ends
  // the wait at once. The default is short beside a proof's own time on a GPU, so a run that is
  // truly over holds the dispatcher only briefly.
  double linger_ms = 20;
  // A queued proof's priority class rises by one for every promote_after_s it waits (low, normal,
  // high, critical), so that a low proof waits at most three of them before it is critical and
  // ahead of every proof that came after it.
  double promote_after_s = 60;
  // How long after its end a proof stays known by its request id: submitted again within it, the
  // id returns that proof instead of making another.
  double request_id_retention_s = 600;
  Policy policy = Policy::budgeted;
  // The pairing check of every proof before it is handed out.
  bool verify = true;
  // Host threads for the CPU math of each step (0: every hardware thread).
  unsigned threads = 0;
  // r and s from this seed plus the proof's id less one (the first proof's seed is this one, as
  // `stagehand prove --seed`'s first witness's) instead of the system's CSPRNG (tests only: such
  // proofs are not zero-knowledge).
  std::optional<std::uint64_t> seed;
  // Where each proof's a/b/c step runs and where the key's sets live, as `stagehand prove`'s
  // --abc, --key-sets, --stream-buffer-mib and --precompute-bases (nullopt: planned from the
  // devices' memory). A key stays set up between batches, so precomputed sets pay back over the
  // proofs the engine makes of it, not one batch's.
  std::optional<groth16::AbcStep> abc_step;
  std::optional<groth16::SetPlacement> key_sets;
  Bytes stream_buffer_bytes = kGiB;
  bool precompute_bases = false;
  // A key stays set up on the GPUs between its batches, beside other keys' while they fit
  // (false: each batch uploads it and frees it at its end, leaving the memory to others between
  // batches).
  bool keep_key_on_device = true;
  // Where each batch's coordinator run writes its Chrome/Perfetto trace and a picture of it
  // (run-NNNNNN.trace.json and .svg, N the engine's count of batches), the newest trace_runs of
  // them kept; empty: none. On a GPU the trace has the coordinator's rows, every kernel (timed by
  // CUDA events) and the engine's queue wait and dispatch; on the simulator the coordinator's rows. A relative path is taken from
  // the working directory.
  std::filesystem::path trace_dir;
  std::size_t trace_runs = 8;
};

struct ServeSettings {
  std::size_t max_request_bytes = std::size_t{256} << 20;  // a larger body is answered 413
  int max_connections = 512;                               // at it, a new one closes the longest waiting (below)
  double request_timeout_s = 600;  // a wait=true request's wait for its proof; the longest GET ?wait=

  // The transport's connections (service/http_server.hpp). A connection costs a socket and a
  // timer, not a thread, until its request has been read; at max_connections a new one closes the
  // connection that has waited longest for a request's bytes, so slow clients cannot hold them all.
  double read_timeout_s = 10;            // a request's head and body from its first byte; its answer's write
  double idle_timeout_s = 30;            // a connection with no request begun is closed after it
  unsigned socket_mode = 0660;           // the Unix socket's permissions
  std::optional<unsigned> socket_group;  // the Unix socket's group id, where socket_group names one
  // Over TCP every request must carry "Authorization: Bearer <token>" where a token file is set;
  // the token is read from the file when the configuration is loaded.
  std::filesystem::path token_file;
  std::string token;
  // The only directories whose files POST /v1/keys/NAME {"path": ...} may name, resolved
  // (std::filesystem::canonical: absolute, without symbolic links) when the configuration is
  // read; empty: keys are loaded by path not at all, only from the request's body.
  std::vector<std::filesystem::path> key_dirs;
};

struct EngineConfig {
  RunConfig run;
  EngineSettings engine;
  ServeSettings serve;
};

EngineConfig load_engine_config(const std::filesystem::path& path);
EngineConfig parse_engine_config(std::string_view text, const std::string& source_name);

}  // namespace stagehand::engine
