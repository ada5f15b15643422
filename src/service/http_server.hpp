#pragma once
// The transport of `stagehand serve`: HTTP/1.1 (Boost.Beast) on a loopback TCP address (only:
// its callers may name files on this machine, and it has no authentication) or a
// Unix socket, one thread per connection (a proof request may wait minutes for its proof, and a
// thread that waits costs nothing else), at most serve.max_connections at once: more wait in
// the listen backlog until one ends. Bodies over serve.max_request_bytes are answered 413 before
// they are read; a malformed request 400, and the connection is closed; the server goes on.

#include "engine/engine_config.hpp"
#include "service/api.hpp"

#include <functional>
#include <memory>
#include <string>

namespace stagehand::service {

struct ListenAddress {
  bool unix_socket = false;
  std::string host;  // TCP: an address (127.0.0.1, ::1, ...); port 0 takes a free one
  unsigned short port = 0;
  std::string path;  // Unix socket

  // "HOST:PORT", "[V6]:PORT" or "unix:PATH"; std::invalid_argument saying what is wrong.
  static ListenAddress parse(const std::string& text);
};

class HttpServer {
 public:
  // Binds and listens; std::runtime_error naming the address when it cannot.
  HttpServer(Api& api, const engine::ServeSettings& settings, const ListenAddress& address);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // What it listens on: "127.0.0.1:PORT" (the port taken where 0 was asked) or "unix:PATH".
  std::string bound_address() const;

  // Serves until stop() or SIGINT/SIGTERM. Stopping: no new connections; `drain` runs (the
  // engine's shutdown: every accepted proof ends and its waiting request is answered); then the
  // open connections are closed once their current request is answered, and run returns.
  void run(std::function<void()> drain);
  // From any thread.
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace stagehand::service
