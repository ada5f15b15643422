#include "service/http_server.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <sys/socket.h>
#include <sys/time.h>

namespace stagehand::service {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using local = asio::local::stream_protocol;

ListenAddress ListenAddress::parse(const std::string& text) {
  ListenAddress address;
  if (text.rfind("unix:", 0) == 0) {
    address.unix_socket = true;
    address.path = text.substr(5);
    if (address.path.empty()) throw std::invalid_argument(fmt::format("--listen {}: the socket's path is missing", text));
    return address;
  }
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw std::invalid_argument(fmt::format("--listen {}: expected HOST:PORT (e.g. 127.0.0.1:8080) or unix:PATH", text));
  }
  address.host = text.substr(0, colon);
  if (address.host.size() > 2 && address.host.front() == '[' && address.host.back() == ']') {
    address.host = address.host.substr(1, address.host.size() - 2);
  }
  const auto port_text = std::string_view(text).substr(colon + 1);
  unsigned value = 0;
  const auto [end, error] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
  if (error != std::errc() || end != port_text.data() + port_text.size() || value > 65535) {
    throw std::invalid_argument(fmt::format("--listen {}: '{}' is not a port (0 to 65535)", text, port_text));
  }
  address.port = static_cast<unsigned short>(value);
  return address;
}

struct HttpServer::Impl {
  Api& api;
  engine::ServeSettings settings;
  ListenAddress address;
  asio::io_context io;
  std::optional<tcp::acceptor> tcp_acceptor;
  std::optional<local::acceptor> local_acceptor;
  asio::signal_set signals{io, SIGINT, SIGTERM};
  std::function<void()> drain;
  bool stopping = false;   // the io thread only
  bool accepting = false;  // an accept is pending (the io thread only)
  // Keeps run() going while connections are open after the acceptor has closed.
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> keep_running;

  std::mutex mutex;  // guards the rest
  std::list<std::thread> threads;
  std::map<std::thread::id, int> connections;  // the native sockets of the open connections
  int active = 0;

  Impl(Api& api, const engine::ServeSettings& settings, const ListenAddress& address)
      : api(api), settings(settings), address(address) {}

  void accept_next();
  template <class Socket>
  void start_connection(Socket socket);
  template <class Socket>
  void serve(Socket& socket);
  void begin_stop();
};

namespace {

// Sets the send and receive timeouts of a blocking socket: a client that stops sending or
// reading mid-request loses its connection instead of holding a thread forever.
void set_timeouts(int fd, double seconds) {
  timeval timeout{};
  timeout.tv_sec = static_cast<time_t>(seconds);
  timeout.tv_usec = static_cast<suseconds_t>((seconds - static_cast<double>(timeout.tv_sec)) * 1e6);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
}

template <class Socket>
bool write_response(Socket& socket, const HttpResponse& response, unsigned version, bool keep_alive) {
  http::response<http::string_body> message{static_cast<http::status>(response.status), version};
  message.set(http::field::server, "stagehand");
  message.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) message.set(name, value);
  message.keep_alive(keep_alive);
  message.body() = response.body;
  message.prepare_payload();
  beast::error_code error;
  http::write(socket, message, error);
  return !error;
}

}  // namespace

template <class Socket>
void HttpServer::Impl::serve(Socket& socket) {
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::vector_body<std::uint8_t>> parser;
    parser.body_limit(settings.max_request_bytes);
    beast::error_code error;
    auto too_large = [&] {
      write_response(socket, error_response(413, fmt::format("the body is over the limit of {} bytes (serve.max_request_mib)",
                                                             settings.max_request_bytes)),
                     11, false);
    };
    http::read_header(socket, buffer, parser, error);
    if (error == http::error::body_limit) return too_large();  // its Content-Length says so, before the body is sent
    if (error) {
      // A client that went away (or stayed idle past the timeout) between requests: nothing to answer.
      if (!parser.got_some()) return;
      write_response(socket, error_response(400, fmt::format("malformed request: {}", error.message())), 11, false);
      return;
    }
    auto& header = parser.get();
    // curl and others wait for this before sending a large body.
    if (beast::iequals(header[http::field::expect], "100-continue")) {
      http::response<http::empty_body> go_on{http::status::continue_, header.version()};
      http::write(socket, go_on, error);
      if (error) return;
    }
    http::read(socket, buffer, parser, error);
    if (error == http::error::body_limit) return too_large();  // chunked, without a length
    if (error) {
      write_response(socket, error_response(400, fmt::format("malformed request: {}", error.message())), header.version(), false);
      return;
    }
    auto message = parser.release();
    HttpRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    request.content_type = std::string(message[http::field::content_type]);
    request.body = std::move(message.body());
    const auto response = api.handle(std::move(request));
    if (!write_response(socket, response, message.version(), message.keep_alive()) || !message.keep_alive()) return;
  }
}

template <class Socket>
void HttpServer::Impl::start_connection(Socket socket) {
  std::lock_guard lock(mutex);
  ++active;
  auto thread = threads.emplace(threads.end());
  *thread = std::thread([this, thread, socket = std::move(socket)]() mutable {
    {
      std::lock_guard lock(mutex);
      connections[std::this_thread::get_id()] = socket.native_handle();
    }
    set_timeouts(socket.native_handle(), settings.request_timeout_s);
    try {
      serve(socket);
    } catch (...) {
      // A connection's failure is its own: the server goes on.
    }
    beast::error_code ignored;
    socket.shutdown(Socket::shutdown_both, ignored);
    {
      std::lock_guard lock(mutex);
      connections.erase(std::this_thread::get_id());
    }
    socket.close(ignored);
    // Joined on the io thread; a place is free for the next connection.
    asio::post(io, [this, thread] {
      thread->join();
      std::lock_guard lock(mutex);
      threads.erase(thread);
      --active;
      if (stopping && active == 0) keep_running.reset();
      if (!stopping && !accepting) {
        asio::post(io, [this] { accept_next(); });
      }
    });
  });
}

void HttpServer::Impl::accept_next() {
  if (stopping || accepting) return;
  {
    std::lock_guard lock(mutex);
    if (active >= settings.max_connections) return;  // resumed when a connection ends
  }
  accepting = true;
  if (tcp_acceptor) {
    tcp_acceptor->async_accept([this](beast::error_code error, tcp::socket socket) {
      accepting = false;
      if (stopping) return;
      if (!error) start_connection(std::move(socket));
      accept_next();
    });
  } else {
    local_acceptor->async_accept([this](beast::error_code error, local::socket socket) {
      accepting = false;
      if (stopping) return;
      if (!error) start_connection(std::move(socket));
      accept_next();
    });
  }
}

void HttpServer::Impl::begin_stop() {
  if (stopping) return;
  stopping = true;
  beast::error_code ignored;
  signals.cancel(ignored);
  if (tcp_acceptor) tcp_acceptor->close(ignored);
  if (local_acceptor) local_acceptor->close(ignored);
  // Every accepted proof ends and its waiting request is answered on its own connection's thread.
  if (drain) drain();
  // Then the connections' next reads end, so that each thread finishes after its current answer.
  std::lock_guard lock(mutex);
  for (const auto& [id, fd] : connections) ::shutdown(fd, SHUT_RD);
  if (active == 0) keep_running.reset();
}

HttpServer::HttpServer(Api& api, const engine::ServeSettings& settings, const ListenAddress& address)
    : impl_(std::make_unique<Impl>(api, settings, address)) {
  try {
    if (address.unix_socket) {
      // A socket file left by an earlier server would make bind fail; anything else is kept.
      std::error_code status_error;
      if (std::filesystem::is_socket(address.path, status_error)) std::filesystem::remove(address.path, status_error);
      impl_->local_acceptor.emplace(impl_->io, local::endpoint(address.path));
    } else {
      const tcp::endpoint endpoint(asio::ip::make_address(address.host), address.port);
      // The API loads files its callers name and has no authentication: it is for this machine only.
      if (!endpoint.address().is_loopback()) {
        throw std::runtime_error("not a loopback address: serve listens on loopback (127.0.0.1, ::1) or a Unix socket only, "
                                 "since its callers may name files on this machine; put a proxy in front for remote callers");
      }
      impl_->tcp_acceptor.emplace(impl_->io);
      impl_->tcp_acceptor->open(endpoint.protocol());
      impl_->tcp_acceptor->set_option(tcp::acceptor::reuse_address(true));
      impl_->tcp_acceptor->bind(endpoint);
      impl_->tcp_acceptor->listen();
    }
  } catch (const std::exception& error) {
    throw std::runtime_error(fmt::format("cannot listen on {}: {}",
                                         address.unix_socket ? "unix:" + address.path : fmt::format("{}:{}", address.host, address.port),
                                         error.what()));
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
  // Runs until the acceptor is closed, the signals cancelled and every connection joined.
  impl_->io.run();
}

void HttpServer::stop() {
  asio::post(impl_->io, [this] { impl_->begin_stop(); });
}

}  // namespace stagehand::service
