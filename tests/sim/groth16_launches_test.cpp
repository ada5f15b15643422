// The typed launches (src/device/groth16_launches.hpp, the Groth16 program's; setup_launches.hpp,
// the test-only setup's): each to_launch() lays its
// fields out as kernel_abi.hpp's table says, from_launch() reads back what to_launch() wrote, and a
// launch short of a field is refused with the kernel's name.
#define BOOST_TEST_MODULE groth16_launches
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "device/groth16_launches.hpp"
#include "device/kernel_abi.hpp"
#include "device/setup_launches.hpp"

using namespace stagehand;
namespace kernel = stagehand::kernel;

namespace {

BufferUse buffer(std::uint64_t address, std::uint64_t bytes) { return BufferUse{DevicePointer{address}, bytes}; }

bool same(const BufferUse& a, const BufferUse& b) {
  return a.pointer.address == b.pointer.address && a.bytes == b.bytes;
}

bool refused_naming(const KernelLaunch& launch, void (*read)(const KernelLaunch&)) {
  try {
    read(launch);
  } catch (const std::invalid_argument& error) {
    return std::string(error.what()).find(launch.name) != std::string::npos;
  }
  return false;
}

}  // namespace

BOOST_AUTO_TEST_CASE(msm_positions_and_round_trip) {
  const kernel::MsmLaunch msm{.kernel = kernel::groth16_msm_g1_precomputed,
                              .points = 7,
                              .threads = 3,
                              .window_bits = 12,
                              .bases = buffer(0x1000, 96 * 7),
                              .scalars = buffer(0x2000, 32 * 7),
                              .result = buffer(0x3000, 144),
                              .scratch = buffer(0x4000, 512),
                              .light_units = 2};
  const KernelLaunch launch = msm.to_launch();
  BOOST_TEST(launch.name == kernel::groth16_msm_g1_precomputed);
  BOOST_TEST(launch.work_units == 7u);
  BOOST_TEST((launch.arguments == std::vector<std::uint64_t>{3, 12}));  // [threads, window_bits]
  BOOST_TEST_REQUIRE(launch.reads.size() == 2u);
  BOOST_TEST(same(launch.reads[0], msm.bases));
  BOOST_TEST(same(launch.reads[1], msm.scalars));
  BOOST_TEST_REQUIRE(launch.writes.size() == 2u);
  BOOST_TEST(same(launch.writes[0], msm.result));
  BOOST_TEST(same(launch.writes[1], *msm.scratch));  // scratch last
  BOOST_TEST(launch.light_units == 2u);

  const auto back = kernel::MsmLaunch::from_launch(launch);
  BOOST_TEST(back.kernel == msm.kernel);
  BOOST_TEST(back.points == 7u);
  BOOST_TEST(back.threads == 3u);
  BOOST_TEST(back.window_bits.value_or(0) == 12u);
  BOOST_TEST(same(back.result, msm.result));
  BOOST_TEST(back.scratch.has_value());
  BOOST_TEST(back.light_units == 2u);
}

BOOST_AUTO_TEST_CASE(plain_msm_has_no_window_bits_or_scratch_unless_given) {
  const kernel::MsmLaunch msm{.kernel = kernel::groth16_msm_g2,
                              .points = 4,
                              .threads = 1,
                              .bases = buffer(0x10, 768),
                              .scalars = buffer(0x20, 128),
                              .result = buffer(0x30, 288)};
  const KernelLaunch launch = msm.to_launch();
  BOOST_TEST((launch.arguments == std::vector<std::uint64_t>{1}));
  BOOST_TEST(launch.writes.size() == 1u);
  const auto back = kernel::MsmLaunch::from_launch(launch);
  BOOST_TEST(!back.window_bits.has_value());
  BOOST_TEST(!back.scratch.has_value());
}

BOOST_AUTO_TEST_CASE(batch_reduce_and_h_positions) {
  const kernel::MsmBatchLaunch batch{.kernel = kernel::groth16_msm_g1_batch,
                                     .points = 5,
                                     .threads = 2,
                                     .capacity = 8,
                                     .add = true,
                                     .bases = buffer(0x100, 480),
                                     .scalars = buffer(0x200, 160),
                                     .scratch = buffer(0x300, 4096)};
  const KernelLaunch batch_launch = batch.to_launch();
  BOOST_TEST((batch_launch.arguments == std::vector<std::uint64_t>{2, 8, 1}));  // [threads, capacity, add]
  BOOST_TEST_REQUIRE(batch_launch.writes.size() == 1u);
  BOOST_TEST(same(batch_launch.writes[0], *batch.scratch));
  const auto batch_back = kernel::MsmBatchLaunch::from_launch(batch_launch);
  BOOST_TEST(batch_back.add);
  BOOST_TEST(batch_back.capacity == 8u);

  const kernel::MsmReduceLaunch reduce{.kernel = kernel::groth16_msm_g1_reduce,
                                       .capacity = 8,
                                       .result = buffer(0x400, 144),
                                       .scratch = buffer(0x300, 4096)};
  const KernelLaunch reduce_launch = reduce.to_launch();
  BOOST_TEST(reduce_launch.work_units == 1u);
  BOOST_TEST((reduce_launch.arguments == std::vector<std::uint64_t>{8}));
  BOOST_TEST(same(kernel::MsmReduceLaunch::from_launch(reduce_launch).result, reduce.result));

  const kernel::HEvaluateLaunch evaluate{.log_size = 4, .threads = 2, .values = buffer(0x500, 512)};
  const KernelLaunch evaluate_launch = evaluate.to_launch();
  BOOST_TEST(evaluate_launch.work_units == 16u);
  BOOST_TEST((evaluate_launch.arguments == std::vector<std::uint64_t>{4, 2}));  // [log_size, threads]
  const kernel::HCombineLaunch combine{
      .log_size = 4, .threads = 2, .a = buffer(0x500, 512), .b = buffer(0x700, 512), .c = buffer(0x900, 512)};
  const KernelLaunch combine_launch = combine.to_launch();
  BOOST_TEST(same(combine_launch.writes.at(0), combine.a));
  BOOST_TEST(same(combine_launch.reads.at(0), combine.b));
  BOOST_TEST(same(combine_launch.reads.at(1), combine.c));
}

BOOST_AUTO_TEST_CASE(abc_chunk_arguments_follow_the_threads) {
  kernel::AbcLaunch abc{.rows = 16,
                        .entries_a = 5,
                        .entries_b = 6,
                        .threads = 3,
                        .witness = buffer(0x10, 64),
                        .matrix = buffer(0x20, 256),
                        .a = buffer(0x30, 512),
                        .b = buffer(0x40, 512),
                        .c = buffer(0x50, 512)};
  BOOST_TEST((abc.to_launch().arguments == std::vector<std::uint64_t>{5, 6, 3}));
  BOOST_TEST(!kernel::AbcLaunch::from_launch(abc.to_launch()).chunk.has_value());
  abc.chunk = kernel::AbcLaunch::ChunkStart{100, 200};
  const KernelLaunch launch = abc.to_launch();
  BOOST_TEST((launch.arguments == std::vector<std::uint64_t>{5, 6, 3, 100, 200}));
  const auto back = kernel::AbcLaunch::from_launch(launch);
  BOOST_TEST_REQUIRE(back.chunk.has_value());
  BOOST_TEST(back.chunk->first_a == 100u);
  BOOST_TEST(back.chunk->first_b == 200u);
  BOOST_TEST(same(back.c, abc.c));
}

BOOST_AUTO_TEST_CASE(short_launches_are_refused_with_the_kernel_named) {
  const KernelLaunch batch{kernel::groth16_msm_g1_batch, 5, {2, 8}, {buffer(0x1, 1), buffer(0x2, 1)}, {}};
  BOOST_TEST(refused_naming(batch, [](const KernelLaunch& l) { kernel::MsmBatchLaunch::from_launch(l); }));
  const KernelLaunch abc{kernel::groth16_abc, 4, {1, 2, 0}, {buffer(0x1, 1), buffer(0x2, 1)}, {buffer(0x3, 1)}};
  BOOST_TEST(refused_naming(abc, [](const KernelLaunch& l) { kernel::AbcLaunch::from_launch(l); }));
  const KernelLaunch evaluate{kernel::groth16_h_evaluate, 16, {}, {}, {buffer(0x1, 1)}};
  BOOST_TEST(refused_naming(evaluate, [](const KernelLaunch& l) { kernel::HEvaluateLaunch::from_launch(l); }));
}

BOOST_AUTO_TEST_CASE(fixed_base_positions_and_round_trip) {
  const kernel::FixedBaseLaunch typed{.kernel = kernel::setup_fixed_base_g2,
                                      .point_count = 7,
                                      .threads = 3,
                                      .table = buffer(0x10, 100),
                                      .scalars = buffer(0x20, 7 * 32),
                                      .points = buffer(0x30, 7 * 192)};
  const KernelLaunch launch = typed.to_launch();
  BOOST_TEST(launch.name == kernel::setup_fixed_base_g2);
  BOOST_TEST(launch.work_units == 7u);
  BOOST_TEST(launch.arguments == std::vector<std::uint64_t>{3});
  BOOST_REQUIRE(launch.reads.size() == 2u);
  BOOST_REQUIRE(launch.writes.size() == 1u);
  BOOST_TEST(same(launch.reads[0], typed.table));
  BOOST_TEST(same(launch.reads[1], typed.scalars));
  BOOST_TEST(same(launch.writes[0], typed.points));
  const auto back = kernel::FixedBaseLaunch::from_launch(launch);
  BOOST_TEST(back.kernel == typed.kernel);
  BOOST_TEST(back.point_count == 7u);
  BOOST_TEST(back.threads == 3u);
  BOOST_TEST((same(back.table, typed.table) && same(back.scalars, typed.scalars) && same(back.points, typed.points)));
  // Without the threads argument (kernel_abi.hpp: [] or [threads]) every host thread: 0.
  const KernelLaunch bare{kernel::setup_fixed_base_g1, 2, {}, {buffer(0x1, 1), buffer(0x2, 1)}, {buffer(0x3, 1)}};
  BOOST_TEST(kernel::FixedBaseLaunch::from_launch(bare).threads == 0u);
  const KernelLaunch short_of_points{kernel::setup_fixed_base_g1, 2, {}, {buffer(0x1, 1), buffer(0x2, 1)}, {}};
  BOOST_TEST(refused_naming(short_of_points, [](const KernelLaunch& l) { kernel::FixedBaseLaunch::from_launch(l); }));
}

// Every typed launch carries its curve into KernelLaunch::curve and back, BLS12-381 unless set.
BOOST_AUTO_TEST_CASE(the_curve_round_trips_through_every_typed_launch) {
  constexpr auto bn254 = kernel::Curve::bn254;
  const auto b = buffer(0x1000, 64);
  const kernel::HEvaluateLaunch evaluate{.log_size = 3, .values = b, .curve = bn254};
  const kernel::HCombineLaunch combine{.log_size = 3, .a = b, .b = b, .c = b, .curve = bn254};
  const kernel::MsmLaunch msm{.kernel = kernel::groth16_msm_g2, .bases = b, .scalars = b, .result = b, .curve = bn254};
  const kernel::MsmBatchLaunch batch{.kernel = kernel::groth16_msm_g1_batch, .bases = b, .scalars = b, .curve = bn254};
  const kernel::MsmReduceLaunch reduce{.kernel = kernel::groth16_msm_g1_reduce, .result = b, .curve = bn254};
  const kernel::PrecomputeLaunch precompute{
      .kernel = kernel::groth16_precompute_g1, .window_bits = 16, .bases = b, .copies = b, .curve = bn254};
  const kernel::AbcLaunch abc{.witness = b, .matrix = b, .a = b, .b = b, .c = b, .curve = bn254};
  const kernel::FixedBaseLaunch fixed_base{
      .kernel = kernel::setup_fixed_base_g1, .table = b, .scalars = b, .points = b, .curve = bn254};
  BOOST_TEST((evaluate.to_launch().curve == bn254));
  BOOST_TEST((kernel::HEvaluateLaunch::from_launch(evaluate.to_launch()).curve == bn254));
  BOOST_TEST((kernel::HCombineLaunch::from_launch(combine.to_launch()).curve == bn254));
  BOOST_TEST((kernel::MsmLaunch::from_launch(msm.to_launch()).curve == bn254));
  BOOST_TEST((kernel::MsmBatchLaunch::from_launch(batch.to_launch()).curve == bn254));
  BOOST_TEST((kernel::MsmReduceLaunch::from_launch(reduce.to_launch()).curve == bn254));
  BOOST_TEST((kernel::PrecomputeLaunch::from_launch(precompute.to_launch()).curve == bn254));
  BOOST_TEST((kernel::AbcLaunch::from_launch(abc.to_launch()).curve == bn254));
  BOOST_TEST((kernel::FixedBaseLaunch::from_launch(fixed_base.to_launch()).curve == bn254));
  const kernel::MsmLaunch unset{.kernel = kernel::groth16_msm_g1, .bases = b, .scalars = b, .result = b};
  BOOST_TEST((kernel::MsmLaunch::from_launch(unset.to_launch()).curve == kernel::Curve::bls12_381));
}
