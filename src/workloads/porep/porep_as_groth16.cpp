#include "workloads/porep/porep_as_groth16.hpp"

#include <algorithm>

namespace stagehand {

groth16::KeySizes porep_key_sizes(const PartitionShape& shape) {
  using namespace groth16;
  KeySizes sizes;
  sizes.domain_log2 = static_cast<unsigned>(shape.domain_log2);
  const std::uint64_t tail = shape.tail_points();
  const std::uint64_t third = tail / 3;
  sizes.set_points[kSetH] = shape.h_points();
  sizes.set_points[kSetA] = shape.a_points() + third;
  sizes.set_points[kSetB1] = shape.b_g1_points() + third;
  sizes.set_points[kSetB2] = shape.b_g2_points();
  sizes.set_points[kSetC] = shape.l_points() + (tail - 2 * third);
  // The constant 1 and no public inputs (a PoRep partition has a handful; they change nothing
  // here). C's MSM starts after them.
  sizes.n_public = 0;
  sizes.n_vars = std::max(
      {sizes.set_points[kSetA], sizes.set_points[kSetB1], sizes.set_points[kSetB2], sizes.set_points[kSetC] + 1});
  sizes.matrix = {};  // no constraint matrix: a, b and c come from the host
  return sizes;
}

groth16::Groth16TimingJobs porep_timing_jobs(const PoRepSettings& settings) {
  groth16::Groth16TimingJobs jobs;
  jobs.sizes = porep_key_sizes(settings.shape);
  jobs.proofs = settings.proofs;
  jobs.jobs_per_proof = settings.partitions_per_proof;
  jobs.host_prepare_ns = settings.shape.host_prepare_ns();
  jobs.host_finish_ns = settings.shape.host_finish_ns();
  // B2's scalars are bits; past them the tail's points' worth of full scalars over A, B1 and C.
  const auto& sizes = jobs.sizes;
  jobs.bits_below = sizes.set_points[groth16::kSetB2];
  const auto past = [&](std::uint64_t end) { return end > jobs.bits_below ? end - jobs.bits_below : 0; };
  const std::uint64_t room = past(sizes.set_points[groth16::kSetA]) + past(sizes.set_points[groth16::kSetB1]) +
                             past(sizes.n_public + 1 + sizes.set_points[groth16::kSetC]);
  jobs.full_scalar_share =
      room == 0 ? 0.0 : std::min(1.0, static_cast<double>(settings.shape.tail_points()) / static_cast<double>(room));
  return jobs;
}

}  // namespace stagehand
