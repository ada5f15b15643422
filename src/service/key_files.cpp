#include "service/key_files.hpp"

#include "util/input_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <system_error>

namespace stagehand::service {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(unsigned status, const std::string& message) { throw KeyPathRefused(status, message); }

// Whether `path` lies below `dir`, both absolute and free of "." and "..": dir's components
// begin path's, and path has more. Compared by component, so that /keys-old is not below /keys.
bool lies_below(const fs::path& path, const fs::path& dir) {
  auto at = path.begin();
  for (const auto& component : dir) {
    if (at == path.end() || *at != component) return false;
    ++at;
  }
  return at != path.end();
}

bool lies_below_any(const fs::path& path, const std::vector<fs::path>& dirs) {
  return std::any_of(dirs.begin(), dirs.end(), [&](const fs::path& dir) { return lies_below(path, dir); });
}

[[noreturn]] void refuse_outside(const std::string& requested, const std::vector<fs::path>& dirs) {
  std::string listed;
  for (const auto& dir : dirs) listed += fmt::format("{}'{}'", listed.empty() ? "" : ", ", dir.string());
  refuse(403, fmt::format("{}: outside the directories keys may be read from once symbolic links and '..' are resolved "
                          "([serve] key_dirs: {})",
                          requested, listed));
}

// The file a descriptor reached, as the kernel names it (symbolic links resolved), or nothing.
std::optional<fs::path> opened_path(int descriptor) {
  std::error_code error;
  auto target = fs::read_symlink(fmt::format("/proc/self/fd/{}", descriptor), error);
  if (error) return std::nullopt;
  return target;
}

[[noreturn]] void refuse_kind(const std::string& requested, InputKind kind) {
  refuse(400, fmt::format("{}: is {}, not a regular file: keys are read from regular files only", requested,
                          describe(kind)));
}

}  // namespace

groth16::InputFile open_key_path(const std::string& requested, const std::vector<fs::path>& key_dirs) {
  if (key_dirs.empty()) {
    refuse(403,
           "loading keys by path is off: list the directories keys may be read from in the configuration's [serve] "
           "key_dirs, or send the .zkey's bytes as the body");
  }
  if (requested.find('\0') != std::string::npos) refuse(400, "the key's path holds a NUL character");
  const fs::path path(requested);
  if (!path.is_absolute()) refuse(400, fmt::format("'{}' is not an absolute path", requested));
  std::error_code error;
  const auto resolved = fs::weakly_canonical(path, error);
  if (error) refuse(400, fmt::format("{}: cannot resolve the path: {}", requested, error.message()));
  if (!lies_below_any(resolved, key_dirs)) refuse_outside(requested, key_dirs);
  // A device is refused before it is opened: opening some has effects of its own.
  if (const auto kind = input_kind(resolved); kind && *kind != InputKind::regular) refuse_kind(requested, *kind);
  auto descriptor = open_for_reading(resolved, /*no_follow=*/true);
  if (!descriptor.valid()) {
    // ELOOP: its last component became a symbolic link after it was resolved.
    refuse(errno == ELOOP ? 403 : 400, fmt::format("{}: cannot open the key: {}", requested, std::strerror(errno)));
  }
  const auto opened = opened_path(descriptor.get());
  if (!opened)
    refuse(403, fmt::format("{}: where the opened file lies cannot be told (/proc/self/fd): not read", requested));
  if (!lies_below_any(*opened, key_dirs)) refuse_outside(requested, key_dirs);
  if (const auto kind = input_kind(descriptor.get()); kind != InputKind::regular) refuse_kind(requested, kind);
  return groth16::InputFile{std::move(descriptor), path};
}

}  // namespace stagehand::service
