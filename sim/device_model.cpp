#include "sim/device_model.hpp"

#include "config/config_table.hpp"
#include "device/kernel_abi.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace stagehand::sim {
namespace {
constexpr double kMaxGbps = 10'000;
constexpr double kMaxMs = 1e6;

void read_device(const ConfigTable& root, DeviceModel& model) {
  auto device = root.required_table("device");
  model.name = device.required_string("name");
  auto memory_gib = device.number_in("memory_gib", 0, 0.001, 1 << 20);
  if (!device.contains("memory_gib")) device.fail("memory_gib", "missing (required)");
  model.memory_bytes = static_cast<Bytes>(std::llround(memory_gib * static_cast<double>(kGiB)));
  model.compute_concurrency = static_cast<int>(device.integer_in("compute_concurrency", 1, 1, 128));
  model.copy_engines_host_to_device = static_cast<int>(device.integer_in("copy_engines_host_to_device", 1, 1, 16));
  model.copy_engines_device_to_host = static_cast<int>(device.integer_in("copy_engines_device_to_host", 1, 1, 16));
  model.memset_gbps = device.number_in("memset_gbps", 1000, 1, 100'000);
  device.reject_unknown_keys();
}

void read_pcie(const ConfigTable& root, DeviceModel& model) {
  auto pcie = root.required_table("pcie");
  auto required_rate = [&](std::string_view key) {
    if (!pcie.contains(key)) pcie.fail(key, "missing (required)");
    return pcie.number_in(key, 0, 0.001, kMaxGbps);
  };
  model.host_to_device_pinned_gbps = required_rate("host_to_device_pinned_gbps");
  model.device_to_host_pinned_gbps = required_rate("device_to_host_pinned_gbps");
  model.bidirectional_gbps = required_rate("bidirectional_gbps");
  model.pageable_gbps = required_rate("pageable_gbps");
  pcie.reject_unknown_keys();
}

void read_host(const ConfigTable& root, DeviceModel& model) {
  auto host = root.required_table("host");
  model.register_fixed_ms = host.number_in("register_fixed_ms", 0, 0, kMaxMs);
  model.register_ms_per_gib = host.number_in("register_ms_per_gib", 0, 0, kMaxMs);
  model.unregister_fixed_ms = host.number_in("unregister_fixed_ms", 0, 0, kMaxMs);
  model.unregister_ms_per_gib = host.number_in("unregister_ms_per_gib", 0, 0, kMaxMs);
  model.pinned_alloc_ms_per_gib = host.number_in("pinned_alloc_ms_per_gib", 0, 0, kMaxMs);
  model.pinned_free_ms_per_gib = host.number_in("pinned_free_ms_per_gib", 0, 0, kMaxMs);
  model.host_calls_queue = host.boolean("calls_queue").value_or(false);
  model.pinning_holds_calls = host.boolean("pinning_holds_calls").value_or(false);
  host.reject_unknown_keys();
}

void read_memory(const ConfigTable& root, DeviceModel& model) {
  auto memory = root.required_table("memory");
  model.malloc_ms = memory.number_in("malloc_ms", 0, 0, kMaxMs);
  model.free_ms = memory.number_in("free_ms", 0, 0, kMaxMs);
  model.malloc_reclaim_ms_per_gib = memory.number_in("malloc_reclaim_ms_per_gib", 0, 0, kMaxMs);
  auto reclaims = memory.boolean("malloc_reclaims_idle_pool");
  if (!reclaims)
    memory.fail("malloc_reclaims_idle_pool", "missing (required): does a failing cudaMalloc release idle pool memory?");
  model.malloc_reclaims_idle_pool = *reclaims;
  model.pool_alloc_ms = memory.number_in("pool_alloc_ms", 0, 0, kMaxMs);
  model.pool_grow_ms_per_gib = memory.number_in("pool_grow_ms_per_gib", 0, 0, kMaxMs);
  model.pool_reuse_across_streams = memory.boolean("pool_reuse_across_streams").value_or(true);
  auto threshold_gib = memory.number_in("pool_release_threshold_gib", 0, 0, 1 << 20);
  model.pool_release_threshold_bytes = static_cast<Bytes>(std::llround(threshold_gib * static_cast<double>(kGiB)));
  memory.reject_unknown_keys();
}

// fixed_ns, ns_per_unit, ns_per_light_unit: a kernel's time, in its own table or a curve's.
KernelCost read_time(const ConfigTable& table) {
  KernelCost cost;
  cost.fixed_ns = table.number_in("fixed_ns", 0, 0, 1e15);
  cost.ns_per_unit = table.number_in("ns_per_unit", 0, 0, 1e12);
  cost.ns_per_light_unit = table.number_in("ns_per_light_unit", cost.ns_per_unit, 0, 1e12);
  return cost;
}

// [kernels.NAME.bn254]: the time of NAME's BN254 launches, for a kernel instantiated over BN254.
// Its scratch keys are refused rather than ignored: scratch is the kernel's own for every curve.
void read_bn254_time(const ConfigTable& entry, const std::string& name, DeviceModel& model) {
  constexpr auto curve = kernel::Curve::bn254;
  const std::string key(kernel::curve_name(curve));
  auto table = entry.table(key);
  if (!table) return;
  if (!kernel::has_instance(name, curve)) {
    entry.fail(key,
               fmt::format("kernel '{}' has no {} instance (kBn254Kernels in src/device/kernel_abi.hpp)", name, key));
  }
  for (const char* scratch : {"scratch_fixed_mib", "scratch_bytes_per_unit"}) {
    if (table->contains(scratch)) {
      table->fail(scratch, fmt::format("scratch is the kernel's own for every curve: give it in [kernels.{}]", name));
    }
  }
  model.bn254_kernels.emplace(name, read_time(*table));
  table->reject_unknown_keys();
}

// [kernels.NAME]: NAME must be a kernel of src/device/kernel_abi.hpp, so that a misspelt name is
// refused here, naming its line, rather than leaving the real kernel without a cost.
void read_kernels(const ConfigTable& root, DeviceModel& model) {
  auto kernels = root.table("kernels");
  if (!kernels) return;
  for (const auto& name : kernels->keys()) {
    if (!kernel::is_known(name)) {
      kernels->fail(name,
                    fmt::format("unknown kernel '{}' (the kernels are listed in src/device/kernel_abi.hpp)", name));
    }
    auto entry = kernels->required_table(name);
    KernelCost cost = read_time(entry);
    cost.scratch_fixed_bytes = entry.number_in("scratch_fixed_mib", 0, 0, 1 << 24) * static_cast<double>(kMiB);
    cost.scratch_bytes_per_unit = entry.number_in("scratch_bytes_per_unit", 0, 0, 1e9);
    read_bn254_time(entry, name, model);
    entry.reject_unknown_keys();
    model.kernels.emplace(name, cost);
  }
}

DeviceModel read_model(const ConfigTable& root) {
  DeviceModel model;
  read_device(root, model);
  read_pcie(root, model);
  read_host(root, model);
  read_memory(root, model);
  read_kernels(root, model);
  root.reject_unknown_keys();
  return model;
}
}  // namespace

Nanoseconds DeviceModel::kernel_ns(std::string_view kernel, kernel::Curve curve, std::uint64_t work_units,
                                   std::uint64_t light_units) const {
  auto found = kernels.find(kernel);
  if (found == kernels.end()) {
    throw DeviceError(DeviceErrc::unknown_kernel,
                      fmt::format("kernel '{}' has no cost in device model '{}' ({})", kernel, name, source.string()));
  }
  const KernelCost* cost = &found->second;
  if (curve == kernel::Curve::bn254) {
    if (auto bn254 = bn254_kernels.find(kernel); bn254 != bn254_kernels.end()) cost = &bn254->second;
  }
  const auto light = std::min(light_units, work_units);
  return static_cast<Nanoseconds>(std::llround(cost->fixed_ns +
                                               cost->ns_per_unit * static_cast<double>(work_units - light) +
                                               cost->ns_per_light_unit * static_cast<double>(light)));
}

Bytes DeviceModel::kernel_scratch_bytes(std::string_view kernel, std::uint64_t capacity) const {
  auto found = kernels.find(kernel);
  if (found == kernels.end() || capacity == 0) return 0;
  const auto& cost = found->second;
  return static_cast<Bytes>(
      std::llround(cost.scratch_fixed_bytes + cost.scratch_bytes_per_unit * static_cast<double>(capacity)));
}

DeviceModel parse_device_model(std::string_view text, const std::string& source_name) {
  auto document = ConfigDocument::parse(text, source_name);
  auto model = read_model(document.root());
  model.source = source_name;
  return model;
}

DeviceModel load_device_model(const std::filesystem::path& path) {
  auto document = ConfigDocument::load(path);
  auto model = read_model(document.root());
  model.source = path;
  return model;
}

std::filesystem::path find_device_model(const std::string& name_or_path) {
  std::filesystem::path direct(name_or_path);
  if (direct.extension() == ".toml" || name_or_path.find('/') != std::string::npos) return direct;
  // Relative to the working directory first (the project root), then to the source tree.
  for (const std::filesystem::path& root :
       {std::filesystem::path("config/devices"), std::filesystem::path(STAGEHAND_SOURCE_DIR) / "config/devices"}) {
    auto candidate = root / (name_or_path + ".toml");
    if (std::filesystem::exists(candidate)) return candidate;
  }
  throw ConfigError(fmt::format("device model '{}' not found under config/devices/", name_or_path));
}

}  // namespace stagehand::sim
