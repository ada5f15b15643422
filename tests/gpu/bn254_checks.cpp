#include "bn254_checks.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "constraints/abc.hpp"
#include "cuda_device.hpp"
#include "device/groth16_launches.hpp"
#include "device/setup_launches.hpp"
#include "groth16/fixed_base.hpp"
#include "device/kernel_abi.hpp"
#include "launch/core_launches.hpp"
#include "launch/groth16_launchers.hpp"
#include "launch/launchers.hpp"
#include "math/bn254.hpp"
#include "math/h_polynomial.hpp"
#include "math/msm.hpp"
#include "math/ntt.hpp"
#include "msm/msm.hpp"
#include "msm/msm_results_host.hpp"
#include "ntt/ntt.hpp"
#include "point_encoding.hpp"
#include "util/device_buffer.hpp"

namespace stagehand::cuda::bn254_checks {
namespace {

namespace bn = math::bn254;
using check_support::report;
constexpr kernel::Curve kBn254 = kernel::Curve::bn254;
constexpr kernel::CurveSizes kSizes = kernel::curve_sizes(kBn254);
constexpr std::uint64_t kGuard = 64;  // poisoned Fr behind every output, which must stay poisoned

std::string size_name(unsigned log_size) { return " 2^" + std::to_string(log_size); }

// ---- values and their bytes --------------------------------------------------------------------

bn::Fr random_fr(std::mt19937_64& engine) {
  for (;;) {
    bn::Fr::LimbArray limbs;
    for (auto& limb : limbs) limb = engine();
    limbs[3] >>= 2;
    if (const auto value = bn::Fr::from_montgomery_limbs(limbs)) return *value;
  }
}

std::vector<bn::Fr> random_frs(std::uint64_t n, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<bn::Fr> values(n);
  for (auto& value : values) value = random_fr(engine);
  return values;
}

template <class Limbs>
void put(std::vector<std::uint8_t>& bytes, std::uint64_t offset, const Limbs& limbs) {
  std::memcpy(bytes.data() + offset, limbs.data(), sizeof(limbs));
}

std::vector<std::uint8_t> fr_bytes(const std::vector<bn::Fr>& values, bool montgomery = true) {
  std::vector<std::uint8_t> bytes(values.size() * kSizes.fr);
  for (std::size_t i = 0; i < values.size(); ++i) {
    put(bytes, i * kSizes.fr, montgomery ? values[i].montgomery_limbs() : values[i].to_canonical_limbs());
  }
  return bytes;
}

// A buffer of `count` Fr and the poisoned guard behind them, holding `values`.
struct FrBuffer {
  DeviceBuffer buffer;
  std::uint64_t count;
  explicit FrBuffer(const std::vector<bn::Fr>& values)
      : buffer((values.size() + kGuard) * kSizes.fr), count(values.size()) {
    load(values);
  }
  void load(const std::vector<bn::Fr>& values) {
    buffer.fill(0xff);
    buffer.upload(fr_bytes(values));
  }
  BufferUse use() const { return buffer.use(0, count * kSizes.fr); }
  // Every element equals `expected` and the guard is intact; else where it first differs.
  std::string mismatch(const std::vector<bn::Fr>& expected) const {
    const auto bytes = buffer.download();
    for (std::uint64_t i = 0; i < count; ++i) {
      bn::Fr::LimbArray limbs;
      std::memcpy(limbs.data(), bytes.data() + i * kSizes.fr, kSizes.fr);
      if (limbs != expected[i].montgomery_limbs()) return "first mismatch at " + std::to_string(i);
    }
    for (std::uint64_t i = count * kSizes.fr; i < bytes.size(); ++i) {
      if (bytes[i] != 0xff) return "wrote past the end";
    }
    return "";
  }
};

FrArgument argument_of(const bn::Fr& value) {
  const auto& limbs = value.montgomery_limbs();
  return {limbs[0], limbs[1], limbs[2], limbs[3]};
}

// Runs `launch` through the launcher table's entry for its curve and waits for it.
void run(const KernelLaunch& launch) {
  const KernelLauncher* launcher = find_launcher(launch.name, launch.curve);
  if (launcher == nullptr) throw std::runtime_error("no launcher for " + launch.name + " over BN254");
  (*launcher)(launch, nullptr);
  STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
}

template <class Typed>
KernelLaunch bn254_launch(const Typed& typed) {
  KernelLaunch launch = typed.to_launch();
  launch.curve = kBn254;
  return launch;
}

}  // namespace

// ---- NTT and H ---------------------------------------------------------------------------------

namespace {

const std::pair<NttKind, const char*> kKinds[4] = {{NttKind::forward, kernel::ntt_forward},
                                                   {NttKind::inverse, kernel::ntt_inverse},
                                                   {NttKind::coset_forward, kernel::coset_ntt},
                                                   {NttKind::coset_inverse, kernel::coset_intt}};

void reference_transform(NttKind kind, std::vector<bn::Fr>& values, const bn::Domain& domain) {
  switch (kind) {
    case NttKind::forward: bn::ntt(values, domain); break;
    case NttKind::inverse: bn::intt(values, domain); break;
    case NttKind::coset_forward: bn::coset_ntt(values, domain); break;
    case NttKind::coset_inverse: bn::coset_intt(values, domain); break;
  }
}

// The domain's tables through ntt_domain_init's BN254 launcher.
void init_domain(const DeviceBuffer& table, const bn::Domain& domain) {
  run(DomainInitLaunch{domain.log_size(), argument_of(domain.root()), argument_of(domain.coset_generator()),
                       table.use(0, table.bytes)}
          .to_launch(kBn254));
}

}  // namespace

Result check_ntt(std::ostream& out, unsigned log_size, std::uint64_t seed) {
  Result result;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  const bn::Domain domains[2] = {bn::Domain::snarkjs(log_size), bn::Domain::classic(log_size)};
  const char* names[2] = {"snarkjs", "classic"};
  FrWords root, coset;
  snarkjs_domain_roots<Bn254Curve>(log_size, root, coset);
  const auto expected_root = argument_of(domains[0].root()), expected_coset = argument_of(domains[0].coset_generator());
  result.add(report(
      out, std::equal(root, root + 4, expected_root.begin()) && std::equal(coset, coset + 4, expected_coset.begin()),
      "bn254 snarkjs_domain_roots" + size_name(log_size)));
  for (int d = 0; d < 2; ++d) {
    DeviceBuffer table(ntt_domain_bytes(log_size));
    init_domain(table, domains[d]);
    for (const auto& [kind, name] : kKinds) {
      const auto input = random_frs(n, seed * 131 + d * 7 + static_cast<unsigned>(kind));
      std::vector<bn::Fr> expected = input;
      reference_transform(kind, expected, domains[d]);
      FrBuffer values(input);
      const std::string what = std::string("bn254 ") + name + " " + names[d] + size_name(log_size);
      for (const NttVariant variant : kNttVariants) {
        values.load(input);
        ntt<Bn254Curve>(values.buffer.pointer, table.pointer, log_size, kind, nullptr, variant);
        STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
        const std::string bad = values.mismatch(expected);
        result.add(report(out, bad.empty(), what + " (" + ntt_variant_name(variant) + ")", bad));
      }
      values.load(input);
      run(NttLaunch{name, log_size, table.use(0, table.bytes), values.use()}.to_launch(kBn254));
      const std::string bad = values.mismatch(expected);
      result.add(report(out, bad.empty(), what + " (launcher)", bad));
    }
  }
  return result;
}

namespace {

// The classic form's halves through their launchers on h_polynomial_classic's input (`inputs`: a,
// b, c on the domain): the product over a and b, then the finish over a and c, each half holding two
// buffers as the assignment program does. a must come out byte for byte as the whole form's.
bool check_h_classic_halves(std::ostream& out, unsigned log_size, const DeviceBuffer& table,
                            const std::vector<bn::Fr> (&inputs)[3], const std::vector<bn::Fr>& expected) {
  FrBuffer a(inputs[0]), b(inputs[1]), c(inputs[2]);
  const BufferUse domain = table.use(0, table.bytes);
  run(HClassicHalfLaunch{kernel::h_classic_product, log_size, domain, a.use(), b.use()}.to_launch(kBn254));
  run(HClassicHalfLaunch{kernel::h_classic_finish, log_size, domain, a.use(), c.use()}.to_launch(kBn254));
  const std::string bad = a.mismatch(expected);
  return report(out, bad.empty(), "bn254 h_classic_product + h_classic_finish" + size_name(log_size), bad);
}

Result check_h_forms(std::ostream& out, unsigned log_size, std::uint64_t seed) {
  Result result;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  for (int form = 0; form < 2; ++form) {
    const bn::Domain domain = form == 0 ? bn::Domain::snarkjs(log_size) : bn::Domain::classic(log_size);
    DeviceBuffer table(ntt_domain_bytes(log_size));
    init_domain(table, domain);
    auto av = random_frs(n, seed + 10 + form), bv = random_frs(n, seed + 20 + form),
         cv = random_frs(n, seed + 30 + form);
    const std::vector<bn::Fr> inputs[3] = {av, bv, cv};
    FrBuffer a(av), b(bv), c(cv);
    if (form == 0) {
      bn::h_evaluations_snarkjs(av, bv, cv, domain);
    } else {
      bn::h_coefficients_classic(av, bv, cv, domain);
    }
    const char* name = form == 0 ? kernel::h_polynomial_snarkjs : kernel::h_polynomial_classic;
    run(HPolynomialLaunch{name, log_size, table.use(0, table.bytes), a.use(), b.use(), c.use()}.to_launch(kBn254));
    const std::string bad = a.mismatch(av);
    result.add(report(out, bad.empty(), std::string("bn254 ") + name + size_name(log_size), bad));
    if (form == 1) result.add(check_h_classic_halves(out, log_size, table, inputs, av));
  }
  return result;
}

// The Groth16 program's H step: groth16_h_evaluate on each of a, b, c (one scratch), then
// groth16_h_combine.
bool check_groth16_h(std::ostream& out, unsigned log_size, std::uint64_t seed) {
  const std::uint64_t n = std::uint64_t{1} << log_size;
  auto av = random_frs(n, seed + 40), bv = random_frs(n, seed + 41), cv = random_frs(n, seed + 42);
  FrBuffer a(av), b(bv), c(cv);
  DeviceBuffer scratch(groth16_kernel_scratch_bytes(kernel::groth16_h_evaluate, n));
  for (const FrBuffer* values : {&a, &b, &c}) {
    run(bn254_launch(kernel::HEvaluateLaunch{log_size, 0, values->use(), scratch.use(0, scratch.bytes)}));
  }
  run(bn254_launch(kernel::HCombineLaunch{log_size, 0, a.use(), b.use(), c.use()}));
  bn::h_evaluations_snarkjs(av, bv, cv, bn::Domain::snarkjs(log_size));
  const std::string bad = a.mismatch(av);
  return report(out, bad.empty(), "bn254 groth16_h_evaluate + groth16_h_combine" + size_name(log_size), bad);
}

}  // namespace

Result check_h(std::ostream& out, unsigned log_size, std::uint64_t seed) {
  Result result;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  {  // h_pointwise with a factor
    const auto av = random_frs(n, seed + 1), bv = random_frs(n, seed + 2), cv = random_frs(n, seed + 3);
    const bn::Fr factor = random_frs(1, seed + 4)[0];
    std::vector<bn::Fr> expected(n);
    for (std::uint64_t i = 0; i < n; ++i) expected[i] = (av[i] * bv[i] - cv[i]) * factor;
    FrBuffer a(av), b(bv), c(cv);
    run(HPointwiseLaunch{n, argument_of(factor), a.use(), b.use(), c.use()}.to_launch(kBn254));
    const std::string bad = a.mismatch(expected);
    result.add(report(out, bad.empty(), "bn254 h_pointwise" + size_name(log_size), bad));
  }
  result.add(check_h_forms(out, log_size, seed));
  result.add(check_groth16_h(out, log_size, seed));
  return result;
}

// ---- MSM ---------------------------------------------------------------------------------------

namespace {

// The group's types, its kernels' names and its byte layouts (kernel::curve_sizes(bn254)).
struct G1 {
  using Curve = bn::G1Curve;
  using Field = bn::Fq;
  static constexpr MsmGroup group = MsmGroup::g1;
  static constexpr std::uint64_t affine_bytes = kSizes.g1_affine, jacobian_bytes = kSizes.g1_jacobian;
  static constexpr const char *name = "G1", *msm = kernel::groth16_msm_g1, *batch = kernel::groth16_msm_g1_batch,
                              *reduce = kernel::groth16_msm_g1_reduce, *precompute = kernel::groth16_precompute_g1,
                              *precomputed = kernel::groth16_msm_g1_precomputed;
  static std::optional<bn::G1Projective> point_at(const std::uint8_t* bytes) {
    return bn254_g1_from_jacobian_bytes(bytes);
  }
};
struct G2 {
  using Curve = bn::G2Curve;
  using Field = bn::Fq2;
  static constexpr MsmGroup group = MsmGroup::g2;
  static constexpr std::uint64_t affine_bytes = kSizes.g2_affine, jacobian_bytes = kSizes.g2_jacobian;
  static constexpr const char *name = "G2", *msm = kernel::groth16_msm_g2, *batch = kernel::groth16_msm_g2_batch,
                              *reduce = kernel::groth16_msm_g2_reduce, *precompute = kernel::groth16_precompute_g2,
                              *precomputed = kernel::groth16_msm_g2_precomputed;
  static std::optional<bn::G2Projective> point_at(const std::uint8_t* bytes) {
    return bn254_g2_from_jacobian_bytes(bytes);
  }
};

template <class G>
using AffineOf = math::AffinePoint<typename G::Curve>;
template <class G>
using ProjectiveOf = math::ProjectivePoint<typename G::Curve>;

template <class G>
std::vector<std::uint8_t> point_bytes(const std::vector<AffineOf<G>>& points) {
  std::vector<std::uint8_t> bytes(points.size() * G::affine_bytes);
  for (std::size_t i = 0; i < points.size(); ++i) check_encoding::put(points[i], bytes.data() + i * G::affine_bytes);
  return bytes;
}

// The Jacobian sum X‖Y‖Z in `result`; an unreduced (poisoned) coordinate gives (0, 0, 1), on
// neither curve.
template <class G>
ProjectiveOf<G> downloaded_point(const DeviceBuffer& result) {
  STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
  return G::point_at(result.download().data())
      .value_or(ProjectiveOf<G>{G::Field::zero(), G::Field::zero(), G::Field::one()});
}

// Points a + i·d for random a, d (shared by every size; a larger size extends them).
template <class G>
const std::vector<AffineOf<G>>& walk(std::uint64_t n) {
  static std::vector<AffineOf<G>> points;
  if (points.size() >= n) return points;
  std::mt19937_64 engine(977);
  const auto generator = ProjectiveOf<G>::from_affine(G::Curve::generator());
  const auto step = generator.multiply(random_fr(engine));
  std::vector<ProjectiveOf<G>> projective(n);
  ProjectiveOf<G> current = generator.multiply(random_fr(engine));
  for (auto& point : projective) {
    point = current;
    current += step;
  }
  points.resize(n);
  math::batch_to_affine<typename G::Curve>(projective, points);
  return points;
}

// n points and scalars with the edge cases among them: zero scalars, points at infinity, repeated
// points, opposite points (with their partner's scalar), r - 1, one, and from 2^6 a heavy bucket.
template <class G>
void make_inputs(std::uint64_t n, std::uint64_t seed, std::vector<AffineOf<G>>& points, std::vector<bn::Fr>& scalars) {
  const auto& shared = walk<G>(n);
  points.assign(shared.begin(), shared.begin() + static_cast<std::ptrdiff_t>(n));
  scalars = random_frs(n, seed);
  for (std::uint64_t i = 0; i < n; ++i) {
    switch (i % 8) {
      case 0: scalars[i] = bn::Fr::zero(); break;
      case 1: points[i] = AffineOf<G>::identity(); break;
      case 2: points[i] = points[i - 2]; break;
      case 3:
        points[i] = -points[i - 1];
        scalars[i] = scalars[i - 1];
        break;
      case 4: scalars[i] = -bn::Fr::one(); break;
      case 5: scalars[i] = bn::Fr::one(); break;
      default: break;
    }
  }
  if (n >= 64) {
    for (std::uint64_t i = n / 2; i < n / 2 + n / 8; ++i) scalars[i] = scalars[n / 2];
  }
}

// The MSM's inputs on the device.
template <class G>
struct MsmInputs {
  std::uint64_t n;
  DeviceBuffer points, scalars, canonical_scalars;
  MsmInputs(const std::vector<AffineOf<G>>& p, const std::vector<bn::Fr>& s)
      : n(p.size()), points(n * G::affine_bytes), scalars(n * kSizes.fr), canonical_scalars(n * kSizes.fr) {
    points.upload(point_bytes<G>(p));
    scalars.upload(fr_bytes(s, true));
    canonical_scalars.upload(fr_bytes(s, false));
  }
};

}  // namespace

namespace {

// groth16_msm_g1/_g2: the sum on the device.
template <class G>
ProjectiveOf<G> groth16_msm(const MsmInputs<G>& in) {
  DeviceBuffer result(G::jacobian_bytes), scratch(groth16_kernel_scratch_bytes(G::msm, in.n));
  run(bn254_launch(kernel::MsmLaunch{G::msm, in.n, 0, std::nullopt, in.points.use(0, in.points.bytes),
                                     in.scalars.use(0, in.scalars.bytes), result.use(0, result.bytes),
                                     scratch.use(0, scratch.bytes)}));
  return downloaded_point<G>(result);
}

// msm_g1's window sums (window_bits 0: the planner's), combined on the device.
ProjectiveOf<G1> msm_g1_launched(const MsmInputs<G1>& in, bool montgomery, unsigned window_bits) {
  const MsmPlan plan = msm_plan(in.n, window_bits, MsmGroup::g1, kBn254);
  DeviceBuffer sums(msm_result_bytes(plan)), scratch(msm_scratch_bytes(plan)), result(G1::jacobian_bytes);
  const DeviceBuffer& scalars = montgomery ? in.scalars : in.canonical_scalars;
  run(MsmG1Launch{in.n, montgomery, window_bits, in.points.use(0, in.points.bytes), scalars.use(0, scalars.bytes),
                  sums.use(0, sums.bytes), scratch.use(0, scratch.bytes)}
          .to_launch(kBn254));
  msm_combine_windows_on_device(sums.pointer, msm_sum_count(plan), plan.window_bits, result.pointer, nullptr, kBn254);
  return downloaded_point<G1>(result);
}

// The streamed form: batches of at most a third of the points (the last one short) into one
// scratch, then the reduction.
template <class G>
ProjectiveOf<G> streamed_msm(const MsmInputs<G>& in) {
  const std::uint64_t capacity = (in.n + 2) / 3;
  DeviceBuffer result(G::jacobian_bytes), scratch(groth16_kernel_scratch_bytes(G::batch, capacity));
  for (std::uint64_t first = 0; first < in.n; first += capacity) {
    const std::uint64_t count = std::min(capacity, in.n - first);
    run(bn254_launch(kernel::MsmBatchLaunch{
        G::batch, count, 0, capacity, first > 0, in.points.use(first * G::affine_bytes, count * G::affine_bytes),
        in.scalars.use(first * kSizes.fr, count * kSizes.fr), scratch.use(0, scratch.bytes)}));
  }
  run(bn254_launch(
      kernel::MsmReduceLaunch{G::reduce, capacity, result.use(0, result.bytes), scratch.use(0, scratch.bytes)}));
  return downloaded_point<G>(result);
}

// The precomputed form at the program's width: the copies made in place after the points.
template <class G>
ProjectiveOf<G> precomputed_msm(const MsmInputs<G>& in) {
  const auto bits = kernel::precomputed_window_bits(in.n, G::group);
  const std::uint64_t copies_bytes = std::uint64_t{kernel::precomputed_copies(bits)} * in.n * G::affine_bytes;
  DeviceBuffer copies(copies_bytes), result(G::jacobian_bytes),
      scratch(groth16_kernel_scratch_bytes(G::precomputed, in.n));
  STAGEHAND_CUDA_CHECK(cudaMemcpy(copies.pointer, in.points.pointer, in.n * G::affine_bytes, cudaMemcpyDeviceToDevice));
  run(bn254_launch(kernel::PrecomputeLaunch{G::precompute, in.n, bits, copies.use(0, in.n * G::affine_bytes),
                                            copies.use(0, copies_bytes)}));
  run(bn254_launch(kernel::MsmLaunch{G::precomputed, in.n, 0, bits, copies.use(0, copies_bytes),
                                     in.scalars.use(0, in.scalars.bytes), result.use(0, result.bytes),
                                     scratch.use(0, scratch.bytes)}));
  return downloaded_point<G>(result);
}

// The forms every group has, each against `expected`.
template <class G>
Result check_group_forms(std::ostream& out, const MsmInputs<G>& in, const ProjectiveOf<G>& expected,
                         unsigned log_size) {
  Result result;
  const std::string size = size_name(log_size);
  result.add(report(out, groth16_msm<G>(in) == expected, std::string("bn254 ") + G::msm + size));
  if (log_size >= 8) {
    result.add(report(out, streamed_msm<G>(in) == expected, std::string("bn254 ") + G::batch + " + reduce" + size));
    result.add(report(out, precomputed_msm<G>(in) == expected,
                      std::string("bn254 ") + G::precompute + " + " + G::precomputed + size));
  }
  return result;
}

}  // namespace

Result check_msm_g1(std::ostream& out, unsigned log_size, std::uint64_t seed) {
  Result result;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  std::vector<AffineOf<G1>> points;
  std::vector<bn::Fr> scalars;
  make_inputs<G1>(n, seed, points, scalars);
  const auto expected = bn::msm(points, scalars);
  const MsmInputs<G1> in(points, scalars);
  const std::string size = size_name(log_size);
  result.add(report(out, msm_g1_launched(in, false, 0) == expected, "bn254 msm_g1" + size + " (canonical scalars)"));
  result.add(report(out, msm_g1_launched(in, true, 0) == expected, "bn254 msm_g1" + size + " (Montgomery scalars)"));
  if (log_size == 12) {
    for (unsigned bits : {2u, 8u, 13u, 16u, 20u}) {
      result.add(report(out, msm_g1_launched(in, true, bits) == expected,
                        "bn254 msm_g1" + size + " at " + std::to_string(bits) + "-bit windows"));
    }
  }
  result.add(check_group_forms<G1>(out, in, expected, log_size));
  return result;
}

Result check_msm_g2(std::ostream& out, unsigned log_size, std::uint64_t seed) {
  const std::uint64_t n = std::uint64_t{1} << log_size;
  std::vector<AffineOf<G2>> points;
  std::vector<bn::Fr> scalars;
  make_inputs<G2>(n, seed, points, scalars);
  const auto expected = bn::msm(points, scalars);
  return check_group_forms<G2>(out, MsmInputs<G2>(points, scalars), expected, log_size);
}

// ---- a/b/c and the curve refusal ---------------------------------------------------------------

namespace {

// A random matrix of `rows` rows (every fifth empty in A, every seventh in B) over `signals` signals.
struct RandomMatrix {
  kernel::ConstraintMatrixLayout layout;
  std::vector<std::uint8_t> bytes;
  std::vector<bn::Fr> a, b, c;  // the rows summed over `witness` on the CPU

  RandomMatrix(std::uint64_t rows, const std::vector<bn::Fr>& witness, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::vector<std::uint64_t> offsets[2];
    std::vector<std::uint32_t> signals[2];
    std::vector<bn::Fr> values[2], sums[2];
    for (int m = 0; m < 2; ++m) {
      offsets[m].push_back(0);
      for (std::uint64_t row = 0; row < rows; ++row) {
        const std::uint64_t entries = row % (m == 0 ? 5 : 7) == 0 ? 0 : engine() % 4 + 1;
        bn::Fr sum = bn::Fr::zero();
        for (std::uint64_t k = 0; k < entries; ++k) {
          signals[m].push_back(static_cast<std::uint32_t>(engine() % witness.size()));
          values[m].push_back(random_fr(engine));
          sum = sum + values[m].back() * witness[signals[m].back()];
        }
        sums[m].push_back(sum);
        offsets[m].push_back(signals[m].size());
      }
    }
    layout = {rows, signals[0].size(), signals[1].size()};
    bytes.assign(layout.total_bytes(), 0);
    std::memcpy(bytes.data() + layout.offsets_a(), offsets[0].data(), 8 * offsets[0].size());
    std::memcpy(bytes.data() + layout.offsets_b(), offsets[1].data(), 8 * offsets[1].size());
    std::memcpy(bytes.data() + layout.signals_a(), signals[0].data(), 4 * signals[0].size());
    std::memcpy(bytes.data() + layout.signals_b(), signals[1].data(), 4 * signals[1].size());
    const auto values_a = fr_bytes(values[0]), values_b = fr_bytes(values[1]);
    std::copy(values_a.begin(), values_a.end(), bytes.begin() + static_cast<std::ptrdiff_t>(layout.values_a()));
    std::copy(values_b.begin(), values_b.end(), bytes.begin() + static_cast<std::ptrdiff_t>(layout.values_b()));
    a = sums[0];
    b = sums[1];
    for (std::uint64_t row = 0; row < rows; ++row) c.push_back(a[row] * b[row]);
  }
};

}  // namespace

Result check_abc(std::ostream& out, std::uint64_t rows, std::uint64_t seed) {
  Result result;
  const auto witness = random_frs(rows / 2 + 3, seed);
  const RandomMatrix matrix(rows, witness, seed + 1);
  DeviceBuffer device_matrix(matrix.bytes.size()), device_witness(witness.size() * kSizes.fr);
  device_matrix.upload(matrix.bytes);
  device_witness.upload(fr_bytes(witness));
  const std::vector<bn::Fr> poison_shape(rows, bn::Fr::zero());
  FrBuffer a(poison_shape), b(poison_shape), c(poison_shape);
  for (FrBuffer* buffer : {&a, &b, &c}) buffer->buffer.fill(0xff);
  run(bn254_launch(kernel::AbcLaunch{rows, matrix.layout.entries_a, matrix.layout.entries_b, 0, std::nullopt,
                                     device_witness.use(0, device_witness.bytes),
                                     device_matrix.use(0, device_matrix.bytes), a.use(), b.use(), c.use()}));
  const std::string bad_a = a.mismatch(matrix.a), bad_b = b.mismatch(matrix.b), bad_c = c.mismatch(matrix.c);
  result.add(report(out, bad_a.empty() && bad_b.empty() && bad_c.empty(),
                    "bn254 groth16_abc over " + std::to_string(rows) + " rows", bad_a + bad_b + bad_c));
  return result;
}

namespace {

// One group's setup_fixed_base kernel over BN254: the table of the reference's fixed base of the
// generator, the outputs against its own multiplication, byte for byte.
template <class G>
bool check_fixed_base_group(std::ostream& out, const char* name, std::uint64_t n, std::uint64_t seed) {
  const groth16::FixedBase<typename G::Curve> base(G::Curve::generator());
  std::vector<std::uint8_t> table(groth16::kFixedBaseEntries * G::affine_bytes);
  for (std::size_t e = 0; e < groth16::kFixedBaseEntries; ++e) {
    check_encoding::put(base.table()[e], table.data() + e * G::affine_bytes);
  }
  auto scalars = random_frs(n, seed);
  scalars[0] = bn::Fr::zero();
  if (n > 1) scalars[1] = -bn::Fr::one();
  std::vector<ProjectiveOf<G>> projective(n);
  for (std::uint64_t i = 0; i < n; ++i) projective[i] = base.multiply(scalars[i]);
  std::vector<AffineOf<G>> affine(n);
  math::batch_to_affine<typename G::Curve>(projective, affine);
  DeviceBuffer device_table(table.size()), device_scalars(n * kSizes.fr), points(n * G::affine_bytes);
  device_table.upload(table);
  device_scalars.upload(fr_bytes(scalars));
  run(bn254_launch(kernel::FixedBaseLaunch{name, n, 0, device_table.use(0, device_table.bytes),
                                           device_scalars.use(0, device_scalars.bytes), points.use(0, points.bytes)}));
  const auto got = points.download();
  std::uint64_t bad = n;
  std::vector<std::uint8_t> expected(G::affine_bytes);
  for (std::uint64_t i = 0; i < n && bad == n; ++i) {
    check_encoding::put(affine[i], expected.data());
    if (std::memcmp(got.data() + i * G::affine_bytes, expected.data(), G::affine_bytes) != 0) bad = i;
  }
  return report(out, bad == n, std::string("bn254 ") + name + " over " + std::to_string(n) + " scalars",
                bad == n ? "" : "first mismatch at " + std::to_string(bad));
}

}  // namespace

Result check_fixed_base(std::ostream& out, unsigned log_size, std::uint64_t seed) {
  Result result;
  const std::uint64_t n = std::uint64_t{1} << log_size;
  result.add(check_fixed_base_group<G1>(out, kernel::setup_fixed_base_g1, n, seed));
  result.add(check_fixed_base_group<G2>(out, kernel::setup_fixed_base_g2, n, seed + 1));
  return result;
}

}  // namespace stagehand::cuda::bn254_checks
