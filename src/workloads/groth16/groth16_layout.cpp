// Where a run's a/b/c step runs and its key's sets are (plan_proof_layout), and the bytes one
// proof needs in that layout.

#include "workloads/groth16/groth16_program.hpp"

#include "device/format.hpp"
#include "device/kernel_abi.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace stagehand::groth16 {

std::string_view to_string(AbcStep step) {
  switch (step) {
    case AbcStep::device: return "device";
    case AbcStep::streamed: return "streamed";
    case AbcStep::host: return "host";
  }
  return "?";
}

std::optional<AbcStep> parse_abc_step(std::string_view text) {
  for (auto step : {AbcStep::device, AbcStep::streamed, AbcStep::host}) {
    if (text == to_string(step)) return step;
  }
  return std::nullopt;
}

std::string describe(AbcStep step) {
  return step == AbcStep::streamed ? "on the device, its matrix streamed" : fmt::format("on the {}", to_string(step));
}

std::vector<std::string> abc_step_choices(bool with_auto) {
  std::vector<std::string> choices;
  if (with_auto) choices.emplace_back("auto");
  for (auto step : {AbcStep::device, AbcStep::streamed, AbcStep::host}) choices.emplace_back(to_string(step));
  return choices;
}

namespace {

// The room the devices give a run's key and proofs: the smallest device's memory less what is held
// back, a proof's bytes with the largest H scratch, each set's MSM scratch on the neediest device.
PlacementBudget placement_budget(const KeySizes& key, const std::vector<Device*>& devices, Bytes held_back,
                                 int proofs_in_flight, Bytes stream_buffer_bytes, bool precompute_bases) {
  PlacementBudget budget;
  budget.precompute = precompute_bases;
  budget.device_bytes = ~Bytes{0};
  Bytes h_scratch = 0;
  for (const auto* device : devices) {
    budget.device_bytes = std::min(budget.device_bytes, device->properties().total_memory_bytes);
    h_scratch = std::max(h_scratch, device->kernel_scratch_bytes(kernel::groth16_h_evaluate, key.domain_size()));
  }
  if (devices.empty()) budget.device_bytes = 0;
  budget.device_bytes = budget.device_bytes > held_back ? budget.device_bytes - held_back : 0;
  budget.proofs_in_flight = std::max(1, proofs_in_flight);
  budget.stream_buffer_bytes = stream_buffer_bytes;
  budget.proof_bytes = Groth16Program::proof_bytes_before_scratch(key, stream_buffer_bytes) + h_scratch + kMiB;
  budget.msm_scratch = [&devices](std::size_t set, SetPlacement placement, std::uint64_t points) {
    Bytes most = 0;
    for (const auto* device : devices) most = std::max(most, set_msm_scratch_bytes(*device, set, placement, points));
    return most;
  };
  return budget;
}

}  // namespace

ProofLayout plan_proof_layout(const KeySizes& key, const std::vector<Device*>& devices, Bytes held_back,
                              int proofs_in_flight, std::optional<AbcStep> abc, std::optional<SetPlacement> sets,
                              Bytes stream_buffer_bytes, bool precompute_bases) {
  auto budget = placement_budget(key, devices, held_back, proofs_in_flight, stream_buffer_bytes, precompute_bases);
  ProofLayout layout;
  // With every set streamed, does the matrix leave a proof's room per worker?
  const Bytes matrix = Groth16Program::matrix_bytes(key, AbcStep::device);
  const Bytes streamed_scratch = std::max(
      budget.msm_scratch(kSetA, SetPlacement::streamed, stream_buffer_bytes / set_point_bytes(kSetA, key.curve)),
      budget.msm_scratch(kSetB2, SetPlacement::streamed, stream_buffer_bytes / set_point_bytes(kSetB2, key.curve)));
  const Bytes with_matrix =
      matrix + static_cast<Bytes>(budget.proofs_in_flight) * (budget.proof_bytes + streamed_scratch);
  // Streamed, the matrix goes through the stream buffers from the program's start: a proof must
  // fit with its MSM memory taken from the start too.
  const bool streamed_fits = budget.proof_bytes + streamed_scratch <= budget.device_bytes;
  if (abc) {
    layout.abc_step = *abc;
    layout.reason = "as asked";
    if (*abc == AbcStep::streamed && !streamed_fits) {
      throw std::invalid_argument(
          fmt::format("the a/b/c step streamed: a proof with its stream buffers and MSM memory taken from its "
                      "start needs about {}, the smallest device has {} to give (run it on the host)",
                      format_bytes(budget.proof_bytes + streamed_scratch), format_bytes(budget.device_bytes)));
    }
  } else if (with_matrix <= budget.device_bytes) {
    layout.abc_step = AbcStep::device;
    layout.reason = fmt::format("its constraint matrix ({}) fits beside {} proof{}", format_bytes(matrix),
                                budget.proofs_in_flight, budget.proofs_in_flight == 1 ? "" : "s");
  } else if (streamed_fits) {
    layout.abc_step = AbcStep::streamed;
    layout.reason = fmt::format(
        "its constraint matrix ({}) streamed through each proof's buffers: resident, a run would need about {}, "
        "the smallest device has {} to give",
        format_bytes(matrix), format_bytes(with_matrix), format_bytes(budget.device_bytes));
  } else {
    layout.abc_step = AbcStep::host;
    layout.reason = fmt::format(
        "with its constraint matrix ({}) resident a run needs about {}, streamed a proof about {}; the smallest "
        "device has {} to give",
        format_bytes(matrix), format_bytes(with_matrix), format_bytes(budget.proof_bytes + streamed_scratch),
        format_bytes(budget.device_bytes));
  }
  budget.matrix_bytes = Groth16Program::matrix_bytes(key, layout.abc_step);
  if (sets) {
    layout.placement = KeyPlacement::all(*sets);
    layout.placement.stream_buffer_bytes = stream_buffer_bytes;
  } else {
    layout.placement = KeyPlacement::plan(key, budget);
  }
  // Where one proof with every set streamed would not fit beside the matrix if it took its MSM
  // memory from the start, it takes it once H is formed (KeyPlacement::msm_memory_after_h).
  // (Streamed, the matrix is not resident and streamed_fits holds: never after H.)
  layout.placement.msm_memory_after_h =
      budget.matrix_bytes + budget.proof_bytes + streamed_scratch > budget.device_bytes;
  return layout;
}

Bytes proof_device_bytes(const KeySizes& key, const ProofLayout& layout) {
  const auto shape = shape_key_program(key, layout.placement);
  const auto plan =
      Groth16Program::plan_memory(key, layout.abc_step, layout.placement, shape,
                                  Groth16Program::stream_buffer_bytes(shape, layout.placement, layout.abc_step), 0, 0);
  return plan.peak_bytes + shape.resident_bytes() + Groth16Program::matrix_bytes(key, layout.abc_step);
}

}  // namespace stagehand::groth16
