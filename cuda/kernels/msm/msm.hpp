// Pippenger multi-scalar multiplication over G1 and G2 on the device, for BLS12-381 and BN254 (a
// plan's curve; one pipeline, msm_pipeline.cuh, instantiated per curve and group).
//
// Inputs: `point_count` affine points (BLS12-381's G1: 96 bytes each, x then y, Montgomery Fq,
// infinity = all zero bytes; BN254's 64; kernel::curve_sizes) and as many scalars (32 bytes, little-endian, reduced mod r), either canonical
// (snarkjs witness values) or in Montgomery form (values an NTT left on the device).
//
// Algorithm: signed c-bit window digits (bucket b of a window holds the points whose digit is
// ±(b+1), so each window has 2^(c-1) buckets), a radix sort of (bucket, point) pairs per group
// of windows, then bucket accumulation in XYZZ coordinates, balanced: each bucket's run of
// sorted points is cut into work items of at most K points (K about twice the mean bucket
// size), the items are sorted by length (longest first, so a warp's threads run about equally
// long), one thread sums each item, and a second pass adds a bucket's items together. The
// buckets of every window stay on the device until all groups are done; one parallel
// reduction of Σ (b+1)·B_b over all windows at once then gives one sum per window (Jacobian,
// 144 bytes, Montgomery Fq); the host combines them (msm_combine_windows, a few hundred
// doublings). The streamed variant accumulates every batch into the same buckets and reduces
// once, at the end.
//
// Limits, stated plainly: a bucket's items are added together by one thread, or by a block of
// 128 threads past 32 items (the scalars 0 and 1 of a real witness put half the points into one
// bucket), so inputs with very many equal scalars cost a little more, never wrong. Keeping every
// window's buckets costs scratch (2^26 points at c = 20: 5.0 GiB against 3.7 GiB with per-group
// reduction; msm_scratch_bytes says it). The planner chooses among the window widths 8, 11, 13,
// 16 and 20. Over precomputed bases (MsmPlan::precomputed, msm_precompute_bases) every window
// adds into one set of buckets, reduced once: on the H200 the G1 MSM a little faster than without
// and G2's much faster (bench/RESULTS.md, "MSMs over precomputed bases"), for 12-16 copies of the
// points. Not done yet: the GLV endomorphism (at the same c it
// halves the windows but doubles the points, so it does not cut the bucket additions; see
// bench/RESULTS.md).
#pragma once

#include <cuda_runtime.h>

#include "device/kernel_abi.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace stagehand::cuda {

inline constexpr std::uint64_t kG1AffineBytes = 96;
inline constexpr std::uint64_t kG1JacobianBytes = 144;
inline constexpr std::uint64_t kFrBytes = 32;
inline constexpr std::uint64_t kG2AffineBytes = 192;
inline constexpr std::uint64_t kG2JacobianBytes = 288;

// Which group the MSM's points are in: G1 (96-byte affine points, 144-byte Jacobian sums) or G2
// (192 and 288 bytes, ec/g2.cuh's layout). The pipeline is the same; G2's buckets are twice as
// large and its additions about three times the work.
using MsmGroup = kernel::CurveGroup;  // g1, g2

// Switches for measuring the algorithm's pieces against each other (bench, checks); the
// defaults are the fastest measured. `balanced` off: one thread per bucket (the baseline kernel);
// `deferred_reduction` off: each group of windows reduced as soon as it is accumulated;
// `item_sum`: how the balanced kernel adds a work item's points into its bucket (ItemSum below);
// `split_reduction` off: one segment kernel (255 registers) instead of three lighter ones; on,
// the lighter ones are used only for window widths of 17 bits and more (measured faster at
// c = 20, slower at c = 16).
//
// ItemSum: `f64_called` (the default for G1) multiplies in Fq with its 48-bit products on the
// FP64 pipe (field_f64.cuh), each product a call instead of inlined code (FqF64Called: one copy
// of the multiplication's code and fewer registers, 4 blocks of 128 threads per SM);
// `integer_called` (G2's plans: 3 blocks) does the same on the integer pipes. The inlined forms:
// `f64_prefetch` loads the next point while adding the current one (3 blocks), `f64` does not;
// `integer_prefetch` (the integer baseline) and `integer` likewise on the integer pipes. On the
// H200 at 2^26, in one run, f64_called was the fastest G1 form and integer the slowest; for G2
// integer_called was the fastest by far and f64_called the slowest (bench/journal/2026-12-01.md
// has the figures). Why the calls win: the inlined additions overflow the instruction cache
// (Nsight Compute on the G2 item sum: most issue slots idle, the warps stalled on fetching
// instructions about as long as on their operands) and hold more registers per thread.
enum class ItemSum { f64_prefetch, f64, integer_prefetch, integer, integer_called, f64_called };
struct MsmTuning {
  bool balanced = true;
  bool deferred_reduction = true;
  ItemSum item_sum = ItemSum::f64_called;
  bool split_reduction = true;
};

struct MsmPlan {
  kernel::Curve curve = kernel::Curve::bls12_381;
  MsmGroup group = MsmGroup::g1;
  std::uint64_t point_count = 0;
  unsigned window_bits = 0;        // c
  unsigned window_count = 0;       // ceil(256 / c): signed digits never carry out of the top window
  unsigned windows_per_group = 0;  // windows sorted and accumulated together
  MsmTuning tuning{};
  // The points are a set's precomputed multiples (msm_precompute_bases): window_count copies one
  // after another, copy j = 2^(c·j)·P, so that digit j of a scalar picks a point of copy j and
  // every window adds into one set of 2^(c-1) buckets. One reduction and one sum instead of one
  // per window, which makes a wider window pay: c = 22 adds each point 12 times against 13 at
  // c = 20, and reduces its 2^21 buckets once (13·2^19 without copies).
  bool precomputed = false;
};

// The sums an MSM of the plan writes: one per window, or one in all for precomputed bases.
inline unsigned msm_sum_count(const MsmPlan& plan) { return plan.precomputed ? 1u : plan.window_count; }

// window_bits 0 picks the width from the size (8, 11, 13, 16 or 20); 2..22 forces one (tests, tuning).
// G2 plans use the integer item sum with its Fq products as calls.
// The planners' widths and tunings are BLS12-381's measured ones, which BN254's plans take as well.
MsmPlan msm_plan(std::uint64_t point_count, unsigned window_bits = 0, MsmGroup group = MsmGroup::g1,
                 kernel::Curve curve = kernel::Curve::bls12_381);

// The plan for batches that add into the same buckets (StreamedMsm): msm_plan's, with windows
// grouped so that each group sorts about 2^24 (bucket, point) pairs and holds at most 2^21
// buckets (at c = 20: 4 windows for batches up to 2^22 points). Each group pays costs that
// do not shrink with the batch: the sorts' launches, the work items' sort over all its buckets,
// and the combine pass, which waits out at least one full addition's latency. With one window
// per group a streamed 2^24-point MSM in 2^22-point batches at c = 20 paid them 13 times per
// batch, a visible cost over the MSM on the device (measured on the H200). The scratch grows with the
// group (msm_scratch_bytes says how much).
MsmPlan msm_batch_plan(std::uint64_t batch_points, unsigned window_bits = 0, MsmGroup group = MsmGroup::g1,
                       kernel::Curve curve = kernel::Curve::bls12_381);

// A plan over precomputed bases (MsmPlan::precomputed) of point_count points. window_bits 0 picks
// the width from the size and the group (kernel::precomputed_window_bits); 2..24 forces one. Needs
// window_count·point_count < 2^30.
MsmPlan msm_precomputed_plan(std::uint64_t point_count, unsigned window_bits = 0, MsmGroup group = MsmGroup::g1,
                             kernel::Curve curve = kernel::Curve::bls12_381);
// The device bytes of a precomputed plan's bases: window_count·point_count affine points.
std::uint64_t msm_precomputed_bytes(const MsmPlan& plan);
// Writes the plan's window_count copies of `points` (point_count affine points of the plan's group,
// device memory) to `copies` (msm_precomputed_bytes(plan) bytes, device): copy 0 the points
// themselves (not copied when `copies` is `points`, the bases already at its start), copy j the
// c doublings of copy j - 1, in affine form (one inversion per sixteen points). Asynchronous on
// `stream`; once per key, not per MSM. The G2 half is msm_g2_precompute_bases (msm_g2.cu).
void msm_precompute_bases(const MsmPlan& plan, const void* points, void* copies, cudaStream_t stream);
void msm_g2_precompute_bases(const MsmPlan& plan, const void* points, void* copies, cudaStream_t stream);

// Device scratch that msm_g1_windows (msm_g2_windows for a G2 plan) needs (taken as a write
// buffer, never allocated inside).
std::uint64_t msm_scratch_bytes(const MsmPlan& plan);
std::uint64_t msm_g2_scratch_bytes(const MsmPlan& plan);  // a G2 plan's (msm_g2.cu)
// The window sums it writes: msm_sum_count(plan) Jacobian points of the plan's curve and group.
inline std::uint64_t msm_result_bytes(const MsmPlan& plan) {
  const kernel::CurveSizes sizes = kernel::curve_sizes(plan.curve);
  return msm_sum_count(plan) * (plan.group == MsmGroup::g1 ? sizes.g1_jacobian : sizes.g2_jacobian);
}

// Records an event after each phase of the MSM on the stream it runs on (for the benchmark's
// breakdown; costs a few microseconds per phase). collect() waits for the last event and
// returns milliseconds per phase name, summed over every time the phase ran.
class MsmProfile {
 public:
  MsmProfile() = default;
  ~MsmProfile();
  MsmProfile(const MsmProfile&) = delete;
  MsmProfile& operator=(const MsmProfile&) = delete;
  void mark(const char* phase, cudaStream_t stream);
  std::vector<std::pair<std::string, double>> collect();

 private:
  std::vector<std::pair<std::string, cudaEvent_t>> marks_;
};

// Writes the msm_sum_count(plan) window sums to `window_sums` (device; for a precomputed plan
// `points` are its copies). All pointers are device pointers; `scratch` holds
// msm_scratch_bytes(plan) bytes. Asynchronous on `stream`.
void msm_g1_windows(const void* points, const void* scalars, bool scalars_montgomery, const MsmPlan& plan,
                    void* window_sums, void* scratch, cudaStream_t stream, MsmProfile* profile = nullptr);

// The same over G2 (a plan made with MsmGroup::g2): points 192-byte affine G2 points, window sums
// 288-byte Jacobian G2 points (Fq2 X, Y, Z; src/math's G2Projective). msm_g2.cu.
void msm_g2_windows(const void* points, const void* scalars, bool scalars_montgomery, const MsmPlan& plan,
                    void* window_sums, void* scratch, cudaStream_t stream, MsmProfile* profile = nullptr);
// The most local memory (bytes per thread: stack frames, spills) any MSM kernel of either group
// uses, so that a device can reserve it before sizing its memory (the runtime otherwise reserves
// it at the first launch that needs it: hundreds of MiB on the H200 for the G2 kernels, whose Fq2
// products are calls). msm_g2_kernel_stack_bytes: the G2 kernels' alone.
std::uint64_t msm_kernel_stack_bytes();
std::uint64_t msm_g2_kernel_stack_bytes();
// Σ_w 2^(c·w)·S_w of G2 window sums into one Jacobian G2 point (288 bytes; BN254's 192), on the device.
void msm_g2_combine_windows_on_device(const void* window_sums, unsigned window_count, unsigned window_bits,
                                      void* result_jacobian, cudaStream_t stream,
                                      kernel::Curve curve = kernel::Curve::bls12_381);

// The two halves of msm_g1_windows, for callers that feed the same buckets several times (the
// streamed variant). The buckets live at the start of `scratch` and do not depend on
// plan.point_count, so one scratch sized for the largest batch serves every batch of the same
// window width. add_to_buckets false starts the buckets afresh; true adds to what they hold.
// Needs plan.tuning.deferred_reduction.
void msm_g1_accumulate(const void* points, const void* scalars, bool scalars_montgomery, const MsmPlan& plan,
                       bool add_to_buckets, void* scratch, cudaStream_t stream, MsmProfile* profile = nullptr);
// Consumes the buckets (they are overwritten with partial sums): accumulate afresh before the
// next reduction.
void msm_g1_reduce(const MsmPlan& plan, void* window_sums, void* scratch, cudaStream_t stream,
                   MsmProfile* profile = nullptr);
// The same two halves over G2 (a G2 plan; msm_g2_scratch_bytes of scratch; msm_g2.cu).
void msm_g2_accumulate(const void* points, const void* scalars, bool scalars_montgomery, const MsmPlan& plan,
                       bool add_to_buckets, void* scratch, cudaStream_t stream, MsmProfile* profile = nullptr);
void msm_g2_reduce(const MsmPlan& plan, void* window_sums, void* scratch, cudaStream_t stream,
                   MsmProfile* profile = nullptr);

// Device side: Σ_w 2^(c·w)·S_w of `window_count` window sums (device memory, Jacobian) by Horner
// from the top window, one thread (a few hundred doublings, microseconds). on_device writes the
// Jacobian result (144 bytes, BN254's 96; infinity for window_count 0); fold_into adds it to an
// XYZZ accumulator (192 bytes X‖Y‖ZZ‖ZZZ, BN254's 128, the batch additions' format; all zero =
// infinity), or replaces the accumulator when `start`.
void msm_combine_windows_on_device(const void* window_sums, unsigned window_count, unsigned window_bits,
                                   void* result_jacobian, cudaStream_t stream,
                                   kernel::Curve curve = kernel::Curve::bls12_381);
void msm_fold_windows_into(const void* window_sums, unsigned window_count, unsigned window_bits, void* accumulator_xyzz,
                           bool start, cudaStream_t stream, kernel::Curve curve = kernel::Curve::bls12_381);

// Host side: Σ_w 2^(c·w)·S_w over one or more batches' window sums (host memory, each batch
// msm_result_bytes(plan) bytes, all batches planned with the same window_bits). Result as
// Jacobian (X, Y, Z) in Montgomery form, the layout of stagehand::math::G1Projective.
struct G1JacobianBytes {
  std::uint8_t bytes[kG1JacobianBytes];
};
G1JacobianBytes msm_combine_windows(const std::vector<const void*>& batch_window_sums, unsigned window_count,
                                    unsigned window_bits);

// How StreamedMsm cuts point_count points into batches of at most batch_points: a quarter batch
// first, then full batches, the last one the rest. Nothing can compute until the first batch has
// copied, so that copy is the one the stream cannot hide; a quarter batch computes for longer than
// a full batch takes to copy (on the H200 a point's accumulation at c = 16-20 takes several times
// its PCIe transfer), so every later copy still hides behind compute. One batch when the
// points fit in one.
struct MsmBatch {
  std::uint64_t first = 0, count = 0;
};
std::vector<MsmBatch> streamed_batches(std::uint64_t point_count, std::uint64_t batch_points);

// MSM with the points streamed from pinned host memory in batches: while batch i accumulates
// on `compute`, batch i+1 copies on `copy` into the other of two device point buffers (the
// copy of batch i+2 waits, on the device, until batch i has finished reading its buffer). Every
// batch adds into the same device buckets; no batch sends anything back. run() queues all
// batches without waiting, then the one reduction, then one copy of the window sums into a
// pinned host buffer, and only then synchronises: the GPU never waits for the host, and the
// host combines the window sums once. Allocates its buffers once at construction (not on the
// hot path).
class StreamedMsm {
 public:
  StreamedMsm(std::uint64_t batch_points, unsigned window_bits = 0, MsmTuning tuning = MsmTuning{});
  ~StreamedMsm();
  StreamedMsm(const StreamedMsm&) = delete;
  StreamedMsm& operator=(const StreamedMsm&) = delete;

  // host_points: pinned (cudaHostAlloc / cudaHostRegister) point_count·96 bytes;
  // device_scalars: point_count scalars on the device. Blocks until the result is known.
  G1JacobianBytes run(const void* host_points, const void* device_scalars, std::uint64_t point_count,
                      bool scalars_montgomery, cudaStream_t compute, cudaStream_t copy, MsmProfile* profile = nullptr);

  std::uint64_t device_bytes() const { return device_bytes_; }
  const MsmPlan& plan() const { return plan_; }

 private:
  std::uint64_t batch_points_;
  MsmPlan plan_;
  void* device_points_[2] = {nullptr, nullptr};
  void* device_sums_ = nullptr;
  void* host_sums_ = nullptr;
  void* scratch_ = nullptr;
  cudaEvent_t copied_[2] = {nullptr, nullptr};
  cudaEvent_t consumed_[2] = {nullptr, nullptr};
  cudaEvent_t sums_ready_ = nullptr;
  std::uint64_t device_bytes_ = 0;
};

}  // namespace stagehand::cuda
