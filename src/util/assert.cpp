#include "util/assert.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace stagehand {
namespace {

std::atomic<AssertionHandler> current_handler{&abort_assertion_handler};

// The path from the project's root: __FILE__ is absolute, or relative to the build folder
// ("../src/..."), as the generator and ccache give it.
std::string_view project_path(const char* file) {
  std::string_view path(file);
#if defined(STAGEHAND_SOURCE_DIR)
  std::string_view root(STAGEHAND_SOURCE_DIR "/");
  if (path.substr(0, root.size()) == root) path.remove_prefix(root.size());
#endif
  while (path.substr(0, 3) == "../") path.remove_prefix(3);
  return path;
}

}  // namespace

std::string describe_assertion(const AssertionSite& site, const std::string& message) {
  return fmt::format("assertion failed at {}:{}: {}{}", project_path(site.file), site.line, site.condition,
                     message.empty() ? std::string() : " (" + message + ")");
}

AssertionHandler set_assertion_handler(AssertionHandler handler) { return current_handler.exchange(handler); }

void abort_assertion_handler(const AssertionSite& site, const std::string& message) {
  std::fprintf(stderr, "stagehand: %s\n", describe_assertion(site, message).c_str());
  std::fflush(stderr);
  std::abort();
}

void throwing_assertion_handler(const AssertionSite& site, const std::string& message) {
  throw AssertionFailure(describe_assertion(site, message));
}

void assertion_failed(const AssertionSite& site, const std::string& message) {
  current_handler.load()(site, message);
  std::abort();
}

}  // namespace stagehand
