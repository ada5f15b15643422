#pragma once
// The HTTP/JSON API of `stagehand serve` over an Engine, apart from the transport
// (http_server.hpp), so that every route is one function of a request:
//
//   POST   /v1/keys/NAME            body: the .zkey bytes, or JSON {"path": "..."}   201
//                                   (a path under [serve] key_dirs only: key_files.hpp)
//   DELETE /v1/keys/NAME            unload once its proofs are done                   200
//   POST   /v1/proofs?key=NAME      body: the .wtns bytes                            202 {"id", "state", ...}
//          ...&wait=true            the proof: 200 {"id", "proof", "public", "timings"}
//          ...&priority=P           critical, high, normal (the default) or low
//          ...&request_id=R         the caller's name for it: the same R again answers the same proof
//          ...&deadline_ms=N        it must start within N ms of the request, or fail without running
//   GET    /v1/proofs/ID            its state, and the proof once done; "timings" once ended  200
//          ...?wait=SECONDS         answered when the proof ends or SECONDS have passed (at most
//                                   serve.request_timeout_s), with its state either way     200
//   DELETE /v1/proofs/ID            cancel                                            200
//   GET    /v1/status               the engine's status JSON                          200
//   GET    /metrics                 Prometheus text
//
// Errors are {"error": "..."} naming what was wrong: 400 malformed request or witness, 403 a key
// path outside key_dirs (or loading by path off), 404 unknown key, proof or route, 405 method,
// 409 key exists or proof ended, 413 body over the limit (answered by the transport), 429 queue
// full (with Retry-After), 500 a proof that failed, 503 the engine is stopping, 504 a waited-for
// proof not done within request_timeout_s. A deadline already past at submit is a 400, a request
// id naming another key's proof a 409, and a waited-for proof whose deadline passed while it was
// queued a 410.

#include "engine/engine.hpp"

#include <chrono>
#include <optional>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace stagehand::service {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query
  std::string content_type;
  std::vector<std::uint8_t> body;
};

struct HttpResponse {
  unsigned status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
};

// A GET /v1/proofs/ID?wait=SECONDS of a proof not yet ended: the transport answers it with
// proof_response() once the proof ends or `most` has passed (answer_proof_wait, proof_wait.hpp),
// holding no thread meanwhile.
struct ProofWait {
  engine::ProofHandle proof;
  std::chrono::steady_clock::duration most{};
};

// What Api::handle gives back: the answer, or the proof's end to wait for before answering.
using Reply = std::variant<HttpResponse, ProofWait>;

// {"error": message} with that status.
HttpResponse error_response(unsigned status, const std::string& message);

// GET /v1/proofs/ID's answer: 200 with the proof's state, the proof once done, its timings once ended.
HttpResponse proof_response(const engine::ProofHandle& proof);

// Prometheus text exposition of the engine's status.
std::string prometheus_metrics(const engine::EngineStatus& status);

class Api {
 public:
  Api(engine::Engine& engine, engine::ServeSettings settings);
  // Never throws: every failure is a response. It may block (a wait=true submit waits for its
  // proof on this thread); a GET's wait comes back as a ProofWait instead.
  // The request is taken over: a proof's body moves into the engine's queue, uncopied.
  Reply handle(HttpRequest request);

 private:
  Reply route(HttpRequest& request);
  HttpResponse load_key(const std::string& name, const HttpRequest& request);
  // A JSON body naming the key's files on the server ({"path": .zkey}, or {"params": .params,
  // "r1cs": .r1cs}): each checked against [serve] key_dirs, then loaded. The refusal, or nothing
  // once loaded (EngineError passes on).
  std::optional<HttpResponse> load_key_by_path(const std::string& name, const std::vector<std::uint8_t>& body);
  HttpResponse submit(const std::string& query, HttpRequest& request);
  Reply proof_state(std::uint64_t id, std::string_view query);
  HttpResponse cancel_proof(std::uint64_t id);

  engine::Engine& engine_;
  engine::ServeSettings settings_;
};

}  // namespace stagehand::service
