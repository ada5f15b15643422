#include "service/listen_address.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <sys/resource.h>

namespace stagehand::service {

ListenAddress ListenAddress::parse(const std::string& text) {
  ListenAddress address;
  if (text.rfind("unix:", 0) == 0) {
    address.unix_socket = true;
    address.path = text.substr(5);
    if (address.path.empty())
      throw std::invalid_argument(fmt::format("--listen {}: the socket's path is missing", text));
    return address;
  }
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw std::invalid_argument(
        fmt::format("--listen {}: expected HOST:PORT (e.g. 127.0.0.1:8080) or unix:PATH", text));
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

void ensure_descriptors(int max_connections) {
  constexpr rlim_t kOwnDescriptors = 128;
  const rlim_t needed = static_cast<rlim_t>(max_connections) + kOwnDescriptors;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= needed) return;
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed) {
    throw std::runtime_error(
        fmt::format("serve.max_connections = {} needs {} open files, and this process may open at most {} "
                    "(ulimit -Hn): lower max_connections or raise the limit",
                    max_connections, needed, limit.rlim_max));
  }
  limit.rlim_cur = needed;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    throw std::runtime_error(fmt::format("cannot raise the open files' limit to {} for serve.max_connections: {}",
                                         needed, std::strerror(errno)));
  }
}

}  // namespace stagehand::service
