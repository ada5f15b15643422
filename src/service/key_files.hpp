#pragma once
// Where a client's POST /v1/keys/NAME {"path": ...} may read a key from: regular files under the
// configuration's [serve] key_dirs, and nothing when it lists none. The path is resolved
// (symbolic links and "..") before it is compared with the directories, opened without blocking
// and without following a last symbolic link, and where the open file lies is checked again
// through its descriptor, so that a directory swapped for a symbolic link between the check and
// the open cannot lead the read outside.

#include "groth16/binfile.hpp"

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace stagehand::service {

// A key path refused, with the HTTP status to answer (403: loading by path is off, or the path
// lies outside key_dirs; 400: it is no regular file, or cannot be opened) and a message that
// names the path as the client gave it and never quotes the file.
class KeyPathRefused : public std::runtime_error {
 public:
  KeyPathRefused(unsigned status, const std::string& message) : std::runtime_error(message), status_(status) {}
  unsigned status() const { return status_; }

 private:
  unsigned status_;
};

// Opens `requested` for Engine::load_key where `key_dirs` (resolved, as ServeSettings holds them)
// allow it; KeyPathRefused otherwise.
groth16::InputFile open_key_path(const std::string& requested, const std::vector<std::filesystem::path>& key_dirs);

}  // namespace stagehand::service
