// stagehand serve: the engine (src/engine/) behind an HTTP/JSON API (src/service/) on a
// loopback address or a Unix socket, until SIGINT or SIGTERM.

#include "cli/commands.hpp"

#include "engine/engine.hpp"
#include "engine/engine_config.hpp"
#include "service/api.hpp"
#include "service/http_server.hpp"

#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <memory>
#include <stdexcept>

namespace stagehand::cli {
namespace {

struct ServeOptions {
  std::string config;
  std::string listen;
  std::vector<std::string> keys;
  std::string on_stop = "fail";
};

constexpr const char* kApi = R"(The API (JSON unless said; errors are {"error": "..."}):
  POST   /v1/keys/NAME            body: the .zkey's bytes, or {"path": "<file under serve.key_dirs>"}  201
  DELETE /v1/keys/NAME            unloads it once its queued and running proofs are done          200
  POST   /v1/proofs?key=NAME      body: the .wtns's bytes -> 202 {"id": "..."}
         /v1/proofs?key=NAME&wait=true                    -> 200 {"id", "proof": <proof.json>, "public": [...]}
         ...&priority=critical|high|normal|low  (normal by default; a queued proof rises a class every
                                  engine.promote_after_s)
         ...&request_id=R         the same R again answers the same proof (engine.request_id_retention_s)
         ...&deadline_ms=N        start within N ms or fail unrun (N <= 0: refused, 400; passed while queued: 410)
  GET    /v1/proofs/ID            {"state": queued|running|done|failed|cancelled, ...; "proof", "public" once done;
                                  "timings": queue_s, setup_s, host_before_s, gpu_s, host_after_s, check_s, total_s}
         /v1/proofs/ID?wait=S     the same once the proof has ended or S seconds have passed (at most
                                  serve.request_timeout_s), its state either way
  DELETE /v1/proofs/ID            cancels it (queued: at once; running: before its next step)
  GET    /v1/status               queue, proofs, per-GPU and per-key status
  GET    /metrics                 Prometheus text
Statuses: 400 malformed request or witness, 401 no or a wrong bearer token (serve.token_file, over
TCP), 403 a key path outside serve.key_dirs (or none set), 404 unknown key/proof/route, 408 a
request not received within serve.read_timeout_s, 409 key exists, proof ended or a request id
naming another key's proof, 410 a waited-for proof whose deadline passed in the queue, 413 body
over serve.max_request_mib, 429 queue full (Retry-After), 500 a proof that failed, 503 stopping,
504 a waited-for (wait=true) proof not done within serve.request_timeout_s.
Limits ([serve] in the configuration): max_request_mib, request_timeout_s, key_dirs; the connections:
max_connections, read_timeout_s, idle_timeout_s, socket_mode, socket_group, token_file;
the queue ([engine]): queue_capacity, max_batch, promote_after_s, request_id_retention_s. See config/serve.toml.)";

std::pair<std::string, std::string> key_argument(const std::string& argument) {
  const auto eq = argument.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == argument.size()) {
    throw std::runtime_error(fmt::format("--key {}: expected NAME=ZKEY", argument));
  }
  return {argument.substr(0, eq), argument.substr(eq + 1)};
}

int serve(const ServeOptions& options) {
  auto config = options.config.empty() ? engine::EngineConfig{} : engine::load_engine_config(options.config);
  const auto address = service::ListenAddress::parse(options.listen);
  // A client that goes away mid-answer must cost its connection, never the server.
  std::signal(SIGPIPE, SIG_IGN);
  engine::Engine engine(config);
  for (const auto& argument : options.keys) {
    const auto [name, path] = key_argument(argument);
    engine.load_key(name, path);
    const auto status = engine.status();
    for (const auto& key : status.keys) {
      if (key.name == name)
        fmt::print(stderr, "stagehand serve: key {}: {}, read in {:.2f} s\n", name, path, key.read_seconds);
    }
  }
  service::Api api(engine, config.serve);
  service::HttpServer server(api, config.serve, address);
  fmt::print(stderr,
             "stagehand serve: {}; listening on {} (at most {} connections, bodies up to {} bytes, read within {} s, "
             "idle for {} s; {})\n",
             engine.status().backend, server.bound_address(), config.serve.max_connections,
             config.serve.max_request_bytes, config.serve.read_timeout_s, config.serve.idle_timeout_s,
             config.serve.token.empty() ? "no token"
             : address.unix_socket      ? "no token on the Unix socket: its mode and group admit its callers"
                                        : "a bearer token on every request");
  std::fflush(stderr);
  const auto drain = options.on_stop == "finish" ? engine::Drain::finish : engine::Drain::fail_queued;
  server.run([&] {
    fmt::print(stderr, "stagehand serve: stopping: {} queued proofs {}\n", engine.status().queued,
               drain == engine::Drain::finish ? "are made first" : "fail (the running ones finish)");
    engine.shutdown(drain);
  });
  const auto status = engine.status();
  fmt::print(stderr, "stagehand serve: stopped: {} proofs done, {} failed, {} cancelled\n", status.done, status.failed,
             status.cancelled);
  const auto connections = server.counters();
  fmt::print(
      stderr,
      "stagehand serve: connections: {} accepted, {} closed to make room, {} timed out reading a request, {} idle, "
      "{} refused without the token\n",
      connections.accepted, connections.closed_for_room, connections.read_timeouts, connections.idle_timeouts,
      connections.unauthorized);
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto options = std::make_shared<ServeOptions>();
  auto* command =
      app.add_subcommand("serve", "Serve proofs over HTTP/JSON: keys loaded once, proofs queued from any client");
  command->add_option("--config", options->config,
                      "Deployment configuration (TOML): backend, devices, policy, and the [engine] and [serve] tables");
  command
      ->add_option("--listen", options->listen,
                   "Where to listen: HOST:PORT (loopback, e.g. 127.0.0.1:8080; port 0 takes a free one) or unix:PATH")
      ->required();
  command->add_option("--key", options->keys, "A proving key to load at start, NAME=ZKEY; repeatable");
  command
      ->add_option("--on-stop", options->on_stop,
                   "On SIGTERM/SIGINT: 'fail' each queued proof with a clear error (the running ones finish), or "
                   "'finish' them all")
      ->capture_default_str()
      ->check(CLI::IsMember({"fail", "finish"}));
  command->footer(kApi);
  on_selected(command, [options] { return serve(*options); });
}

}  // namespace stagehand::cli
