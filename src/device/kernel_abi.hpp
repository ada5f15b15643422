#pragma once
// The kernels' names and conventions, declared once. The GPU programs launch by these names, the
// CUDA launchers register under them, the simulator's host functions and the device models'
// [kernels.NAME] tables use them: a kernel renamed here is renamed everywhere, and a device model
// that names a kernel not listed here is an error naming its file and line.
//
// Every buffer is a BufferUse of device bytes. Fr values are 32-byte Montgomery form (R = 2^256);
// G1 points 96-byte affine Montgomery form, G2 points 192 bytes x.c0‖x.c1‖y.c0‖y.c1 (snarkjs's
// layout, infinity = zeros). "scratch" is an extra last write buffer of
// Device::kernel_scratch_bytes(name, largest launch) bytes, where the device asks for one (the
// CUDA launchers do, the simulator's host functions do not): the caller allocates it, so that the
// budget reserves it like any other byte.
//
// name                   work_units     arguments                       reads                  writes
// busy_wait              nanoseconds    [] or [fault 0|1]               -                      -
//   spins for work_units ns: the Device contract's stand-in kernel. With fault 1 it then faults, as
//   a kernel that touches memory it must not does: the contract's way to fail a kernel on a GPU.
// ntt_domain_init        2^log_size     [log_size, ω w0..w3, g w0..w3]  -                      [domain]
// ntt_forward, ntt_inverse, coset_ntt, coset_intt
//                        2^log_size     [log_size]                      [domain]               [values]
//   in place, natural order; ω a primitive 2^log_size-th root, g the coset generator.
// h_pointwise            count          [] or [factor w0..w3]           [b, c]                 [a]
//   a[i] = (a[i]·b[i] − c[i])·factor.
// h_polynomial_snarkjs, h_polynomial_classic
//                        2^log_size     [log_size]                      [domain]               [a, b, c]
//   the two forms of src/math/h_polynomial.hpp, result in a.
// h_classic_product      2^log_size     [log_size]                      [domain]               [a, b]
//   a := A·B on the coset g·<ω> (a, b given as evaluations on the domain <ω>; b is left on the coset, clobbered)
// h_classic_finish       2^log_size     [log_size]                      [domain]               [a, c]
//   a := the coefficients of (a − C)/Z, Z = x^n − 1, where a is h_classic_product's result and c holds
//   C's evaluations on the domain (c clobbered): h_classic_product then h_classic_finish give exactly
//   h_polynomial_classic's a. Two halves, so that a program holds only two of a, b, c at once.
// msm_g1                 point_count    [scalars_montgomery, window_bits]  [points, scalars]   [window_sums, scratch]
// batch_addition_g1/_g2  point_count    [] or [start] or [start, offset]   [points]           [accumulator + scratch]
//   accumulator := (start ? ∞ : accumulator) + Σ points, an XYZZ point at byte `offset`.
//
// The partition program (src/workloads/porep/partition_program.cpp):
// ntt_twiddles           2^log_size / 2 [log_size]                      -                      [twiddles]
// ntt                    2^log_size     [log_size, NttKind]             [values, twiddles]     [values]
// msm_batch              point_count    [first, capacity, start]        [points, scalars]      [results, scratch]
// msm_reduce             1              [capacity]                      [results, other]       [results, scratch]
// tail_msm               item_count     [start, capacity]               [items]                [scratch]
// tail_reduce            1              [offset, capacity]              []                     [sums, scratch]
//
// The Groth16 program (src/workloads/groth16/groth16_program.cpp):
// groth16_h_evaluate     2^log_size     [log_size, threads]             -                      [values, scratch]
//   one of a, b, c in place: in, its polynomial on the domain; out, on the coset, at x_j = ω_2n^(2j+1)
//   (the inverse NTT, then the coset NTT); the scratch holds the NTT domain, built at every launch.
// groth16_h_combine      2^log_size     [log_size, threads]             [b, c]                 [a]
//   a_j = a_j·b_j − c_j: after groth16_h_evaluate of each, a holds P_j = A(x_j)·B(x_j) − C(x_j).
//   Three launches and a fourth rather than one, so that the step starts on a while b and c still
//   travel (a job whose inputs go up in the lock: the holder's memory kept the last of them out).
// groth16_msm_g1         point_count    [threads]                       [points, scalars]      [result, scratch]
//   result: 144 bytes, the Jacobian sum X‖Y‖Z (Montgomery Fq).
// groth16_msm_g2         point_count    [threads]                       [points, scalars]      [result, scratch]
//   points 192-byte affine G2; result: 288 bytes, the Jacobian sum X‖Y‖Z (Montgomery Fq2).
// groth16_msm_g1_batch   point_count    [threads, capacity, add]        [points, scalars]      [scratch]
//   one batch of a streamed set's MSM added into the MSM's running state in scratch (add 0:
//   afresh); capacity, the largest batch's point count, is the same for every batch of the MSM.
// groth16_msm_g1_reduce  1              [capacity]                      -                      [result, scratch]
//   the MSM's sum from that state into result (as groth16_msm_g1's); the state is consumed.
// groth16_msm_g2_batch, groth16_msm_g2_reduce: the same over G2.
// groth16_precompute_g1  point_count    [window_bits]                   [points]               [copies]
//   a set's precomputed bases: precomputed_copies(window_bits) copies of its 96-byte points one
//   after another, copy j = 2^(c·j)·P (copy 0 the points; `points` may be copy 0 of `copies`).
//   Once per key and device, at set-up.
// groth16_msm_g1_precomputed point_count [threads, window_bits]         [copies, scalars]      [result, scratch]
//   groth16_msm_g1's sum over such copies: digit j of each scalar picks its point of copy j, and
//   every window adds into one set of buckets.
// groth16_precompute_g2, groth16_msm_g2_precomputed: the same over G2.
// groth16_abc            rows           [entries_a, entries_b, threads[, first_a, first_b]]
//                                                                        [witness, matrix]      [a, b, c]
//   the a/b/c step: a[i] = Σ A_ik·w_k, b[i] = Σ B_ik·w_k, c[i] = a[i]·b[i] over the rows of the
//   constraint matrix (ConstraintMatrixLayout below; rows = the domain size, zero rows padded),
//   or over a chunk of its rows: the chunk's offsets, signals and values in a layout of its own,
//   its offsets still counting from the whole matrix's first entries, first_a and first_b the
//   chunk's first entry of each (0 for the whole matrix), a, b, c the chunk's rows.
//
// The test-only setup (src/groth16/device_setup.cpp):
// setup_fixed_base_g1    point_count    [] or [threads]                 [table, scalars]       [points]
//   points[i] = scalars[i]·G, 96-byte affine (all zeros for a zero scalar); scalars 32-byte
//   Montgomery Fr; table: the 32×256 affine multiples of G, entry 256·w + d = d·2^(8w)·G in the
//   same encoding (groth16/fixed_base.hpp; d = 0 is zeros), kFixedBaseTableEntries of them.
// setup_fixed_base_g2    point_count    [] or [threads]                 [table, scalars]       [points]
//   the same over G2: 192-byte table entries and points. No scratch.
//
// cuda/kernels/launch/ documents each launcher's convention in full.

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

namespace stagehand::kernel {

inline constexpr const char* busy_wait = "busy_wait";
inline constexpr const char* ntt_domain_init = "ntt_domain_init";
inline constexpr const char* ntt_forward = "ntt_forward";
inline constexpr const char* ntt_inverse = "ntt_inverse";
inline constexpr const char* coset_ntt = "coset_ntt";
inline constexpr const char* coset_intt = "coset_intt";
inline constexpr const char* h_pointwise = "h_pointwise";
inline constexpr const char* h_polynomial_snarkjs = "h_polynomial_snarkjs";
inline constexpr const char* h_polynomial_classic = "h_polynomial_classic";
inline constexpr const char* h_classic_product = "h_classic_product";
inline constexpr const char* h_classic_finish = "h_classic_finish";
inline constexpr const char* msm_g1 = "msm_g1";
inline constexpr const char* batch_addition_g1 = "batch_addition_g1";
inline constexpr const char* batch_addition_g2 = "batch_addition_g2";
inline constexpr const char* ntt_twiddles = "ntt_twiddles";
inline constexpr const char* ntt = "ntt";
inline constexpr const char* msm_batch = "msm_batch";
inline constexpr const char* msm_reduce = "msm_reduce";
inline constexpr const char* tail_msm = "tail_msm";
inline constexpr const char* tail_reduce = "tail_reduce";
inline constexpr const char* groth16_h_evaluate = "groth16_h_evaluate";
inline constexpr const char* groth16_h_combine = "groth16_h_combine";
inline constexpr const char* groth16_msm_g1 = "groth16_msm_g1";
inline constexpr const char* groth16_msm_g2 = "groth16_msm_g2";
inline constexpr const char* groth16_msm_g1_batch = "groth16_msm_g1_batch";
inline constexpr const char* groth16_msm_g2_batch = "groth16_msm_g2_batch";
inline constexpr const char* groth16_msm_g1_reduce = "groth16_msm_g1_reduce";
inline constexpr const char* groth16_msm_g2_reduce = "groth16_msm_g2_reduce";
inline constexpr const char* groth16_precompute_g1 = "groth16_precompute_g1";
inline constexpr const char* groth16_precompute_g2 = "groth16_precompute_g2";
inline constexpr const char* groth16_msm_g1_precomputed = "groth16_msm_g1_precomputed";
inline constexpr const char* groth16_msm_g2_precomputed = "groth16_msm_g2_precomputed";
inline constexpr const char* groth16_abc = "groth16_abc";
inline constexpr const char* setup_fixed_base_g1 = "setup_fixed_base_g1";
inline constexpr const char* setup_fixed_base_g2 = "setup_fixed_base_g2";

// Every kernel a device model may time. (The names are C strings so that a KernelLaunch, whose name
// is a std::string, takes them as they are.)
inline constexpr std::array<std::string_view, 35> kAll{busy_wait,
                                                       ntt_domain_init,
                                                       ntt_forward,
                                                       ntt_inverse,
                                                       coset_ntt,
                                                       coset_intt,
                                                       h_pointwise,
                                                       h_polynomial_snarkjs,
                                                       h_polynomial_classic,
                                                       h_classic_product,
                                                       h_classic_finish,
                                                       msm_g1,
                                                       batch_addition_g1,
                                                       batch_addition_g2,
                                                       ntt_twiddles,
                                                       ntt,
                                                       msm_batch,
                                                       msm_reduce,
                                                       tail_msm,
                                                       tail_reduce,
                                                       groth16_h_evaluate,
                                                       groth16_h_combine,
                                                       groth16_msm_g1,
                                                       groth16_msm_g2,
                                                       groth16_msm_g1_batch,
                                                       groth16_msm_g2_batch,
                                                       groth16_msm_g1_reduce,
                                                       groth16_msm_g2_reduce,
                                                       groth16_precompute_g1,
                                                       groth16_precompute_g2,
                                                       groth16_msm_g1_precomputed,
                                                       groth16_msm_g2_precomputed,
                                                       groth16_abc,
                                                       setup_fixed_base_g1,
                                                       setup_fixed_base_g2};

constexpr bool is_known(std::string_view name) { return std::find(kAll.begin(), kAll.end(), name) != kAll.end(); }

// The `ntt` kernel's kind argument; cuda/kernels/ntt/ntt.hpp's NttKind has the same order.
enum class NttKind : std::uint64_t { forward = 0, inverse = 1, coset_forward = 2, coset_inverse = 3 };
constexpr std::uint64_t argument(NttKind kind) { return static_cast<std::uint64_t>(kind); }

// Precomputed bases: a c-bit window width needs ceil(256/c) copies of a set (signed digits never
// carry out of the top window). The width for a set of `points` points and the smallest set it was
// measured to pay for are the H200's (bench/RESULTS.md, "MSMs over precomputed bases", has the
// figures): the G1 MSM over copies was fastest at c = 16 at 2^20 and 2^21 points, 20 at 2^22, 22 at
// 2^24 and 2^26 (24 lost to its 2^23 buckets' reduction); over copies both MSMs were already faster
// than without at 2^20, G2 by much more than G1 (its reductions weigh more, so G2 takes 20 from
// 2^20, where it beat 16: 13 copies instead of 16 as well). Below 2^20 it was not measured.
enum class CurveGroup { g1, g2 };
constexpr unsigned precomputed_copies(unsigned window_bits) { return (256 + window_bits - 1) / window_bits; }
constexpr unsigned precomputed_window_bits(std::uint64_t points, CurveGroup group = CurveGroup::g1) {
  if (points >= (std::uint64_t{1} << 23)) return 22;
  if (points >= (std::uint64_t{1} << 22)) return 20;
  return group == CurveGroup::g2 && points >= (std::uint64_t{1} << 20) ? 20 : 16;
}
constexpr bool precomputation_pays(std::uint64_t points) { return points >= (std::uint64_t{1} << 20); }

// The curve a launch computes over: each kernel is one source instantiated for each curve, and a
// launch names the instantiation it wants (KernelLaunch::curve). A backend with no instantiation
// of a kernel for the launch's curve refuses the launch naming both, never runs another curve's.
// The layouts above are BLS12-381's; BN254's have the same shape over its 32-byte Fq (G1 affine 64
// bytes, G2 128, Jacobian sums 96 and 192), given by curve_sizes.
enum class Curve : std::uint8_t { bls12_381, bn254 };
constexpr std::string_view curve_name(Curve curve) { return curve == Curve::bn254 ? "bn254" : "bls12_381"; }

// The kernels instantiated over BN254 as well: the Groth16 program's and the setup's. Every other
// kernel (the partition program's, the assignment program's, the core NTT/MSM and busy_wait) is
// BLS12-381's alone.
inline constexpr std::array<std::string_view, 15> kBn254Kernels{
    groth16_h_evaluate,    groth16_h_combine,          groth16_msm_g1,
    groth16_msm_g2,        groth16_msm_g1_batch,       groth16_msm_g2_batch,
    groth16_msm_g1_reduce, groth16_msm_g2_reduce,      groth16_precompute_g1,
    groth16_precompute_g2, groth16_msm_g1_precomputed, groth16_msm_g2_precomputed,
    groth16_abc,           setup_fixed_base_g1,        setup_fixed_base_g2};
constexpr bool has_instance(std::string_view name, Curve curve) {
  return curve == Curve::bls12_381 ? is_known(name)
                                   : std::find(kBn254Kernels.begin(), kBn254Kernels.end(), name) != kBn254Kernels.end();
}

struct CurveSizes {
  std::uint64_t fr = 0, fq = 0, g1_affine = 0, g2_affine = 0, g1_jacobian = 0, g2_jacobian = 0;
};
constexpr CurveSizes curve_sizes(Curve curve) {
  const std::uint64_t fq = curve == Curve::bn254 ? 32 : 48;
  return {32, fq, 2 * fq, 4 * fq, 3 * fq, 6 * fq};
}

// The byte sizes of the layouts above (BLS12-381's).
inline constexpr std::uint64_t kFrBytes = 32;
inline constexpr std::uint64_t kG1AffineBytes = 96;
inline constexpr std::uint64_t kG2AffineBytes = 192;
inline constexpr std::uint64_t kG1JacobianBytes = 144;
inline constexpr std::uint64_t kG2JacobianBytes = 288;
static_assert(curve_sizes(Curve::bls12_381).g1_affine == kG1AffineBytes &&
              curve_sizes(Curve::bls12_381).g2_jacobian == kG2JacobianBytes);
// The setup_fixed_base tables: 32 windows of 256 digits.
inline constexpr std::uint64_t kFixedBaseTableEntries = 32 * 256;

// The groth16_abc matrix: the A and B rows of a key's constraints in compressed-row form, one
// device buffer. For M in (A, B): offsets_M, rows + 1 u64 (row i's entries are
// [offsets_M[i], offsets_M[i+1])), then signals_M (u32 witness indices), then values_M
// (32-byte Montgomery Fr), in the order offsets_a, offsets_b, signals_a, signals_b, values_a,
// values_b, the values 32-byte aligned. groth16/constraint_matrix.hpp builds it from a key.
struct ConstraintMatrixLayout {
  std::uint64_t rows = 0, entries_a = 0, entries_b = 0;

  constexpr std::uint64_t offsets_a() const { return 0; }
  constexpr std::uint64_t offsets_b() const { return 8 * (rows + 1); }
  constexpr std::uint64_t signals_a() const { return 16 * (rows + 1); }
  constexpr std::uint64_t signals_b() const { return signals_a() + 4 * entries_a; }
  constexpr std::uint64_t values_a() const { return (signals_b() + 4 * entries_b + 31) / 32 * 32; }
  constexpr std::uint64_t values_b() const { return values_a() + kFrBytes * entries_a; }
  constexpr std::uint64_t total_bytes() const { return values_b() + kFrBytes * entries_b; }
};

}  // namespace stagehand::kernel
