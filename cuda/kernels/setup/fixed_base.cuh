// The arithmetic of the fixed-base multiplications (fixed_base.hpp), written once for the device
// and the host: the kernels in fixed_base.cu run multiply_point per thread, and the host test
// (tests/gpu/fixed_base_host_test.cpp, label unit) runs the very same function through
// field.cuh's carry-flag emulation against src/math, without a GPU.
//
// One point per thread: the scalar out of Montgomery form (one multiplication by 1), its 32
// canonical bytes as window digits, a mixed XYZZ addition (curve.cuh's add_affine, which handles
// every special case) of table entry 256·w + byte_w for each nonzero byte, then affine with one
// Fermat inversion (field.cuh / g2.cuh): x = X/ZZ, y = Y/ZZZ from 1/(ZZ·ZZZ). Per G1 point that is
// about 32·10 Fq multiplications for the sum and 570 for the inversion. A batch inversion over
// several points per thread would save most of the latter; one point per thread keeps the
// kernel without scratch and its cost even across threads, and the GPU check's timing line
// (tests/gpu/setup_checks.cpp) says what the simple form achieves.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ec/curve.cuh"
#include "ec/curves.cuh"
#include "ec/g2.cuh"
#include "ff/field.cuh"
#include "synthetic/synthetic.cuh"  // load_element, store_element: 16-byte accesses on the device

namespace stagehand::cuda::fixed_base {

inline constexpr int kWindows = 32;
inline constexpr int kDigits = 256;

// A group of a curve (a description of ec/curves.cuh) for the kernels: its scalars, its coordinate
// field and its affine encoding's size (x‖y, Montgomery words, zeros for infinity: the table's
// and the output's encoding alike).
template <class Curve, bool IsG2>
struct Group {
  using Scalar = typename Curve::Fr;
  using Field = std::conditional_t<IsG2, typename Curve::Fq2, typename Curve::Fq>;
  static constexpr bool kG2 = IsG2;
  static constexpr std::uint64_t kPointBytes = 2 * sizeof(Field);
};
using G1 = Group<Bls12_381Curve, false>;  // BLS12-381's
using G2 = Group<Bls12_381Curve, true>;
static_assert(G1::kPointBytes == 96 && G2::kPointBytes == 192);

// Byte w of the canonical scalar: window w's digit.
template <class F>
SH_HD unsigned digit(const F& canonical, int w) {
  return (canonical.w[w / 4] >> (8 * (w % 4))) & 0xff;
}

// (X/ZZ, Y/ZZZ) with one inversion: 1/ZZ = ZZZ/(ZZ·ZZZ), 1/ZZZ = ZZ/(ZZ·ZZZ). Infinity: zeros.
template <class F>
SH_HD void to_affine(const XyzzPoint<F>& p, F& x, F& y) {
  if (p.is_infinity()) {
    x = F::zero();
    y = F::zero();
    return;
  }
  const F inverse = (p.zz * p.zzz).inverse();
  x = p.x * (inverse * p.zzz);
  y = p.y * (inverse * p.zz);
}

// scalar·G into `out` (C::kPointBytes) from the Montgomery scalar at `scalar` and the table at
// `table`; every address 16-byte aligned. A table entry of zeros counts as infinity, so a table
// whose entries are all valid points or zeros gives the sum of its entries, whatever they are.
template <class C>
SH_HD void multiply_point(const std::uint8_t* table, const std::uint8_t* scalar, std::uint8_t* out) {
  using F = typename C::Field;
  constexpr std::uint64_t kCoordinateBytes = sizeof(F);
  const auto canonical = synthetic::load_element<typename C::Scalar>(scalar).from_montgomery();
  XyzzPoint<F> sum = XyzzPoint<F>::infinity();
#pragma unroll 1
  for (int w = 0; w < kWindows; ++w) {
    const unsigned d = digit(canonical, w);
    if (d == 0) continue;  // entry 0 of every window is infinity: skip the load
    const std::uint8_t* entry = table + (std::uint64_t{kDigits} * w + d) * C::kPointBytes;
    const F x = synthetic::load_element<F>(entry);
    const F y = synthetic::load_element<F>(entry + kCoordinateBytes);
    if (x.is_zero() && y.is_zero()) continue;
    sum.add_affine(x, y);
  }
  F x, y;
  to_affine(sum, x, y);
  synthetic::store_element(out, x);
  synthetic::store_element(out + kCoordinateBytes, y);
}

}  // namespace stagehand::cuda::fixed_base
