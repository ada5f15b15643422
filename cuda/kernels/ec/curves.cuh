// The curves the kernels can be templated over, each described in one form: its fields' parameter
// structs (ff/field.cuh), the field and point types built from them, the 2-adicity of r - 1 (the
// NTT's largest domain), and the constants its G1 and G2 code needs, in Montgomery words: b of y^2 = x^3 + b for both groups, and both generators.
// src/math holds the same curves (math/curve_description.hpp, math/bn254.hpp);
// tests/kernels/curves_host_test.cpp checks every constant and the arithmetic of both curves
// against it without a GPU.
//
// A kernel written once takes a description as its template parameter (template <class Curve>
// ... typename Curve::Fq ...); the forms of a field a kernel picks for speed (BLS12-381's FqF64,
// FqCalled, ...) share the base form's words, so a description names the base forms only.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ec/curve.cuh"
#include "ec/g2.cuh"
#include "ff/field.cuh"

namespace stagehand::cuda {

// A field element from a table of its Montgomery words.
template <class F>
SH_HD F field_from_words(const std::uint32_t (&words)[F::N]) {
  F value;
#pragma unroll
  for (int i = 0; i < F::N; ++i) value.w[i] = words[i];
  return value;
}

// What every description provides (the curves below): CurveForms' types, Fr, Fq, Fq2 = Fq[u]/(u^2 + 1) (u^2 = -1
// on both curves, so one Fq2Over serves them), the points G1Affine, G2Affine, G1Xyzz, G2Xyzz,
// and the constants g1_b(), g2_b(), generator_word(coordinate, i), g1_generator(), g2_generator().
template <class FrP, class FqP>
struct CurveFields {
  using FrParams = FrP;
  using FqParams = FqP;
  using Fr = Field<FrP>;
  using Fq = Field<FqP>;
  using Fq2 = Fq2Over<Fq>;
  using G1Affine = AffinePoint<Fq>;
  using G2Affine = AffinePoint<Fq2>;
  using G1Xyzz = XyzzPoint<Fq>;
  using G2Xyzz = XyzzPoint<Fq2>;
};

// The faster forms of a description's fields that the kernels pick (the same words, other
// products; ff/field.cuh): FrF64 (the NTT's twiddles), FqF64, FqCalled and FqF64Called (the MSM's
// item sums) and the Fq2 over each.
template <class FrF64P, class FqF64P, class FqCalledP, class FqF64CalledP>
struct CurveForms {
  using FrF64 = Field<FrF64P>;
  using FqF64 = Field<FqF64P>;
  using FqCalled = Field<FqCalledP>;
  using FqF64Called = Field<FqF64CalledP>;
  using Fq2F64 = Fq2Over<FqF64>;
  using Fq2Called = Fq2Over<FqCalled>;
  using Fq2F64Called = Fq2Over<FqF64Called>;
};

// A description's generators from its generator_word table (G1 x, G1 y, G2 x.c0, x.c1, y.c0, y.c1).
template <class Curve>
struct CurveGenerators {
  using Fq = typename Curve::Fq;
  SH_HD static Fq coordinate(int c) {
    Fq value;
#pragma unroll
    for (int i = 0; i < Fq::N; ++i) value.w[i] = Curve::generator_word(c, i);
    return value;
  }
  SH_HD static typename Curve::G1Affine g1() { return {coordinate(0), coordinate(1)}; }
  SH_HD static typename Curve::G2Affine g2() {
    return {typename Curve::Fq2{coordinate(2), coordinate(3)}, typename Curve::Fq2{coordinate(4), coordinate(5)}};
  }
};

// BLS12-381: G1 y^2 = x^3 + 4 over Fq, G2 y^2 = x^3 + 4(1 + u) over Fq2 (the M-type twist).
struct Bls12_381Curve : CurveFields<FrParams, FqParams>,
                        CurveForms<FrF64Params, FqF64Params, FqCalledParams, FqF64CalledParams> {
  static constexpr const char* name = "BLS12-381";
  static constexpr unsigned two_adicity = 32;  // of r - 1: the largest NTT domain is 2^32
  // 4 in Montgomery form, both b's words (G2's b is 4 + 4u).
  SH_HD static Fq four() {
    constexpr std::uint32_t v[12] = {0x000cfff3, 0xaa270000, 0xfc34000a, 0x53cc0032, 0x6b0a807f, 0x478fe97a,
                                     0xe6ba24d7, 0xb1d37ebe, 0xbf78ab2f, 0x8ec9733b, 0x3d83de7e, 0x09d64551};
    return field_from_words<Fq>(v);
  }
  SH_HD static Fq g1_b() { return four(); }
  SH_HD static Fq2 g2_b() { return Fq2{four(), four()}; }
  // The generators' coordinates: G1 x, G1 y, G2 x.c0, x.c1, y.c0, y.c1.
  SH_HD static constexpr std::uint32_t generator_word(int coordinate, int i) {
    constexpr std::uint32_t v[6][12] = {{0xfd530c16, 0x5cb38790, 0x9976fff5, 0x7817fc67, 0x143ba1c1, 0x154f95c7,
                                         0xf3d0e747, 0xf0ae6acd, 0x21dbf440, 0xedce6ecc, 0x9e0bfb75, 0x12017741},
                                        {0x0ce72271, 0xbaac93d5, 0x7918fd8e, 0x8c22631a, 0x570725ce, 0xdd595f13,
                                         0x50405194, 0x51ac5829, 0xad0059c0, 0x0e1c8c3f, 0x5008a26a, 0x0bbc3efc},
                                        {0x02940a10, 0xf5f28fa2, 0x87b4961a, 0xb3f5fb26, 0x3e2ae580, 0xa1a893b5,
                                         0x1a3caee9, 0x9894999d, 0x1863366b, 0x6f67b763, 0x4350bcd7, 0x05819192},
                                        {0x9e23f606, 0xa5a9c075, 0xbccd60c3, 0xaaa0c59d, 0xe2867806, 0x3bb17e18,
                                         0x8541b367, 0x1b1ab6cc, 0xf2158547, 0xc2b6ed0e, 0x7360edf3, 0x11922a09},
                                        {0x60494c4a, 0x4c730af8, 0x5e369c5a, 0x597cfa1f, 0xaa0a635a, 0xe7e6856c,
                                         0x6e0d495f, 0xbbefb5e9, 0xf0ef25a2, 0x07d3a975, 0x7e80dae5, 0x0083fd8e},
                                        {0xdf64b05d, 0xadc0fc92, 0x2b1461dc, 0x18aa270a, 0x3be4eba0, 0x86adac6a,
                                         0xc93da33a, 0x79495c4e, 0xa43ccaed, 0xe7175850, 0x63de1bf2, 0x0b2bc2a1}};
    return v[coordinate][i];
  }
  SH_HD static G1Affine g1_generator() { return CurveGenerators<Bls12_381Curve>::g1(); }
  SH_HD static G2Affine g2_generator() { return CurveGenerators<Bls12_381Curve>::g2(); }
};
static_assert(sizeof(Bls12_381Curve::G1Affine) == 96 && sizeof(Bls12_381Curve::G2Affine) == 192);
static_assert(std::is_same_v<Bls12_381Curve::FrF64, FrF64> &&
                  std::is_same_v<Bls12_381Curve::Fq2F64Called, Fq2F64Called>,
              "BLS12-381's forms are the kernels' existing types");

// BN254: G1 y^2 = x^3 + 3 over Fq, G2 y^2 = x^3 + 3/(9 + u) over Fq2 (the D-type twist); the
// generators are EIP-196's and EIP-197's, snarkjs's.
struct Bn254Curve
    : CurveFields<bn254::FrParams, bn254::FqParams>,
      CurveForms<bn254::FrF64Params, bn254::FqF64Params, bn254::FqCalledParams, bn254::FqF64CalledParams> {
  static constexpr const char* name = "BN254";
  static constexpr unsigned two_adicity = 28;
  SH_HD static Fq g1_b() {
    constexpr std::uint32_t v[8] = {0x50ad28d7, 0x7a17caa9, 0xe15521b9, 0x1f6ac17a,
                                    0x696bd284, 0x334bea4e, 0xce179d8e, 0x2a1f6744};
    return field_from_words<Fq>(v);
  }
  SH_HD static Fq2 g2_b() {
    constexpr std::uint32_t c0[8] = {0x77b802a8, 0x3bf938e3, 0x3633535d, 0x020b1b27,
                                     0x49755260, 0x26b7edf0, 0x4384a86d, 0x2514c632};
    constexpr std::uint32_t c1[8] = {0xd1dcff67, 0x38e7eccc, 0x93ce0d3e, 0x65f0b37d,
                                     0x22ac00aa, 0xd749d0dd, 0x4a688d4d, 0x0141b9ce};
    return Fq2{field_from_words<Fq>(c0), field_from_words<Fq>(c1)};
  }
  // The generators' coordinates: G1 x, G1 y (1, 2), G2 x.c0, x.c1, y.c0, y.c1.
  SH_HD static constexpr std::uint32_t generator_word(int coordinate, int i) {
    constexpr std::uint32_t v[6][8] = {
        {0xc58f0d9d, 0xd35d438d, 0xf5c70b3d, 0x0a78eb28, 0x7879462c, 0x666ea36f, 0x9a07df2f, 0x0e0a77c1},
        {0x8b1e1b3a, 0xa6ba871b, 0xeb8e167b, 0x14f1d651, 0xf0f28c58, 0xccdd46de, 0x340fbe5e, 0x1c14ef83},
        {0x02bc2026, 0x8e83b5d1, 0x497b0172, 0xdceb1935, 0x97811adf, 0xfbb82647, 0xaf96503b, 0x19573841},
        {0xa84c6140, 0xafb4737d, 0x5802d8c4, 0x6043dd5a, 0x52a02f86, 0x09e950fc, 0x3aea7b6b, 0x14fef083},
        {0x886be9f6, 0x619dfa9d, 0xf59e9b78, 0xfe7fd297, 0x231b7dfe, 0xff9e1a62, 0xae9e4206, 0x28fd7eeb},
        {0xc71856ee, 0x64095b56, 0x327d3cbb, 0xdc57f922, 0x33351076, 0x55f935be, 0x93fd6482, 0x0da4a0e6}};
    return v[coordinate][i];
  }
  SH_HD static G1Affine g1_generator() { return CurveGenerators<Bn254Curve>::g1(); }
  SH_HD static G2Affine g2_generator() { return CurveGenerators<Bn254Curve>::g2(); }
};
static_assert(sizeof(Bn254Curve::G1Affine) == 64 && sizeof(Bn254Curve::G2Affine) == 128 &&
              sizeof(Bn254Curve::G1Xyzz) == 128);

}  // namespace stagehand::cuda
