#include "workloads/groth16/key_placement.hpp"

#include "device/device.hpp"
#include "device/format.hpp"
#include "device/kernel_abi.hpp"
#include "groth16/constraint_matrix.hpp"
#include "groth16/encoding.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace stagehand::groth16 {

std::string_view to_string(SetPlacement placement) {
  switch (placement) {
    case SetPlacement::resident: return "resident";
    case SetPlacement::fetched_ahead: return "fetched-ahead";
    case SetPlacement::streamed: return "streamed";
    case SetPlacement::precomputed: return "precomputed";
  }
  return "?";
}

namespace {
constexpr std::array kSetPlacements{SetPlacement::resident, SetPlacement::fetched_ahead, SetPlacement::streamed,
                                    SetPlacement::precomputed};
}  // namespace

std::optional<SetPlacement> parse_set_placement(std::string_view text) {
  for (auto placement : kSetPlacements) {
    if (text == to_string(placement)) return placement;
  }
  return std::nullopt;
}

std::vector<std::string> set_placement_choices() {
  std::vector<std::string> choices{"auto"};
  for (auto placement : kSetPlacements) choices.emplace_back(to_string(placement));
  return choices;
}

KeyPlacement KeyPlacement::all(SetPlacement placement) {
  KeyPlacement result;
  result.sets.fill(placement);
  return result;
}

std::string KeyPlacement::describe() const {
  std::string text;
  bool streams = false;
  for (auto placement :
       {SetPlacement::resident, SetPlacement::precomputed, SetPlacement::fetched_ahead, SetPlacement::streamed}) {
    std::string names;
    for (std::size_t set = 0; set < kKeySetCount; ++set) {
      if (sets[set] != placement) continue;
      names += (names.empty() ? "" : ", ") + std::string(kKeySetNames[set]);
      streams = streams || placement == SetPlacement::streamed;
    }
    if (names.empty()) continue;
    text += fmt::format("{}{} {}", text.empty() ? "" : "; ", names, to_string(placement));
  }
  if (streams) text += fmt::format(" (2 x {} buffers)", format_bytes(stream_buffer_bytes));
  if (msm_memory_after_h) text += "; MSM memory after H";
  return text;
}

namespace {

template <class Key>
KeySizes sizes_of(const Key& key) {
  KeySizes sizes;
  sizes.curve = Key::curve == Curve::bn254 ? kernel::Curve::bn254 : kernel::Curve::bls12_381;
  sizes.n_vars = key.n_vars;
  sizes.n_public = key.n_public;
  sizes.domain_log2 = key.domain_log2;
  sizes.set_points[kSetH] = key.h.size();
  sizes.set_points[kSetA] = key.a.size();
  sizes.set_points[kSetB1] = key.b1.size();
  sizes.set_points[kSetB2] = key.b2.size();
  sizes.set_points[kSetC] = key.c.size();
  sizes.matrix = constraint_matrix_layout(key);
  return sizes;
}

}  // namespace

KeySizes KeySizes::of(const ProvingKey& key) { return sizes_of(key); }
KeySizes KeySizes::of(const bn254::ProvingKey& key) { return sizes_of(key); }

KeySizes KeySizes::synthetic(unsigned domain_log2, kernel::Curve curve) {
  KeySizes sizes;
  sizes.curve = curve;
  const std::uint64_t n = std::uint64_t{1} << domain_log2;
  const std::uint64_t constraints = n - 5;
  sizes.domain_log2 = domain_log2;
  sizes.n_vars = n;
  sizes.n_public = 4;
  sizes.set_points = {n, n, n, n, n - 5};
  // Every 16 rows: one linear row (no A, no B), one 1·(4 terms), one (4 terms)·(2 terms) and 13
  // products of one term each; and the 5 rows that bind the public signals (A only).
  sizes.matrix = kernel::ConstraintMatrixLayout{n, constraints * 18 / 16 + 5, constraints * 19 / 16};
  return sizes;
}

namespace {

std::uint64_t set_points(const KeySizes& key, std::size_t set) { return key.set_points.at(set); }

}  // namespace

Bytes set_point_bytes(std::size_t set, kernel::Curve curve) {
  const auto sizes = kernel::curve_sizes(curve);
  return set == kSetB2 ? sizes.g2_affine : sizes.g1_affine;
}
const char* set_msm_kernel(std::size_t set, SetPlacement placement) {
  if (placement == SetPlacement::streamed)
    return set == kSetB2 ? kernel::groth16_msm_g2_batch : kernel::groth16_msm_g1_batch;
  if (placement == SetPlacement::precomputed) {
    return set == kSetB2 ? kernel::groth16_msm_g2_precomputed : kernel::groth16_msm_g1_precomputed;
  }
  return set == kSetB2 ? kernel::groth16_msm_g2 : kernel::groth16_msm_g1;
}
const char* set_msm_reduce_kernel(std::size_t set) {
  return set == kSetB2 ? kernel::groth16_msm_g2_reduce : kernel::groth16_msm_g1_reduce;
}
Bytes set_msm_scratch_bytes(const Device& device, std::size_t set, SetPlacement placement, std::uint64_t points) {
  const Bytes msm = device.kernel_scratch_bytes(set_msm_kernel(set, placement), points);
  if (placement != SetPlacement::streamed) return msm;
  return std::max(msm, device.kernel_scratch_bytes(set_msm_reduce_kernel(set), points));
}
Bytes program_msm_scratch_bytes(const Device& device, const KeyProgramShape& shape) {
  Bytes most = 0;
  for (std::size_t set = 0; set < kKeySetCount; ++set) {
    const auto& set_shape = shape.sets[set];
    most = std::max(most, set_msm_scratch_bytes(device, set, set_shape.placement, set_shape.points_per_batch));
  }
  return most;
}
unsigned precomputed_window_bits(std::size_t set, SetPlacement placement, std::uint64_t points) {
  const auto group = set == kSetB2 ? kernel::CurveGroup::g2 : kernel::CurveGroup::g1;
  return placement == SetPlacement::precomputed ? kernel::precomputed_window_bits(points, group) : 0;
}
std::uint64_t set_copies(std::size_t set, SetPlacement placement, std::uint64_t points) {
  return placement == SetPlacement::precomputed
             ? kernel::precomputed_copies(precomputed_window_bits(set, placement, points))
             : 1;
}

Bytes set_sum_bytes(std::size_t set, kernel::Curve curve) {
  const auto sizes = kernel::curve_sizes(curve);
  return set == kSetB2 ? sizes.g2_jacobian : sizes.g1_jacobian;
}

KeyPlacement KeyPlacement::plan(const KeySizes& key, const PlacementBudget& budget) {
  KeyPlacement placement = all(SetPlacement::streamed);
  placement.stream_buffer_bytes = budget.stream_buffer_bytes;
  auto scratch = [&](std::size_t set, SetPlacement where, std::uint64_t points) {
    return budget.msm_scratch ? budget.msm_scratch(set, where, points) : 0;
  };
  // The scratch with every set streamed: the largest batch of each group.
  Bytes msm_scratch = 0;
  for (std::size_t set = 0; set < kKeySetCount; ++set) {
    msm_scratch = std::max(
        msm_scratch, scratch(set, SetPlacement::streamed,
                             std::min<std::uint64_t>(set_points(key, set),
                                                     budget.stream_buffer_bytes / set_point_bytes(set, key.curve))));
  }
  const Bytes in_flight = static_cast<Bytes>(std::max(1, budget.proofs_in_flight));
  Bytes resident = budget.matrix_bytes;
  for (std::size_t set : {kSetA, kSetB1, kSetC, kSetH, kSetB2}) {
    const Bytes bytes = set_points(key, set) * set_point_bytes(set, key.curve);
    const Bytes scratch_then = std::max(msm_scratch, scratch(set, SetPlacement::resident, set_points(key, set)));
    if (resident + bytes + in_flight * (budget.proof_bytes + scratch_then) > budget.device_bytes) continue;
    placement.sets[set] = SetPlacement::resident;
    resident += bytes;
    msm_scratch = scratch_then;
  }
  if (!budget.precompute) return placement;
  for (std::size_t set : {kSetA, kSetB1, kSetC, kSetH, kSetB2}) {
    const std::uint64_t points = set_points(key, set);
    if (placement.sets[set] != SetPlacement::resident || !kernel::precomputation_pays(points)) continue;
    const Bytes extra =
        (set_copies(set, SetPlacement::precomputed, points) - 1) * points * set_point_bytes(set, key.curve);
    const Bytes scratch_then = std::max(msm_scratch, scratch(set, SetPlacement::precomputed, points));
    if (resident + extra + in_flight * (budget.proof_bytes + scratch_then) > budget.device_bytes) continue;
    placement.sets[set] = SetPlacement::precomputed;
    resident += extra;
    msm_scratch = scratch_then;
  }
  return placement;
}

KeyProgramShape shape_key_program(const KeySizes& key, const KeyPlacement& placement) {
  KeyProgramShape shape;
  Bytes offset = 0;
  for (std::size_t set = 0; set < kKeySetCount; ++set) {
    auto& s = shape.sets[set];
    s.placement = placement.sets[set];
    s.points = set_points(key, set);
    s.point_bytes = set_point_bytes(set, key.curve);
    s.sum_bytes = set_sum_bytes(set, key.curve);
    if (s.placement == SetPlacement::streamed) {
      // As many points a batch as a buffer holds, unless a last batch would hold only the few left
      // over: then one batch fewer, the buffer up to 1/16 larger. Each MSM costs a fixed time too
      // (measured on the H200, larger in G2 than in G1), and 1 GiB buffers hold one point less than
      // a sixth of a 2^26 set. Batches made equal instead, all smaller, were slower there in both
      // groups, G2 more (the MSM planner took narrower windows; bench/journal/2026-12-01.md).
      const std::uint64_t most =
          std::max<std::uint64_t>(1, std::min(s.points, placement.stream_buffer_bytes / s.point_bytes));
      std::uint64_t batches = std::max<std::uint64_t>(1, (s.points + most - 1) / most);
      if (batches > 1 && s.points <= (batches - 1) * (most + most / 16)) --batches;
      s.points_per_batch = std::max<std::uint64_t>(1, (s.points + batches - 1) / batches);
      shape.stream_buffer_bytes = std::max(shape.stream_buffer_bytes, s.points_per_batch * s.point_bytes);
    } else {
      s.points_per_batch = s.points;
      s.window_bits = precomputed_window_bits(set, s.placement, s.points);
      s.copies = s.points == 0 ? 1 : set_copies(set, s.placement, s.points);
    }
    // An empty set (C of a circuit without private signals) still has one sum: the identity. A
    // streamed set's batches add into one MSM on the device: one sum too.
    s.batches = s.points == 0 ? 1 : (s.points + s.points_per_batch - 1) / s.points_per_batch;
    s.first_sum_offset = offset;
    offset += s.sum_bytes;
  }
  shape.result_bytes = offset;
  return shape;
}

Bytes KeyProgramShape::resident_bytes() const {
  Bytes bytes = 0;
  for (const auto& set : sets) bytes += kept_on_device(set.placement) ? set.device_bytes() : 0;
  return bytes;
}

Bytes KeyProgramShape::fetched_bytes() const {
  Bytes bytes = 0;
  for (const auto& set : sets) bytes += set.placement == SetPlacement::fetched_ahead ? set.bytes() : 0;
  return bytes;
}

std::uint64_t KeyProgramShape::largest_batch(Bytes point_bytes) const {
  std::uint64_t most = 0;
  for (const auto& set : sets) {
    if (set.point_bytes == point_bytes) most = std::max(most, set.points_per_batch);
  }
  return most;
}

}  // namespace stagehand::groth16
