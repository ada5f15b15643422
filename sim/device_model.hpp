#pragma once
// A device model: the numbers the simulator needs to behave like one GPU, read from
// config/devices/*.toml. The H200 model holds the figures of docs/device-facts.md.

#include "device/types.hpp"

#include <filesystem>
#include <map>
#include <string>

namespace stagehand::sim {

// A kernel's duration: fixed_ns + ns_per_unit * (work_units - light_units) + ns_per_light_unit *
// light_units (KernelLaunch::light_units). A [kernels.NAME] table gives the kernel's own cost; a
// [kernels.NAME.bn254] table in it, the time of its BN254 launches where they were measured apart.
struct KernelCost {
  double fixed_ns = 0;
  double ns_per_unit = 0;
  double ns_per_light_unit = 0;  // ns_per_unit where the model does not say
  // Device memory the kernel needs for `units` of capacity (Device::kernel_scratch_bytes):
  // fixed + per unit. None on the models of other kernels; the measured H200 model carries what
  // Stagehand's MSM launchers ask for.
  double scratch_fixed_bytes = 0;
  double scratch_bytes_per_unit = 0;
};

struct DeviceModel {
  std::string name;
  std::filesystem::path source;
  Bytes memory_bytes = 0;
  int compute_concurrency = 1;  // kernels that may run at once on the compute engine
  int copy_engines_host_to_device = 1;
  int copy_engines_device_to_host = 1;

  // PCIe, decimal GB/s (1e9 bytes per second) as the measurements are written.
  double host_to_device_pinned_gbps = 0;
  double device_to_host_pinned_gbps = 0;
  double bidirectional_gbps = 0;  // both directions at once, together
  double pageable_gbps = 0;       // through the driver's staging buffer; blocks the host

  // Host-side costs of pinning, fixed + per GiB.
  double register_fixed_ms = 0;
  double register_ms_per_gib = 0;
  double unregister_fixed_ms = 0;
  double unregister_ms_per_gib = 0;
  double pinned_alloc_ms_per_gib = 0;
  double pinned_free_ms_per_gib = 0;
  // Host-blocking calls of one GPU run one after the other, as CudaDevice runs them on one host
  // worker per GPU (false: each on its own, as the production prover's threads did).
  bool host_calls_queue = false;
  // While a cudaHostRegister or cudaHostUnregister runs on one host thread, the GPU's other calls
  // that issue work (cudaMemcpyAsync, kernel launches, cudaMemsetAsync) wait for it on theirs
  // (measured on the H200: bench/pinning_stalls.cu, bench/RESULTS.md). So work issued meanwhile
  // starts no earlier than the pinning call's end.
  bool pinning_holds_calls = false;

  // Allocation.
  double malloc_ms = 0;                    // cudaMalloc, not waiting for the device
  double free_ms = 0;                      // cudaFree's own cost after the device drained
  double malloc_reclaim_ms_per_gib = 0;    // a failing cudaMalloc that first releases idle pool memory
  bool malloc_reclaims_idle_pool = false;  // true on the H200's driver, false on the incident's card
  double pool_alloc_ms = 0;                // cudaMallocAsync served by the pool
  double pool_grow_ms_per_gib = 0;         // cudaMallocAsync that grows the pool
  bool pool_reuse_across_streams = true;   // opportunistic reuse of frees pending on other streams
  Bytes pool_release_threshold_bytes = 0;  // the default pool's threshold at start

  double memset_gbps = 0;  // device memory bandwidth for memset
  // Each kernel's own cost: BLS12-381's, and that of a launch over a curve without a cost of its own.
  std::map<std::string, KernelCost, std::less<>> kernels;
  // [kernels.NAME.bn254]: a BN254 launch's time (its scratch fields unused: scratch is the kernel's own).
  std::map<std::string, KernelCost, std::less<>> bn254_kernels;

  // The time of a launch of `kernel` over `curve`: the curve's cost where the model has one, else the kernel's own.
  Nanoseconds kernel_ns(std::string_view kernel, kernel::Curve curve, std::uint64_t work_units,
                        std::uint64_t light_units = 0) const;
  // Scratch is the kernel's own for every curve (Device::kernel_scratch_bytes knows no curve;
  // BLS12-381's larger points only overstate BN254's).
  Bytes kernel_scratch_bytes(std::string_view kernel, std::uint64_t capacity) const;
  bool has_kernel(std::string_view kernel) const { return kernels.find(kernel) != kernels.end(); }
  int async_engine_count() const { return copy_engines_host_to_device + copy_engines_device_to_host; }
};

// Throws ConfigError naming the file, line and key of anything missing, mistyped or unknown,
// a [kernels.NAME] table of a kernel kernel_abi.hpp does not list included.
DeviceModel load_device_model(const std::filesystem::path& path);
DeviceModel parse_device_model(std::string_view text, const std::string& source_name);

// Finds a model by name ("h200") under config/devices, or by path.
std::filesystem::path find_device_model(const std::string& name_or_path);

}  // namespace stagehand::sim
