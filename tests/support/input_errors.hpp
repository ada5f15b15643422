#pragma once
// What the reader tests ask of an error: its message, and whether it names what it must.

#include "groth16/errors.hpp"

#include <boost/test/unit_test.hpp>

#include <string>

namespace stagehand::testing {

// The message of the InputError `action` throws ("no error" when it throws none).
template <class Action>
std::string error_of(Action&& action) {
  try {
    action();
  } catch (const groth16::InputError& error) {
    return error.what();
  }
  return "no error";
}

// Whether `text` holds `part`; says what it lacks in the test log when it does not.
inline bool contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return true;
  BOOST_TEST_MESSAGE("'" << text << "' lacks '" << part << "'");
  return false;
}

}  // namespace stagehand::testing
