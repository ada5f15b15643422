#pragma once
// Value types shared by every Device backend: sizes, handles, host ranges, kernel launches, errors.

#include "device/kernel_abi.hpp"

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <system_error>
#include <vector>

namespace stagehand {

using Bytes = std::uint64_t;
// Device time: virtual in the simulator, steady-clock in the CUDA backend.
using Nanoseconds = std::int64_t;

inline constexpr Bytes kKiB = 1024;
inline constexpr Bytes kMiB = 1024 * kKiB;
inline constexpr Bytes kGiB = 1024 * kMiB;
inline constexpr Nanoseconds kMicrosecond = 1'000;
inline constexpr Nanoseconds kMillisecond = 1'000'000;
inline constexpr Nanoseconds kSecond = 1'000'000'000;

struct StreamHandle {
  std::uint32_t id = 0;
  explicit operator bool() const { return id != 0; }
  auto operator<=>(const StreamHandle&) const = default;
};

struct EventHandle {
  std::uint32_t id = 0;
  explicit operator bool() const { return id != 0; }
  auto operator<=>(const EventHandle&) const = default;
};

// An address in device memory. Arithmetic stays inside the allocation it came from.
struct DevicePointer {
  std::uint64_t address = 0;
  explicit operator bool() const { return address != 0; }
  DevicePointer operator+(Bytes offset) const { return DevicePointer{address + offset}; }
  auto operator<=>(const DevicePointer&) const = default;
};

// A range of host memory. In the simulator's timing mode the address is virtual and never
// dereferenced, which lets a PoRep-sized workload run without 12 GiB of host memory.
struct HostRange {
  std::uintptr_t address = 0;
  Bytes bytes = 0;
  std::byte* data() const { return reinterpret_cast<std::byte*>(address); }
  HostRange sub(Bytes offset, Bytes length) const { return HostRange{address + offset, length}; }
  auto operator<=>(const HostRange&) const = default;
};

// A part of a device buffer that a kernel reads or writes.
struct BufferUse {
  DevicePointer pointer;
  Bytes bytes = 0;
};

// One kernel launch. `name` selects the launcher (CUDA) or the cost-table entry and the host
// function (simulator); `work_units` is the size the cost scales with (elements, points).
struct KernelLaunch {
  std::string name;
  std::uint64_t work_units = 0;
  std::vector<std::uint64_t> arguments;
  std::vector<BufferUse> reads;
  std::vector<BufferUse> writes;
  // Of work_units, those known to cost less: an MSM's points whose scalars are 0 or 1, counted
  // apart only where the caller knows its scalars' kind (timing jobs with a declared witness).
  // The simulator charges them at the model's ns_per_light_unit; a GPU ignores the count.
  std::uint64_t light_units = 0;
  // The curve whose instantiation of the kernel runs (kernel_abi.hpp): a backend without one
  // refuses the launch.
  kernel::Curve curve = kernel::Curve::bls12_381;
};

struct MemoryInfo {
  Bytes free_bytes = 0;
  Bytes total_bytes = 0;
};

// The stream-ordered pool's figures, as cudaMemPoolAttrReservedMemCurrent / UsedMemCurrent.
struct PoolStats {
  Bytes reserved_bytes = 0;
  Bytes used_bytes = 0;
  Bytes release_threshold_bytes = 0;
};

struct DeviceProperties {
  std::string name;
  int ordinal = 0;
  Bytes total_memory_bytes = 0;
  int async_engine_count = 0;
};

// Running totals a backend keeps, for reports and benchmarks.
// One kernel name's launches, for calibrating the simulator's cost table against a real GPU.
struct KernelTotals {
  std::uint64_t launches = 0;
  std::uint64_t work_units = 0;
  Nanoseconds busy_ns = 0;  // summed launch durations (overlapping launches each count)
};

struct DeviceCounters {
  std::uint64_t operations = 0;
  std::uint64_t kernels = 0;
  Nanoseconds compute_busy_ns = 0;  // time at least one kernel ran
  Nanoseconds first_kernel_start_ns = -1;
  Nanoseconds last_kernel_end_ns = -1;
  Bytes pinned_bytes_copied = 0;
  Bytes pageable_bytes_copied = 0;
  Bytes peak_memory_used_bytes = 0;  // synchronous allocations + pool reserved
  // Bytes of this device's synchronous allocations (allocate) not yet freed. With the pool's
  // reserved bytes it is what the engine holds; cudaMemGetInfo's figure also counts what the
  // runtime keeps for itself after the first launches (some MiB), which is not the engine's.
  Bytes allocated_bytes = 0;
  std::uint64_t out_of_memory_count = 0;
  std::uint64_t pinned_host_allocations = 0;  // allocate_pinned_host calls that succeeded
  std::uint64_t pool_cross_stream_reuses = 0;
  std::map<std::string, KernelTotals, std::less<>> kernel_totals;  // by kernel name
};

enum class DeviceErrc {
  out_of_memory = 1,
  invalid_value,
  device_lost,
  kernel_failed,
  host_pin_failed,
  not_ready,
  unknown_kernel,
};

const std::error_category& device_category();
std::error_code make_error_code(DeviceErrc code);

// Thrown by Device operations. The message names the call and what it was given.
class DeviceError : public std::system_error {
 public:
  DeviceError(DeviceErrc code, const std::string& what) : std::system_error(make_error_code(code), what) {}
  DeviceErrc errc() const { return static_cast<DeviceErrc>(code().value()); }
};

}  // namespace stagehand

template <>
struct std::is_error_code_enum<stagehand::DeviceErrc> : std::true_type {};
