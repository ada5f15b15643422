#pragma once
// snarkjs's witness file (.wtns): section 1 = u32 n8 (32), the prime r, u32 count; section 2 =
// the values, 32 bytes little-endian each, in standard form. The prime says the curve: the
// functions in this namespace read BLS12-381's, those in groth16::bn254 BN254's.

#include "groth16/curve.hpp"
#include "math/bn254.hpp"
#include "math/fr.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace stagehand::groth16 {

// InputError (naming the file and section) for another prime (CurveError naming both curves for
// BN254's), a truncated file, values >= r.
// The values are converted on up to `threads` threads (0 = every hardware thread).
std::vector<math::Fr> read_wtns(const std::filesystem::path& path, unsigned threads = 1);
// The same into the caller's buffer (a pinned staging buffer: no copy on the way to the
// device); returns the number of values, which must not exceed out.size().
std::size_t read_wtns_into(const std::filesystem::path& path, std::span<math::Fr> out, unsigned threads = 1);
// The same from the bytes of a .wtns file (a service's request); `name` stands for the file in
// the messages.
std::vector<math::Fr> parse_wtns(std::span<const std::uint8_t> bytes, const std::string& name, unsigned threads = 1);
std::size_t parse_wtns_into(std::span<const std::uint8_t> bytes, const std::string& name, std::span<math::Fr> out,
                            unsigned threads = 1);
// parse_wtns's checks (header, section sizes, every value below r, w[0] = 1) without
// converting or keeping the values: the number of values. A service checks a request with it
// before queueing the bytes, which the proof parses later into its own buffer.
std::uint32_t check_wtns(std::span<const std::uint8_t> bytes, const std::string& name, unsigned threads = 1);
void write_wtns(const std::filesystem::path& path, const std::vector<math::Fr>& witness);
// The same file's bytes, in memory (parse_wtns reads them back).
std::vector<std::uint8_t> wtns_bytes(const std::vector<math::Fr>& witness);

// The curve of a .wtns's prime, or nothing for a prime of neither (InputError for a file that is
// not a .wtns).
std::optional<Curve> wtns_curve(const std::filesystem::path& path);

namespace bn254 {
// read_wtns, parse_wtns, write_wtns and wtns_bytes of a BN254 witness (circom's default prime, bn128).
std::vector<math::bn254::Fr> read_wtns(const std::filesystem::path& path, unsigned threads = 1);
std::vector<math::bn254::Fr> parse_wtns(std::span<const std::uint8_t> bytes, const std::string& name,
                                        unsigned threads = 1);
void write_wtns(const std::filesystem::path& path, const std::vector<math::bn254::Fr>& witness);
std::vector<std::uint8_t> wtns_bytes(const std::vector<math::bn254::Fr>& witness);
// read_wtns_into and parse_wtns_into of a BN254 witness.
std::size_t read_wtns_into(const std::filesystem::path& path, std::span<math::bn254::Fr> out, unsigned threads = 1);
std::size_t parse_wtns_into(std::span<const std::uint8_t> bytes, const std::string& name,
                            std::span<math::bn254::Fr> out, unsigned threads = 1);
// check_wtns of a BN254 witness (CurveError naming both curves for BLS12-381's).
std::uint32_t check_wtns(std::span<const std::uint8_t> bytes, const std::string& name, unsigned threads = 1);
}  // namespace bn254

}  // namespace stagehand::groth16
