// The partition program's and the batch additions' typed launches (src/device/partition_launches.hpp):
// each to_launch() lays its fields out as kernel_abi.hpp's table says, from_launch() reads back
// what to_launch() wrote (with and without the scratch), the batch additions' shorter argument
// forms read as the table says, and a launch short of a field, an NTT of an unknown kind or not
// in place, and a batch addition under another kernel's name are refused with the kernel's name.
#define BOOST_TEST_MODULE partition_launches
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "device/kernel_abi.hpp"
#include "device/partition_launches.hpp"

using namespace stagehand;
namespace kernel = stagehand::kernel;

namespace {

BufferUse buffer(std::uint64_t address, std::uint64_t bytes) { return BufferUse{DevicePointer{address}, bytes}; }

bool same(const BufferUse& a, const BufferUse& b) { return a.pointer == b.pointer && a.bytes == b.bytes; }

using Arguments = std::vector<std::uint64_t>;

// The message of from_launch's refusal ("" where it reads the launch).
template <class Typed>
std::string refusal(const KernelLaunch& launch) {
  try {
    Typed::from_launch(launch);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

template <class Typed>
bool refused_naming(const KernelLaunch& launch, const std::string& what) {
  const auto message = refusal<Typed>(launch);
  return message.find("kernel " + launch.name + ": ") == 0 && message.find(what) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_CASE(ntt_positions_and_round_trip) {
  const kernel::NttTwiddlesLaunch twiddles{.log_size = 5, .twiddles = buffer(0x100, 512)};
  const KernelLaunch twiddles_launch = twiddles.to_launch();
  BOOST_TEST(twiddles_launch.name == kernel::ntt_twiddles);
  BOOST_TEST(twiddles_launch.work_units == 16u);  // 2^log_size / 2
  BOOST_TEST((twiddles_launch.arguments == Arguments{5}));
  BOOST_TEST(twiddles_launch.reads.empty());
  BOOST_TEST_REQUIRE(twiddles_launch.writes.size() == 1u);
  BOOST_TEST(same(twiddles_launch.writes[0], twiddles.twiddles));
  const auto twiddles_back = kernel::NttTwiddlesLaunch::from_launch(twiddles_launch);
  BOOST_TEST(twiddles_back.log_size == 5u);
  BOOST_TEST(same(twiddles_back.twiddles, twiddles.twiddles));

  const kernel::NttLaunch ntt{.log_size = 5,
                              .kind = kernel::NttKind::coset_inverse,
                              .values = buffer(0x1000, 32 * 32),
                              .twiddles = buffer(0x100, 512)};
  const KernelLaunch launch = ntt.to_launch();
  BOOST_TEST(launch.name == kernel::ntt);
  BOOST_TEST(launch.work_units == 32u);
  BOOST_TEST((launch.arguments == Arguments{5, 3}));  // [log_size, kind]
  BOOST_TEST_REQUIRE(launch.reads.size() == 2u);
  BOOST_TEST(same(launch.reads[0], ntt.values));  // in place: read and written
  BOOST_TEST(same(launch.reads[1], ntt.twiddles));
  BOOST_TEST_REQUIRE(launch.writes.size() == 1u);
  BOOST_TEST(same(launch.writes[0], ntt.values));
  const auto back = kernel::NttLaunch::from_launch(launch);
  BOOST_TEST((back.kind == kernel::NttKind::coset_inverse));
  BOOST_TEST(back.log_size == 5u);
  BOOST_TEST(same(back.values, ntt.values));
  BOOST_TEST(same(back.twiddles, ntt.twiddles));
}

BOOST_AUTO_TEST_CASE(msm_batch_and_reduce_positions_with_and_without_scratch) {
  kernel::PartitionMsmBatchLaunch batch{.points = 6,
                                        .first = 12,
                                        .capacity = 8,
                                        .start = true,
                                        .bases = buffer(0x100, 6 * 96),
                                        .scalars = buffer(0x1000, 32 * 32),
                                        .results = buffer(0x2000, 4096),
                                        .scratch = buffer(0x3000, 8192)};
  const KernelLaunch launch = batch.to_launch();
  BOOST_TEST(launch.name == kernel::msm_batch);
  BOOST_TEST(launch.work_units == 6u);
  BOOST_TEST((launch.arguments == Arguments{12, 8, 1}));  // [first, capacity, start]
  BOOST_TEST_REQUIRE(launch.reads.size() == 2u);
  BOOST_TEST(same(launch.reads[0], batch.bases));
  BOOST_TEST(same(launch.reads[1], batch.scalars));
  BOOST_TEST_REQUIRE(launch.writes.size() == 2u);
  BOOST_TEST(same(launch.writes[0], batch.results));
  BOOST_TEST(same(launch.writes[1], *batch.scratch));  // scratch last
  const auto back = kernel::PartitionMsmBatchLaunch::from_launch(launch);
  BOOST_TEST(back.points == 6u);
  BOOST_TEST(back.first == 12u);
  BOOST_TEST(back.capacity == 8u);
  BOOST_TEST(back.start);
  BOOST_TEST(same(back.results, batch.results));
  BOOST_TEST_REQUIRE(back.scratch.has_value());
  BOOST_TEST(same(*back.scratch, *batch.scratch));

  batch.start = false;
  batch.scratch = std::nullopt;  // the simulator's kernels ask for none
  const KernelLaunch bare = batch.to_launch();
  BOOST_TEST((bare.arguments == Arguments{12, 8, 0}));
  BOOST_TEST(bare.writes.size() == 1u);
  const auto bare_back = kernel::PartitionMsmBatchLaunch::from_launch(bare);
  BOOST_TEST(!bare_back.start);
  BOOST_TEST(!bare_back.scratch.has_value());

  const kernel::PartitionMsmReduceLaunch reduce{.capacity = 8,
                                                .results = buffer(0x2000, 4096),
                                                .other_results = buffer(0x5000, 4096),
                                                .scratch = buffer(0x3000, 8192)};
  const KernelLaunch reduce_launch = reduce.to_launch();
  BOOST_TEST(reduce_launch.name == kernel::msm_reduce);
  BOOST_TEST(reduce_launch.work_units == 1u);
  BOOST_TEST((reduce_launch.arguments == Arguments{8}));
  BOOST_TEST_REQUIRE(reduce_launch.reads.size() == 2u);  // [results, other results]
  BOOST_TEST(same(reduce_launch.reads[0], reduce.results));
  BOOST_TEST(same(reduce_launch.reads[1], reduce.other_results));
  BOOST_TEST_REQUIRE(reduce_launch.writes.size() == 2u);  // [results, scratch]
  BOOST_TEST(same(reduce_launch.writes[0], reduce.results));
  BOOST_TEST(same(reduce_launch.writes[1], *reduce.scratch));
  const auto reduce_back = kernel::PartitionMsmReduceLaunch::from_launch(reduce_launch);
  BOOST_TEST(reduce_back.capacity == 8u);
  BOOST_TEST(same(reduce_back.other_results, reduce.other_results));
  BOOST_TEST(reduce_back.scratch.has_value());
}

BOOST_AUTO_TEST_CASE(tail_positions_and_round_trip) {
  const kernel::TailMsmLaunch tail{
      .item_count = 3, .start = true, .capacity = 4, .items = buffer(0x100, 3 * 128), .scratch = buffer(0x900, 1024)};
  const KernelLaunch launch = tail.to_launch();
  BOOST_TEST(launch.name == kernel::tail_msm);
  BOOST_TEST(launch.work_units == 3u);
  BOOST_TEST((launch.arguments == Arguments{1, 4}));  // [start, capacity]
  BOOST_TEST_REQUIRE(launch.reads.size() == 1u);
  BOOST_TEST(same(launch.reads[0], tail.items));
  BOOST_TEST_REQUIRE(launch.writes.size() == 1u);  // only its scratch
  BOOST_TEST(same(launch.writes[0], *tail.scratch));
  const auto back = kernel::TailMsmLaunch::from_launch(launch);
  BOOST_TEST(back.item_count == 3u);
  BOOST_TEST(back.start);
  BOOST_TEST(back.capacity == 4u);
  BOOST_TEST_REQUIRE(back.scratch.has_value());
  BOOST_TEST(same(*back.scratch, *tail.scratch));
  auto without = tail;
  without.scratch = std::nullopt;
  BOOST_TEST(without.to_launch().writes.empty());
  BOOST_TEST(!kernel::TailMsmLaunch::from_launch(without.to_launch()).scratch.has_value());

  const kernel::TailReduceLaunch reduce{
      .offset = 65536 + 4096, .capacity = 4, .sums = buffer(0x2000, 1 << 20), .scratch = buffer(0x900, 1024)};
  const KernelLaunch reduce_launch = reduce.to_launch();
  BOOST_TEST(reduce_launch.name == kernel::tail_reduce);
  BOOST_TEST(reduce_launch.work_units == 1u);
  BOOST_TEST((reduce_launch.arguments == Arguments{65536 + 4096, 4}));  // [offset, capacity]
  BOOST_TEST(reduce_launch.reads.empty());
  BOOST_TEST_REQUIRE(reduce_launch.writes.size() == 2u);  // [sums, scratch]
  BOOST_TEST(same(reduce_launch.writes[0], reduce.sums));
  BOOST_TEST(same(reduce_launch.writes[1], *reduce.scratch));
  const auto reduce_back = kernel::TailReduceLaunch::from_launch(reduce_launch);
  BOOST_TEST(reduce_back.offset == 65536u + 4096u);
  BOOST_TEST(reduce_back.capacity == 4u);
  BOOST_TEST(same(reduce_back.sums, reduce.sums));
}

BOOST_AUTO_TEST_CASE(batch_addition_positions_and_shorter_forms) {
  const kernel::BatchAdditionLaunch addition{.kernel = kernel::batch_addition_g2,
                                             .point_count = 5,
                                             .start = true,
                                             .offset = 65536 + 3072,
                                             .points = buffer(0x100, 5 * 192),
                                             .write = buffer(0x4000, 1 << 20)};
  const KernelLaunch launch = addition.to_launch();
  BOOST_TEST(launch.name == kernel::batch_addition_g2);
  BOOST_TEST(launch.work_units == 5u);
  BOOST_TEST((launch.arguments == Arguments{1, 65536 + 3072}));  // [start, offset]
  BOOST_TEST_REQUIRE(launch.reads.size() == 1u);
  BOOST_TEST(same(launch.reads[0], addition.points));
  BOOST_TEST_REQUIRE(launch.writes.size() == 1u);
  BOOST_TEST(same(launch.writes[0], addition.write));
  const auto back = kernel::BatchAdditionLaunch::from_launch(launch);
  BOOST_TEST(back.kernel == kernel::batch_addition_g2);
  BOOST_TEST(back.point_count == 5u);
  BOOST_TEST(back.start);
  BOOST_TEST(back.offset == 65536u + 3072u);
  BOOST_TEST(same(back.points, addition.points));
  BOOST_TEST(same(back.write, addition.write));

  // kernel_abi.hpp: [] or [start] or [start, offset]; what is left out is 0.
  const KernelLaunch bare{kernel::batch_addition_g1, 2, {}, {buffer(0x1, 192)}, {buffer(0x2, 1 << 20)}};
  const auto bare_back = kernel::BatchAdditionLaunch::from_launch(bare);
  BOOST_TEST(!bare_back.start);
  BOOST_TEST(bare_back.offset == 0u);
  const KernelLaunch started{kernel::batch_addition_g1, 2, {1}, {buffer(0x1, 192)}, {buffer(0x2, 1 << 20)}};
  const auto started_back = kernel::BatchAdditionLaunch::from_launch(started);
  BOOST_TEST(started_back.start);
  BOOST_TEST(started_back.offset == 0u);
}

BOOST_AUTO_TEST_CASE(short_or_malformed_launches_are_refused_with_the_kernel_named) {
  const auto a = buffer(0x1, 1024), b = buffer(0x2, 1024);
  BOOST_TEST(refused_naming<kernel::NttTwiddlesLaunch>(KernelLaunch{kernel::ntt_twiddles, 8, {4}, {}, {}},
                                                       "writes [twiddles]"));
  BOOST_TEST(refused_naming<kernel::NttLaunch>(KernelLaunch{kernel::ntt, 16, {4}, {a, b}, {a}}, "[log_size, kind]"));
  BOOST_TEST(
      refused_naming<kernel::NttLaunch>(KernelLaunch{kernel::ntt, 16, {4, 4}, {a, b}, {a}}, "kind must be 0..3"));
  BOOST_TEST(refused_naming<kernel::NttLaunch>(KernelLaunch{kernel::ntt, 16, {4, 0}, {b, a}, {a}}, "in place"));
  BOOST_TEST(refused_naming<kernel::PartitionMsmBatchLaunch>(KernelLaunch{kernel::msm_batch, 4, {0, 8}, {a, b}, {a}},
                                                             "[first, capacity, start]"));
  BOOST_TEST(refused_naming<kernel::PartitionMsmReduceLaunch>(KernelLaunch{kernel::msm_reduce, 1, {8}, {a}, {a}},
                                                              "reads [results, other results]"));
  BOOST_TEST(
      refused_naming<kernel::TailMsmLaunch>(KernelLaunch{kernel::tail_msm, 1, {1}, {a}, {b}}, "[start, capacity]"));
  BOOST_TEST(refused_naming<kernel::TailReduceLaunch>(KernelLaunch{kernel::tail_reduce, 1, {0, 4}, {}, {}},
                                                      "writes [sums, scratch]"));
  BOOST_TEST(refused_naming<kernel::BatchAdditionLaunch>(KernelLaunch{kernel::batch_addition_g1, 1, {1, 0}, {}, {b}},
                                                         "reads [points]"));
  BOOST_TEST(refused_naming<kernel::BatchAdditionLaunch>(KernelLaunch{kernel::msm_batch, 1, {1, 0}, {a}, {b}},
                                                         "not a batch addition"));
}
