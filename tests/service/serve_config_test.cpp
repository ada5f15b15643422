// The [serve] keys of the transport (engine/engine_config.cpp, read by service/http_server.cpp):
// their defaults as config/serve.toml documents them, the Unix socket's mode and group, and the
// token file, whose problems (a missing file, a FIFO, permissions that let others read or change
// it, a short or blank token) are each an error naming the file, line and key.
#define BOOST_TEST_MODULE serve_config
#include <boost/test/unit_test.hpp>

#include "engine/engine_config.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

using stagehand::engine::parse_engine_config;
namespace fs = std::filesystem;

std::string message_of(const std::string& text) {
  try {
    parse_engine_config(text, "t.toml");
  } catch (const std::exception& error) {
    return error.what();
  }
  return "no error";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A folder of its own for each test's files, removed at its end.
struct Folder {
  fs::path path;
  Folder() {
    auto pattern = (fs::temp_directory_path() / "serve-config-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~Folder() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  fs::path file(const std::string& name, const std::string& text, fs::perms mode) const {
    const auto file = path / name;
    std::ofstream(file) << text;
    fs::permissions(file, mode);
    return file;
  }
};

std::string token_config(const fs::path& file) { return fmt::format("[serve]\ntoken_file = \"{}\"\n", file.string()); }

}  // namespace

BOOST_AUTO_TEST_CASE(the_transport_keys_default_as_documented) {
  const auto example = stagehand::engine::load_engine_config("config/serve.toml");
  const auto none = parse_engine_config("", "t.toml");
  for (const auto& serve : {example.serve, none.serve}) {
    BOOST_CHECK_EQUAL(serve.max_connections, 512);
    BOOST_CHECK_EQUAL(serve.read_timeout_s, 10);
    BOOST_CHECK_EQUAL(serve.idle_timeout_s, 30);
    BOOST_CHECK_EQUAL(serve.socket_mode, 0660u);
    BOOST_CHECK(!serve.socket_group.has_value());
    BOOST_CHECK(serve.token.empty());
    BOOST_CHECK(serve.token_file.empty());
  }
  const auto set =
      parse_engine_config("[serve]\nread_timeout_s = 2.5\nidle_timeout_s = 1\nmax_connections = 3\n", "t.toml");
  BOOST_CHECK_EQUAL(set.serve.read_timeout_s, 2.5);
  BOOST_CHECK_EQUAL(set.serve.idle_timeout_s, 1);
  BOOST_CHECK_EQUAL(set.serve.max_connections, 3);
  const auto zero = message_of("[serve]\nread_timeout_s = 0\n");
  BOOST_CHECK_MESSAGE(contains(zero, "t.toml:2: key 'serve.read_timeout_s'"), zero);
}

BOOST_AUTO_TEST_CASE(the_socket_mode_is_an_octal_string_and_the_group_a_name_or_number) {
  BOOST_CHECK_EQUAL(parse_engine_config("[serve]\nsocket_mode = \"0600\"\n", "t.toml").serve.socket_mode, 0600u);
  BOOST_CHECK_EQUAL(parse_engine_config("[serve]\nsocket_mode = \"666\"\n", "t.toml").serve.socket_mode, 0666u);
  for (const auto* bad : {"\"0680\"", "\"01660\"", "\"\"", "\"rw-rw----\"", "660"}) {
    const auto message = message_of(fmt::format("[serve]\nsocket_mode = {}\n", bad));
    BOOST_CHECK_MESSAGE(contains(message, "t.toml:2: key 'serve.socket_mode'"), bad << ": " << message);
  }
  const auto no_owner = message_of("[serve]\nsocket_mode = \"0060\"\n");
  BOOST_CHECK_MESSAGE(contains(no_owner, "server's own user"), no_owner);

  const auto* own = ::getgrgid(::getegid());
  BOOST_REQUIRE(own != nullptr);
  const auto named = parse_engine_config(fmt::format("[serve]\nsocket_group = \"{}\"\n", own->gr_name), "t.toml");
  BOOST_CHECK(named.serve.socket_group == std::optional<unsigned>(::getegid()));
  const auto numbered = parse_engine_config("[serve]\nsocket_group = \"4242\"\n", "t.toml");
  BOOST_CHECK(numbered.serve.socket_group == std::optional<unsigned>(4242));
  const auto unknown = message_of("[serve]\n\nsocket_group = \"no-such-group-here\"\n");
  BOOST_CHECK_MESSAGE(contains(unknown, "t.toml:3: key 'serve.socket_group'") && contains(unknown, "no group named"),
                      unknown);
}

BOOST_AUTO_TEST_CASE(the_token_is_the_first_line_of_a_file_only_its_owner_may_change) {
  Folder folder;
  const std::string token = "0123456789abcdef-token";
  const auto good = folder.file("token", token + "\nthe second line is not the token\n",
                                fs::perms::owner_read | fs::perms::owner_write);
  const auto read = parse_engine_config(token_config(good), "t.toml");
  BOOST_CHECK_EQUAL(read.serve.token, token);
  BOOST_CHECK(read.serve.token_file == good);
  // Group-readable is allowed: a deployment may share the token with its clients' group.
  const auto shared = folder.file("shared", token, fs::perms::owner_read | fs::perms::group_read);
  BOOST_CHECK_EQUAL(parse_engine_config(token_config(shared), "t.toml").serve.token, token);

  auto refused = [&](const fs::path& file, const std::string& why) {
    const auto message = message_of(token_config(file));
    BOOST_CHECK_MESSAGE(contains(message, "t.toml:2: key 'serve.token_file'") && contains(message, why), message);
    // No error quotes the token.
    BOOST_CHECK_MESSAGE(!contains(message, "0123456789abcdef"), message);
  };
  refused(folder.file("world", token, fs::perms::owner_read | fs::perms::others_read),
          "lets other users read or change it");
  refused(folder.file("group-writes", token, fs::perms::owner_read | fs::perms::group_write),
          "lets other users read or change it");
  refused(folder.file("short", "0123456789\n", fs::perms::owner_read), "16 to 4096 visible");
  refused(folder.file("blank", "\n" + token, fs::perms::owner_read), "16 to 4096 visible");
  refused(folder.file("spaces", "0123456789abcdef token\n", fs::perms::owner_read), "not visible");
  refused(folder.path / "missing", "cannot open");
  refused(folder.path, "not a regular file");
  // A FIFO with no writer: an error at once, not a wait for one.
  const auto fifo = folder.path / "fifo";
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  refused(fifo, "not a regular file");
  const auto empty = message_of("[serve]\ntoken_file = \"\"\n");
  BOOST_CHECK_MESSAGE(contains(empty, "t.toml:2: key 'serve.token_file'"), empty);
}
