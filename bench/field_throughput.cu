// What one multiprocessor sustains, for deciding how to write the field arithmetic: the integer
// instructions a Montgomery multiplication is made of, the Fr and Fq multiplications themselves,
// and the MSM's mixed point addition with everything in registers (no memory traffic), each as
// operations per clock per SM. Compared with the kernels' own figures, it separates the
// arithmetic's cost from what memory and occupancy add. CMake builds it (stagehand_field_throughput);
// scripts/gpu/profile-kernels.sh runs it. Clock: the device's rated SM clock (cudaDevAttrClockRate,
// the clock nvidia-smi shows under load), so "per clock" figures assume the run held that clock.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ec/curve.cuh"
#include "ff/field.cuh"

using namespace stagehand::cuda;

#include "util/cuda_check.hpp"

constexpr int kChains = 8;  // independent chains per thread: enough to hide each instruction's latency

// One kind of instruction, kChains independent chains, `rounds` per chain.
template <int Kind>
__global__ void instruction_kernel(std::uint32_t* sink, int rounds, std::uint32_t seed) {
  std::uint32_t v[kChains], w[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) {
    v[c] = seed * (threadIdx.x + 1) + c;
    w[c] = seed ^ (c * 0x9e3779b9u);
  }
  for (int r = 0; r < rounds; ++r) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      if constexpr (Kind == 0) {  // IMAD: v = v*w + v
        asm volatile("mad.lo.u32 %0, %0, %1, %0;" : "+r"(v[c]) : "r"(w[c]));
      } else if constexpr (Kind == 1) {  // IMAD.HI
        asm volatile("mad.hi.u32 %0, %0, %1, %0;" : "+r"(v[c]) : "r"(w[c]));
      } else if constexpr (Kind == 2) {  // mad.wide with a 64-bit addend: ptxas (sm_90) makes it two
                                         // IMAD.WIDE (one for a*b, one adding w*2^7) plus the LOP3
        std::uint64_t wide;
        asm volatile("mad.wide.u32 %0, %1, %2, %3;" : "=l"(wide) : "r"(v[c]), "r"(w[c]), "l"(std::uint64_t{w[c]} << 7));
        v[c] = static_cast<std::uint32_t>(wide) ^ static_cast<std::uint32_t>(wide >> 32);
      } else if constexpr (Kind == 3) {  // add.u32: ptxas folds two dependent adds into one IADD3
        asm volatile("add.u32 %0, %0, %1;" : "+r"(v[c]) : "r"(w[c]));
      } else if constexpr (Kind == 5) {  // DFMA: the FP64 pipe (field_f64.cuh's products)
        double d = __longlong_as_double(0x4330000000000000ull | v[c]);
        asm volatile("fma.rz.f64 %0, %0, %1, %0;" : "+d"(d) : "d"(__longlong_as_double(0x3ff0000000000000ull | w[c])));
        v[c] = static_cast<std::uint32_t>(__double_as_longlong(d));
      } else {  // add with carry out then in: the CIOS accumulation step
        asm volatile("add.cc.u32 %0, %0, %1;\n\taddc.u32 %1, %1, 0;" : "+r"(v[c]), "+r"(w[c]));
      }
    }
  }
  std::uint32_t acc = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc ^= v[c];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// Two mixes of the multiplication's forms, to see which half of a CIOS row gains from wide
// products: kWideProductNarrowReduce makes a·b_i with wide products and m·p with IMAD + IMAD.HI,
// kNarrowProductWideReduce the other way round. Checked against operator* in main.
enum Mix { kWideProductNarrowReduce, kNarrowProductWideReduce };

template <class F>
struct FieldParams;
template <class P>
struct FieldParams<Field<P>> {
  using type = P;
};

template <class P, Mix M>
__device__ __forceinline__ Field<P> multiply_mixed(const Field<P>& a, const Field<P>& b) {
  using F = Field<P>;
  constexpr int N = F::N;
  std::uint32_t t[N + 1];
#pragma unroll
  for (int i = 0; i <= N; ++i) t[i] = 0;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    if constexpr (M == kWideProductNarrowReduce) {
      F::template accumulate_row<false>(t, a.w, b.w[i]);
      F::narrow_reduce_row(t);
    } else {
      F::narrow_product_row(t, a.w, b.w[i]);
      F::reduce_row(t);
    }
  }
  return F::reduced(t);
}

// Each thread follows a chain of products from its own start and counts where a mix differs from
// operator*.
template <class P>
__global__ void mixed_check_kernel(unsigned* mismatches) {
  using F = Field<P>;
  F x = F::one(), y = F::one();
  x.w[0] ^= threadIdx.x * 2654435761u + blockIdx.x;
  y.w[1] ^= threadIdx.x + 977u * blockIdx.x;
  for (int r = 0; r < 64; ++r) {
    const F expected = x * y;
    if (multiply_mixed<P, kWideProductNarrowReduce>(x, y) != expected) atomicAdd(mismatches, 1u);
    if (multiply_mixed<P, kNarrowProductWideReduce>(x, y) != expected) atomicAdd(mismatches, 1u);
    y = x;
    x = expected;
  }
}

// An FP64-product multiplication (field_f64.cuh; G, FqF64 or FrF64) against the integer one (F):
// chains of products and squares from each thread's own start, counting the results that differ.
template <class F, class G>
__global__ void f64_check_kernel(unsigned* mismatches) {
  F x = F::one(), y = F::one();
  x.w[0] ^= threadIdx.x * 2654435761u + blockIdx.x;
  x.w[7] ^= blockIdx.x * 40503u;
  y.w[1] ^= threadIdx.x + 977u * blockIdx.x;
  y.w[F::N - 1] &= 0x0fffffffu;
  for (int r = 0; r < 64; ++r) {
    const F expected = x * y;
    const G fx = same_words<G>(x), fy = same_words<G>(y);
    if (same_words<F>(fx * fy) != expected || same_words<F>(fx.squared()) != x.squared()) {
      atomicAdd(mismatches, 1u);
    }
    y = x;
    x = expected;
  }
}

// Field multiplications: `Ilp` independent products per thread, `rounds` each. Op 0: operator*
// (wide products), 1: multiply_narrow (the earlier IMAD + IMAD.HI form), 2: squared(), 3 and 4:
// the two mixes above.
template <class F, int Op, int Ilp>
__global__ void multiply_kernel(F* sink, int rounds) {
  F x[Ilp], y = F::one();
  y.w[0] ^= threadIdx.x;
#pragma unroll
  for (int i = 0; i < Ilp; ++i) {
    x[i] = F::one();
    x[i].w[1] ^= blockIdx.x + i;
  }
  for (int r = 0; r < rounds; ++r) {
#pragma unroll
    for (int i = 0; i < Ilp; ++i) {
      if constexpr (Op == 0)
        x[i] = x[i] * y;
      else if constexpr (Op == 1)
        x[i] = F::multiply_narrow(x[i], y);
      else if constexpr (Op == 2)
        x[i] = x[i].squared();
      else if constexpr (Op == 3)
        x[i] = multiply_mixed<typename FieldParams<F>::type, kWideProductNarrowReduce>(x[i], y);
      else
        x[i] = multiply_mixed<typename FieldParams<F>::type, kNarrowProductWideReduce>(x[i], y);
    }
  }
  F acc = x[0];
#pragma unroll
  for (int i = 1; i < Ilp; ++i) acc = acc + x[i];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// The MSM's mixed addition (madd-2008-s), the affine points in registers: the arithmetic of one
// bucket addition without the gather of the point. F: Fq, or FqF64 for the FP64 products.
template <class F, int Blocks = 4>
__global__ void __launch_bounds__(128, Blocks)
    mixed_add_kernel(XyzzPoint<F>* sink, const G1Affine* points, int rounds) {
  const G1Affine p = points[threadIdx.x & 7];
  const G1Affine q = points[8 + (threadIdx.x & 7)];
  const F px = same_words<F>(p.x), py = same_words<F>(p.y), qx = same_words<F>(q.x), qy = same_words<F>(q.y);
  XyzzPoint<F> sum = XyzzPoint<F>::from_affine(px, py);
  for (int r = 0; r < rounds; ++r) {
    sum.add_affine(qx, (r & 1) ? qy : -qy);
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

// Products on both pipes at once: each thread follows NI chains multiplied in the integer form
// (F: the FMA-heavy pipe's IMAD.WIDE) and NG in the FP64 form (G: the FP64 pipe's DFMA), one
// after the other in every round, so that the two pipes can work side by side. Counted as
// (NI + NG) products a round.
template <class F, class G, int NI, int NG>
__global__ void both_pipes_kernel(F* sink, int rounds) {
  F x[NI > 0 ? NI : 1], y = F::one();  // (arrays of one where a form has no chain)
  G z[NG > 0 ? NG : 1];
  y.w[0] ^= threadIdx.x;
  const G yg = same_words<G>(y);
#pragma unroll
  for (int i = 0; i < NI; ++i) {
    x[i] = F::one();
    x[i].w[1] ^= blockIdx.x + i;
  }
#pragma unroll
  for (int i = 0; i < NG; ++i) {
    F start = F::one();
    start.w[1] ^= blockIdx.x + NI + i;
    z[i] = same_words<G>(start);
  }
  for (int r = 0; r < rounds; ++r) {
#pragma unroll
    for (int i = 0; i < NI; ++i) x[i] = x[i] * y;
#pragma unroll
    for (int i = 0; i < NG; ++i) z[i] = z[i] * yg;
  }
  F acc = F::zero();
#pragma unroll
  for (int i = 0; i < NI; ++i) acc = acc + x[i];
#pragma unroll
  for (int i = 0; i < NG; ++i) acc = acc + same_words<F>(z[i]);
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// The mixed addition (madd-2008-s, as XyzzPoint::add_affine) with its ten products split between
// the pipes: five in the integer form (F), five in the FP64 form (G), in add_affine's order; F and
// G both inlined (Fq, FqF64) or both calls (FqCalled, FqF64Called). The words are the same in
// both forms, so the sums equal the integer addition's exactly (checked in main). On the H200 it
// lost to the FP64 form alone (bench/journal/2026-12-03.md): the pipes share the issue slots and
// the ALU's column additions.
template <class F, class G>
__device__ __forceinline__ F times_on_fp64(const F& a, const F& b) {
  return same_words<F>(same_words<G>(a) * same_words<G>(b));
}
template <class F, class G>
__device__ __forceinline__ void add_affine_both_pipes(XyzzPoint<F>& s, const F& x2, const F& y2) {
  if (s.is_infinity()) {
    s = XyzzPoint<F>::from_affine(x2, y2);
    return;
  }
  const F u2 = x2 * s.zz;                       // integer
  const F s2 = times_on_fp64<F, G>(y2, s.zzz);  // FP64
  const F p = u2 - s.x;
  const F r = s2 - s.y;
  if (p.is_zero()) {
    s = r.is_zero() ? s.double_affine(x2, y2) : XyzzPoint<F>::infinity();
    return;
  }
  const F pp = same_words<F>(same_words<G>(p).squared());  // FP64
  const F ppp = p * pp;                                    // integer
  const F q = times_on_fp64<F, G>(s.x, pp);                // FP64
  const F x3 = r.squared() - ppp - q.doubled();            // integer
  s.y = r * (q - x3) - s.y * ppp;                          // integer, integer
  s.x = x3;
  s.zz = times_on_fp64<F, G>(s.zz, pp);     // FP64
  s.zzz = times_on_fp64<F, G>(s.zzz, ppp);  // FP64
}

template <class F, class G, int Blocks = 3>
__global__ void __launch_bounds__(128, Blocks)
    mixed_add_both_pipes_kernel(XyzzPoint<F>* sink, const G1Affine* points, int rounds) {
  const G1Affine p = points[threadIdx.x & 7];
  const G1Affine q = points[8 + (threadIdx.x & 7)];
  const F px = same_words<F>(p.x), py = same_words<F>(p.y), qx = same_words<F>(q.x), qy = same_words<F>(q.y);
  XyzzPoint<F> sum = XyzzPoint<F>::from_affine(px, py);
  for (int r = 0; r < rounds; ++r) {
    add_affine_both_pipes<F, G>(sum, qx, (r & 1) ? qy : -qy);
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

// Batch-affine helpers for the two kernels below. prefix[i] = Π_{j<i} (qx - x[j]); returns the
// product of all T.
template <class F, int T>
__device__ F dx_prefix_products(const F (&x)[T], F (&prefix)[T], const F& qx) {
  F product = F::one();
  for (int i = 0; i < T; ++i) {
    prefix[i] = product;
    product = product * (qx - x[i]);
  }
  return product;
}

// With `inverse` = 1 / Π (qx - x[i]): every sum plus (qx, qy), two products recovering each 1/dx.
template <class F, int T>
__device__ void add_to_every_sum(F (&x)[T], F (&y)[T], const F (&prefix)[T], F inverse, const F& qx, const F& qy) {
  for (int i = T - 1; i >= 0; --i) {
    const F dx = qx - x[i];
    const F inverse_dx = inverse * prefix[i];
    inverse = inverse * dx;
    const F lambda = (qy - y[i]) * inverse_dx;
    const F x3 = lambda.squared() - x[i] - qx;
    y[i] = lambda * (x[i] - x3) - y[i];
    x[i] = x3;
  }
}

// Batch-affine additions (Montgomery's trick): each thread keeps T affine sums and adds one point
// to all of them per round, sharing one inversion (Fermat's, about 570 products) between the T;
// about 6 products per addition besides (dx's prefix products, the two products that recover each
// 1/dx, lambda, lambda^2, y3) against the mixed XYZZ addition's 10. The sums and the prefix
// products live in local memory (3 elements of 48 bytes per sum: 9 KiB a thread at T = 64), as a
// bucket kernel's would live in device memory; the arithmetic's cost and that traffic together,
// per addition. Not checked (the points are not on the curve); the formulas' cost only.
template <class F, int T, int Blocks = 3>
__global__ void __launch_bounds__(128, Blocks) batch_affine_kernel(F* sink, const G1Affine* points, int rounds) {
  const G1Affine q = points[8 + (threadIdx.x & 7)];
  const F qx = same_words<F>(q.x), qy = same_words<F>(q.y);
  F x[T], y[T], prefix[T];
  const G1Affine p = points[threadIdx.x & 7];
  for (int i = 0; i < T; ++i) {
    x[i] = same_words<F>(p.x);
    x[i].w[0] += i;
    y[i] = same_words<F>(p.y);
  }
  for (int r = 0; r < rounds; ++r) {
    const F product = dx_prefix_products(x, prefix, qx);
    add_to_every_sum(x, y, prefix, product.inverse(), qx, (r & 1) ? qy : -qy);
  }
  F acc = F::zero();
  for (int i = 0; i < T; ++i) acc = acc + x[i] + y[i];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// The same with the inversion shared by the block: each of the 128 threads keeps T sums, the
// threads' products of dx are combined by Montgomery's trick across the block (an inclusive prefix
// and an inclusive suffix scan in shared memory, 7 products each), one thread inverts the block's
// product, and each thread recovers its own inverse with two products: per addition about
// 6 + 16/T products and 1/(128·T) of an inversion.
template <class F, int T, int Blocks = 3>
__global__ void __launch_bounds__(128, Blocks) block_affine_kernel(F* sink, const G1Affine* points, int rounds) {
  __shared__ F prefix_scan[128], suffix_scan[128], total_inverse;
  const int t = threadIdx.x;
  const G1Affine q = points[8 + (t & 7)];
  const F qx = same_words<F>(q.x), qy = same_words<F>(q.y);
  F x[T], y[T], prefix[T];
  const G1Affine p = points[t & 7];
  for (int i = 0; i < T; ++i) {
    x[i] = same_words<F>(p.x);
    x[i].w[0] += i + T * t;
    y[i] = same_words<F>(p.y);
  }
  for (int r = 0; r < rounds; ++r) {
    const F product = dx_prefix_products(x, prefix, qx);
    F before = product, after = product;  // become P_0..P_t and P_t..P_127
    for (int offset = 1; offset < 128; offset <<= 1) {
      prefix_scan[t] = before;
      suffix_scan[t] = after;
      __syncthreads();
      if (t >= offset) before = prefix_scan[t - offset] * before;
      if (t + offset < 128) after = after * suffix_scan[t + offset];
      __syncthreads();
    }
    prefix_scan[t] = before;
    suffix_scan[t] = after;
    if (t == 127) total_inverse = before.inverse();
    __syncthreads();
    F inverse = total_inverse;
    if (t > 0) inverse = inverse * prefix_scan[t - 1];
    if (t < 127) inverse = inverse * suffix_scan[t + 1];
    __syncthreads();  // the scans' slots are written again next round
    add_to_every_sum(x, y, prefix, inverse, qx, (r & 1) ? qy : -qy);
  }
  F acc = F::zero();
  for (int i = 0; i < T; ++i) acc = acc + x[i] + y[i];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// The sink type of a kernel taking (XyzzPoint<F>*, const G1Affine*, int).
template <class Point>
Point* kernel_sink(void (*)(Point*, const G1Affine*, int));

template <class Launch>
double time_launch(Launch launch) {
  cudaEvent_t begin, end;
  STAGEHAND_CUDA_CHECK(cudaEventCreate(&begin));
  STAGEHAND_CUDA_CHECK(cudaEventCreate(&end));
  launch();  // warm-up
  STAGEHAND_CUDA_CHECK(cudaDeviceSynchronize());
  STAGEHAND_CUDA_CHECK(cudaEventRecord(begin));
  launch();
  STAGEHAND_CUDA_CHECK(cudaEventRecord(end));
  STAGEHAND_CUDA_CHECK(cudaEventSynchronize(end));
  float ms = 0;
  STAGEHAND_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
  STAGEHAND_CUDA_CHECK(cudaEventDestroy(begin));
  STAGEHAND_CUDA_CHECK(cudaEventDestroy(end));
  return ms;
}

int run_benchmark() {
  cudaDeviceProp properties{};
  STAGEHAND_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
  const int sms = properties.multiProcessorCount;
  int clock_khz = 0;
  STAGEHAND_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const double mhz = clock_khz / 1e3;
  std::printf("device: %s, %d SMs, rated SM clock %.0f MHz\n", properties.name, sms, mhz);
  std::printf("%-40s %10s %14s %14s\n", "operation", "ms", "per clk per SM", "clk per op/SM");

  auto report = [&](const char* name, double ms, double operations) {
    const double per_clock = operations / (ms * 1e-3 * mhz * 1e6) / sms;
    std::printf("%-40s %10.3f %14.3f %14.2f\n", name, ms, per_clock, 1.0 / per_clock);
  };

  std::uint32_t* sink = nullptr;
  const int threads = 256, blocks = sms * 8;  // 2048 threads per SM: full occupancy
  STAGEHAND_CUDA_CHECK(cudaMalloc(&sink, sizeof(G1Xyzz) * threads * blocks));
  const int rounds = 1 << 14;
  const double instructions = double(threads) * blocks * rounds * kChains;
  report("IMAD (mad.lo.u32)", time_launch([&] { instruction_kernel<0><<<blocks, threads>>>(sink, rounds, 7); }),
         instructions);
  report("IMAD.HI (mad.hi.u32)", time_launch([&] { instruction_kernel<1><<<blocks, threads>>>(sink, rounds, 7); }),
         instructions);
  report("2 IMAD.WIDE + LOP3 (mad.wide, 64-bit c)",
         time_launch([&] { instruction_kernel<2><<<blocks, threads>>>(sink, rounds, 7); }), instructions);
  report("add.u32 (two per IADD3, fused)",
         time_launch([&] { instruction_kernel<3><<<blocks, threads>>>(sink, rounds, 7); }), instructions);
  report("add.cc + addc pairs", time_launch([&] { instruction_kernel<4><<<blocks, threads>>>(sink, rounds, 7); }),
         instructions);
  report("DFMA (fma.rz.f64)", time_launch([&] { instruction_kernel<5><<<blocks, threads>>>(sink, rounds, 7); }),
         instructions);

  const int mul_rounds = 1 << 10;
  const int mul_blocks = sms * 8, mul_threads = 256;  // as many as fit, in waves
  const double products = double(mul_threads) * mul_blocks * mul_rounds;
  auto field_rows = [&](auto field, const char* field_name) {
    using F = decltype(field);
    F* out = reinterpret_cast<F*>(sink);
    char name[64];
    std::snprintf(name, sizeof name, "%s mul (wide products)", field_name);
    report(name, time_launch([&] { multiply_kernel<F, 0, 1><<<mul_blocks, mul_threads>>>(out, mul_rounds); }),
           products);
    std::snprintf(name, sizeof name, "%s mul (wide products) ilp2", field_name);
    report(name, time_launch([&] { multiply_kernel<F, 0, 2><<<mul_blocks, mul_threads>>>(out, mul_rounds); }),
           2 * products);
    std::snprintf(name, sizeof name, "%s mul (narrow: IMAD + IMAD.HI)", field_name);
    report(name, time_launch([&] { multiply_kernel<F, 1, 1><<<mul_blocks, mul_threads>>>(out, mul_rounds); }),
           products);
    std::snprintf(name, sizeof name, "%s squared", field_name);
    report(name, time_launch([&] { multiply_kernel<F, 2, 1><<<mul_blocks, mul_threads>>>(out, mul_rounds); }),
           products);
    std::snprintf(name, sizeof name, "%s mul (wide a*b, narrow m*p)", field_name);
    report(name, time_launch([&] { multiply_kernel<F, 3, 1><<<mul_blocks, mul_threads>>>(out, mul_rounds); }),
           products);
    std::snprintf(name, sizeof name, "%s mul (narrow a*b, wide m*p)", field_name);
    report(name, time_launch([&] { multiply_kernel<F, 4, 1><<<mul_blocks, mul_threads>>>(out, mul_rounds); }),
           products);
  };
  field_rows(Fr{}, "Fr");
  field_rows(Fq{}, "Fq");
  {
    FqF64* out = reinterpret_cast<FqF64*>(sink);
    report("Fq mul (FP64 products)",
           time_launch([&] { multiply_kernel<FqF64, 0, 1><<<mul_blocks, mul_threads>>>(out, mul_rounds); }), products);
    report("Fq squared (FP64 products)",
           time_launch([&] { multiply_kernel<FqF64, 2, 1><<<mul_blocks, mul_threads>>>(out, mul_rounds); }), products);
    report("Fq mul (FP64 products) ilp2",
           time_launch([&] { multiply_kernel<FqF64, 0, 2><<<mul_blocks, mul_threads>>>(out, mul_rounds); }),
           2 * products);
  }
  {
    FrF64* out = reinterpret_cast<FrF64*>(sink);
    report("Fr mul (FP64 products)",
           time_launch([&] { multiply_kernel<FrF64, 0, 1><<<mul_blocks, mul_threads>>>(out, mul_rounds); }), products);
    report("Fr mul (FP64 products) ilp2",
           time_launch([&] { multiply_kernel<FrF64, 0, 2><<<mul_blocks, mul_threads>>>(out, mul_rounds); }),
           2 * products);
  }
  // Both pipes at once (integer : FP64 chains a thread).
  {
    Fr* out = reinterpret_cast<Fr*>(sink);
    report("Fr mul, both pipes 1:1",
           time_launch([&] { both_pipes_kernel<Fr, FrF64, 1, 1><<<mul_blocks, mul_threads>>>(out, mul_rounds); }),
           2 * products);
    report("Fr mul, both pipes 1:2",
           time_launch([&] { both_pipes_kernel<Fr, FrF64, 1, 2><<<mul_blocks, mul_threads>>>(out, mul_rounds); }),
           3 * products);
    report("Fr mul, both pipes 2:2",
           time_launch([&] { both_pipes_kernel<Fr, FrF64, 2, 2><<<mul_blocks, mul_threads>>>(out, mul_rounds); }),
           4 * products);
    report("Fr mul, FP64 only 0:2",
           time_launch([&] { both_pipes_kernel<Fr, FrF64, 0, 2><<<mul_blocks, mul_threads>>>(out, mul_rounds); }),
           2 * products);
    report("Fr mul, integer only 2:0",
           time_launch([&] { both_pipes_kernel<Fr, FrF64, 2, 0><<<mul_blocks, mul_threads>>>(out, mul_rounds); }),
           2 * products);
    Fq* outq = reinterpret_cast<Fq*>(sink);
    report("Fq mul, both pipes 1:1",
           time_launch([&] { both_pipes_kernel<Fq, FqF64, 1, 1><<<mul_blocks, mul_threads>>>(outq, mul_rounds); }),
           2 * products);
    report("Fq mul, both pipes 1:2",
           time_launch([&] { both_pipes_kernel<Fq, FqF64, 1, 2><<<mul_blocks, mul_threads>>>(outq, mul_rounds); }),
           3 * products);
    report("Fq mul, FP64 only 0:2",
           time_launch([&] { both_pipes_kernel<Fq, FqF64, 0, 2><<<mul_blocks, mul_threads>>>(outq, mul_rounds); }),
           2 * products);
    report("Fq mul, integer only 2:0",
           time_launch([&] { both_pipes_kernel<Fq, FqF64, 2, 0><<<mul_blocks, mul_threads>>>(outq, mul_rounds); }),
           2 * products);
  }
  unsigned* mismatches = nullptr;
  STAGEHAND_CUDA_CHECK(cudaMalloc(&mismatches, sizeof(unsigned)));
  STAGEHAND_CUDA_CHECK(cudaMemset(mismatches, 0, sizeof(unsigned)));
  mixed_check_kernel<FrParams><<<64, 256>>>(mismatches);
  mixed_check_kernel<FqParams><<<64, 256>>>(mismatches);
  unsigned mismatch_count = 0;
  STAGEHAND_CUDA_CHECK(cudaMemcpy(&mismatch_count, mismatches, sizeof(unsigned), cudaMemcpyDeviceToHost));
  std::printf("mixes against operator*: %u of %d products differ\n", mismatch_count, 2 * 2 * 64 * 256 * 64);
  if (mismatch_count != 0) return 1;
  STAGEHAND_CUDA_CHECK(cudaMemset(mismatches, 0, sizeof(unsigned)));
  f64_check_kernel<Fq, FqF64><<<264, 256>>>(mismatches);
  f64_check_kernel<Fr, FrF64><<<264, 256>>>(mismatches);
  STAGEHAND_CUDA_CHECK(cudaMemcpy(&mismatch_count, mismatches, sizeof(unsigned), cudaMemcpyDeviceToHost));
  std::printf("FP64 products (Fq, Fr) against operator*: %u of %d products and squares differ\n", mismatch_count,
              2 * 264 * 256 * 64);
  STAGEHAND_CUDA_CHECK(cudaFree(mismatches));
  if (mismatch_count != 0) return 1;

  // Sixteen points with distinct x: the formulas do not check that a point is on the curve, and
  // distinct x keeps every addition on the common path; the sums are not checked.
  std::vector<G1Affine> host_points(16);
  for (int i = 0; i < 16; ++i) {
    host_points[i].x = Fq::one();
    host_points[i].x.w[0] += 3 * i + 1;
    host_points[i].y = Fq::one();
    host_points[i].y.w[2] += i;
  }
  G1Affine* points = nullptr;
  STAGEHAND_CUDA_CHECK(cudaMalloc(&points, sizeof(G1Affine) * 16));
  STAGEHAND_CUDA_CHECK(cudaMemcpy(points, host_points.data(), sizeof(G1Affine) * 16, cudaMemcpyHostToDevice));
  const int add_rounds = 1 << 9;
  const int add_blocks = sms * 4;
  report("mixed add (XYZZ+affine) 4x128/SM", time_launch([&] {
           mixed_add_kernel<Fq><<<add_blocks, 128>>>(reinterpret_cast<G1Xyzz*>(sink), points, add_rounds);
         }),
         double(add_blocks) * 128 * add_rounds);
  report("mixed add, FP64 products 4x128/SM", time_launch([&] {
           mixed_add_kernel<FqF64><<<add_blocks, 128>>>(reinterpret_cast<XyzzPoint<FqF64>*>(sink), points, add_rounds);
         }),
         double(add_blocks) * 128 * add_rounds);
  // As the MSM's item sum runs it: 3 blocks of 128 per SM, so that the FP64 form does not spill.
  report("mixed add, FP64 products 3x128/SM", time_launch([&] {
           mixed_add_kernel<FqF64, 3><<<sms * 3, 128>>>(reinterpret_cast<XyzzPoint<FqF64>*>(sink), points, add_rounds);
         }),
         double(sms * 3) * 128 * add_rounds);
  // The mixed addition with five of its products on each pipe, inlined and as calls, beside the
  // forms the MSM runs, and the split sums against the integer addition's (the same rounds from
  // the same points: equal word for word).
  {
    const int blocks3 = sms * 3;
    auto adds = [&](const char* name, auto kernel, int blocks) {
      report(name, time_launch([&] {
               kernel<<<blocks, 128>>>(reinterpret_cast<decltype(kernel_sink(kernel))>(sink), points, add_rounds);
             }),
             double(blocks) * 128 * add_rounds);
    };
    adds("mixed add, split pipes 3x128/SM", mixed_add_both_pipes_kernel<Fq, FqF64, 3>, blocks3);
    adds("mixed add, split pipes 4x128/SM", mixed_add_both_pipes_kernel<Fq, FqF64, 4>, add_blocks);
    adds("mixed add, integer 3x128/SM", mixed_add_kernel<Fq, 3>, blocks3);
    adds("mixed add, called, FP64 4x128/SM", mixed_add_kernel<FqF64Called, 4>, add_blocks);
    adds("mixed add, called, integer 4x128/SM", mixed_add_kernel<FqCalled, 4>, add_blocks);
    adds("mixed add, called, split 4x128/SM", mixed_add_both_pipes_kernel<FqCalled, FqF64Called, 4>, add_blocks);
    adds("mixed add, called, split 3x128/SM", mixed_add_both_pipes_kernel<FqCalled, FqF64Called, 3>, blocks3);
    const std::size_t count = std::size_t(blocks3) * 128;
    std::size_t differ = 0;
    G1Xyzz* other = nullptr;
    STAGEHAND_CUDA_CHECK(cudaMalloc(&other, sizeof(G1Xyzz) * count));
    mixed_add_kernel<Fq, 3><<<blocks3, 128>>>(reinterpret_cast<G1Xyzz*>(sink), points, 37);
    std::vector<G1Xyzz> expected(count), got(count);
    STAGEHAND_CUDA_CHECK(cudaMemcpy(expected.data(), sink, sizeof(G1Xyzz) * count, cudaMemcpyDeviceToHost));
    mixed_add_both_pipes_kernel<Fq, FqF64, 3><<<blocks3, 128>>>(other, points, 37);
    STAGEHAND_CUDA_CHECK(cudaMemcpy(got.data(), other, sizeof(G1Xyzz) * count, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < count; ++i) differ += std::memcmp(&expected[i], &got[i], sizeof(G1Xyzz)) != 0;
    mixed_add_both_pipes_kernel<FqCalled, FqF64Called, 3>
        <<<blocks3, 128>>>(reinterpret_cast<XyzzPoint<FqCalled>*>(other), points, 37);
    STAGEHAND_CUDA_CHECK(cudaMemcpy(got.data(), other, sizeof(G1Xyzz) * count, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < count; ++i) differ += std::memcmp(&expected[i], &got[i], sizeof(G1Xyzz)) != 0;
    STAGEHAND_CUDA_CHECK(cudaFree(other));
    std::printf("split mixed additions (inlined, called) against the integer one: %zu of %zu sums differ\n", differ,
                2 * count);
    if (differ != 0) return 1;
  }
  // The same additions batch-affine, T sums to an inversion, 3 blocks of 128 per SM: clk per
  // addition per SM, against the mixed addition's above.
  auto batch = [&]<class F>(const char* name, void (*kernel)(F*, const G1Affine*, int), int t, int blocks_per_sm = 3) {
    const int rounds = 4096 / t;
    report(name, time_launch([&] { kernel<<<sms * blocks_per_sm, 128>>>(reinterpret_cast<F*>(sink), points, rounds); }),
           double(sms * blocks_per_sm) * 128 * rounds * t);
  };
  batch("batch-affine add, FP64, T = 8", batch_affine_kernel<FqF64, 8>, 8);
  batch("batch-affine add, FP64, T = 16", batch_affine_kernel<FqF64, 16>, 16);
  batch("batch-affine add, FP64, T = 32", batch_affine_kernel<FqF64, 32>, 32);
  batch("batch-affine add, FP64, T = 64", batch_affine_kernel<FqF64, 64>, 64);
  batch("batch-affine add, FP64, T = 128", batch_affine_kernel<FqF64, 128>, 128);
  batch("batch-affine add, FP64, T = 256", batch_affine_kernel<FqF64, 256>, 256);
  batch("batch-affine add, integer, T = 64", batch_affine_kernel<Fq, 64>, 64);
  batch("block-shared inversion, FP64, T = 2", block_affine_kernel<FqF64, 2>, 2);
  batch("block-shared inversion, FP64, T = 4", block_affine_kernel<FqF64, 4>, 4);
  batch("block-shared inversion, FP64, T = 8", block_affine_kernel<FqF64, 8>, 8);
  batch("block-shared inversion, FP64, T = 16", block_affine_kernel<FqF64, 16>, 16);
  batch("block-shared inversion, FP64, T = 32", block_affine_kernel<FqF64, 32>, 32);
  batch("block-shared inversion, FP64, 2 blocks, T = 16", block_affine_kernel<FqF64, 16, 2>, 16, 2);
  STAGEHAND_CUDA_CHECK(cudaFree(points));
  STAGEHAND_CUDA_CHECK(cudaFree(sink));
  return 0;
}

int main() { return stagehand::cuda::exit_status_of(run_benchmark); }
