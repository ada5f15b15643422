#pragma once
// STAGEHAND_ASSERT: an invariant check that stays on in Release builds, where every test and
// every deployment runs. Cheap by construction: the condition is one comparison or two, and the
// message is only formatted when the check fails.
//
//   STAGEHAND_ASSERT(held <= capacity, "budget holds {} of {}", held, capacity);
//
// A failure calls the assertion handler with the condition's text, the file and line and the
// message. The default handler prints them to stderr and aborts: a broken invariant in the
// budget or the locks means memory the coordinator believes free may not be. Tests install a
// handler that throws AssertionFailure instead, to see an assertion fire.

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace stagehand {

struct AssertionSite {
  const char* condition;
  const char* file;
  int line;
};

// Thrown by throwing_assertion_handler; what() is the whole message.
class AssertionFailure : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

using AssertionHandler = void (*)(const AssertionSite& site, const std::string& message);

// "assertion failed at src/coordinator/vram_budget.cpp:120: held <= capacity (budget holds ...)"
std::string describe_assertion(const AssertionSite& site, const std::string& message);
// Returns the handler it replaces.
AssertionHandler set_assertion_handler(AssertionHandler handler);
[[noreturn]] void abort_assertion_handler(const AssertionSite& site, const std::string& message);
[[noreturn]] void throwing_assertion_handler(const AssertionSite& site, const std::string& message);

// Calls the handler; aborts if the handler returns.
[[noreturn]] void assertion_failed(const AssertionSite& site, const std::string& message);

namespace detail {
inline std::string assertion_message() { return {}; }
template <class... Args>
std::string assertion_message(fmt::format_string<Args...> format, Args&&... args) {
  return fmt::format(format, std::forward<Args>(args)...);
}
}  // namespace detail

}  // namespace stagehand

#define STAGEHAND_ASSERT(condition, ...)                                                                   \
  ((condition) ? static_cast<void>(0)                                                                      \
               : ::stagehand::assertion_failed(::stagehand::AssertionSite{#condition, __FILE__, __LINE__}, \
                                               ::stagehand::detail::assertion_message(__VA_ARGS__)))
