#pragma once
// snarkjs's witness file (.wtns): section 1 = u32 n8 (32), the prime r, u32 count; section 2 =
// the values, 32 bytes little-endian each, in standard form.

#include "math/fr.hpp"

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace stagehand::groth16 {

// InputError (naming the file and section) for another prime, a truncated file, values >= r.
std::vector<math::Fr> read_wtns(const std::filesystem::path& path);
// The same from the bytes of a .wtns file; `name` stands for the file in the messages.
std::vector<math::Fr> parse_wtns(std::span<const std::uint8_t> bytes, const std::string& name);
void write_wtns(const std::filesystem::path& path, const std::vector<math::Fr>& witness);

}  // namespace stagehand::groth16
