// The batches a proof streams its key sets in (workloads/key_streaming.hpp, streamed_batches): the
// streamed sets alone, in the order the program asks, each cut as shape_key_program cuts it, every
// batch's host bytes the points it names; and the constraint matrix's chunks as batches
// (matrix_batches), each chunk's non-empty parts from the whole matrix into their places.

#define BOOST_TEST_MODULE key_streaming
#include <boost/test/unit_test.hpp>

#include "workloads/key_streaming.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
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
      BOOST_REQUIRE_EQUAL(batch.pieces.size(), 1u);  // its points, whole, at the buffer's start
      BOOST_TEST(batch.pieces[0].offset == 0u);
      BOOST_TEST(batch.pieces[0].source.address == host_of(set).address + batch.first * s.point_bytes);
      BOOST_TEST(batch.pieces[0].source.bytes == batch.count * s.point_bytes);
      BOOST_TEST(batch.bytes() == batch.count * s.point_bytes);
      BOOST_TEST(batch.bytes() <= shape.stream_buffer_bytes);
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

// 40 constraints, each with 3 A entries; only the first 10 have B entries (2 each), so that the
// later chunks have no B signals or values: those parts are empty and send nothing.
BOOST_AUTO_TEST_CASE(the_matrix_chunks_go_as_batches_of_their_parts_in_order) {
  constexpr std::uint64_t rows = 40;
  auto entries_before = [](std::uint64_t row) {
    return std::pair<std::uint64_t, std::uint64_t>{3 * row, 2 * std::min<std::uint64_t>(row, 10)};
  };
  const kernel::ConstraintMatrixLayout whole{rows, entries_before(rows).first, entries_before(rows).second};
  const std::uint64_t max_bytes = 600;
  const auto chunks = cut_constraint_matrix(rows, max_bytes, entries_before);
  BOOST_REQUIRE_GT(chunks.size(), 2u);
  const HostRange matrix{std::uint64_t{1} << 30, whole.total_bytes()};
  const auto batches = matrix_batches(chunks, whole, matrix);
  BOOST_REQUIRE_EQUAL(batches.size(), chunks.size());

  std::uint64_t values_a_sent = 0;  // the A values, chunk after chunk, must be the whole's in order
  bool saw_chunk_without_b = false;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const auto& batch = batches[i];
    const auto own = chunks[i].layout();
    BOOST_TEST(batch.set == kMatrixChunks);
    BOOST_TEST(batch.first == i);
    BOOST_TEST(batch_set_name(batch.set) == "the constraint matrix");
    const std::size_t expected_pieces = own.entries_b == 0 ? 4 : 6;  // offsets, signals, values of A and B
    saw_chunk_without_b = saw_chunk_without_b || own.entries_b == 0;
    BOOST_REQUIRE_EQUAL(batch.pieces.size(), expected_pieces);
    for (const auto& piece : batch.pieces) {
      BOOST_TEST(piece.source.bytes > 0u);
      BOOST_TEST(piece.source.address >= matrix.address);
      BOOST_TEST(piece.source.address + piece.source.bytes <= matrix.address + matrix.bytes);
      BOOST_TEST(piece.offset + piece.source.bytes <= own.total_bytes());
    }
    const auto values_a = std::find_if(batch.pieces.begin(), batch.pieces.end(),
                                       [&](const BatchPiece& piece) { return piece.offset == own.values_a(); });
    BOOST_REQUIRE(values_a != batch.pieces.end());
    BOOST_TEST(values_a->source.address == matrix.address + whole.values_a() + values_a_sent);
    BOOST_TEST(values_a->source.bytes == kernel::kFrBytes * own.entries_a);
    values_a_sent += values_a->source.bytes;
    BOOST_TEST(batch.bytes() <= max_bytes);
    BOOST_TEST(batch.bytes() == own.total_bytes());  // the values of the last non-empty part end the layout
  }
  BOOST_TEST(values_a_sent == kernel::kFrBytes * whole.entries_a);
  BOOST_TEST(saw_chunk_without_b);
}
