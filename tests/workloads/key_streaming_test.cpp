// The batches a proof streams its key sets in (workloads/key_streaming.hpp, streamed_batches): the
// streamed sets alone, in the order the program asks, each cut as shape_key_program cuts it, every
// batch's host bytes the points it names.

#define BOOST_TEST_MODULE key_streaming
#include <boost/test/unit_test.hpp>

#include "workloads/key_streaming.hpp"

#include <array>
#include <vector>

using namespace stagehand;
using namespace stagehand::groth16;

namespace {

// A key of 100 H, 37 A, 50 B1 and B2 and 61 C points, and host bytes for each set at addresses
// of their own (nothing is read: the batches only name ranges).
KeySizes sizes() {
  KeySizes key;
  key.domain_log2 = 7;
  key.set_points = {100, 37, 50, 50, 61};
  return key;
}

HostRange host_of(std::size_t set) {
  const auto& points = sizes().set_points;
  return HostRange{(set + 1) << 20, points[set] * set_point_bytes(set)};
}

}  // namespace

BOOST_AUTO_TEST_CASE(only_the_streamed_sets_in_the_programs_order_each_cut_whole) {
  KeyPlacement placement = KeyPlacement::all(SetPlacement::streamed);
  placement.sets[kSetA] = SetPlacement::resident;
  placement.stream_buffer_bytes = 10 * set_point_bytes(kSetH);  // 10 G1 points, 5 G2 points a batch
  const auto shape = shape_key_program(sizes(), placement);
  const std::array<std::size_t, 5> order{kSetH, kSetC, kSetA, kSetB1, kSetB2};
  const auto batches = streamed_batches(shape, order, host_of);

  std::vector<std::size_t> sets_seen;
  for (const auto& batch : batches) {
    if (sets_seen.empty() || sets_seen.back() != batch.set) sets_seen.push_back(batch.set);
  }
  BOOST_TEST(sets_seen == (std::vector<std::size_t>{kSetH, kSetC, kSetB1, kSetB2}), boost::test_tools::per_element());

  for (const auto set : sets_seen) {
    const auto& s = shape.sets[set];
    std::uint64_t next = 0;
    std::uint64_t count = 0;
    for (const auto& batch : batches) {
      if (batch.set != set) continue;
      BOOST_TEST(batch.first == next);  // contiguous, from the first point
      BOOST_TEST(batch.count <= s.points_per_batch);
      BOOST_TEST(batch.source.address == host_of(set).address + batch.first * s.point_bytes);
      BOOST_TEST(batch.source.bytes == batch.count * s.point_bytes);
      BOOST_TEST(batch.source.bytes <= shape.stream_buffer_bytes);
      next += batch.count;
      ++count;
    }
    BOOST_TEST(next == s.points, kKeySetNames[set]);  // every point, once
    BOOST_TEST(count == s.batches, kKeySetNames[set]);
    BOOST_TEST(count > 1u, kKeySetNames[set]);
  }
}

BOOST_AUTO_TEST_CASE(a_key_kept_resident_streams_nothing) {
  const auto shape = shape_key_program(sizes(), KeyPlacement::all(SetPlacement::resident));
  const std::array<std::size_t, 5> order{kSetH, kSetA, kSetB1, kSetB2, kSetC};
  BOOST_TEST(streamed_batches(shape, order, host_of).empty());
}
