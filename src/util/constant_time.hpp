#pragma once
// Comparing secrets (the service's bearer token) without telling a caller where a guess went wrong.

#include <cstddef>
#include <string_view>

namespace stagehand {

// The time taken depends on the expected token's length only, never on where a guess first
// differs from it (a caller who could time that could find the token a byte at a time).
inline bool equal_in_constant_time(std::string_view given, std::string_view expected) {
  volatile unsigned char difference = given.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const char guess = i < given.size() ? given[i] : '\0';
    difference = difference | static_cast<unsigned char>(guess ^ expected[i]);
  }
  return difference == 0;
}

}  // namespace stagehand
