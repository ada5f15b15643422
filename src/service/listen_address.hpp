#pragma once
// Where `stagehand serve` listens, and what listening needs of the process.

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

// Each connection holds a descriptor, and the engine and the process need some of their own:
// raises the soft limit of open files to max_connections and a margin where it is lower;
// std::runtime_error saying what to change where the hard limit is lower.
void ensure_descriptors(int max_connections);

}  // namespace stagehand::service
