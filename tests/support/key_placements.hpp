#pragma once
// The key sets' placements a test proves under: each placement for every set, and one mix of
// them (H and B2 streamed, A and C fetched ahead, B1 precomputed), each with its name.

#include "workloads/groth16/key_placement.hpp"

#include <string>
#include <utility>
#include <vector>

namespace stagehand::testing {

inline std::vector<std::pair<std::string, groth16::KeyPlacement>> every_placement() {
  using groth16::KeyPlacement;
  using groth16::SetPlacement;
  KeyPlacement mixed;
  mixed.sets[groth16::kSetH] = SetPlacement::streamed;
  mixed.sets[groth16::kSetA] = SetPlacement::fetched_ahead;
  mixed.sets[groth16::kSetB2] = SetPlacement::streamed;
  mixed.sets[groth16::kSetC] = SetPlacement::fetched_ahead;
  mixed.sets[groth16::kSetB1] = SetPlacement::precomputed;
  return {{"resident", KeyPlacement::all(SetPlacement::resident)},
          {"precomputed", KeyPlacement::all(SetPlacement::precomputed)},
          {"fetched ahead", KeyPlacement::all(SetPlacement::fetched_ahead)},
          {"streamed", KeyPlacement::all(SetPlacement::streamed)},
          {"mixed", mixed}};
}

}  // namespace stagehand::testing
