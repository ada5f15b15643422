// The arithmetic of the synthetic proving-key generator (synthetic.hpp), written once for the
// device and the host: the kernels in synthetic.cu call it per thread, and the host test
// (tests/gpu/synthetic_host_test.cpp, label unit) runs the very same functions through field.cuh's
// carry-flag emulation against src/math, without a GPU.
//
// Points. Point i of a run is (first_index + i + 1)·G, affine, Montgomery form. A thread owns a
// chunk of m consecutive indices with scalars s, s+1, …, s+m-1 and writes them with ONE field
// inversion, in three passes over its own output slots (the slots are the scratch, so nothing is
// allocated):
//   A (forward)  Q_0 = s·G by double-and-add (XYZZ), rescaled to Jacobian (X, Y, Z) and back to
//                XYZZ as (X, Y, Z², Z³); then the walk Q_{j+1} = Q_j + G by mixed XYZZ additions
//                (madd-2008-s). Step j stores p_j = x_G·ZZ_j − X_j and the prefix product
//                Π_j = Z·p_0⋯p_{j-1} in slot j; slot m-1 keeps Q_0's X and Y.
//   one inversion of Π_{m-1}.
//   B (backward) the batch-inversion trick: 1/p_j = Π_j/Π_{j+1}. Since ZZ_j = Z²·(p_0⋯p_{j-1})²
//                = Π_j², the affine walk's denominator is 1/(x_G − x_j) = ZZ_j/p_j = Π_j²/p_j,
//                stored over slot j. The running inverse ends at 1/Π_0 = 1/Z, which makes Q_0
//                affine: x_0 = X·Z^-2, y_0 = Y·Z^-3.
//   C (forward)  the affine walk with those denominators (λ = (y_G − y_j)/(x_G − x_j), 3
//                multiplications a step), writing each point over its slot.
// Why this way: a slot holds two field elements (the affine point), exactly what pass A needs
// per step, so the output buffer is the scratch; per point it costs about 18 multiplications
// (pass A 11, B 4, C 3); per chunk a double-and-add over at most 64 bits and one Fermat inversion
// (~600 multiplications), hence chunks of hundreds of points (plan_chunk).
// Valid and distinct by construction: every scalar lies in [1, 2^64) ⊂ [1, r), so no point is at
// infinity and no two are equal or opposite; the walk never meets x_j = x_G (Q_j = ±G needs
// s + j ≡ ±1 mod r) except at the scalar 1, which is written as G directly before the walk starts
// at 2. The output does not depend on the chunk size: every field value is exact.
//
// Scalars. Scalar i is a uniform value below r drawn by a counter-based generator: splitmix64's
// finaliser over (seed, index, attempt, word) gives 255 random bits, rejected while ≥ r (about
// 9.4% of draws) with the next attempt. After kScalarMaxAttempts rejections (probability about
// 10^-33, never met in practice) the last draw minus r is taken (it is < 2^255 < 2r), so the loop
// is bounded. The Montgomery form is value·R mod r, one CIOS multiplication by R² mod r.
#pragma once

#include <cstdint>
#include <cstring>

#include "ec/curve.cuh"
#include "ec/curves.cuh"
#include "ec/g2.cuh"
#include "ff/field.cuh"

namespace stagehand::cuda::synthetic {

// ---- chunk planning --------------------------------------------------------------------------

// Points per chunk: ceil(count / threads) for the threads the GPU keeps resident at once
// (synthetic.cu asks the occupancy calculator), so that a launch is one full wave in which every
// thread does the same work; clamped to at least 32 points (below that the double-and-add and the
// inversion, ~1000 multiplications, outweigh the 18 per point) and at most 1024 (where they are
// ~5%; larger counts take more waves).
inline constexpr std::uint64_t kMinChunk = 32;
inline constexpr std::uint64_t kMaxChunk = 1024;
// The plan when no GPU is asked (host tests): about an H200's resident threads.
inline constexpr std::uint64_t kTargetChunks = std::uint64_t{1} << 16;

SH_HD constexpr std::uint64_t plan_chunk(std::uint64_t count, std::uint64_t resident_threads) {
  if (resident_threads == 0) resident_threads = 1;
  const std::uint64_t even = count / resident_threads + (count % resident_threads != 0 ? 1 : 0);
  return even < kMinChunk ? kMinChunk : (even > kMaxChunk ? kMaxChunk : even);
}
SH_HD constexpr std::uint64_t chunk_count(std::uint64_t count, std::uint64_t chunk) {
  return count == 0 ? 0 : (count - 1) / chunk + 1;
}
// The largest scalar, first_index + count, must fit in 64 bits (the double-and-add's width, and
// what keeps every scalar below r).
SH_HD constexpr bool index_range_fits(std::uint64_t count, std::uint64_t first_index) {
  return count <= ~std::uint64_t{0} - first_index;
}

// ---- the generators, Montgomery words (ec/curves.cuh's BLS12-381 description) ----------------

SH_HD Fq generator_fq(int coordinate) {
  Fq value;
#pragma unroll
  for (int i = 0; i < 12; ++i) value.w[i] = Bls12_381Curve::generator_word(coordinate, i);
  return value;
}

// The group of a coordinate field: Fq → G1, Fq2 → G2.
template <class F>
struct Generator;
template <>
struct Generator<Fq> {
  SH_HD static Fq x() { return generator_fq(0); }
  SH_HD static Fq y() { return generator_fq(1); }
};
template <>
struct Generator<Fq2> {
  SH_HD static Fq2 x() { return Fq2{generator_fq(2), generator_fq(3)}; }
  SH_HD static Fq2 y() { return Fq2{generator_fq(4), generator_fq(5)}; }
};

// ---- slot access -----------------------------------------------------------------------------

// A field element at a 16-byte aligned address: 16-byte vector accesses on the device (an Fq is
// three, an Fq2 six), memcpy on the host.
template <class F>
SH_HD F load_element(const std::uint8_t* address) {
  static_assert(sizeof(F) % 16 == 0);
  F value;
#if defined(__CUDA_ARCH__)
  const uint4* source = reinterpret_cast<const uint4*>(address);
  uint4* target = reinterpret_cast<uint4*>(&value);
#pragma unroll
  for (int i = 0; i < int(sizeof(F) / 16); ++i) target[i] = source[i];
#else
  std::memcpy(&value, address, sizeof(F));
#endif
  return value;
}
template <class F>
SH_HD void store_element(std::uint8_t* address, const F& value) {
  static_assert(sizeof(F) % 16 == 0);
#if defined(__CUDA_ARCH__)
  uint4* target = reinterpret_cast<uint4*>(address);
  const uint4* source = reinterpret_cast<const uint4*>(&value);
#pragma unroll
  for (int i = 0; i < int(sizeof(F) / 16); ++i) target[i] = source[i];
#else
  std::memcpy(address, &value, sizeof(F));
#endif
}

// ---- points ----------------------------------------------------------------------------------

// s·G for 1 <= s < 2^64, double-and-add from the top bit (XYZZ, every special case handled by
// g2.cuh's formulas).
template <class F>
SH_HD XyzzPoint<F> multiple_of_generator(std::uint64_t s, const F& gx, const F& gy) {
  int top = 63;
  while (top > 0 && ((s >> top) & 1) == 0) --top;
  XyzzPoint<F> q = XyzzPoint<F>::from_affine(gx, gy);
#pragma unroll 1
  for (int bit = top - 1; bit >= 0; --bit) {
    q = q.doubled();
    if ((s >> bit) & 1) q.add_affine(gx, gy);
  }
  return q;
}

// Writes s·G, (s+1)·G, …, (s+m-1)·G into out, out + stride, … (two field elements each, x then
// y). Needs 1 <= s and s + m - 1 < 2^64 (index_range_fits), out and stride 16-byte aligned. See
// the file comment for the three passes.
template <class F>
SH_HD void generate_run(std::uint8_t* out, std::uint64_t stride, std::uint64_t m, std::uint64_t s) {
  constexpr std::uint64_t E = sizeof(F);
  if (m == 0) return;
  const F gx = Generator<F>::x();
  const F gy = Generator<F>::y();
  if (s == 1) {
    // 1·G, then the walk from 2·G: adding G to G would be a doubling (x_j = x_G).
    store_element(out, gx);
    store_element(out + E, gy);
    if (--m == 0) return;
    out += stride;
    s = 2;
  }
  // Q_0 in Jacobian (X, Y, Z), then as XYZZ (X, Y, Z², Z³): ZZ_j = Π_j² needs ZZ_0 to be a
  // known square.
  const JacobianPoint<F> start = multiple_of_generator<F>(s, gx, gy).to_jacobian();
  XyzzPoint<F> q;
  q.x = start.x;
  q.y = start.y;
  q.zz = start.z.squared();
  q.zzz = q.zz * start.z;
  std::uint8_t* last = out + (m - 1) * stride;
  store_element(last, start.x);
  store_element(last + E, start.y);
  F prefix = start.z;  // Π_0

  // Pass A: slot j := (p_j, Π_j) for j < m-1.
#pragma unroll 1
  for (std::uint64_t j = 0; j + 1 < m; ++j) {
    std::uint8_t* slot = out + j * stride;
    const F p = gx * q.zz - q.x;
    store_element(slot, p);
    store_element(slot + E, prefix);
    prefix = prefix * p;
    if (j + 2 < m) {  // Q_{j+1}, unless it is the last point (pass C computes that one)
      const F r = gy * q.zzz - q.y;
      const F pp = p.squared();
      const F ppp = p * pp;
      const F u = q.x * pp;
      const F x3 = r.squared() - ppp - u.doubled();
      q.y = r * (u - x3) - q.y * ppp;
      q.x = x3;
      q.zz = q.zz * pp;
      q.zzz = q.zzz * ppp;
    }
  }

  F running = prefix.inverse();  // 1/Π_{m-1}: the chunk's one inversion

  // Pass B: slot j := 1/(x_G − x_j) = Π_j²/p_j, from the last step back.
#pragma unroll 1
  for (std::uint64_t j = m - 1; j-- > 0;) {
    std::uint8_t* slot = out + j * stride;
    const F p = load_element<F>(slot);
    const F pi = load_element<F>(slot + E);
    const F p_inverse = running * pi;  // Π_j/Π_{j+1}
    running = running * p;             // 1/Π_j
    store_element(slot, pi.squared() * p_inverse);
  }

  // running = 1/Π_0 = 1/Z.
  const F z_inverse_squared = running.squared();
  F x = load_element<F>(last) * z_inverse_squared;
  F y = load_element<F>(last + E) * z_inverse_squared * running;

  // Pass C: the affine walk Q_{j+1} = Q_j + G.
#pragma unroll 1
  for (std::uint64_t j = 0;; ++j) {
    std::uint8_t* slot = out + j * stride;
    if (j + 1 == m) {
      store_element(slot, x);
      store_element(slot + E, y);
      break;
    }
    const F denominator_inverse = load_element<F>(slot);  // read before the point overwrites it
    store_element(slot, x);
    store_element(slot + E, y);
    const F lambda = (gy - y) * denominator_inverse;
    const F x_next = lambda.squared() - x - gx;
    y = lambda * (x - x_next) - y;
    x = x_next;
  }
}

// Thread t's share of a launch: indices [t·chunk, min(count, (t+1)·chunk)) of the run whose
// index i holds (first_index + i + 1)·G at out + i·stride.
template <class F>
SH_HD void generate_chunk(std::uint8_t* out, std::uint64_t stride, std::uint64_t count, std::uint64_t first_index,
                          std::uint64_t chunk, std::uint64_t t) {
  const std::uint64_t begin = t * chunk;
  if (t >= chunk_count(count, chunk)) return;
  const std::uint64_t m = count - begin < chunk ? count - begin : chunk;
  generate_run<F>(out + begin * stride, stride, m, first_index + begin + 1);
}

// ---- scalars ---------------------------------------------------------------------------------

inline constexpr int kScalarMaxAttempts = 32;

SH_HD constexpr std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

SH_HD constexpr std::uint64_t r_limb(int i) {
  constexpr std::uint64_t v[4] = {0xffffffff00000001ull, 0x53bda402fffe5bfeull, 0x3339d80809a1d805ull,
                                  0x73eda753299d7d48ull};
  return v[i];
}

// Draw `attempt` for the scalar of `index`: 255 bits (the top bit of the top word cleared).
SH_HD void scalar_draw(std::uint64_t seed, std::uint64_t index, int attempt, std::uint64_t (&limbs)[4]) {
  // Two rounds of mixing so that neighbouring seeds and indices give unrelated keys.
  const std::uint64_t key = splitmix64(splitmix64(seed) ^ splitmix64(index + 0x632be59bd9b4e019ull));
#pragma unroll
  for (int w = 0; w < 4; ++w) limbs[w] = splitmix64(key + 0x9e3779b97f4a7c15ull * std::uint64_t(4 * attempt + w + 1));
  limbs[3] >>= 1;
}

SH_HD bool below_r(const std::uint64_t (&limbs)[4]) {
#pragma unroll
  for (int i = 3; i >= 0; --i) {
    if (limbs[i] != r_limb(i)) return limbs[i] < r_limb(i);
  }
  return false;
}

// limbs -= r (limbs >= r).
SH_HD void subtract_r(std::uint64_t (&limbs)[4]) {
  std::uint64_t borrow = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const std::uint64_t subtrahend = r_limb(i) + borrow;
    const std::uint64_t carry_out = (subtrahend < borrow) | (limbs[i] < subtrahend);
    limbs[i] -= subtrahend;
    borrow = carry_out;
  }
}

// The canonical scalar of `index`: the first draw below r, within max_attempts (see the file
// comment; max_attempts is a parameter so that the host test can reach the fallback).
SH_HD Fr random_scalar(std::uint64_t seed, std::uint64_t index, int max_attempts = kScalarMaxAttempts) {
  std::uint64_t limbs[4];
#pragma unroll 1
  for (int attempt = 0;; ++attempt) {
    scalar_draw(seed, index, attempt, limbs);
    if (below_r(limbs)) break;
    if (attempt + 1 >= max_attempts) {
      subtract_r(limbs);
      break;
    }
  }
  Fr value;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    value.w[2 * i] = static_cast<std::uint32_t>(limbs[i]);
    value.w[2 * i + 1] = static_cast<std::uint32_t>(limbs[i] >> 32);
  }
  return value;
}

// R² mod r for R = 2^256 (src/math's Fr::montgomery_constants; checked by the host test).
SH_HD Fr fr_r_squared() {
  constexpr std::uint32_t v[8] = {0xf3f29c6d, 0xc999e990, 0x87925c23, 0x2b6cedcb,
                                  0x7254398f, 0x05d31496, 0x9f59ff11, 0x0748d9d9};
  Fr value;
#pragma unroll
  for (int i = 0; i < 8; ++i) value.w[i] = v[i];
  return value;
}

// value·R mod r: CIOS gives a·b·R^-1, so a·(R²)·R^-1.
SH_HD Fr to_montgomery(const Fr& canonical) { return canonical * fr_r_squared(); }

}  // namespace stagehand::cuda::synthetic
