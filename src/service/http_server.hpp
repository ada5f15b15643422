#pragma once
// The transport of `stagehand serve`: HTTP/1.1 (Boost.Beast) on a loopback TCP address (only:
// its callers may name files on this machine) or a Unix socket.
//
// Connections live on one io_context thread, each a socket and a timer: waiting for a request
// (closed after serve.idle_timeout_s), reading it (its head and body within serve.read_timeout_s
// of its first byte, else 408), then handled on a thread of its own (a wait=true request may wait
// minutes for its proof, and must not hold up the others) and answered; a GET that waits for a
// proof's end (?wait=SECONDS) is answered from the io thread, by a timer and the proof's end
// callback (proof_wait.hpp), holding no thread while it waits. At serve.max_connections
// a new connection closes the one that has waited longest for a request's bytes, so clients that
// open connections and send nothing, or send slowly, cannot keep others out; connections whose
// requests are being handled are never closed for room. Bodies over serve.max_request_bytes are
// answered 413 before they are read; a malformed request 400; either closes its connection.
//
// Over TCP with serve.token_file set, every request must carry "Authorization: Bearer <token>"
// (401 before its body is read otherwise). A Unix socket asks for no token: the kernel admits to
// it only the users that serve.socket_mode and serve.socket_group allow.

#include "engine/engine_config.hpp"
#include "service/api.hpp"
#include "service/listen_address.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace stagehand::service {

class HttpServer {
 public:
  // Binds and listens (a Unix socket gets its mode and group before it listens); raises the open
  // files' limit to what max_connections needs. std::runtime_error naming the address when it cannot.
  HttpServer(Api& api, const engine::ServeSettings& settings, const ListenAddress& address);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // What it listens on: "127.0.0.1:PORT" (the port taken where 0 was asked) or "unix:PATH".
  std::string bound_address() const;

  // Serves until stop() or SIGINT/SIGTERM. Stopping: no new connections, and those waiting for a
  // request's bytes are closed; `drain` runs on a thread of its own (the engine's shutdown: every
  // accepted proof ends and its waiting request is answered) while the other connections are
  // served; each is closed once its current request is answered, and run returns when all are.
  void run(std::function<void()> drain);
  // From any thread.
  void stop();

  // What the connections did, for the log: read once run() has returned.
  struct Counters {
    std::uint64_t accepted = 0;
    std::uint64_t closed_for_room = 0;  // waiting for a request's bytes when max_connections was reached
    std::uint64_t read_timeouts = 0;    // a request not read within read_timeout_s (408)
    std::uint64_t idle_timeouts = 0;    // no request begun within idle_timeout_s
    std::uint64_t unauthorized = 0;     // 401
  };
  Counters counters() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace stagehand::service
