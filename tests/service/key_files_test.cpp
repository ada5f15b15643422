// What a client can make `stagehand serve` read (service/key_files.hpp and the key route of
// service/api.hpp): nothing by path without [serve] key_dirs; under them, regular files only.
// Paths outside, ".." escapes, symbolic links out, FIFOs, devices and /proc files are refused
// with 403 or 400 and a message that holds none of the file's bytes; a FIFO is refused without
// waiting for a writer. A key truncated while the service reads it is a clear 400, and the
// service then still answers its status and proves with a key loaded after.

#define BOOST_TEST_MODULE service_key_files
#include <boost/test/unit_test.hpp>

#include "engine/engine.hpp"
#include "engine/engine_config.hpp"
#include "groth16/r1cs.hpp"
#include "support/multiplier_circuit.hpp"
#include "groth16/setup.hpp"
#include "groth16/witness.hpp"
#include "groth16/zkey.hpp"
#include "service/api.hpp"
#include "service/key_files.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace stagehand;
using math::Fr;

namespace {

std::vector<std::uint8_t> witness_bytes() {
  const Fr x = Fr::from_uint64(6), y = Fr::from_uint64(7);
  return groth16::wtns_bytes({Fr::one(), x * y, x, y, x + Fr::from_uint64(3) * y});
}

constexpr const char* kSecret = "root:x:0:0:root:/root:/bin/bash\n";

// keys/ (the key directory: a key, a FIFO, a folder, links in and out), keys-old/ beside it, and
// outside/ (a key and a secret the client must not read).
struct Tree {
  fs::path dir = fs::temp_directory_path() / ("stagehand_key_files_test_" + std::to_string(::getpid()));
  fs::path keys = dir / "keys";
  fs::path key = keys / "small.zkey";
  fs::path outside_key = dir / "outside" / "outside.zkey";
  fs::path secret = dir / "outside" / "secret";
  std::vector<fs::path> key_dirs;
  Tree() {
    fs::create_directories(keys / "folder");
    fs::create_directories(dir / "outside");
    fs::create_directories(dir / "keys-old");
    groth16::SetupOptions options;
    options.seed = 42;
    options.thread_count = 1;
    groth16::write_zkey(key, groth16::setup_from_r1cs(testing::multiplier_circuit(), options));
    fs::copy_file(key, outside_key);
    fs::copy_file(key, dir / "keys-old" / "old.zkey");
    std::ofstream(secret) << kSecret;
    std::ofstream(keys / "passwd") << kSecret;
    BOOST_REQUIRE(::mkfifo((keys / "key.fifo").c_str(), 0600) == 0);
    fs::create_symlink(outside_key, keys / "out.zkey");
    fs::create_symlink(secret, keys / "secret");
    fs::create_symlink("/dev/zero", keys / "zero.zkey");
    fs::create_symlink("/proc/self/environ", keys / "environ");
    fs::create_symlink(key, keys / "alias.zkey");
    key_dirs.push_back(fs::canonical(keys));
  }
  ~Tree() { fs::remove_all(dir); }
};

// The status and message of open_key_path's refusal ({0, ""} where it opens the file).
std::pair<unsigned, std::string> refusal(const std::string& path, const std::vector<fs::path>& key_dirs) {
  try {
    service::open_key_path(path, key_dirs);
  } catch (const service::KeyPathRefused& refused) {
    return {refused.status(), refused.what()};
  }
  return {0, ""};
}

}  // namespace

BOOST_AUTO_TEST_CASE(loading_by_path_is_off_without_key_dirs) {
  const Tree tree;
  const auto [status, message] = refusal(tree.key.string(), {});
  BOOST_CHECK_EQUAL(status, 403u);
  BOOST_CHECK_EQUAL(message,
                    "loading keys by path is off: list the directories keys may be read from in the configuration's "
                    "[serve] key_dirs, or send the .zkey's bytes as the body");
}

BOOST_AUTO_TEST_CASE(paths_outside_the_key_dirs_are_refused_403_without_the_files_bytes) {
  const Tree tree;
  const auto listed = fmt::format("([serve] key_dirs: '{}')", tree.key_dirs[0].string());
  const std::vector<std::string> outside = {
      tree.outside_key.string(),
      (tree.keys / ".." / "outside" / "outside.zkey").string(),  // a ".." escape
      (tree.keys / "out.zkey").string(),                         // a symbolic link out
      (tree.keys / "secret").string(),
      (tree.keys / "zero.zkey").string(),  // a link to a device
      (tree.keys / "environ").string(),    // and to a /proc file
      "/dev/zero",
      "/dev/urandom",
      "/proc/self/environ",
      "/etc/passwd",
      tree.secret.string(),
      (tree.dir / "keys-old" / "old.zkey").string(),  // beside, its name beginning as the key directory's
  };
  for (const auto& path : outside) {
    BOOST_TEST_CONTEXT(path) {
      const auto [status, message] = refusal(path, tree.key_dirs);
      BOOST_CHECK_EQUAL(status, 403u);
      BOOST_CHECK_EQUAL(
          message,
          path + ": outside the directories keys may be read from once symbolic links and '..' are resolved " + listed);
    }
  }
}

BOOST_AUTO_TEST_CASE(what_is_not_a_regular_file_under_the_key_dirs_is_refused_400) {
  const Tree tree;
  auto check = [&](const std::string& path, const std::string& expected, const std::vector<fs::path>& key_dirs) {
    BOOST_TEST_CONTEXT(path) {
      const auto [status, message] = refusal(path, key_dirs);
      BOOST_CHECK_EQUAL(status, 400u);
      BOOST_CHECK_EQUAL(message, expected);
    }
  };
  const auto fifo = (tree.keys / "key.fifo").string();
  check(fifo, fifo + ": is a FIFO or pipe, not a regular file: keys are read from regular files only", tree.key_dirs);
  const auto folder = (tree.keys / "folder").string();
  check(folder, folder + ": is a directory, not a regular file: keys are read from regular files only", tree.key_dirs);
  const auto absent = (tree.keys / "absent.zkey").string();
  check(absent, absent + ": cannot open the key: No such file or directory", tree.key_dirs);
  check("keys/small.zkey", "'keys/small.zkey' is not an absolute path", tree.key_dirs);
  check(tree.key.string() + std::string(1, '\0') + "/../../secret", "the key's path holds a NUL character",
        tree.key_dirs);
  // A configuration that lists /dev or /proc still reads no device and no kernel file.
  check("/dev/zero",
        "/dev/zero: is a character or block device, not a regular file: keys are read from regular files only",
        {"/dev"});
  check("/proc/self/environ",
        "/proc/self/environ: is a file of the kernel's /proc or /sys, not a regular file: keys are read from regular "
        "files only",
        {"/proc"});
}

BOOST_AUTO_TEST_CASE(a_key_under_the_key_dirs_and_a_link_to_it_there_are_read) {
  const Tree tree;
  const auto expected = groth16::read_zkey(tree.key);
  for (const auto& path : {tree.key, tree.keys / "alias.zkey", tree.keys / "folder" / ".." / "small.zkey"}) {
    BOOST_TEST_CONTEXT(path) {
      auto file = service::open_key_path(path.string(), tree.key_dirs);
      BOOST_CHECK_EQUAL(file.name, path);  // messages name the path the client gave
      const auto key = groth16::read_zkey(std::move(file));
      BOOST_CHECK(key.h == expected.h);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_configurations_key_dirs_are_resolved_and_checked) {
  const Tree tree;
  const auto config = engine::parse_engine_config(
      fmt::format("[serve]\nkey_dirs = [\"{}\"]\n", (tree.keys / "folder" / "..").string()), "t.toml");
  BOOST_CHECK(config.serve.key_dirs == tree.key_dirs);
  BOOST_CHECK(engine::parse_engine_config("", "t.toml").serve.key_dirs.empty());
  auto message_of = [](const std::string& dirs) {
    try {
      engine::parse_engine_config(fmt::format("[serve]\nkey_dirs = {}\n", dirs), "t.toml");
    } catch (const std::exception& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  BOOST_CHECK_EQUAL(message_of("[\"keys\"]"), "t.toml:2: key 'serve.key_dirs': 'keys' is not an absolute path");
  const auto absent = (tree.dir / "absent").string();
  BOOST_CHECK_EQUAL(message_of(fmt::format("[\"{}\"]", absent)),
                    fmt::format("t.toml:2: key 'serve.key_dirs': '{}': No such file or directory", absent));
  BOOST_CHECK_EQUAL(message_of(fmt::format("[\"{}\"]", tree.key.string())),
                    fmt::format("t.toml:2: key 'serve.key_dirs': '{}' is not a directory", tree.key.string()));
  BOOST_CHECK(message_of("\"/tmp\"").starts_with("t.toml:2: key 'serve.key_dirs'"));
}

namespace {

engine::EngineConfig engine_config() {
  engine::EngineConfig config;
  config.run.backend = BackendKind::simulator;
  config.engine.seed = 7;
  config.engine.threads = 1;
  return config;
}

service::HttpResponse post(service::Api& api, const std::string& target, const std::string& content_type,
                           std::vector<std::uint8_t> body) {
  service::HttpRequest request;
  request.method = "POST";
  request.target = target;
  request.content_type = content_type;
  request.body = std::move(body);
  return std::get<service::HttpResponse>(api.handle(std::move(request)));
}

service::HttpResponse load_by_path(service::Api& api, const std::string& name, const fs::path& path) {
  const auto text = nlohmann::json{{"path", path.string()}}.dump();
  return post(api, "/v1/keys/" + name, "application/json", std::vector<std::uint8_t>(text.begin(), text.end()));
}

fs::path truncated_path;
void truncate_to_half(const fs::path& path) {
  if (path == truncated_path) ::truncate(path.c_str(), static_cast<off_t>(fs::file_size(path) / 2));
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_key_route_refuses_and_keeps_serving_after_a_key_truncated_while_read) {
  const Tree tree;
  auto config = engine_config();
  config.serve.key_dirs = tree.key_dirs;
  engine::Engine engine(config);
  service::Api api(engine, config.serve);
  service::Api closed(engine, engine_config().serve);  // no key_dirs
  BOOST_CHECK_EQUAL(load_by_path(closed, "k", tree.key).status, 403u);
  const auto secret = load_by_path(api, "k", tree.keys / "passwd");  // inside, but no key
  BOOST_CHECK_EQUAL(secret.status, 400u);
  BOOST_CHECK_MESSAGE(
      secret.body.find("its magic is not") != std::string::npos && secret.body.find("root") == std::string::npos,
      secret.body);
  const auto linked = load_by_path(api, "k", tree.keys / "secret");
  BOOST_CHECK_EQUAL(linked.status, 403u);
  BOOST_CHECK_MESSAGE(linked.body.find("root") == std::string::npos, linked.body);
  BOOST_CHECK_EQUAL(load_by_path(api, "k", tree.keys / "key.fifo").status, 400u);

  // Truncated between the read's look at its size and its bytes (the read hook).
  const auto copy = tree.keys / "copy.zkey";
  fs::copy_file(tree.key, copy);
  truncated_path = copy;
  groth16::detail::set_binfile_read_hook(truncate_to_half);
  const auto truncated = load_by_path(api, "k", copy);
  groth16::detail::set_binfile_read_hook(nullptr);
  BOOST_CHECK_EQUAL(truncated.status, 400u);
  BOOST_CHECK_MESSAGE(truncated.body.find(copy.string() + ": the file changed while it was read") != std::string::npos,
                      truncated.body);

  service::HttpRequest status_request{"GET", "/v1/status", "", {}};
  BOOST_CHECK_EQUAL(std::get<service::HttpResponse>(api.handle(std::move(status_request))).status, 200u);
  BOOST_CHECK_EQUAL(load_by_path(api, "k", tree.key).status, 201u);
  const auto proof = post(api, "/v1/proofs?key=k&wait=true", "application/octet-stream", witness_bytes());
  BOOST_CHECK_EQUAL(proof.status, 200u);
  BOOST_CHECK_MESSAGE(nlohmann::json::parse(proof.body).contains("proof"), proof.body);
}
