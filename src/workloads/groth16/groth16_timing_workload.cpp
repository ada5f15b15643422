#include "workloads/groth16/groth16_timing_workload.hpp"

#include "device/format.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace stagehand::groth16 {
namespace {

constexpr Bytes kFrBytes = sizeof(math::Fr);

// What the jobs must be before the program is built on their sizes.
const Groth16TimingJobs& checked(const Groth16TimingJobs& timing, AbcStep abc_step) {
  if (timing.jobs_per_proof < 1)
    throw std::invalid_argument("Groth16Workload: timing jobs need at least one job per proof");
  if (timing.data && abc_step != AbcStep::host) {
    throw std::invalid_argument(
        "Groth16Workload: synthetic data needs the a/b/c step on the host (it has no constraint matrix)");
  }
  return timing;
}

}  // namespace

std::uint64_t Groth16TimingJobs::full_scalars(std::uint64_t first, std::uint64_t count) const {
  const std::uint64_t begin = std::max(first, bits_below);
  const std::uint64_t end = first + count;
  if (end <= begin) return 0;
  return static_cast<std::uint64_t>(
      std::llround(std::clamp(full_scalar_share, 0.0, 1.0) * static_cast<double>(end - begin)));
}

// Timing jobs keep no key state between runs, and run their kernels' host functions (functional
// simulator) on every hardware thread.
Groth16TimingWorkload::Groth16TimingWorkload(Groth16TimingJobs timing, AbcStep abc_step, KeyPlacement placement)
    : Groth16Program(checked(timing, abc_step).sizes, abc_step, placement, nullptr,
                     timing.data ? timing.data->host_work : nullptr, 0, ""),
      timing_(std::move(timing)) {
  if (timing_.data) {
    take_synthetic_bytes(*timing_.data);
  } else {
    take_virtual_memory();
  }
  if (abc_step == AbcStep::streamed) cut_even_matrix();
}

void Groth16TimingWorkload::take_synthetic_bytes(const Groth16TimingJobs::SyntheticData& data) {
  for (std::size_t set = 0; set < kKeySetCount; ++set) {
    if (data.sets[set].bytes < shape().sets[set].bytes()) {
      throw std::invalid_argument(fmt::format("Groth16Workload: the synthetic {} set holds {}, not its {} points",
                                              kKeySetNames[set], format_bytes(data.sets[set].bytes),
                                              shape().sets[set].points));
    }
    sets_[set] = data.sets[set];
  }
  const Bytes witness_bytes = kFrBytes * sizes().n_vars;
  if (data.polynomial.size() < kFrBytes * sizes().domain_size() || data.witness.size() < witness_bytes ||
      data.host_work == nullptr) {
    throw std::invalid_argument(
        "Groth16Workload: synthetic data needs a polynomial of the domain's size, a witness of the key's "
        "signals and a host-work pool");
  }
  witness_ = host_range(data.witness.data(), witness_bytes);
}

void Groth16TimingWorkload::take_virtual_memory() {
  if (!timing_.host_memory)
    throw std::invalid_argument("Groth16Workload: timing jobs need host memory for their uploads");
  for (std::size_t set = 0; set < kKeySetCount; ++set)
    sets_[set] = timing_.host_memory(std::max<Bytes>(1, shape().sets[set].bytes()));
  matrix_ = timing_.host_memory(sizes().matrix.total_bytes());
  witness_ = timing_.host_memory(kFrBytes * sizes().n_vars);
}

// The synthetic circuit's entries are spread evenly over its rows.
void Groth16TimingWorkload::cut_even_matrix() {
  const auto& layout = sizes().matrix;
  cut_matrix(cut_constraint_matrix(layout.rows, stream_buffer_size(), [&layout](std::uint64_t row) {
    // entries·row / rows without overflow: the remainder's product stays below rows² (rows < 2^32).
    const auto share = [&](std::uint64_t entries) {
      const std::uint64_t rows = std::max<std::uint64_t>(1, layout.rows);
      return entries / rows * row + entries % rows * row / rows;
    };
    return std::pair{share(layout.entries_a), share(layout.entries_b)};
  }));
}

HostRange Groth16TimingWorkload::set_host(std::size_t set) const {
  return sets_.at(set).sub(0, shape().sets.at(set).bytes());
}

std::uint64_t Groth16TimingWorkload::light_points(std::size_t set, std::uint64_t first, std::uint64_t count) const {
  if (set == kSetH) return 0;                                            // H's scalars are full
  const std::uint64_t offset = set == kSetC ? sizes().n_public + 1 : 0;  // C's scalars are the private signals
  return count - std::min(count, timing_.full_scalars(offset + first, count));
}

// The step lasts the modelled time, or the copy of the synthetic polynomial into a, b and c where
// that is longer.
asio::awaitable<void> Groth16TimingWorkload::prepare_job(int /*job*/, Device& device, std::span<const HostRange> abc) {
  const auto began = device.now();
  if (const auto& data = timing_.data) {
    // a, b and c at once, a thread each (the partition workloads' host step on the H200 machine:
    // more threads did not copy faster beside the other job's streamed points).
    const Bytes polynomial = kFrBytes * sizes().domain_size();
    for (const auto& target : abc) {
      if (target.bytes < polynomial)
        throw std::invalid_argument("groth16 prepare: a staged buffer is smaller than the domain");
    }
    co_await data->host_work->run([&] {
      std::vector<std::thread> copies;
      for (const auto& target : abc) {
        copies.emplace_back([&, target] { std::memcpy(target.data(), data->polynomial.data(), polynomial); });
      }
      for (auto& thread : copies) thread.join();
    });
  }
  const auto spent = device.now() - began;
  if (spent < timing_.host_prepare_ns) co_await device.sleep_for(timing_.host_prepare_ns - spent);
}

asio::awaitable<void> Groth16TimingWorkload::finish_job(int job, Device& device) {
  if (timing_.data && timing_.data->on_sums) timing_.data->on_sums(job, msm_sums<MsmResults>(job));
  co_await device.sleep_for(timing_.host_finish_ns);
}

}  // namespace stagehand::groth16
