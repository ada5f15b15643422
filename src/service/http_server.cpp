#include "service/http_server.hpp"

#include "service/listen_address.hpp"
#include "service/proof_wait.hpp"

#include "util/assert.hpp"
#include "util/constant_time.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <list>
#include <map>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace stagehand::service {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using local = asio::local::stream_protocol;

namespace {

// Where a connection is. Only the waiting ones (idle, reading, closing) may be closed to make room.
enum class Phase { idle, reading, busy, closing };

// What the server's bookkeeping needs of a connection, whatever its socket.
class Connection {
 public:
  virtual ~Connection() = default;
  virtual void close() = 0;

  Phase phase = Phase::idle;
  bool waiting = false;                           // in Impl::waiting, at waiting_at
  std::list<Connection*>::iterator waiting_at{};  // (the io thread only, like everything here)
};

std::chrono::steady_clock::duration duration_of(double value) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(value));
}

}  // namespace

struct HttpServer::Impl {
  Api& api;
  engine::ServeSettings settings;
  ListenAddress address;
  bool token_required;
  asio::io_context io;
  std::optional<tcp::acceptor> tcp_acceptor;
  std::optional<local::acceptor> local_acceptor;
  asio::signal_set signals{io, SIGINT, SIGTERM};
  asio::steady_timer accept_pause{io};
  std::function<void()> drain;
  Counters counters;

  // Everything below is touched on the io thread only.
  bool stopping = false;
  bool drained = false;
  bool accepting = false;  // an accept is pending, or paused after an error
  // Keeps run() going while requests are handled on their threads, or the engine drains.
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> keep_running;
  std::map<Connection*, std::shared_ptr<Connection>> connections;
  std::list<Connection*> waiting;  // connections waiting for a request's bytes, the longest waiting first
  std::list<std::thread> threads;  // one per request being handled, and the drain's

  Impl(Api& api, const engine::ServeSettings& settings, const ListenAddress& address)
      : api(api),
        settings(settings),
        address(address),
        token_required(!address.unix_socket && !settings.token.empty()) {}

  void listen_on_unix_socket();
  void listen_on_tcp();
  void accept_next();
  template <class Socket, class Acceptor>
  void accept_on(Acceptor& acceptor);
  void on_accept_error(const beast::error_code& error);
  template <class Socket>
  void adopt(Socket socket);
  bool close_longest_waiting();
  void mark_waiting(Connection& connection);
  void mark_busy(Connection& connection);
  void forget(Connection& connection);
  void dispatch(HttpRequest request, std::function<void(HttpResponse)> done);
  std::optional<std::string> refusal(std::string_view authorization);
  void begin_stop();
  void finish_if_done();
};

namespace {

// One connection's requests, one after another, on the io thread: wait for a request's first
// byte (idle), read it (reading), hand it to a thread and answer it (busy), and either wait for
// the next or close (closing: the client's late bytes dropped until it closes its side).
template <class Socket>
class Session final : public Connection, public std::enable_shared_from_this<Session<Socket>> {
 public:
  Session(HttpServer::Impl& server, Socket socket)
      : server_(server), socket_(std::move(socket)), deadline_(server.io) {}

  void start() { await_request(); }
  // Answers at once and closes: for a connection there is no room for.
  void refuse(HttpResponse response) { answer(std::move(response), 11, false); }
  void close() override;

 private:
  using Parser = http::request_parser<http::vector_body<std::uint8_t>>;

  void await_request();
  void read_head();
  void on_head(beast::error_code error);
  void read_body();
  void on_body(beast::error_code error);
  void read_failed(beast::error_code error);
  void answer(HttpResponse response, unsigned version, bool keep_alive);
  void linger();
  void drop_until_closed();
  void arm(double limit_s);

  HttpServer::Impl& server_;
  Socket socket_;
  asio::steady_timer deadline_;
  beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  bool timed_out_ = false;
  bool closed_ = false;
};

template <class Socket>
void Session<Socket>::await_request() {
  if (server_.stopping) return close();
  // Pipelined: the next request's bytes came with the last one's.
  if (buffer_.size() > 0) return read_head();
  buffer_.shrink_to_fit();
  phase = Phase::idle;
  server_.mark_waiting(*this);
  arm(server_.settings.idle_timeout_s);
  socket_.async_read_some(buffer_.prepare(4096),
                          [self = this->shared_from_this()](beast::error_code error, std::size_t count) {
                            if (self->closed_) return;
                            self->buffer_.commit(count);
                            if (self->timed_out_) ++self->server_.counters.idle_timeouts;
                            // Gone, or idle past idle_timeout_s: no request was begun, so there is nothing to answer.
                            if (error) return self->close();
                            self->read_head();
                          });
}

template <class Socket>
void Session<Socket>::read_head() {
  phase = Phase::reading;
  server_.mark_waiting(*this);  // to the back: its wait for this request began now
  arm(server_.settings.read_timeout_s);
  parser_.emplace();
  parser_->body_limit(server_.settings.max_request_bytes);
  http::async_read_header(
      socket_, buffer_, *parser_,
      [self = this->shared_from_this()](beast::error_code error, std::size_t) { self->on_head(error); });
}

template <class Socket>
void Session<Socket>::on_head(beast::error_code error) {
  if (closed_) return;
  if (error) return read_failed(error);
  const auto& header = parser_->get();
  // Refused before its body is read: a caller without the token cannot make the server read bodies.
  const auto authorization = header[http::field::authorization];
  if (auto problem = server_.refusal(std::string_view(authorization.data(), authorization.size()))) {
    ++server_.counters.unauthorized;
    auto response = error_response(401, *problem);
    response.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"stagehand\"");
    return answer(std::move(response), header.version(), false);
  }
  // curl and others wait for this before sending a large body.
  if (beast::iequals(header[http::field::expect], "100-continue")) {
    auto go_on = std::make_shared<http::response<http::empty_body>>(http::status::continue_, header.version());
    return http::async_write(socket_, *go_on,
                             [self = this->shared_from_this(), go_on](beast::error_code error, std::size_t) {
                               if (self->closed_) return;
                               if (error) return self->close();
                               self->read_body();
                             });
  }
  read_body();
}

template <class Socket>
void Session<Socket>::read_body() {
  // The deadline armed at the request's first byte still runs: head and body share it.
  http::async_read(socket_, buffer_, *parser_,
                   [self = this->shared_from_this()](beast::error_code error, std::size_t) { self->on_body(error); });
}

template <class Socket>
void Session<Socket>::on_body(beast::error_code error) {
  if (closed_) return;
  if (error) return read_failed(error);
  deadline_.cancel();
  phase = Phase::busy;
  server_.mark_busy(*this);
  STAGEHAND_ASSERT(parser_->is_done(), "a request handed on before it was read whole");
  auto message = parser_->release();
  parser_.reset();
  HttpRequest request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  request.content_type = std::string(message[http::field::content_type]);
  request.body = std::move(message.body());
  server_.dispatch(std::move(request), [self = this->shared_from_this(), version = message.version(),
                                        keep_alive = message.keep_alive()](HttpResponse response) {
    // Nothing closes a connection whose request is being handled: it holds no deadline, and
    // neither the room for new connections nor a stop takes it.
    STAGEHAND_ASSERT(self->phase == Phase::busy && !self->closed_ && !self->waiting,
                     "a connection left its request's handling");
    self->answer(std::move(response), version, keep_alive);
  });
}

template <class Socket>
void Session<Socket>::read_failed(beast::error_code error) {
  const unsigned version = parser_ && parser_->is_header_done() ? parser_->get().version() : 11;
  if (error == http::error::body_limit) {
    // Its Content-Length said so before the body was sent, or a chunked body grew past it.
    return answer(error_response(413, fmt::format("the body is over the limit of {} bytes (serve.max_request_mib)",
                                                  server_.settings.max_request_bytes)),
                  version, false);
  }
  if (timed_out_) {
    ++server_.counters.read_timeouts;
    return answer(
        error_response(408,
                       fmt::format("the request was not received within {} s of its first byte (serve.read_timeout_s)",
                                   server_.settings.read_timeout_s)),
        version, false);
  }
  answer(error_response(400, fmt::format("malformed request: {}", error.message())), version, false);
}

template <class Socket>
void Session<Socket>::answer(HttpResponse response, unsigned version, bool keep_alive) {
  if (closed_) return;
  keep_alive = keep_alive && !server_.stopping;
  phase = Phase::busy;
  server_.mark_busy(*this);
  auto message =
      std::make_shared<http::response<http::string_body>>(static_cast<http::status>(response.status), version);
  message->set(http::field::server, "stagehand");
  message->set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) message->set(name, value);
  message->keep_alive(keep_alive);
  message->body() = std::move(response.body);
  message->prepare_payload();
  // A client that does not read its answer loses its connection like one that does not send.
  arm(server_.settings.read_timeout_s);
  http::async_write(socket_, *message,
                    [self = this->shared_from_this(), message, keep_alive](beast::error_code error, std::size_t) {
                      if (self->closed_) return;
                      if (error) return self->close();
                      if (!keep_alive) return self->linger();
                      self->await_request();
                    });
}

// After an answer that closes the connection the client may still be sending (a body not read
// after a 401 or 413); closing at once would reset the connection, and the reset can destroy the
// answer before the client reads it. So: no more writes, the client's bytes dropped until it
// closes its side or the read deadline passes.
template <class Socket>
void Session<Socket>::linger() {
  beast::error_code ignored;
  socket_.shutdown(Socket::shutdown_send, ignored);
  phase = Phase::closing;
  server_.mark_waiting(*this);
  arm(server_.settings.read_timeout_s);
  buffer_.consume(buffer_.size());
  drop_until_closed();
}

template <class Socket>
void Session<Socket>::drop_until_closed() {
  socket_.async_read_some(buffer_.prepare(65536),
                          [self = this->shared_from_this()](beast::error_code error, std::size_t count) {
                            if (self->closed_) return;
                            self->buffer_.commit(count);
                            self->buffer_.consume(self->buffer_.size());
                            if (error) return self->close();
                            self->drop_until_closed();
                          });
}

// The connection's one deadline, for its current wait: on expiry the pending read or write ends
// with operation_aborted, and timed_out_ says why.
template <class Socket>
void Session<Socket>::arm(double limit_s) {
  timed_out_ = false;
  deadline_.expires_after(duration_of(limit_s));
  deadline_.async_wait([self = this->shared_from_this()](beast::error_code error) {
    // A deadline moved or cancelled after it had fired is no timeout.
    if (error || self->closed_ || self->deadline_.expiry() > std::chrono::steady_clock::now()) return;
    self->timed_out_ = true;
    beast::error_code ignored;
    self->socket_.cancel(ignored);
  });
}

template <class Socket>
void Session<Socket>::close() {
  if (closed_) return;
  closed_ = true;
  const auto keep = this->shared_from_this();  // forget() drops the server's reference
  deadline_.cancel();
  beast::error_code ignored;
  socket_.shutdown(Socket::shutdown_both, ignored);
  socket_.close(ignored);
  server_.forget(*this);
}

}  // namespace

void HttpServer::Impl::accept_next() {
  if (stopping || accepting) return;
  // Full, and every connection busy with a request: resumed when one waits again or closes.
  if (connections.size() >= static_cast<std::size_t>(settings.max_connections) && waiting.empty()) return;
  accepting = true;
  if (tcp_acceptor) {
    accept_on<tcp::socket>(*tcp_acceptor);
  } else {
    accept_on<local::socket>(*local_acceptor);
  }
}

template <class Socket, class Acceptor>
void HttpServer::Impl::accept_on(Acceptor& acceptor) {
  acceptor.async_accept([this](beast::error_code error, Socket socket) {
    accepting = false;
    if (stopping) return;
    if (error) return on_accept_error(error);
    ++counters.accepted;
    adopt(std::move(socket));
    accept_next();
  });
}

template <class Socket>
void HttpServer::Impl::adopt(Socket socket) {
  // Full: the connection that has waited longest for a request's bytes makes room.
  const auto limit = static_cast<std::size_t>(settings.max_connections);
  if (connections.size() >= limit && close_longest_waiting()) ++counters.closed_for_room;
  auto session = std::make_shared<Session<Socket>>(*this, std::move(socket));
  connections.emplace(session.get(), session);
  if (connections.size() <= limit) return session->start();
  // The one left waiting went busy while this connection was being accepted.
  session->refuse(
      error_response(503, fmt::format("all {} connections (serve.max_connections) are busy with requests; try again",
                                      settings.max_connections)));
}

void HttpServer::Impl::on_accept_error(const beast::error_code& error) {
  // Out of descriptors, the connection stays in the backlog: make room, or pause rather than
  // spin on an accept that fails at once. Other errors (a connection reset before it was
  // accepted, a lack of memory) pause too.
  if ((error == asio::error::no_descriptors || error == boost::system::errc::too_many_files_open_in_system) &&
      close_longest_waiting()) {
    ++counters.closed_for_room;
    return accept_next();
  }
  accepting = true;
  accept_pause.expires_after(std::chrono::milliseconds(100));
  accept_pause.async_wait([this](beast::error_code wait_error) {
    accepting = false;
    if (!wait_error) accept_next();
  });
}

// Those with no request begun (idle, or closing after their answer) go first, the longest waiting
// first; then the one whose request has been arriving longest.
bool HttpServer::Impl::close_longest_waiting() {
  if (waiting.empty()) return false;
  const auto idle =
      std::find_if(waiting.begin(), waiting.end(), [](const Connection* c) { return c->phase != Phase::reading; });
  (idle != waiting.end() ? *idle : waiting.front())->close();
  return true;
}

void HttpServer::Impl::mark_waiting(Connection& connection) {
  if (connection.waiting) waiting.erase(connection.waiting_at);
  connection.waiting_at = waiting.insert(waiting.end(), &connection);
  connection.waiting = true;
  accept_next();  // a full server may accept again: this connection can make room
}

void HttpServer::Impl::mark_busy(Connection& connection) {
  if (!connection.waiting) return;
  waiting.erase(connection.waiting_at);
  connection.waiting = false;
}

void HttpServer::Impl::forget(Connection& connection) {
  mark_busy(connection);
  const auto erased = connections.erase(&connection);
  STAGEHAND_ASSERT(erased == 1, "a connection closed twice, or never adopted");
  accept_next();
  finish_if_done();
}

// Api::handle may block (a wait=true request waits for its proof), so each request is handled on
// a thread of its own; its answer is written back on the io thread, where the thread is joined. A
// GET that waits for its proof's end comes back as a ProofWait, answered from the io thread once
// the proof ends or its wait runs out, with no thread held meanwhile.
void HttpServer::Impl::dispatch(HttpRequest request, std::function<void(HttpResponse)> done) {
  auto slot = threads.emplace(threads.end());
  try {
    *slot = std::thread([this, slot, request = std::move(request), done]() mutable {
      auto reply = api.handle(std::move(request));  // never throws
      asio::post(io, [this, slot, reply = std::move(reply), done = std::move(done)]() mutable {
        slot->join();
        threads.erase(slot);
        if (auto* wait = std::get_if<ProofWait>(&reply)) return answer_proof_wait(io.get_executor(), *wait, done);
        done(std::get<HttpResponse>(std::move(reply)));
      });
    });
  } catch (const std::system_error& error) {
    threads.erase(slot);
    done(error_response(503, fmt::format("no thread to handle the request: {}; try again", error.what())));
  }
}

// Why a request may not be served: nullopt where it may.
std::optional<std::string> HttpServer::Impl::refusal(std::string_view authorization) {
  if (!token_required) return std::nullopt;
  constexpr std::string_view scheme = "bearer ";
  if (authorization.empty())
    return "this server asks for a token: send \"Authorization: Bearer <the token in serve.token_file>\"";
  if (authorization.size() < scheme.size() || !beast::iequals(beast::string_view(authorization.data(), scheme.size()),
                                                              beast::string_view(scheme.data(), scheme.size()))) {
    return "the Authorization header is not \"Bearer <token>\"";
  }
  auto given = authorization.substr(scheme.size());
  given.remove_prefix(std::min(given.find_first_not_of(' '), given.size()));
  if (!equal_in_constant_time(given, settings.token)) return "the bearer token is not this server's";
  return std::nullopt;
}

void HttpServer::Impl::begin_stop() {
  if (stopping) return;
  stopping = true;
  beast::error_code ignored;
  signals.cancel(ignored);
  accept_pause.cancel();
  if (tcp_acceptor) tcp_acceptor->close(ignored);
  if (local_acceptor) local_acceptor->close(ignored);
  // Connections waiting for a request's bytes close now (a request not yet read would find the
  // engine stopping); a request being handled or answered ends first.
  const std::vector<Connection*> waiting_now(waiting.begin(), waiting.end());
  for (auto* connection : waiting_now) connection->close();
  if (!drain) {
    drained = true;
    return finish_if_done();
  }
  // The engine's drain waits for proofs; meanwhile the io thread writes their answers.
  auto slot = threads.emplace(threads.end());
  auto drain_then_finish = [this, slot] {
    try {
      drain();
    } catch (...) {
      // The engine's shutdown reports its own failures; the server stops all the same.
    }
    asio::post(io, [this, slot] {
      if (slot->joinable()) slot->join();
      threads.erase(slot);
      drained = true;
      finish_if_done();
    });
  };
  try {
    *slot = std::thread(drain_then_finish);
  } catch (const std::system_error&) {
    drain_then_finish();  // no thread to spare: the answers wait for the drain, as they may
  }
}

void HttpServer::Impl::finish_if_done() {
  if (stopping && drained && connections.empty()) keep_running.reset();
}

void HttpServer::Impl::listen_on_unix_socket() {
  // A socket file left by an earlier server would make bind fail; anything else is kept.
  std::error_code status_error;
  if (std::filesystem::is_socket(address.path, status_error)) std::filesystem::remove(address.path, status_error);
  local_acceptor.emplace(io);
  local_acceptor->open();
  local_acceptor->bind(local::endpoint(address.path));
  // Before listen() no client can connect: the mode and group hold from the first connection on.
  try {
    if (::chmod(address.path.c_str(), settings.socket_mode) != 0) {
      throw std::runtime_error(fmt::format("cannot set its mode to {:04o} (serve.socket_mode): {}",
                                           settings.socket_mode, std::strerror(errno)));
    }
    if (settings.socket_group && ::chown(address.path.c_str(), static_cast<uid_t>(-1), *settings.socket_group) != 0) {
      throw std::runtime_error(
          fmt::format("cannot give it the group {} (serve.socket_group; the server's user must be a member): {}",
                      *settings.socket_group, std::strerror(errno)));
    }
    local_acceptor->listen();
  } catch (...) {
    std::filesystem::remove(address.path, status_error);
    throw;
  }
}

void HttpServer::Impl::listen_on_tcp() {
  const tcp::endpoint endpoint(asio::ip::make_address(address.host), address.port);
  // The API loads files its callers name: it is for this machine only.
  if (!endpoint.address().is_loopback()) {
    throw std::runtime_error(
        "not a loopback address: serve listens on loopback (127.0.0.1, ::1) or a Unix socket only, "
        "since its callers may name files on this machine; put a proxy in front for remote callers");
  }
  tcp_acceptor.emplace(io);
  tcp_acceptor->open(endpoint.protocol());
  tcp_acceptor->set_option(tcp::acceptor::reuse_address(true));
  tcp_acceptor->bind(endpoint);
  tcp_acceptor->listen();
}

HttpServer::HttpServer(Api& api, const engine::ServeSettings& settings, const ListenAddress& address)
    : impl_(std::make_unique<Impl>(api, settings, address)) {
  try {
    ensure_descriptors(settings.max_connections);
    if (address.unix_socket) {
      impl_->listen_on_unix_socket();
    } else {
      impl_->listen_on_tcp();
    }
  } catch (const std::exception& error) {
    throw std::runtime_error(fmt::format(
        "cannot listen on {}: {}",
        address.unix_socket ? "unix:" + address.path : fmt::format("{}:{}", address.host, address.port), error.what()));
  }
}

HttpServer::~HttpServer() {
  if (impl_->address.unix_socket) {
    std::error_code ignored;
    std::filesystem::remove(impl_->address.path, ignored);
  }
}

std::string HttpServer::bound_address() const {
  if (impl_->local_acceptor) return "unix:" + impl_->address.path;
  const auto endpoint = impl_->tcp_acceptor->local_endpoint();
  return endpoint.address().is_v6() ? fmt::format("[{}]:{}", endpoint.address().to_string(), endpoint.port())
                                    : fmt::format("{}:{}", endpoint.address().to_string(), endpoint.port());
}

void HttpServer::run(std::function<void()> drain) {
  impl_->drain = std::move(drain);
  impl_->keep_running.emplace(impl_->io.get_executor());
  impl_->signals.async_wait([this](beast::error_code error, int) {
    if (!error) impl_->begin_stop();
  });
  impl_->accept_next();
  // Runs until the acceptor is closed, the signals cancelled, the engine drained and every
  // connection closed.
  impl_->io.run();
  STAGEHAND_ASSERT(impl_->threads.empty() && impl_->connections.empty(),
                   "{} threads and {} connections left at the server's end", impl_->threads.size(),
                   impl_->connections.size());
}

void HttpServer::stop() {
  asio::post(impl_->io, [this] { impl_->begin_stop(); });
}

HttpServer::Counters HttpServer::counters() const { return impl_->counters; }

}  // namespace stagehand::service
