// Montgomery multiplication for x86-64 CPUs with BMI2 and ADX (Intel Broadwell and AMD Zen on):
// mulx with two independent carry chains (adcx on CF, adox on OF), as in blst and gnark-crypto.
// It is about 1.6 times as fast as the portable C++ in montgomery_field.hpp, which GCC compiles
// into spills and flag shuffles.
//
// The instructions are chosen at run time (cpuid), so the binary still runs on CPUs without
// them; STAGEHAND_MATH_PORTABLE=1 in the environment forces the portable code, and the tests
// run both against the same vectors. Nothing here needs compiler flags: the assembler accepts
// mulx/adcx/adox whatever -march says.
//
// The algorithm is the CIOS loop of MontgomeryField::montgomery_multiply without the extra
// carry word (the moduli leave a spare top bit); the caller does the final conditional
// subtraction.
#pragma once
// The assembly macros below are laid out by hand, one instruction group a line (clang-format 14
// lays macro chains out differently on each pass).
// clang-format off

#include <cstddef>
#include <cstdint>

#include "math/limbs.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#define STAGEHAND_MATH_HAVE_ASSEMBLY 1
#include <cpuid.h>
#include <cstdlib>
#else
#define STAGEHAND_MATH_HAVE_ASSEMBLY 0
#endif

// The CIOS loop's instructions, written once for both sizes. In a row, the products a[j]·b[i]
// go into t on two carry chains: the low halves on OF (adox), the high halves, held in h0/h1 in
// turn, on CF (adcx). The reduction step multiplies q by m = t0·inverse and shifts t down a limb.

// Row i > 0, first product: rdx = b[i] (OFFSET = 8·i), t0 += low(a[0]·b[i]).
#define STAGEHAND_MONT_ROW_START(OFFSET) \
  "movq " #OFFSET "(%[b]), %%rdx\n\t" \
  "xorl %%eax, %%eax\n\t" \
  "mulxq 0(%[a]), %%rax, %[h0]\n\t" \
  "adoxq %%rax, %[t0]\n\t"
// Product a[j]·b[i] (OFFSET = 8·j, j > 0): T += its low half and the previous high half.
#define STAGEHAND_MONT_PRODUCT(OFFSET, HIGH, PREVIOUS_HIGH, T) \
  "mulxq " #OFFSET "(%[a]), %%rax, %[" #HIGH "]\n\t" \
  "adcxq %[" #PREVIOUS_HIGH "], %[" #T "]\n\t" \
  "adoxq %%rax, %[" #T "]\n\t"
// The row's top word (the last high half, h1 for both sizes, with both carries) into carry.
#define STAGEHAND_MONT_ROW_CARRY \
  "movl $0, %%eax\n\t" \
  "adcxq %%rax, %[h1]\n\t" \
  "adoxq %%rax, %[h1]\n\t" \
  "movq %[h1], %[carry]\n\t"
// Reduction: m = t0·inverse; t0 + low(m·q[0]) is 0 by construction, its carry goes on.
#define STAGEHAND_MONT_REDUCE_START \
  "movq %[inverse], %%rdx\n\t" \
  "imulq %[t0], %%rdx\n\t" \
  "xorl %%eax, %%eax\n\t" \
  "mulxq 0(%[q]), %%rax, %[h0]\n\t" \
  "adcxq %[t0], %%rax\n\t" \
  "movq %[h0], %[t0]\n\t"
// m·q[j] (OFFSET = 8·j, j > 0), shifting down: PREVIOUS = T + low half, T = high half.
#define STAGEHAND_MONT_REDUCE_STEP(OFFSET, T, PREVIOUS) \
  "adcxq %[" #T "], %[" #PREVIOUS "]\n\t" \
  "mulxq " #OFFSET "(%[q]), %%rax, %[" #T "]\n\t" \
  "adoxq %%rax, %[" #PREVIOUS "]\n\t"
// Both carries and the row's top word into the top limb LAST.
#define STAGEHAND_MONT_REDUCE_END(LAST) \
  "movl $0, %%eax\n\t" \
  "adcxq %%rax, %[" #LAST "]\n\t" \
  "adoxq %%rax, %[" #LAST "]\n\t" \
  "addq %[carry], %[" #LAST "]\n\t"

#define STAGEHAND_MONT4_REDUCE \
  STAGEHAND_MONT_REDUCE_START \
  STAGEHAND_MONT_REDUCE_STEP(8, t1, t0) STAGEHAND_MONT_REDUCE_STEP(16, t2, t1) STAGEHAND_MONT_REDUCE_STEP(24, t3, t2) \
  STAGEHAND_MONT_REDUCE_END(t3)
#define STAGEHAND_MONT6_REDUCE \
  STAGEHAND_MONT_REDUCE_START \
  STAGEHAND_MONT_REDUCE_STEP(8, t1, t0) STAGEHAND_MONT_REDUCE_STEP(16, t2, t1) STAGEHAND_MONT_REDUCE_STEP(24, t3, t2) \
  STAGEHAND_MONT_REDUCE_STEP(32, t4, t3) STAGEHAND_MONT_REDUCE_STEP(40, t5, t4) \
  STAGEHAND_MONT_REDUCE_END(t5)

// One row i > 0 of the CIOS loop: t += a·b[i], then one reduction step (OFFSET = 8·i).
#define STAGEHAND_MONT4_ROW(OFFSET) \
  STAGEHAND_MONT_ROW_START(OFFSET) \
  STAGEHAND_MONT_PRODUCT(8, h1, h0, t1) STAGEHAND_MONT_PRODUCT(16, h0, h1, t2) STAGEHAND_MONT_PRODUCT(24, h1, h0, t3) \
  STAGEHAND_MONT_ROW_CARRY STAGEHAND_MONT4_REDUCE
#define STAGEHAND_MONT6_ROW(OFFSET) \
  STAGEHAND_MONT_ROW_START(OFFSET) \
  STAGEHAND_MONT_PRODUCT(8, h1, h0, t1) STAGEHAND_MONT_PRODUCT(16, h0, h1, t2) STAGEHAND_MONT_PRODUCT(24, h1, h0, t3) \
  STAGEHAND_MONT_PRODUCT(32, h0, h1, t4) STAGEHAND_MONT_PRODUCT(40, h1, h0, t5) \
  STAGEHAND_MONT_ROW_CARRY STAGEHAND_MONT6_REDUCE

namespace stagehand::math::detail {

#if STAGEHAND_MATH_HAVE_ASSEMBLY

inline bool cpu_has_mulx_and_adx() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  constexpr unsigned bmi2_bit = 1u << 8;
  constexpr unsigned adx_bit = 1u << 19;
  return (ebx & bmi2_bit) != 0 && (ebx & adx_bit) != 0;
}

inline bool assembly_multiplication_wanted() {
  const char* portable = std::getenv("STAGEHAND_MATH_PORTABLE");
  if (portable != nullptr && *portable != '\0' && *portable != '0') return false;
  return cpu_has_mulx_and_adx();
}

// Read on every multiplication; a well-predicted branch. Tests switch it to compare the two
// implementations; nothing else should write it while other threads compute.
inline bool assembly_multiplication_enabled = assembly_multiplication_wanted();

// out = a·b·2^-256 mod p, possibly plus p (below 2p).
[[gnu::always_inline]] inline void montgomery_multiply_assembly(Limbs<4>& out, const Limbs<4>& a, const Limbs<4>& b, const Limbs<4>& modulus,
                                         const std::uint64_t& negative_modulus_inverse) {
  std::uint64_t t0, t1, t2, t3;
  // Scratch registers: the assembly writes them and nothing reads them afterwards.
  [[maybe_unused]] std::uint64_t h0, h1, carry;
  asm(
        "movq 0(%[b]), %%rdx\n\t"
        "xorl %%eax, %%eax\n\t"
        "mulxq 0(%[a]), %[t0], %[t1]\n\t"
        "mulxq 8(%[a]), %%rax, %[t2]\n\t"
        "adoxq %%rax, %[t1]\n\t"
        "mulxq 16(%[a]), %%rax, %[t3]\n\t"
        "adoxq %%rax, %[t2]\n\t"
        "mulxq 24(%[a]), %%rax, %[carry]\n\t"
        "adoxq %%rax, %[t3]\n\t"
        "movl $0, %%eax\n\t"
        "adoxq %%rax, %[carry]\n\t"
        STAGEHAND_MONT4_REDUCE
        STAGEHAND_MONT4_ROW(8) STAGEHAND_MONT4_ROW(16) STAGEHAND_MONT4_ROW(24)
      : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [h0] "=&r"(h0), [h1] "=&r"(h1),
        [carry] "=&r"(carry)
      : [a] "r"(a.data()), [b] "r"(b.data()), [q] "r"(modulus.data()), [inverse] "m"(negative_modulus_inverse),
        "m"(a), "m"(b), "m"(modulus)
      : "rax", "rdx", "cc");
  out = {t0, t1, t2, t3};
}

// out = a·b·2^-384 mod p, possibly plus p (below 2p).
[[gnu::always_inline]] inline void montgomery_multiply_assembly(Limbs<6>& out, const Limbs<6>& a, const Limbs<6>& b, const Limbs<6>& modulus,
                                         const std::uint64_t& negative_modulus_inverse) {
  std::uint64_t t0, t1, t2, t3, t4, t5;
  [[maybe_unused]] std::uint64_t h0, h1, carry;  // scratch, as above
  asm(
        "movq 0(%[b]), %%rdx\n\t"
        "xorl %%eax, %%eax\n\t"
        "mulxq 0(%[a]), %[t0], %[t1]\n\t"
        "mulxq 8(%[a]), %%rax, %[t2]\n\t"
        "adoxq %%rax, %[t1]\n\t"
        "mulxq 16(%[a]), %%rax, %[t3]\n\t"
        "adoxq %%rax, %[t2]\n\t"
        "mulxq 24(%[a]), %%rax, %[t4]\n\t"
        "adoxq %%rax, %[t3]\n\t"
        "mulxq 32(%[a]), %%rax, %[t5]\n\t"
        "adoxq %%rax, %[t4]\n\t"
        "mulxq 40(%[a]), %%rax, %[carry]\n\t"
        "adoxq %%rax, %[t5]\n\t"
        "movl $0, %%eax\n\t"
        "adoxq %%rax, %[carry]\n\t"
        STAGEHAND_MONT6_REDUCE
        STAGEHAND_MONT6_ROW(8) STAGEHAND_MONT6_ROW(16) STAGEHAND_MONT6_ROW(24) STAGEHAND_MONT6_ROW(32) STAGEHAND_MONT6_ROW(40)
      : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [t5] "=&r"(t5),
        [h0] "=&r"(h0), [h1] "=&r"(h1), [carry] "=&r"(carry)
      : [a] "r"(a.data()), [b] "r"(b.data()), [q] "r"(modulus.data()), [inverse] "m"(negative_modulus_inverse),
        "m"(a), "m"(b), "m"(modulus)
      : "rax", "rdx", "cc");
  out = {t0, t1, t2, t3, t4, t5};
}

#endif  // STAGEHAND_MATH_HAVE_ASSEMBLY

#undef STAGEHAND_MONT_ROW_START
#undef STAGEHAND_MONT_PRODUCT
#undef STAGEHAND_MONT_ROW_CARRY
#undef STAGEHAND_MONT_REDUCE_START
#undef STAGEHAND_MONT_REDUCE_STEP
#undef STAGEHAND_MONT_REDUCE_END
#undef STAGEHAND_MONT4_REDUCE
#undef STAGEHAND_MONT6_REDUCE
#undef STAGEHAND_MONT4_ROW
#undef STAGEHAND_MONT6_ROW

}  // namespace stagehand::math::detail
// clang-format on
