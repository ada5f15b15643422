// Prime-field arithmetic for the kernels: Fr (8 words) and Fq (12 words) of BLS12-381 in
// Montgomery form with 32-bit words, R = 2^256 for Fr and 2^384 for Fq, i.e. the same bytes as
// the CPU reference (src/math) and as snarkjs store them (little-endian words, Montgomery form).
//
// Why 32-bit words: sm_90 multiplies 32x32 bits natively (IMAD and IMAD.HI with carry-in and
// carry-out); 64-bit products cost several instructions each. The multiplication is CIOS with
// two carry chains per row (the low halves, then the high halves of the 32x32 products), which
// keeps every product in one IMAD and every carry in the condition-code register. Both moduli
// leave the top bit free, so every intermediate of CIOS fits in N+1 words and the result stays
// below 2p before one conditional subtraction.
//
// Every primitive has a host emulation of the PTX carry flag so that the same code runs on the
// CPU: the host-side unit test checks the arithmetic against src/math without a GPU, and host
// code (the MSM's final combination, the tests) can use it as well.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SH_HD __host__ __device__ __forceinline__
#else
#define SH_HD inline
#endif

namespace stagehand::cuda {

namespace carry {

#if !defined(__CUDA_ARCH__)
// The host stand-in for the condition-code register. thread_local so that host threads do not
// race on it; only the emulation path uses it.
inline thread_local std::uint32_t host_flag = 0;
#endif

// Naming follows PTX: _cc sets the carry/borrow flag, c* consumes it.
SH_HD std::uint32_t add_cc(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  std::uint32_t r;
  asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  const std::uint64_t s = std::uint64_t{a} + b;
  host_flag = static_cast<std::uint32_t>(s >> 32);
  return static_cast<std::uint32_t>(s);
#endif
}
SH_HD std::uint32_t addc_cc(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  std::uint32_t r;
  asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  const std::uint64_t s = std::uint64_t{a} + b + host_flag;
  host_flag = static_cast<std::uint32_t>(s >> 32);
  return static_cast<std::uint32_t>(s);
#endif
}
SH_HD std::uint32_t addc(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  std::uint32_t r;
  asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  return static_cast<std::uint32_t>(std::uint64_t{a} + b + host_flag);
#endif
}
SH_HD std::uint32_t sub_cc(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  std::uint32_t r;
  asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  const std::uint64_t d = std::uint64_t{a} - b;
  host_flag = static_cast<std::uint32_t>(d >> 63);
  return static_cast<std::uint32_t>(d);
#endif
}
SH_HD std::uint32_t subc_cc(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  std::uint32_t r;
  asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  const std::uint64_t d = std::uint64_t{a} - b - host_flag;
  host_flag = static_cast<std::uint32_t>(d >> 63);
  return static_cast<std::uint32_t>(d);
#endif
}
SH_HD std::uint32_t subc(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  std::uint32_t r;
  asm volatile("subc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  return static_cast<std::uint32_t>(std::uint64_t{a} - b - host_flag);
#endif
}
// lo(a*b) + c, setting the flag.
SH_HD std::uint32_t mad_lo_cc(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
#if defined(__CUDA_ARCH__)
  std::uint32_t r;
  asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
#else
  const std::uint64_t s = std::uint64_t{static_cast<std::uint32_t>(std::uint64_t{a} * b)} + c;
  host_flag = static_cast<std::uint32_t>(s >> 32);
  return static_cast<std::uint32_t>(s);
#endif
}
SH_HD std::uint32_t madc_lo_cc(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
#if defined(__CUDA_ARCH__)
  std::uint32_t r;
  asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
#else
  const std::uint64_t s = std::uint64_t{static_cast<std::uint32_t>(std::uint64_t{a} * b)} + c + host_flag;
  host_flag = static_cast<std::uint32_t>(s >> 32);
  return static_cast<std::uint32_t>(s);
#endif
}
SH_HD std::uint32_t mad_hi_cc(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
#if defined(__CUDA_ARCH__)
  std::uint32_t r;
  asm volatile("mad.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
#else
  const std::uint64_t s = ((std::uint64_t{a} * b) >> 32) + c;
  host_flag = static_cast<std::uint32_t>(s >> 32);
  return static_cast<std::uint32_t>(s);
#endif
}
SH_HD std::uint32_t madc_hi_cc(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
#if defined(__CUDA_ARCH__)
  std::uint32_t r;
  asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
#else
  const std::uint64_t s = ((std::uint64_t{a} * b) >> 32) + c + host_flag;
  host_flag = static_cast<std::uint32_t>(s >> 32);
  return static_cast<std::uint32_t>(s);
#endif
}
SH_HD std::uint32_t madc_hi(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
#if defined(__CUDA_ARCH__)
  std::uint32_t r;
  asm volatile("madc.hi.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
#else
  return static_cast<std::uint32_t>(((std::uint64_t{a} * b) >> 32) + c + host_flag);
#endif
}

}  // namespace carry

// Parameters: static constexpr int words; constexpr functions modulus(i) and one(i) (R mod p) for
// i < words; inverse (-p^-1 mod 2^32).
template <class P>
struct Field {
  static constexpr int N = P::words;
  std::uint32_t w[N];

  SH_HD static Field zero() {
    Field r;
#pragma unroll
    for (int i = 0; i < N; ++i) r.w[i] = 0;
    return r;
  }
  SH_HD static Field one() {
    Field r;
#pragma unroll
    for (int i = 0; i < N; ++i) r.w[i] = P::one(i);
    return r;
  }
  SH_HD bool is_zero() const {
    std::uint32_t acc = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) acc |= w[i];
    return acc == 0;
  }
  SH_HD friend bool operator==(const Field& a, const Field& b) {
    std::uint32_t acc = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) acc |= a.w[i] ^ b.w[i];
    return acc == 0;
  }
  SH_HD friend bool operator!=(const Field& a, const Field& b) { return !(a == b); }

  // Subtracts p when value >= p. value < 2p < 2^(32N) on entry.
  SH_HD void reduce_once() {
    std::uint32_t t[N];
    t[0] = carry::sub_cc(w[0], P::modulus(0));
#pragma unroll
    for (int i = 1; i < N; ++i) t[i] = carry::subc_cc(w[i], P::modulus(i));
    const std::uint32_t borrow = carry::subc(0, 0);  // 0xffffffff when value < p
#pragma unroll
    for (int i = 0; i < N; ++i) w[i] = borrow ? w[i] : t[i];
  }

  SH_HD friend Field operator+(const Field& a, const Field& b) {
    Field r;
    r.w[0] = carry::add_cc(a.w[0], b.w[0]);
#pragma unroll
    for (int i = 1; i < N; ++i) r.w[i] = carry::addc_cc(a.w[i], b.w[i]);
    r.reduce_once();
    return r;
  }
  SH_HD friend Field operator-(const Field& a, const Field& b) {
    Field r;
    r.w[0] = carry::sub_cc(a.w[0], b.w[0]);
#pragma unroll
    for (int i = 1; i < N; ++i) r.w[i] = carry::subc_cc(a.w[i], b.w[i]);
    const std::uint32_t borrow = carry::subc(0, 0);
    // Add p back, masked by the borrow.
    r.w[0] = carry::add_cc(r.w[0], P::modulus(0) & borrow);
#pragma unroll
    for (int i = 1; i < N; ++i) r.w[i] = carry::addc_cc(r.w[i], P::modulus(i) & borrow);
    return r;
  }
  SH_HD Field operator-() const { return zero() - *this; }
  SH_HD Field doubled() const { return *this + *this; }

  // CIOS Montgomery multiplication: a*b*R^-1 mod p (see the file comment for the bounds).
  SH_HD friend Field operator*(const Field& a, const Field& b) {
    std::uint32_t t[N + 1];
#pragma unroll
    for (int i = 0; i <= N; ++i) t[i] = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const std::uint32_t bi = b.w[i];
      // t += a * bi: low halves at word j, high halves at word j + 1.
      t[0] = carry::mad_lo_cc(a.w[0], bi, t[0]);
#pragma unroll
      for (int j = 1; j < N; ++j) t[j] = carry::madc_lo_cc(a.w[j], bi, t[j]);
      t[N] = carry::addc(t[N], 0);
      t[1] = carry::mad_hi_cc(a.w[0], bi, t[1]);
#pragma unroll
      for (int j = 1; j < N - 1; ++j) t[j + 1] = carry::madc_hi_cc(a.w[j], bi, t[j + 1]);
      t[N] = carry::madc_hi(a.w[N - 1], bi, t[N]);
      // t += m * p with m chosen so that the low word becomes zero, then shift by one word.
      const std::uint32_t m = t[0] * P::inverse;
      t[0] = carry::mad_lo_cc(m, P::modulus(0), t[0]);
#pragma unroll
      for (int j = 1; j < N; ++j) t[j] = carry::madc_lo_cc(m, P::modulus(j), t[j]);
      t[N] = carry::addc(t[N], 0);
      t[0] = carry::mad_hi_cc(m, P::modulus(0), t[1]);
#pragma unroll
      for (int j = 1; j < N - 1; ++j) t[j] = carry::madc_hi_cc(m, P::modulus(j), t[j + 1]);
      t[N - 1] = carry::madc_hi(m, P::modulus(N - 1), t[N]);
      t[N] = 0;
    }
    Field r;
#pragma unroll
    for (int i = 0; i < N; ++i) r.w[i] = t[i];
    r.reduce_once();
    return r;
  }
  SH_HD Field squared() const { return *this * *this; }
  SH_HD Field& operator*=(const Field& o) { return *this = *this * o; }
  SH_HD Field& operator+=(const Field& o) { return *this = *this + o; }
  SH_HD Field& operator-=(const Field& o) { return *this = *this - o; }

  // x^e for an exponent given as words (little-endian), square-and-multiply; not for hot loops.
  template <int E>
  SH_HD Field pow_words(const std::uint32_t (&e)[E]) const {
    Field result = one();
    for (int i = E * 32 - 1; i >= 0; --i) {
      result = result.squared();
      if ((e[i / 32] >> (i % 32)) & 1) result *= *this;
    }
    return result;
  }
  SH_HD Field pow(std::uint64_t e) const {
    Field result = one();
    Field base = *this;
    while (e != 0) {
      if (e & 1) result *= base;
      base = base.squared();
      e >>= 1;
    }
    return result;
  }
  // Fermat: x^(p-2); zero maps to zero.
  SH_HD Field inverse() const {
    std::uint32_t e[N];
#pragma unroll
    for (int i = 0; i < N; ++i) e[i] = P::modulus(i);
    // p - 2 with the borrow carried (Fr's low word is 1).
    std::uint32_t borrow = 2;
    for (int i = 0; i < N && borrow != 0; ++i) {
      const std::uint32_t before = e[i];
      e[i] = before - borrow;
      borrow = before < borrow ? 1 : 0;
    }
    return pow_words(e);
  }
  // Montgomery form -> canonical words (multiplication by 1).
  SH_HD Field from_montgomery() const {
    Field unit = zero();
    unit.w[0] = 1;
    return *this * unit;
  }
};

struct FrParams {
  static constexpr int words = 8;
  SH_HD static constexpr std::uint32_t modulus(int i) {
    constexpr std::uint32_t v[8] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                                               0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
    return v[i];
  }
  // R mod r with R = 2^256.
  SH_HD static constexpr std::uint32_t one(int i) {
    constexpr std::uint32_t v[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
                                           0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};
    return v[i];
  }
  static constexpr std::uint32_t inverse = 0xffffffff;  // -r^-1 mod 2^32
};

struct FqParams {
  static constexpr int words = 12;
  SH_HD static constexpr std::uint32_t modulus(int i) {
    constexpr std::uint32_t v[12] = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe,
                                                0xf6b0f624, 0x6730d2a0, 0xf38512bf, 0x64774b84,
                                                0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
    return v[i];
  }
  // R mod q with R = 2^384.
  SH_HD static constexpr std::uint32_t one(int i) {
    constexpr std::uint32_t v[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b,
                                            0x53c758ba, 0x5f489857, 0x70525745, 0x77ce5853,
                                            0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
    return v[i];
  }
  static constexpr std::uint32_t inverse = 0xfffcfffd;  // -q^-1 mod 2^32
};

using Fr = Field<FrParams>;  // 32 bytes
using Fq = Field<FqParams>;  // 48 bytes
static_assert(sizeof(Fr) == 32 && sizeof(Fq) == 48);

}  // namespace stagehand::cuda
