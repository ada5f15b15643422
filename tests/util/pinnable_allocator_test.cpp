// PinnableAllocator (src/util/pinnable_allocator.hpp): buffers from kPinnableMinimumBytes up are
// mappings of their own with huge pages asked for; smaller ones come from std::allocator; either
// way a vector keeps what was written through copies and growth across the threshold.
#define BOOST_TEST_MODULE pinnable_allocator
#include <boost/test/unit_test.hpp>

#include "util/pinnable_allocator.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using stagehand::kPinnableMinimumBytes;
using Bytes = std::vector<std::uint8_t, stagehand::PinnableAllocator<std::uint8_t>>;

// The VmFlags line of the mapping of /proc/self/smaps that holds `address` ("" if none does).
std::string mapping_flags(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return {};
}

void fill(Bytes& bytes, std::uint8_t seed) {
  for (std::size_t i = 0; i < bytes.size(); i += 4093) bytes[i] = static_cast<std::uint8_t>(seed + i / 4093);
}
bool holds(const Bytes& bytes, std::uint8_t seed, std::size_t count) {
  for (std::size_t i = 0; i < count; i += 4093) {
    if (bytes[i] != static_cast<std::uint8_t>(seed + i / 4093)) return false;
  }
  return true;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_large_buffer_is_a_mapping_of_its_own_with_huge_pages_asked_for) {
  Bytes large(kPinnableMinimumBytes);
  BOOST_TEST(reinterpret_cast<std::uintptr_t>(large.data()) % 4096 == 0u);
  fill(large, 7);
  BOOST_TEST(holds(large, 7, large.size()));
  const auto flags = mapping_flags(large.data());
  BOOST_TEST_REQUIRE(!flags.empty(), "no mapping in /proc/self/smaps holds the buffer");
  // MADV_HUGEPAGE shows as "hg" where the kernel has transparent huge pages at all.
  if (std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled")) {
    BOOST_TEST(flags.find(" hg") != std::string::npos, flags);
  } else {
    BOOST_TEST_MESSAGE("this kernel has no transparent huge pages: the advice is not checked");
  }
}

BOOST_AUTO_TEST_CASE(a_vector_keeps_its_bytes_through_copies_and_growth_across_the_threshold) {
  Bytes bytes(kPinnableMinimumBytes / 4);  // from std::allocator
  fill(bytes, 1);
  const std::size_t small = bytes.size();
  bytes.resize(2 * kPinnableMinimumBytes);  // moved into a mapping
  BOOST_TEST(holds(bytes, 1, small));
  fill(bytes, 3);
  const Bytes copy = bytes;  // a second mapping
  BOOST_TEST(copy.data() != bytes.data());
  BOOST_TEST(holds(copy, 3, copy.size()));
  bytes.resize(1024);
  bytes.shrink_to_fit();  // back to std::allocator
  BOOST_TEST(holds(bytes, 3, bytes.size()));
  Bytes moved = std::move(bytes);
  BOOST_TEST(moved.size() == 1024u);
}
