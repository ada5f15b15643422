#include "vectors.hpp"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace stagehand::math::test {

const nlohmann::json& vectors() {
  static const nlohmann::json parsed = [] {
    const char* path = std::getenv("STAGEHAND_MATH_VECTORS");
    if (path == nullptr || *path == '\0') {
      throw std::runtime_error(
          "STAGEHAND_MATH_VECTORS is not set: run the math tests through ctest, whose fixture math_vectors installs "
          "@noble/curves with npm and generates the vectors (node and npm must be on PATH)");
    }
    std::ifstream input(path);
    if (!input) {
      throw std::runtime_error(std::string("cannot open the math vectors at ") + path +
                               ": did the ctest fixture math_vectors (npm ci + node generate.mjs) run and pass?");
    }
    return nlohmann::json::parse(input);
  }();
  return parsed;
}

std::vector<std::uint8_t> little_endian_bytes_from_hex(const std::string& text, std::size_t width) {
  std::string digits = text;
  if (digits.rfind("0x", 0) == 0) digits.erase(0, 2);
  if (digits.empty() || digits.size() > 2 * width) throw std::runtime_error("bad hexadecimal vector value: " + text);
  std::vector<std::uint8_t> bytes(width, 0);
  for (std::size_t position = 0; position < digits.size(); ++position) {
    const char character = digits[digits.size() - 1 - position];
    unsigned nibble = 0;
    if (character >= '0' && character <= '9') {
      nibble = static_cast<unsigned>(character - '0');
    } else if (character >= 'a' && character <= 'f') {
      nibble = static_cast<unsigned>(character - 'a' + 10);
    } else {
      throw std::runtime_error("bad hexadecimal vector value: " + text);
    }
    bytes[position / 2] |= static_cast<std::uint8_t>(nibble << (4 * (position % 2)));
  }
  return bytes;
}

}  // namespace stagehand::math::test
