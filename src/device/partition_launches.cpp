#include "device/partition_launches.hpp"

#include <stdexcept>
#include <string_view>

#include "device/launch_reading.hpp"
#include "util/assert.hpp"

namespace stagehand::kernel {

using detail::add_scratch;
using detail::argument_or_zero;
using detail::require;
using detail::scratch_after;

KernelLaunch NttTwiddlesLaunch::to_launch() const {
  return KernelLaunch{ntt_twiddles, (std::uint64_t{1} << log_size) / 2, {log_size}, {}, {twiddles}};
}

NttTwiddlesLaunch NttTwiddlesLaunch::from_launch(const KernelLaunch& launch) {
  require(launch, 1, 0, 1, "arguments [log_size] and writes [twiddles]");
  return {launch.arguments[0], launch.writes[0]};
}

KernelLaunch NttLaunch::to_launch() const {
  return KernelLaunch{ntt, std::uint64_t{1} << log_size, {log_size, argument(kind)}, {values, twiddles}, {values}};
}

NttLaunch NttLaunch::from_launch(const KernelLaunch& launch) {
  require(launch, 2, 2, 1, "arguments [log_size, kind], reads [values, twiddles] and writes [values]");
  if (launch.arguments[1] > argument(NttKind::coset_inverse))
    throw std::invalid_argument("kernel " + launch.name + ": kind must be 0..3");
  const BufferUse& read = launch.reads[0];
  const BufferUse& values = launch.writes[0];
  if (read.pointer != values.pointer || read.bytes != values.bytes)
    throw std::invalid_argument("kernel " + launch.name + ": reads[0] must be the values (writes[0]): in place");
  return {launch.arguments[0], static_cast<NttKind>(launch.arguments[1]), values, launch.reads[1]};
}

KernelLaunch PartitionMsmBatchLaunch::to_launch() const {
  STAGEHAND_ASSERT(points <= capacity, "msm_batch: a batch of {} points above its capacity of {}", points, capacity);
  STAGEHAND_ASSERT(bases.bytes >= points * kG1AffineBytes && scalars.bytes >= (first + points) * kFrBytes,
                   "msm_batch: {} bases and scalars from {} in buffers of {} and {} bytes", points, first, bases.bytes,
                   scalars.bytes);
  KernelLaunch launch{msm_batch, points, {first, capacity, start ? 1u : 0u}, {bases, scalars}, {results}};
  add_scratch(launch, scratch);
  return launch;
}

PartitionMsmBatchLaunch PartitionMsmBatchLaunch::from_launch(const KernelLaunch& launch) {
  require(launch, 3, 2, 1, "arguments [first, capacity, start], reads [points, scalars] and writes [results, scratch]");
  return {launch.work_units, launch.arguments[0], launch.arguments[1], launch.arguments[2] != 0,
          launch.reads[0],   launch.reads[1],     launch.writes[0],    scratch_after(launch, 1)};
}

KernelLaunch PartitionMsmReduceLaunch::to_launch() const {
  KernelLaunch launch{msm_reduce, 1, {capacity}, {results, other_results}, {results}};
  add_scratch(launch, scratch);
  return launch;
}

PartitionMsmReduceLaunch PartitionMsmReduceLaunch::from_launch(const KernelLaunch& launch) {
  require(launch, 1, 2, 1, "arguments [capacity], reads [results, other results] and writes [results, scratch]");
  return {launch.arguments[0], launch.writes[0], launch.reads[1], scratch_after(launch, 1)};
}

KernelLaunch TailMsmLaunch::to_launch() const {
  STAGEHAND_ASSERT(item_count <= capacity && items.bytes >= item_count * kTailItemBytes,
                   "tail_msm: {} items in a buffer of {} bytes, capacity {}", item_count, items.bytes, capacity);
  KernelLaunch launch{tail_msm, item_count, {start ? 1u : 0u, capacity}, {items}, {}};
  add_scratch(launch, scratch);
  return launch;
}

TailMsmLaunch TailMsmLaunch::from_launch(const KernelLaunch& launch) {
  require(launch, 2, 1, 0, "arguments [start, capacity], reads [items] and writes [scratch]");
  return {launch.work_units, launch.arguments[0] != 0, launch.arguments[1], launch.reads[0], scratch_after(launch, 0)};
}

KernelLaunch TailReduceLaunch::to_launch() const {
  STAGEHAND_ASSERT(offset % 16 == 0, "tail_reduce: the sum's offset {} is not a multiple of 16", offset);
  KernelLaunch launch{tail_reduce, 1, {offset, capacity}, {}, {sums}};
  add_scratch(launch, scratch);
  return launch;
}

TailReduceLaunch TailReduceLaunch::from_launch(const KernelLaunch& launch) {
  require(launch, 2, 0, 1, "arguments [offset, capacity] and writes [sums, scratch]");
  return {launch.arguments[0], launch.arguments[1], launch.writes[0], scratch_after(launch, 1)};
}

namespace {

std::uint64_t batch_point_bytes(std::string_view kernel) {
  if (kernel == batch_addition_g1) return kG1AffineBytes;
  if (kernel == batch_addition_g2) return kG2AffineBytes;
  throw std::invalid_argument("kernel " + std::string(kernel) + ": not a batch addition (batch_addition_g1 or _g2)");
}

}  // namespace

KernelLaunch BatchAdditionLaunch::to_launch() const {
  STAGEHAND_ASSERT(points.bytes >= point_count * batch_point_bytes(kernel) && offset % 16 == 0,
                   "{}: {} points in a buffer of {} bytes, the sum at offset {}", kernel, point_count, points.bytes,
                   offset);
  return KernelLaunch{kernel, point_count, {start ? 1u : 0u, offset}, {points}, {write}};
}

BatchAdditionLaunch BatchAdditionLaunch::from_launch(const KernelLaunch& launch) {
  batch_point_bytes(launch.name);
  require(launch, 0, 1, 1,
          "arguments [] or [start] or [start, offset], reads [points] and writes [accumulator + scratch]");
  return {launch.name,     launch.work_units, argument_or_zero(launch, 0) != 0, argument_or_zero(launch, 1),
          launch.reads[0], launch.writes[0]};
}

}  // namespace stagehand::kernel
