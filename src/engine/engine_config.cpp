#include "engine/engine_config.hpp"

#include "config/config_table.hpp"
#include "util/input_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

namespace stagehand::engine {
namespace {

void read_engine_table(const ConfigTable& table, EngineSettings& settings) {
  settings.queue_capacity = static_cast<std::size_t>(table.integer_in("queue_capacity", 64, 1, 1'000'000));
  settings.max_batch = static_cast<std::size_t>(table.integer_in("max_batch", 256, 1, 10'000));
  settings.linger_ms = table.number_in("linger_ms", 20, 0, 60'000);
  settings.promote_after_s = table.number_in("promote_after_s", 60, 0.001, 86400);
  settings.request_id_retention_s = table.number_in("request_id_retention_s", 600, 0, 7 * 86400);
  const auto policy = table.choice("policy", "budgeted", policy_names());
  try {
    settings.policy = policy_from_string(policy);
  } catch (const std::invalid_argument& error) {
    table.fail("policy", error.what());
  }
  settings.verify = table.boolean("verify").value_or(true);
  settings.threads = static_cast<unsigned>(table.integer_in("threads", 0, 0, 4096));
  if (table.contains("seed")) settings.seed = static_cast<std::uint64_t>(table.integer_in("seed", 0, 0, INT64_MAX));
  settings.abc_step =
      groth16::parse_abc_step(table.choice("abc", "auto", groth16::abc_step_choices(/*with_auto=*/true)));
  settings.key_sets = groth16::parse_set_placement(table.choice("key_sets", "auto", groth16::set_placement_choices()));
  settings.precompute_bases = table.boolean("precompute_bases").value_or(false);
  settings.keep_key_on_device = table.boolean("keep_key_on_device").value_or(true);
  if (auto dir = table.string("trace_dir")) {
    if (dir->empty()) table.fail("trace_dir", "an empty path: leave the key out for no traces");
    settings.trace_dir = *dir;
  }
  settings.trace_runs = static_cast<std::size_t>(table.integer_in("trace_runs", 8, 1, 100'000));
  const double default_mib = static_cast<double>(settings.stream_buffer_bytes) / kMiB;
  settings.stream_buffer_bytes =
      static_cast<Bytes>(table.number_in("stream_buffer_mib", default_mib, 1, 1 << 16) * kMiB);
  table.reject_unknown_keys();
}

// The socket's permissions as an octal string ("0660"): a TOML integer 660 would be read as
// decimal, and 0o660 is easy to mistype, so only the string form is taken.
unsigned read_socket_mode(const ConfigTable& table) {
  const auto text = table.string("socket_mode").value_or("0660");
  unsigned mode = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), mode, 8);
  if (text.empty() || text.size() > 4 || error != std::errc() || end != text.data() + text.size() || mode > 0777) {
    table.fail("socket_mode", fmt::format("'{}' is not a file mode: three or four octal digits, e.g. \"0660\"", text));
  }
  if ((mode & 0600) != 0600)
    table.fail("socket_mode", fmt::format("{:04o} leaves the server's own user without read and write", mode));
  return mode;
}

std::optional<unsigned> read_socket_group(const ConfigTable& table) {
  const auto name = table.string("socket_group");
  if (!name) return std::nullopt;
  std::vector<char> scratch(16384);
  group entry{};
  group* found = nullptr;
  const int error = ::getgrnam_r(name->c_str(), &entry, scratch.data(), scratch.size(), &found);
  if (found) return static_cast<unsigned>(found->gr_gid);
  unsigned id = 0;
  const auto [end, parse_error] = std::from_chars(name->data(), name->data() + name->size(), id);
  if (!name->empty() && parse_error == std::errc() && end == name->data() + name->size()) return id;
  table.fail("socket_group", error != 0 ? fmt::format("cannot look up group '{}': {}", *name, std::strerror(error))
                                        : fmt::format("no group named '{}' on this machine", *name));
}

// The token file must be the server's own (or root's), a regular file that no other user may read
// and no one but its owner may change; the token is its first line, 16 to 4096 visible characters.
// The file is opened without blocking, so that a FIFO named by mistake is an error, not a hang.
std::string read_token_file(const ConfigTable& table, const std::filesystem::path& path) {
  // Opened without blocking (a FIFO named here must not hang the start), closed by its owner.
  const auto file = open_for_reading(path);
  if (!file.valid()) table.fail("token_file", fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  struct stat info {};
  std::string text(4098, '\0');
  ssize_t count = -1;
  std::string problem;
  if (::fstat(file.get(), &info) != 0) {
    problem = std::strerror(errno);
  } else if (input_kind(file.get()) != InputKind::regular) {
    problem = "not a regular file";
  } else if ((info.st_mode & (S_IRWXO | S_IWGRP)) != 0) {
    problem =
        fmt::format("its mode {:04o} lets other users read or change it (chmod 600 or 640)", info.st_mode & 07777);
  } else if (info.st_uid != ::geteuid() && info.st_uid != 0) {
    problem = fmt::format("it belongs to user {}, neither this process's user ({}) nor root", info.st_uid, ::geteuid());
  } else if ((count = ::read(file.get(), text.data(), text.size())) < 0) {
    problem = std::strerror(errno);
  }
  if (!problem.empty()) table.fail("token_file", fmt::format("{}: {}", path.string(), problem));
  text.resize(static_cast<std::size_t>(count));
  text.erase(std::min(text.find_first_of("\r\n"), text.size()));
  const bool visible = std::all_of(text.begin(), text.end(), [](char c) { return c > ' ' && c < 127; });
  if (text.size() < 16 || text.size() > 4096 || !visible) {
    table.fail("token_file", fmt::format("{}: the token (its first line) must be 16 to 4096 visible ASCII characters, "
                                         "with no spaces; it has {} characters{}",
                                         path.string(), text.size(), visible ? "" : ", some of them not visible"));
  }
  return text;
}

// The keys of the transport's connections (service/http_server.hpp).
void read_transport_keys(const ConfigTable& table, ServeSettings& settings) {
  settings.max_connections = static_cast<int>(table.integer_in("max_connections", 512, 1, 1'000'000));
  settings.read_timeout_s = table.number_in("read_timeout_s", 10, 0.01, 3600);
  settings.idle_timeout_s = table.number_in("idle_timeout_s", 30, 0.01, 86400);
  settings.socket_mode = read_socket_mode(table);
  settings.socket_group = read_socket_group(table);
  if (auto path = table.string("token_file")) {
    if (path->empty()) table.fail("token_file", "an empty path: leave the key out for no token");
    settings.token_file = *path;
    settings.token = read_token_file(table, settings.token_file);
  }
}

// Each directory resolved now, so that a request's path is compared with directories that hold
// no symbolic link and no "..": a key directory that does not exist is the configuration's
// mistake, said at start rather than at the first request.
std::vector<std::filesystem::path> read_key_dirs(const ConfigTable& table) {
  std::vector<std::filesystem::path> dirs;
  for (const auto& text : table.string_array("key_dirs").value_or(std::vector<std::string>{})) {
    const std::filesystem::path dir(text);
    if (!dir.is_absolute()) table.fail("key_dirs", fmt::format("'{}' is not an absolute path", text));
    std::error_code error;
    auto resolved = std::filesystem::canonical(dir, error);
    if (error) table.fail("key_dirs", fmt::format("'{}': {}", text, error.message()));
    if (!std::filesystem::is_directory(resolved, error))
      table.fail("key_dirs", fmt::format("'{}' is not a directory", text));
    dirs.push_back(std::move(resolved));
  }
  return dirs;
}

void read_serve_table(const ConfigTable& table, ServeSettings& settings) {
  const double mib = table.number_in("max_request_mib", 256, 0.001, 1 << 20);
  settings.max_request_bytes = static_cast<std::size_t>(std::llround(mib * 1024 * 1024));
  settings.request_timeout_s = table.number_in("request_timeout_s", 600, 0.1, 86400);
  read_transport_keys(table, settings);
  settings.key_dirs = read_key_dirs(table);
  table.reject_unknown_keys();
}

EngineConfig read_document(const ConfigDocument& document, const std::filesystem::path& source) {
  EngineConfig config;
  config.run.source = source;
  auto root = document.root();
  if (root.contains("workload")) {
    root.fail(
        "workload",
        "the engine proves the proofs it is given, so it has no [workload]; the proofs' layout keys (abc, key_sets, "
        "stream_buffer_mib) go in [engine]");
  }
  read_run_config(root, config.run);
  if (auto table = root.table("engine")) read_engine_table(*table, config.engine);
  if (auto table = root.table("serve")) read_serve_table(*table, config.serve);
  root.reject_unknown_keys();
  return config;
}

}  // namespace

EngineConfig load_engine_config(const std::filesystem::path& path) {
  return read_document(ConfigDocument::load(path), path);
}

EngineConfig parse_engine_config(std::string_view text, const std::string& source_name) {
  return read_document(ConfigDocument::parse(text, source_name), source_name);
}

}  // namespace stagehand::engine
