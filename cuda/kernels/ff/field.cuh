// Prime-field arithmetic for the kernels: Fr (8 words) and Fq (12 words) of BLS12-381, and
// bn254::Fr and bn254::Fq (8 words each), in Montgomery form with 32-bit words, R = 2^(32·words),
// i.e. the same bytes as the CPU reference (src/math) and as snarkjs store them (little-endian
// words, Montgomery form). One template over the parameters; the curves that pair them are
// ec/curves.cuh's descriptions.
//
// Why 32-bit words: sm_90 multiplies 32x32 bits natively; 64x64-bit products take several
// instructions each. The multiplication is CIOS; each 32x32 product is one 64-bit multiply
// (IMAD.WIDE.U32) and its halves go into two carry chains per row on the integer ALU (see
// operator*). Every modulus leaves the top bit free (BN254's two the top two), so every intermediate of CIOS fits in N+1
// words and the result stays below 2p before one conditional subtraction.
//
// What bounds it (H200, bench/field_throughput.cu and Nsight Compute): the FMA-heavy
// pipe, where IMAD takes one issue cycle and IMAD.HI and IMAD.WIDE two each. The narrow form
// (IMAD + IMAD.HI per product, multiply_narrow) kept that pipe nearly saturated; the wide form
// moves a third of that work off it and is faster, Fr more than Fq, held back by dispatch stalls
// with neither pipe saturated. FqF64 (field_f64.cuh) makes Fq's products on the idle FP64 pipe
// instead, in fewer cycles per multiplication and per square than the integer form; the MSM's
// bucket accumulation uses it. FrF64 does the same for Fr, also faster; the NTT's twiddle
// multiplications use it (bench/RESULTS.md, "Host and driver costs on the H200", and
// bench/journal/2026-11-30.md have the figures).
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

// A function the device calls instead of inlining (the host build inlines as usual): for
// arithmetic whose inlined copies would make a kernel's code too large for the instruction
// cache or its registers too many. `inline` keeps a header's definitions one per program (ODR),
// noinline is the attribute.
#if defined(__CUDA_ARCH__)
#define SH_HD_CALL __host__ __device__ inline __noinline__
#elif defined(__CUDACC__)
#define SH_HD_CALL __host__ __device__ inline
#else
#define SH_HD_CALL inline
#endif

namespace stagehand::cuda {

namespace f64 {
// How a field's FP64 form cuts its value: `Words` 32-bit words re-cut into `Limbs` limbs of
// `LimbBits` bits, each limb held exactly by a double. CIOS takes a quotient of LimbBits bits per
// row except the last, which takes `LastShift`: Montgomery's R is 2^(LimbBits·(Limbs-1) +
// LastShift), which each field chooses equal to its integer form's, so both forms share values
// and words (Fq: 8 limbs of 48 bits, R = 2^384; Fr: 5 of 52 bits, 4·52 + 48, R = 2^256).
template <int Words, int Limbs, int LimbBits, int LastShift>
struct Layout {
  static constexpr int words = Words;
  static constexpr int limbs = Limbs;
  static constexpr int limb_bits = LimbBits;
  static constexpr int last_shift = LastShift;
  static_assert(LimbBits <= 52 && LastShift <= LimbBits && Words * 32 <= LimbBits * (Limbs - 1) + LastShift);
};

// field_f64.cuh, included at the end of this file.
template <class P>
SH_HD void montgomery_multiply(const std::uint32_t (&a)[P::words], const std::uint32_t (&b)[P::words],
                               std::uint32_t (&r)[P::words]);
template <class P>
SH_HD void montgomery_square(const std::uint32_t (&a)[P::words], std::uint32_t (&r)[P::words]);
}  // namespace f64

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
// i < words; inverse (-p^-1 mod 2^32); f64_products (multiply through the FP64 pipe,
// field_f64.cuh, in the limbs of the type F64, an f64::Layout); called_products (the products,
// of either kind, as calls on the device: called_multiply below).
template <class P>
struct Field;
template <class P>
SH_HD_CALL Field<P> called_multiply(Field<P> a, Field<P> b);
template <class P>
SH_HD_CALL Field<P> called_square(Field<P> a);

template <class P>
struct Field {
  using Params = P;
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

  // a*b*R^-1 mod p: on the integer pipes (below), or with the products on the FP64 pipe where the
  // parameters ask for it (field_f64.cuh).
  // Where the parameters ask for calls (called_products), through called_multiply.
  SH_HD friend Field operator*(const Field& a, const Field& b) {
    if constexpr (P::called_products) {
      return called_multiply<P>(a, b);
    } else {
      return multiply_inline(a, b);
    }
  }
  SH_HD static Field multiply_inline(const Field& a, const Field& b) {
    if constexpr (P::f64_products) {
      Field r;
      f64::montgomery_multiply<P>(a.w, b.w, r.w);
      r.reduce_once();
      return r;
    } else {
      return multiply_integer(a, b);
    }
  }

  // CIOS Montgomery multiplication: a*b*R^-1 mod p (see the file comment for the bounds).
  //
  // Each 32x32 product is one 64-bit multiplication (IMAD.WIDE.U32 on sm_90: two cycles of the
  // FMA-heavy pipe for both halves, where IMAD plus IMAD.HI take three; measured with
  // bench/field_throughput.cu, and that pipe is what bounds these kernels). The halves are added
  // in two carry chains per row on the integer ALU: the products of even words cover the word
  // pairs (0,1), (2,3), ... and those of odd words (1,2), (3,4), ..., so each chain adds both
  // halves of a product as soon as it is made and no row holds more than one product at a time.
  //
  // Bound: with t < 2p at the start of a row, t + a·b_i + m·p < 2p + 2(2^32 - 1)p < 2^33·p, below
  // 2^(32(N+1)) for every modulus (Fr: 2^255 > p, N = 8; Fq: 2^381 > p, N = 12; BN254's: 2^254 >
  // p, N = 8), so t[N] takes every carry and (t + a·b_i + m·p)/2^32 < 2p again.
  SH_HD static Field multiply_integer(const Field& a, const Field& b) {
    std::uint32_t t[N + 1];
    accumulate_row<true>(t, a.w, b.w[0]);
    reduce_row(t);
#pragma unroll
    for (int i = 1; i < N; ++i) {
      accumulate_row<false>(t, a.w, b.w[i]);
      reduce_row(t);
    }
    return reduced(t);
  }

  // t += x·y (t = x·y when First). x has N words; t has N + 1 and, by the caller's bound, the
  // sum fits in them.
  template <bool First>
  SH_HD static void accumulate_row(std::uint32_t (&t)[N + 1], const std::uint32_t (&x)[N], std::uint32_t y) {
    std::uint64_t p;
    if constexpr (First) {
      // Even words' products fill disjoint word pairs: no carries.
#pragma unroll
      for (int j = 0; j < N; j += 2) {
        p = std::uint64_t{x[j]} * y;
        t[j] = static_cast<std::uint32_t>(p);
        t[j + 1] = static_cast<std::uint32_t>(p >> 32);
      }
      t[N] = 0;
    } else {
      p = std::uint64_t{x[0]} * y;
      t[0] = carry::add_cc(t[0], static_cast<std::uint32_t>(p));
      t[1] = carry::addc_cc(t[1], static_cast<std::uint32_t>(p >> 32));
#pragma unroll
      for (int j = 2; j < N; j += 2) {
        p = std::uint64_t{x[j]} * y;
        t[j] = carry::addc_cc(t[j], static_cast<std::uint32_t>(p));
        t[j + 1] = carry::addc_cc(t[j + 1], static_cast<std::uint32_t>(p >> 32));
      }
      t[N] = carry::addc(t[N], 0);
    }
    add_odd_products(
        t, [&](int j) { return x[j]; }, y);
  }

  // t += m·p with m = t[0]·(-p^-1) mod 2^32, which clears t[0]; then t /= 2^32.
  SH_HD static void reduce_row(std::uint32_t (&t)[N + 1]) {
    const std::uint32_t m = t[0] * P::inverse;
    std::uint64_t p = std::uint64_t{m} * P::modulus(0);
    // The low word becomes zero; only its carry matters.
    carry::add_cc(t[0], static_cast<std::uint32_t>(p));
    t[1] = carry::addc_cc(t[1], static_cast<std::uint32_t>(p >> 32));
#pragma unroll
    for (int j = 2; j < N; j += 2) {
      p = std::uint64_t{m} * P::modulus(j);
      t[j] = carry::addc_cc(t[j], static_cast<std::uint32_t>(p));
      t[j + 1] = carry::addc_cc(t[j + 1], static_cast<std::uint32_t>(p >> 32));
    }
    t[N] = carry::addc(t[N], 0);
    add_odd_products(
        t, [](int j) { return P::modulus(j); }, m);
#pragma unroll
    for (int j = 0; j < N; ++j) t[j] = t[j + 1];
    t[N] = 0;
  }

  // t += Σ over odd j of word(j)·y·2^(32j): the chain through t[1..N]; no carry leaves t[N].
  template <class Word>
  SH_HD static void add_odd_products(std::uint32_t (&t)[N + 1], Word word, std::uint32_t y) {
    std::uint64_t p = std::uint64_t{word(1)} * y;
    t[1] = carry::add_cc(t[1], static_cast<std::uint32_t>(p));
    t[2] = carry::addc_cc(t[2], static_cast<std::uint32_t>(p >> 32));
#pragma unroll
    for (int j = 3; j < N - 1; j += 2) {
      p = std::uint64_t{word(j)} * y;
      t[j] = carry::addc_cc(t[j], static_cast<std::uint32_t>(p));
      t[j + 1] = carry::addc_cc(t[j + 1], static_cast<std::uint32_t>(p >> 32));
    }
    p = std::uint64_t{word(N - 1)} * y;
    t[N - 1] = carry::addc_cc(t[N - 1], static_cast<std::uint32_t>(p));
    t[N] = carry::addc(t[N], static_cast<std::uint32_t>(p >> 32));
  }

  // The narrow CIOS with IMAD and IMAD.HI per 32x32 product (the products' halves in two carry
  // chains per row); kept to measure against (bench/field_throughput.cu).
  SH_HD static Field multiply_narrow(const Field& a, const Field& b) {
    std::uint32_t t[N + 1];
#pragma unroll
    for (int i = 0; i <= N; ++i) t[i] = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      narrow_product_row(t, a.w, b.w[i]);
      narrow_reduce_row(t);
    }
    return reduced(t);
  }

  // t += x·y: low halves at word j, high halves at word j + 1 (IMAD, IMAD.HI).
  SH_HD static void narrow_product_row(std::uint32_t (&t)[N + 1], const std::uint32_t (&x)[N], std::uint32_t y) {
    t[0] = carry::mad_lo_cc(x[0], y, t[0]);
#pragma unroll
    for (int j = 1; j < N; ++j) t[j] = carry::madc_lo_cc(x[j], y, t[j]);
    t[N] = carry::addc(t[N], 0);
    t[1] = carry::mad_hi_cc(x[0], y, t[1]);
#pragma unroll
    for (int j = 1; j < N - 1; ++j) t[j + 1] = carry::madc_hi_cc(x[j], y, t[j + 1]);
    t[N] = carry::madc_hi(x[N - 1], y, t[N]);
  }

  // reduce_row with IMAD and IMAD.HI: t += m·p clearing the low word, then t /= 2^32.
  SH_HD static void narrow_reduce_row(std::uint32_t (&t)[N + 1]) {
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

  // The CIOS result: t below 2p in its low N words, reduced below p.
  SH_HD static Field reduced(const std::uint32_t (&t)[N + 1]) {
    Field r;
#pragma unroll
    for (int i = 0; i < N; ++i) r.w[i] = t[i];
    r.reduce_once();
    return r;
  }

  // a^2·R^-1 mod p: on the integer pipes (below), or on the FP64 pipe as operator* (field_f64.cuh).
  SH_HD Field squared() const {
    if constexpr (P::called_products) {
      return called_square<P>(*this);
    } else {
      return square_inline();
    }
  }
  SH_HD Field square_inline() const {
    if constexpr (P::f64_products) {
      Field r;
      f64::montgomery_square<P>(w, r.w);
      r.reduce_once();
      return r;
    } else {
      return square_integer();
    }
  }

  // a^2·R^-1 mod p with 222 of a multiplication's 288 products (Fq; Fr 100 of 128): each cross
  // product a_i·a_j (i < j) once, doubled, plus the squares a_i^2; then the Montgomery reduction
  // of the low half, to which the high half is added. Products and carry chains as in operator*.
  // Bounds: T = a^2 < p^2; (T_lo + M·p)/2^(32N) <= p and T_hi < p^2/2^(32N) < p, so the sum is
  // below 2p before the one conditional subtraction.
  SH_HD Field square_integer() const {
    std::uint32_t t[2 * N];
#pragma unroll
    for (int i = 0; i < 2 * N; ++i) t[i] = 0;
      // Cross products, row i: a_i·a_j for j > i into words i+j and i+j+1, in two chains (j - i odd,
      // then even). After row i the sum so far is below 2^(32(i+N+1)) (rows up to i hold
      // Σ a_k·2^(32k)·(Σ_(j>k) a_j·2^(32j)) < 2^(32N)·2^(32(i+1))), so a chain that ends at word i+N
      // carries nothing out, and one that ends at i+N-1 carries into word i+N, which earlier rows
      // have not reached.
#pragma unroll
    for (int i = 0; i < N - 1; ++i) {
#pragma unroll
      for (int parity = 1; parity <= 2; ++parity) {
        const int first = i + parity;
        if (first >= N) continue;
        std::uint64_t p = std::uint64_t{w[i]} * w[first];
        t[i + first] = carry::add_cc(t[i + first], static_cast<std::uint32_t>(p));
        t[i + first + 1] = carry::addc_cc(t[i + first + 1], static_cast<std::uint32_t>(p >> 32));
        int last = first;
#pragma unroll
        for (int j = first + 2; j < N; j += 2) {
          p = std::uint64_t{w[i]} * w[j];
          t[i + j] = carry::addc_cc(t[i + j], static_cast<std::uint32_t>(p));
          t[i + j + 1] = carry::addc_cc(t[i + j + 1], static_cast<std::uint32_t>(p >> 32));
          last = j;
        }
        if (last < N - 1) t[i + N] = carry::addc(t[i + N], 0);
      }
    }
    // Doubled (the cross sum is below 2^(64N-1)), then the squares added in one chain.
#pragma unroll
    for (int i = 2 * N - 1; i > 0; --i) t[i] = (t[i] << 1) | (t[i - 1] >> 31);
    t[0] <<= 1;
    std::uint64_t p = std::uint64_t{w[0]} * w[0];
    t[0] = carry::add_cc(t[0], static_cast<std::uint32_t>(p));
    t[1] = carry::addc_cc(t[1], static_cast<std::uint32_t>(p >> 32));
#pragma unroll
    for (int i = 1; i < N - 1; ++i) {
      p = std::uint64_t{w[i]} * w[i];
      t[2 * i] = carry::addc_cc(t[2 * i], static_cast<std::uint32_t>(p));
      t[2 * i + 1] = carry::addc_cc(t[2 * i + 1], static_cast<std::uint32_t>(p >> 32));
    }
    p = std::uint64_t{w[N - 1]} * w[N - 1];
    t[2 * N - 2] = carry::addc_cc(t[2 * N - 2], static_cast<std::uint32_t>(p));
    t[2 * N - 1] = carry::addc(t[2 * N - 1], static_cast<std::uint32_t>(p >> 32));
    // Montgomery reduction of the low half, N rows as in operator*.
    std::uint32_t r[N + 1];
#pragma unroll
    for (int i = 0; i < N; ++i) r[i] = t[i];
    r[N] = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) reduce_row(r);
    Field s;
    s.w[0] = carry::add_cc(r[0], t[N]);
#pragma unroll
    for (int i = 1; i < N; ++i) s.w[i] = carry::addc_cc(r[i], t[N + i]);
    s.reduce_once();
    return s;
  }
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
  static constexpr bool f64_products = false;
  static constexpr bool called_products = false;
};

struct FqParams {
  static constexpr int words = 12;
  SH_HD static constexpr std::uint32_t modulus(int i) {
    constexpr std::uint32_t v[12] = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0,
                                     0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
    return v[i];
  }
  // R mod q with R = 2^384.
  SH_HD static constexpr std::uint32_t one(int i) {
    constexpr std::uint32_t v[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b, 0x53c758ba, 0x5f489857,
                                     0x70525745, 0x77ce5853, 0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
    return v[i];
  }
  static constexpr std::uint32_t inverse = 0xfffcfffd;  // -q^-1 mod 2^32
  static constexpr bool f64_products = false;
  static constexpr bool called_products = false;
};

// Fq with its products on the FP64 pipe (field_f64.cuh): the same values in the same words, so a
// kernel can take its points and buckets as either. The MSM's bucket accumulation uses it.
struct FqF64Params : FqParams {
  static constexpr bool f64_products = true;
  using F64 = f64::Layout<12, 8, 48, 48>;
};
// Fq with its products as calls on the device: one copy of the multiplication's code instead of
// one per use, for kernels whose inlined arithmetic outgrows the instruction cache and the
// registers (the MSM's item sums: a G2 addition makes 28 Fq products, a G1 one 10). The same
// values and words; FqF64Called with the FP64 products.
struct FqCalledParams : FqParams {
  static constexpr bool called_products = true;
};
struct FqF64CalledParams : FqF64Params {
  static constexpr bool called_products = true;
};
// Fr likewise (5 limbs of 52 bits; the last quotient 48 bits, so R = 2^256 as Fr's): the NTT's
// twiddle multiplications can use it.
struct FrF64Params : FrParams {
  static constexpr bool f64_products = true;
  using F64 = f64::Layout<8, 5, 52, 48>;
};

// BN254 (circom's bn128): r and q both of 254 bits in 8 words, R = 2^256 for both (src/math/bn254.hpp).
namespace bn254 {
struct FrParams {
  static constexpr int words = 8;
  SH_HD static constexpr std::uint32_t modulus(int i) {
    constexpr std::uint32_t v[8] = {0xf0000001, 0x43e1f593, 0x79b97091, 0x2833e848,
                                    0x8181585d, 0xb85045b6, 0xe131a029, 0x30644e72};
    return v[i];
  }
  // R mod r with R = 2^256.
  SH_HD static constexpr std::uint32_t one(int i) {
    constexpr std::uint32_t v[8] = {0x4ffffffb, 0xac96341c, 0x9f60cd29, 0x36fc7695,
                                    0x7879462e, 0x666ea36f, 0x9a07df2f, 0x0e0a77c1};
    return v[i];
  }
  static constexpr std::uint32_t inverse = 0xefffffff;  // -r^-1 mod 2^32
  static constexpr bool f64_products = false;
  static constexpr bool called_products = false;
};

struct FqParams {
  static constexpr int words = 8;
  SH_HD static constexpr std::uint32_t modulus(int i) {
    constexpr std::uint32_t v[8] = {0xd87cfd47, 0x3c208c16, 0x6871ca8d, 0x97816a91,
                                    0x8181585d, 0xb85045b6, 0xe131a029, 0x30644e72};
    return v[i];
  }
  // R mod q with R = 2^256.
  SH_HD static constexpr std::uint32_t one(int i) {
    constexpr std::uint32_t v[8] = {0xc58f0d9d, 0xd35d438d, 0xf5c70b3d, 0x0a78eb28,
                                    0x7879462c, 0x666ea36f, 0x9a07df2f, 0x0e0a77c1};
    return v[i];
  }
  static constexpr std::uint32_t inverse = 0xe4866389;  // -q^-1 mod 2^32
  static constexpr bool f64_products = false;
  static constexpr bool called_products = false;
};

// The same forms as BLS12-381's below (same words, other products): both fields in the layout of
// BLS12-381's FrF64 (5 limbs of 52 bits, the last quotient 48, R = 2^256), whose bounds hold with
// more room for moduli of 254 bits; Fq's products as calls for the MSM's item sums.
struct FrF64Params : FrParams {
  static constexpr bool f64_products = true;
  using F64 = f64::Layout<8, 5, 52, 48>;
};
struct FqF64Params : FqParams {
  static constexpr bool f64_products = true;
  using F64 = f64::Layout<8, 5, 52, 48>;
};
struct FqCalledParams : FqParams {
  static constexpr bool called_products = true;
};
struct FqF64CalledParams : FqF64Params {
  static constexpr bool called_products = true;
};

using Fr = Field<FrParams>;  // 32 bytes
using Fq = Field<FqParams>;  // 32 bytes
using FrF64 = Field<FrF64Params>;
using FqF64 = Field<FqF64Params>;
using FqCalled = Field<FqCalledParams>;
using FqF64Called = Field<FqF64CalledParams>;
static_assert(sizeof(Fr) == 32 && sizeof(Fq) == 32 && sizeof(FrF64) == 32 && sizeof(FqF64Called) == 32);
}  // namespace bn254

using Fr = Field<FrParams>;  // 32 bytes
using Fq = Field<FqParams>;  // 48 bytes
using FqF64 = Field<FqF64Params>;
using FqCalled = Field<FqCalledParams>;
using FqF64Called = Field<FqF64CalledParams>;
using FrF64 = Field<FrF64Params>;
static_assert(sizeof(Fr) == 32 && sizeof(Fq) == 48 && sizeof(FqF64) == 48 && sizeof(FrF64) == 32 &&
              sizeof(FqCalled) == 48);

// By value, so that the operands travel in registers rather than through the stack.
template <class P>
SH_HD_CALL Field<P> called_multiply(Field<P> a, Field<P> b) {
  return Field<P>::multiply_inline(a, b);
}
template <class P>
SH_HD_CALL Field<P> called_square(Field<P> a) {
  return a.square_inline();
}

// The same value in another form of its field (Fq and FqF64, Fr and FrF64 share their words).
template <class To, class From>
SH_HD To same_words(const From& value) {
  static_assert(To::N == From::N);
  To result;
#pragma unroll
  for (int i = 0; i < To::N; ++i) result.w[i] = value.w[i];
  return result;
}

}  // namespace stagehand::cuda

#include "ff/field_f64.cuh"
