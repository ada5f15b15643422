#include "device/groth16_launches.hpp"

#include <stdexcept>
#include <string>

#include "device/kernel_abi.hpp"
#include "device/launch_reading.hpp"

namespace stagehand::kernel {

using detail::add_scratch;
using detail::argument_or_zero;
using detail::require;
using detail::scratch_after;

namespace {

// The launch's curve into a typed value read from it, or from a typed value into its launch.
template <class Typed>
Typed with_curve(Typed typed, const KernelLaunch& launch) {
  typed.curve = launch.curve;
  return typed;
}
KernelLaunch over(KernelLaunch launch, Curve curve) {
  launch.curve = curve;
  return launch;
}

}  // namespace

KernelLaunch HEvaluateLaunch::to_launch() const {
  KernelLaunch launch{groth16_h_evaluate, std::uint64_t{1} << log_size, {log_size, threads}, {}, {values}};
  launch.curve = curve;
  add_scratch(launch, scratch);
  return launch;
}

HEvaluateLaunch HEvaluateLaunch::from_launch(const KernelLaunch& launch) {
  require(launch, 1, 0, 1, "arguments [log_size, threads] and writes [values, scratch]");
  return with_curve(
      HEvaluateLaunch{launch.arguments[0], argument_or_zero(launch, 1), launch.writes[0], scratch_after(launch, 1)},
      launch);
}

KernelLaunch HCombineLaunch::to_launch() const {
  return over(KernelLaunch{groth16_h_combine, std::uint64_t{1} << log_size, {log_size, threads}, {b, c}, {a}}, curve);
}

HCombineLaunch HCombineLaunch::from_launch(const KernelLaunch& launch) {
  require(launch, 1, 2, 1, "arguments [log_size, threads], reads [b, c] and writes [a]");
  return with_curve(HCombineLaunch{launch.arguments[0], argument_or_zero(launch, 1), launch.writes[0], launch.reads[0],
                                   launch.reads[1]},
                    launch);
}

KernelLaunch MsmLaunch::to_launch() const {
  KernelLaunch launch{kernel, points, {threads}, {bases, scalars}, {result}};
  launch.curve = curve;
  if (window_bits) launch.arguments.push_back(*window_bits);
  add_scratch(launch, scratch);
  launch.light_units = light_units;
  return launch;
}

MsmLaunch MsmLaunch::from_launch(const KernelLaunch& launch) {
  require(launch, 0, 2, 1,
          "arguments [threads] ([threads, window_bits] precomputed), reads [points, scalars] and writes "
          "[result, scratch]");
  std::optional<std::uint64_t> window_bits;
  if (launch.arguments.size() >= 2) window_bits = launch.arguments[1];
  return with_curve(MsmLaunch{launch.name, launch.work_units, argument_or_zero(launch, 0), window_bits, launch.reads[0],
                              launch.reads[1], launch.writes[0], scratch_after(launch, 1), launch.light_units},
                    launch);
}

KernelLaunch MsmBatchLaunch::to_launch() const {
  KernelLaunch launch{kernel, points, {threads, capacity, add ? 1u : 0u}, {bases, scalars}, {}};
  launch.curve = curve;
  add_scratch(launch, scratch);
  launch.light_units = light_units;
  return launch;
}

MsmBatchLaunch MsmBatchLaunch::from_launch(const KernelLaunch& launch) {
  require(launch, 3, 2, 0, "arguments [threads, capacity, add], reads [points, scalars] and writes [scratch]");
  return with_curve(
      MsmBatchLaunch{launch.name, launch.work_units, launch.arguments[0], launch.arguments[1], launch.arguments[2] != 0,
                     launch.reads[0], launch.reads[1], scratch_after(launch, 0), launch.light_units},
      launch);
}

KernelLaunch MsmReduceLaunch::to_launch() const {
  KernelLaunch launch{kernel, 1, {capacity}, {}, {result}};
  launch.curve = curve;
  add_scratch(launch, scratch);
  launch.light_units = light_units;
  return launch;
}

MsmReduceLaunch MsmReduceLaunch::from_launch(const KernelLaunch& launch) {
  require(launch, 1, 0, 1, "arguments [capacity] and writes [result, scratch]");
  return with_curve(
      MsmReduceLaunch{launch.name, launch.arguments[0], launch.writes[0], scratch_after(launch, 1), launch.light_units},
      launch);
}

KernelLaunch PrecomputeLaunch::to_launch() const {
  return over(KernelLaunch{kernel, points, {window_bits}, {bases}, {copies}}, curve);
}

PrecomputeLaunch PrecomputeLaunch::from_launch(const KernelLaunch& launch) {
  require(launch, 1, 1, 1, "arguments [window_bits], reads [points] and writes [copies]");
  return with_curve(
      PrecomputeLaunch{launch.name, launch.work_units, launch.arguments[0], launch.reads[0], launch.writes[0]}, launch);
}

KernelLaunch AbcLaunch::to_launch() const {
  KernelLaunch launch{groth16_abc, rows, {entries_a, entries_b, threads}, {witness, matrix}, {a, b, c}};
  launch.curve = curve;
  if (chunk) {
    launch.arguments.push_back(chunk->first_a);
    launch.arguments.push_back(chunk->first_b);
  }
  return launch;
}

AbcLaunch AbcLaunch::from_launch(const KernelLaunch& launch) {
  require(
      launch, 2, 2, 3,
      "arguments [entries_a, entries_b, threads[, first_a, first_b]], reads [witness, matrix] and writes [a, b, c]");
  std::optional<ChunkStart> chunk;
  if (launch.arguments.size() > 4) chunk = ChunkStart{launch.arguments[3], launch.arguments[4]};
  return with_curve(
      AbcLaunch{launch.work_units, launch.arguments[0], launch.arguments[1], argument_or_zero(launch, 2), chunk,
                launch.reads[0], launch.reads[1], launch.writes[0], launch.writes[1], launch.writes[2]},
      launch);
}

}  // namespace stagehand::kernel
