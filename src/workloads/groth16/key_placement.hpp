#pragma once
// Where each of a proving key's point sets (A, B1, B2, C, H) is while a proof runs, and the shape
// of the proof's GPU program that follows from it.
//
//   resident       on the device for the whole run, uploaded once at set-up (outside the
//                  budget's capacity, like the constraint matrix)
//   fetched_ahead  uploaded whole for each proof on the copy engine from the program's start,
//                  while the a/b/c and H steps compute; held by the proof until its MSM is done
//   streamed       uploaded for each proof in batches through two buffers of the proof's own
//                  memory, each batch while the previous one's MSM computes
//   precomputed    resident with its precomputed bases: kernel::precomputed_copies copies of its
//                  points (copy j = 2^(c·j)·P), computed on the device at set-up, so that its MSM
//                  reduces one set of buckets instead of one per window, and from 2^22 points adds
//                  each point 12 or 13 times instead of 13 or 16 (on the H200 a little faster in
//                  G1 and much faster in G2, bench/RESULTS.md, "MSMs over precomputed bases"; for
//                  12 to 16 times the set's memory and seconds of set-up: it pays over a run of
//                  many proofs, so it is asked for, never the plan's default)
//
// The fetched and streamed sets are uploaded from the key's own bytes, registered as pinned host
// memory at set-up (one copy for every GPU). Each batch's MSM writes a sum of its own; the host
// adds a set's sums when the proof finishes. The VRAM budget's arithmetic decides: plan() keeps
// resident what fits beside the proofs in flight and streams the rest, so the same program runs
// a 2^10 key resident and a 2^26 key streamed on a 16 GiB card.

#include "device/kernel_abi.hpp"
#include "device/types.hpp"
#include "groth16/zkey.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stagehand {
class Device;
}  // namespace stagehand

namespace stagehand::groth16 {

enum class SetPlacement { resident, fetched_ahead, streamed, precomputed };
std::string_view to_string(SetPlacement placement);
std::optional<SetPlacement> parse_set_placement(std::string_view text);
// What a --key-sets option or a key_sets key accepts: "auto" (planned), then every placement's name.
std::vector<std::string> set_placement_choices();

// The sets in the program's order of MSMs: H first (its scalars, the polynomial a, are then
// freed), then the four over the witness.
enum KeySet : std::size_t { kSetH, kSetA, kSetB1, kSetB2, kSetC, kKeySetCount };
inline constexpr std::array<const char*, kKeySetCount> kKeySetNames{"H", "A", "B1", "B2", "C"};

// A key's sizes: all that the proof's GPU program and the plans need. A real key's, or a
// synthetic circuit's alone (the simulator's timing mode proves real-shaped jobs from them).
struct KeySizes {
  kernel::Curve curve = kernel::Curve::bls12_381;  // the key's, whose layout its sets have on the device
  std::uint64_t n_vars = 0;
  std::uint64_t n_public = 0;  // outputs + public inputs, not the constant 1
  unsigned domain_log2 = 0;
  std::array<std::uint64_t, kKeySetCount> set_points{};
  kernel::ConstraintMatrixLayout matrix;  // the a/b/c step's (groth16/constraint_matrix.hpp)
  std::uint64_t domain_size() const { return std::uint64_t{1} << domain_log2; }

  static KeySizes of(const ProvingKey& key);
  static KeySizes of(const bn254::ProvingKey& key);
  // The synthetic circuit's of domain 2^domain_log2 (groth16/synthetic_circuit.hpp: 2^K wires,
  // 4 public, 18 A and 19 B entries every 16 rows) over `curve`.
  static KeySizes synthetic(unsigned domain_log2, kernel::Curve curve = kernel::Curve::bls12_381);
};

// The bytes of one point of `set` as the key and the device keep it (BLS12-381: 96 in G1, 192 in
// G2; BN254: 64, 128), and of one Jacobian sum of its MSM (144, 288; 96, 192): kernel::curve_sizes.
Bytes set_point_bytes(std::size_t set, kernel::Curve curve = kernel::Curve::bls12_381);
Bytes set_sum_bytes(std::size_t set, kernel::Curve curve = kernel::Curve::bls12_381);
// The MSM kernel over `set`'s points (device/kernel_abi.hpp): for a streamed set the kernel of
// each batch (which adds into the MSM's state in its scratch) and the one that reduces it.
const char* set_msm_kernel(std::size_t set, SetPlacement placement);
const char* set_msm_reduce_kernel(std::size_t set);

struct KeyPlacement {
  std::array<SetPlacement, kKeySetCount> sets{SetPlacement::resident, SetPlacement::resident, SetPlacement::resident,
                                              SetPlacement::resident, SetPlacement::resident};
  // Each of the two buffers the streamed sets go through (whole points; a set smaller than this
  // takes one buffer of its own size).
  Bytes stream_buffer_bytes = kGiB;
  // A proof's MSM memory (the stream buffers, the fetched sets, the MSM scratch and, with a/b/c on
  // the host, the witness) taken once H is formed and b and c are freed, not from the program's
  // start: what lets a proof whose polynomials fill most of the card fit (2^27 on 16 GiB), at the
  // cost of the witness and the first batches travelling after H rather than beside it.
  bool msm_memory_after_h = false;

  bool operator==(const KeyPlacement&) const = default;
  static KeyPlacement all(SetPlacement placement);
  // "H, A, B1, C resident; B2 streamed (2 x 1.00 GiB buffers)".
  std::string describe() const;

  // Keeps resident what fits on the smallest device once the proofs in flight have their room,
  // in the order A, B1, C, H, then B2 (a G2 MSM computes longest per byte, so B2 hides its
  // upload best when streamed); streams the rest. With budget.precompute, then precomputes the
  // resident sets large enough for it to pay (kernel::precomputation_pays) whose copies fit, in
  // the same order.
  static KeyPlacement plan(const KeySizes& key, const struct PlacementBudget& budget);
};

struct PlacementBudget {
  Bytes device_bytes = 0;    // the smallest device's memory, less the safety margin and other residents
  Bytes matrix_bytes = 0;    // the constraint matrix kept beside the sets (0 with a/b/c on the host)
  Bytes proof_bytes = 0;     // a proof's peak without the key's sets and the MSM scratch, stream buffers included
  int proofs_in_flight = 1;  // the proofs that need their room at once (the workers per GPU)
  // The MSM scratch the device needs for `points` points of `set` (0 where it needs none), the
  // most one launch takes: a resident set's MSM takes all its points at once, and its scratch
  // grows with them; a streamed set's, its largest batch.
  std::function<Bytes(std::size_t set, SetPlacement placement, std::uint64_t points)> msm_scratch;
  Bytes stream_buffer_bytes = kGiB;
  bool precompute = false;  // also precompute resident sets where it pays and fits
};

// One set as the program sees it.
struct KeySetShape {
  SetPlacement placement = SetPlacement::resident;
  std::uint64_t points = 0;
  Bytes point_bytes = 0;               // set_point_bytes: 96 (G1) or 192 (G2) over BLS12-381
  std::uint64_t points_per_batch = 0;  // all of them, unless streamed
  std::uint64_t batches = 0;           // 0 for an empty set
  Bytes sum_bytes = 0;                 // one Jacobian sum (set_sum_bytes): 144 (G1) or 288 (G2) over BLS12-381
  Bytes first_sum_offset = 0;          // where its sum is in the program's results (one, however streamed)
  unsigned window_bits = 0;            // precomputed: the width its copies are for
  std::uint64_t copies = 1;            // the copies of its points it keeps on the device (precomputed: more)
  Bytes bytes() const { return points * point_bytes; }
  Bytes device_bytes() const { return copies * bytes(); }  // resident or precomputed: what it holds
};

// Every set's shape, the results' size and the streaming buffers' size (0 without streamed sets).
struct KeyProgramShape {
  std::array<KeySetShape, kKeySetCount> sets;
  Bytes result_bytes = 0;
  Bytes stream_buffer_bytes = 0;
  Bytes resident_bytes() const;                          // the sets kept on the device (with their copies)
  Bytes fetched_bytes() const;                           // the sets each proof fetches whole
  std::uint64_t largest_batch(Bytes point_bytes) const;  // the most points one MSM of that group takes
};

KeyProgramShape shape_key_program(const KeySizes& key, const KeyPlacement& placement);

// The MSM scratch `device` asks for set `set` over `points` points (a batch's, where streamed) as
// placed: its MSM kernel's, and for a streamed set its reduction's too, the larger.
Bytes set_msm_scratch_bytes(const Device& device, std::size_t set, SetPlacement placement, std::uint64_t points);
// The one MSM scratch that serves every set of `shape` on `device` (they run one after another on
// the compute stream): the largest set_msm_scratch_bytes of its sets' batches.
Bytes program_msm_scratch_bytes(const Device& device, const KeyProgramShape& shape);

// Resident or precomputed: on the device for the whole run, uploaded at set-up.
constexpr bool kept_on_device(SetPlacement placement) {
  return placement == SetPlacement::resident || placement == SetPlacement::precomputed;
}
// The copies that set `set` (kSetH ... kSetB2) keeps with `points` points (1 unless precomputed)
// and their window width (0 unless precomputed; G2's B2 may take a wider one than the G1 sets).
unsigned precomputed_window_bits(std::size_t set, SetPlacement placement, std::uint64_t points);
std::uint64_t set_copies(std::size_t set, SetPlacement placement, std::uint64_t points);

}  // namespace stagehand::groth16
