// groth16_h and groth16_msm_g1 on the device: the NTT-based H step and the Pippenger MSM of
// ntt.cu/msm.cu, plus a one-thread kernel that folds the MSM's window sums into one point.
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "common.cuh"
#include "curve.cuh"
#include "groth16_launchers.hpp"
#include "msm.hpp"
#include "ntt.hpp"

namespace stagehand::cuda {
namespace {

[[noreturn]] void reject(const KernelLaunch& launch, const std::string& why) {
  throw std::invalid_argument("kernel " + launch.name + ": " + why);
}

void* address(const KernelLaunch& launch, const BufferUse& use, std::uint64_t bytes) {
  if (!use.pointer) reject(launch, "null buffer");
  if (use.bytes < bytes) {
    reject(launch, "buffer of " + std::to_string(use.bytes) + " bytes, needs " + std::to_string(bytes));
  }
  return reinterpret_cast<void*>(use.pointer.address);
}

// ---- the snarkjs domain ------------------------------------------------------------------------

// base^exponent on the host with field.cuh's arithmetic (it compiles for the host too);
// exponent as eight little-endian 32-bit words.
Fr power(const Fr& base, const std::uint32_t (&exponent)[8]) {
  Fr result = Fr::one();
  for (int bit = 255; bit >= 0; --bit) {
    result = result * result;
    if ((exponent[bit / 32] >> (bit % 32)) & 1) result = result * base;
  }
  return result;
}

void to_words(FrWords& target, const Fr& value) {
  for (int i = 0; i < 4; ++i) target[i] = std::uint64_t{value.w[2 * i]} | (std::uint64_t{value.w[2 * i + 1]} << 32);
}

// snarkjs: g = ω_2n = 5^((r-1)/2n), ω = g^2 (math::Domain::snarkjs).
void snarkjs_roots(unsigned log_size, FrWords& root, FrWords& coset) {
  std::uint32_t r_minus_1[8];
  for (int i = 0; i < 8; ++i) r_minus_1[i] = FrParams::modulus(i);
  r_minus_1[0] -= 1;  // the low word of r is 1
  const unsigned shift = log_size + 1;  // < 32 (two-adicity of r is 32, log_size <= 27)
  std::uint32_t exponent[8];
  for (int i = 0; i < 8; ++i) {
    const std::uint32_t high = i + 1 < 8 ? r_minus_1[i + 1] : 0;
    exponent[i] = shift == 32 ? high : (r_minus_1[i] >> shift) | (high << (32 - shift));
  }
  const Fr one = Fr::one();
  const Fr five = one + one + one + one + one;
  const Fr g = power(five, exponent);
  to_words(coset, g);
  to_words(root, g * g);
}

struct DomainCache {
  std::mutex mutex;
  std::map<std::pair<int, unsigned>, void*> domains;  // (GPU, log_size) -> device table
};
DomainCache& domain_cache() {
  static DomainCache cache;
  return cache;
}

const void* snarkjs_domain(unsigned log_size, cudaStream_t stream) {
  int device = 0;
  SH_CUDA_OK(cudaGetDevice(&device));
  auto& cache = domain_cache();
  std::lock_guard lock(cache.mutex);
  auto& slot = cache.domains[{device, log_size}];
  if (slot == nullptr) {
    FrWords root, coset;
    snarkjs_roots(log_size, root, coset);
    void* table = nullptr;
    SH_CUDA_OK(cudaMalloc(&table, ntt_domain_bytes(log_size)));
    ntt_domain_init(table, log_size, root, coset, stream);
    SH_CUDA_OK(cudaStreamSynchronize(stream));  // once per size: then any stream may read it
    slot = table;
  }
  return slot;
}

void launch_groth16_h(const KernelLaunch& launch, cudaStream_t stream) {
  if (launch.arguments.empty() || launch.writes.size() < 3) reject(launch, "expects [log_size, threads] and writes [a, b, c]");
  const std::uint64_t log_size = launch.arguments[0];
  if (log_size < kNttMinLogSize || log_size > kNttMaxLogSize) reject(launch, "log_size outside 1..27");
  const unsigned log = static_cast<unsigned>(log_size);
  const std::uint64_t bytes = kFrBytes << log;
  void* a = address(launch, launch.writes[0], bytes);
  void* b = address(launch, launch.writes[1], bytes);
  void* c = address(launch, launch.writes[2], bytes);
  const void* domain = nullptr;
  if (launch.writes.size() > 3) {
    void* scratch = address(launch, launch.writes[3], ntt_domain_bytes(log));
    FrWords root, coset;
    snarkjs_roots(log, root, coset);
    ntt_domain_init(scratch, log, root, coset, stream);
    domain = scratch;
  } else {
    domain = snarkjs_domain(log, stream);
  }
  h_polynomial(a, b, c, domain, log, HForm::snarkjs, stream);
}

// ---- the MSM -----------------------------------------------------------------------------------

struct MsmBuffers {
  void* memory = nullptr;
  std::uint64_t bytes = 0;
};
struct MsmCache {
  std::mutex mutex;
  std::map<std::pair<int, unsigned long long>, MsmBuffers> buffers;  // (GPU, stream id)
};
MsmCache& msm_cache() {
  static MsmCache cache;
  return cache;
}

void* msm_buffers(std::uint64_t bytes, cudaStream_t stream) {
  int device = 0;
  SH_CUDA_OK(cudaGetDevice(&device));
  unsigned long long stream_id = 0;
  SH_CUDA_OK(cudaStreamGetId(stream, &stream_id));
  auto& cache = msm_cache();
  std::lock_guard lock(cache.mutex);
  auto& slot = cache.buffers[{device, stream_id}];
  if (slot.bytes < bytes) {
    if (slot.memory != nullptr) {
      SH_CUDA_OK(cudaStreamSynchronize(stream));  // earlier launches on this stream may still read it
      SH_CUDA_OK(cudaFree(slot.memory));
      slot = MsmBuffers{};
    }
    SH_CUDA_OK(cudaMalloc(&slot.memory, bytes));
    slot.bytes = bytes;
  }
  return slot.memory;
}

// The window sums' share of the MSM's memory, rounded so that the sort buffers after it stay aligned.
std::uint64_t msm_sums_bytes(const MsmPlan& plan) { return (msm_result_bytes(plan) + 255) / 256 * 256; }

// Jacobian (X/Z^2, Y/Z^3) as XYZZ: ZZ = Z^2, ZZZ = Z^3 (Z = 0, infinity, gives ZZ = 0).
__device__ G1Xyzz xyzz_from_jacobian(const G1Jacobian& p) {
  G1Xyzz r;
  r.x = p.x;
  r.y = p.y;
  r.zz = p.z.squared();
  r.zzz = r.zz * p.z;
  return r;
}

// Σ_w 2^(c·w)·S_w by Horner from the top window (msm_combine_windows on the device). One thread:
// a few hundred doublings, microseconds.
__global__ void combine_windows_kernel(const G1Jacobian* window_sums, unsigned window_count, unsigned window_bits,
                                       G1Jacobian* result) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  G1Xyzz sum = G1Xyzz::infinity();
  for (unsigned w = window_count; w-- > 0;) {
    for (unsigned bit = 0; bit < window_bits; ++bit) sum = sum.doubled();
    sum = sum + xyzz_from_jacobian(window_sums[w]);
  }
  *result = sum.to_jacobian();
}

void launch_groth16_msm_g1(const KernelLaunch& launch, cudaStream_t stream) {
  if (launch.reads.size() < 2 || launch.writes.empty()) reject(launch, "reads [points, scalars] and writes [result]");
  const std::uint64_t n = launch.work_units;
  auto* result = static_cast<G1Jacobian*>(address(launch, launch.writes[0], kG1JacobianBytes));
  if (n == 0) {  // the empty sum: infinity
    combine_windows_kernel<<<1, 1, 0, stream>>>(nullptr, 0, 0, result);
    SH_CUDA_LAUNCHED();
    return;
  }
  const void* points = address(launch, launch.reads[0], n * kG1AffineBytes);
  const void* scalars = address(launch, launch.reads[1], n * kFrBytes);
  const MsmPlan plan = msm_plan(n, 0);
  const std::uint64_t sums_bytes = msm_sums_bytes(plan);
  auto* memory = launch.writes.size() > 1
                     ? static_cast<std::uint8_t*>(address(launch, launch.writes[1], sums_bytes + msm_scratch_bytes(plan)))
                     : static_cast<std::uint8_t*>(msm_buffers(sums_bytes + msm_scratch_bytes(plan), stream));
  msm_g1_windows(points, scalars, /*scalars_montgomery=*/true, plan, memory, memory + sums_bytes, stream);
  combine_windows_kernel<<<1, 1, 0, stream>>>(reinterpret_cast<const G1Jacobian*>(memory), plan.window_count,
                                              plan.window_bits, result);
  SH_CUDA_LAUNCHED();
}

constexpr std::pair<std::string_view, KernelLauncher> kGroth16Launchers[] = {
    {"groth16_h", &launch_groth16_h},
    {"groth16_msm_g1", &launch_groth16_msm_g1},
};

}  // namespace

const KernelLauncher* find_groth16_launcher(std::string_view name) {
  for (const auto& entry : kGroth16Launchers) {
    if (entry.first == name) return &entry.second;
  }
  return nullptr;
}

std::uint64_t groth16_kernel_scratch_bytes(std::string_view name, std::uint64_t work_units) {
  if (name == "groth16_h") {
    unsigned log = 0;
    while ((std::uint64_t{1} << log) < work_units) ++log;
    return log >= kNttMinLogSize && log <= kNttMaxLogSize ? ntt_domain_bytes(log) : 0;
  }
  if (name == "groth16_msm_g1" && work_units > 0) {
    const MsmPlan plan = msm_plan(work_units, 0);
    return msm_sums_bytes(plan) + msm_scratch_bytes(plan);
  }
  return 0;
}

std::vector<std::string_view> groth16_launcher_names() {
  std::vector<std::string_view> names;
  for (const auto& entry : kGroth16Launchers) names.push_back(entry.first);
  return names;
}

void release_groth16_buffers() {
  SH_CUDA_OK(cudaDeviceSynchronize());
  {
    auto& cache = domain_cache();
    std::lock_guard lock(cache.mutex);
    for (auto& [key, table] : cache.domains) cudaFree(table);
    cache.domains.clear();
  }
  auto& cache = msm_cache();
  std::lock_guard lock(cache.mutex);
  for (auto& [key, buffers] : cache.buffers) cudaFree(buffers.memory);
  cache.buffers.clear();
}

}  // namespace stagehand::cuda
